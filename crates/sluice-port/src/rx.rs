//! The receive side of a port: frames from the backend's ring into the
//! pool, classified into flows, stamped and counted.

use sluice_core::telemetry::NfCounters;
use sluice_core::{Batch, PacketId, PacketMeta, PacketPool, PacketSource};
use sluice_traffic::FlowRules;

use crate::af_packet::AfPacketRx;
#[cfg(af_xdp)]
use crate::af_xdp::XdpRx;
#[cfg(dpdk)]
use crate::dpdk::DpdkRx;
use crate::{Backend, PortName, Result, RingConfig};

/// How a receive port gets its frames.
enum Receiver {
    Packet(AfPacketRx),
    #[cfg(af_xdp)]
    Xdp(XdpRx),
    #[cfg(dpdk)]
    Dpdk(DpdkRx),
}

/// A source receiving from a port, each frame stamped with the time it
/// was received and with its flow by its flow rules (none matching:
/// decided downstream, by a splitter), which an operator may change.
pub struct RxPort {
    rx: Receiver,
    intake: Intake,
    /// Frames its receive ring holds (pkt; AF_PACKET: at the frame size, the fewest).
    ring_pkts: u64,
}

/// What a receive port does to each frame it takes in: classifies,
/// numbers, stamps and counts it.
struct Intake {
    rules: FlowRules,
    /// The interface its frames arrived on (see `PacketMeta::port`).
    arrived_on: u16,
    seq: u32,
    /// Packets received per flow id (pkt).
    per_flow: Vec<u64>,
    /// Frames taken into the pool, and their bytes.
    received: u64,
    bytes: u64,
    /// When a poll last left the receive ring empty (ns since the origin).
    #[cfg_attr(not(any(af_xdp, dpdk)), allow(dead_code))]
    emptied_ns: Option<u64>,
}

impl Intake {
    /// The stamp of frames from a receiver that gives no receive time
    /// (AF_XDP, DPDK): the last poll that left the ring empty, the earliest
    /// any frame in it now can have arrived. Their delays are then upper
    /// bounds, which count a worker's sleep in full, as an SLO needs; after
    /// a wait for the socket, which ends at the first arrival, the poll's
    /// own time (short by the wake-up's latency).
    #[cfg(any(af_xdp, dpdk))]
    fn arrived_since(&self, now_ns: u64) -> u64 {
        self.emptied_ns.unwrap_or(now_ns)
    }

    /// Notes a poll at `now_ns` that took `taken` of at most `max` frames:
    /// fewer than asked means the ring is empty now.
    #[cfg(any(af_xdp, dpdk))]
    fn polled(&mut self, taken: usize, max: usize, now_ns: u64) {
        if taken < max {
            self.emptied_ns = Some(now_ns);
        }
    }

    /// Takes packet `id` in, received at `ts_ns` (ns since the origin).
    fn take(&mut self, pool: &mut PacketPool, id: PacketId, ts_ns: u64) {
        let flow = self.rules.classify(pool.data(id));
        let meta = pool.meta_mut(id);
        *meta = PacketMeta { ts_ns, flow, seq: self.seq, port: self.arrived_on, ..*meta };
        self.seq = self.seq.wrapping_add(1);
        self.received += 1;
        self.bytes += u64::from(meta.len);
        if let Some(n) = self.per_flow.get_mut(flow as usize) {
            *n += 1;
        }
    }
}

/// What a receive port counts, in its module's own counters (cumulative;
/// per period in a period's report): frames taken into the pipeline and
/// their bytes, frames the kernel dropped at a full ring, frames too long
/// to take, GSO frames taken in whole (AF_PACKET), frames whose
/// virtio-net header did not hold (AF_PACKET).
pub const RX_COUNTERS: &[&str] = &["rx_pkts", "rx_bytes", "ring_dropped", "oversize", "gso", "bad_vnet"];

impl RxPort {
    /// Opens `port` for receiving, its ring shaped by `ring`, each frame's
    /// flow as `rules` sort it and stamped as arrived on interface
    /// `arrived_on` (`sluice_core::packet::NO_PORT`: none the pipeline
    /// names); `fanout` joins a group that spreads flows over several
    /// workers' ports (AF_PACKET; AF_XDP spreads by the interface's queues).
    pub fn open(port: &PortName, ring: RingConfig, rules: FlowRules, fanout: Option<u16>, arrived_on: u16) -> Result<Self> {
        let flows = rules.flows();
        let (rx, ring_pkts) = match port.backend {
            // (The ring's shape is checked by the open, before its frames are counted.)
            Backend::AfPacket => (Receiver::Packet(AfPacketRx::open(&port.name, &port.interface, ring, fanout)?), u64::from(ring.frames())),
            #[cfg(af_xdp)]
            Backend::AfXdp => (Receiver::Xdp(XdpRx::open(&port.name, &port.interface, port.bound_queue(), ring.descriptors)?), u64::from(ring.descriptors)),
            #[cfg(dpdk)]
            Backend::Dpdk => (Receiver::Dpdk(DpdkRx::open(&port.name, &port.interface, port.bound_queue())?), u64::from(crate::dpdk::DESCRIPTORS)),
            #[cfg(not(all(af_xdp, dpdk)))]
            _ => unreachable!("PortName::parse refuses the backends this build lacks"),
        };
        Ok(Self { rx, intake: Intake { rules, arrived_on, seq: 0, per_flow: vec![0; flows], received: 0, bytes: 0, emptied_ns: None }, ring_pkts })
    }

    /// Opens what needs the pool it receives into (an AF_XDP socket, lent
    /// its fill ring's buffers).
    pub fn bind(&mut self, #[cfg_attr(not(any(af_xdp, dpdk)), allow(unused_variables))] pool: &mut PacketPool) -> Result<()> {
        match &mut self.rx {
            Receiver::Packet(_) => Ok(()),
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => rx.attach(pool),
            #[cfg(dpdk)]
            Receiver::Dpdk(rx) => rx.attach(pool),
        }
    }
}

impl PacketSource for RxPort {
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
        let Self { rx, intake, .. } = self;
        match rx {
            Receiver::Packet(rx) => {
                // The kernel's clock now, read once a poll that finds frames.
                let mut realtime_ns = None;
                rx.poll(pool, max, |pool, id, arrived_ns| {
                    // Stamped with the kernel's receive time on the engine's clock: the time a
                    // frame waited in the ring (while the worker slept, say) counts in its delay.
                    let waited_ns = realtime_ns.get_or_insert_with(realtime_now_ns).saturating_sub(arrived_ns);
                    intake.take(pool, id, now_ns.saturating_sub(waited_ns));
                    out.push(id);
                });
            }
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => fill_unstamped(rx, intake, pool, now_ns, out, max),
            #[cfg(dpdk)]
            Receiver::Dpdk(rx) => fill_unstamped(rx, intake, pool, now_ns, out, max),
        }
    }

    fn attach(&mut self, pool: &mut PacketPool) -> Result<(), String> {
        self.bind(pool).map_err(|e| e.to_string())
    }

    fn woke(&mut self) {
        self.intake.emptied_ns = None;
    }

    fn queue_pkts(&self) -> Option<u64> {
        Some(self.ring_pkts)
    }

    fn wait_fd(&self) -> Option<std::os::fd::RawFd> {
        match &self.rx {
            Receiver::Packet(rx) => Some(rx.fd()),
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => rx.fd(),
            // Virtual devices have no receive interrupts: a worker waiting for one sleeps instead.
            #[cfg(dpdk)]
            Receiver::Dpdk(_) => None,
        }
    }

    fn missed(&self) -> u64 {
        match &self.rx {
            Receiver::Packet(rx) => rx.missed(),
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => rx.ring_dropped(),
            #[cfg(dpdk)]
            Receiver::Dpdk(rx) => rx.ring_dropped() + rx.oversize(),
        }
    }

    fn read_counters(&self, into: &mut NfCounters) {
        let (ring_dropped, oversize, gso, bad) = match &self.rx {
            Receiver::Packet(rx) => (rx.ring_dropped(), rx.oversize(), rx.gso(), rx.bad_header()),
            // The kernel drops frames too long for a buffer itself, counted with the rest.
            #[cfg(af_xdp)]
            Receiver::Xdp(rx) => (rx.ring_dropped(), 0, 0, 0),
            #[cfg(dpdk)]
            Receiver::Dpdk(rx) => (rx.ring_dropped(), rx.oversize(), 0, 0),
        };
        into[..RX_COUNTERS.len()].copy_from_slice(&[self.intake.received, self.intake.bytes, ring_dropped, oversize, gso, bad]);
    }

    fn flow_rules(&self) -> Option<&dyn std::any::Any> {
        Some(&self.intake.rules)
    }

    fn set_flow_rules(&mut self, rules: Box<dyn std::any::Any + Send>) -> std::result::Result<(), String> {
        let rules = rules.downcast::<FlowRules>().map_err(|_| "a port's frames are sorted by flow rules, not by these".to_owned())?;
        if self.intake.per_flow.len() < rules.flows() {
            self.intake.per_flow.resize(rules.flows(), 0);
        }
        self.intake.rules = *rules;
        Ok(())
    }

    fn count_generated(&self, generated: &mut dyn FnMut(usize, u64)) {
        for (flow, &n) in self.intake.per_flow.iter().enumerate() {
            generated(flow, n);
        }
    }
}

/// A receiver that gives no receive time (AF_XDP, DPDK): it hands up to
/// `max` frames to `take` as packets of `pool` and says how many.
#[cfg(any(af_xdp, dpdk))]
trait Unstamped {
    fn poll(&mut self, pool: &mut PacketPool, max: usize, take: impl FnMut(&mut PacketPool, PacketId)) -> usize;
}

#[cfg(af_xdp)]
impl Unstamped for XdpRx {
    fn poll(&mut self, pool: &mut PacketPool, max: usize, take: impl FnMut(&mut PacketPool, PacketId)) -> usize {
        XdpRx::poll(self, pool, max, take)
    }
}

#[cfg(dpdk)]
impl Unstamped for DpdkRx {
    fn poll(&mut self, pool: &mut PacketPool, max: usize, take: impl FnMut(&mut PacketPool, PacketId)) -> usize {
        DpdkRx::poll(self, pool, max, take)
    }
}

/// Takes up to `max` frames of `rx` into `out`, stamped as
/// [`Intake::arrived_since`] says.
#[cfg(any(af_xdp, dpdk))]
fn fill_unstamped(rx: &mut impl Unstamped, intake: &mut Intake, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
    let since = intake.arrived_since(now_ns);
    let taken = rx.poll(pool, max, |pool, id| {
        // Nothing says a checksum is partial here (a veth peer's stack left it to its NIC): it shows.
        if let Ok(mut ip) = sluice_core::wire::ip_of_mut(pool.data_mut(id)) {
            ip.complete_partial_checksum();
        }
        intake.take(pool, id, since);
        out.push(id);
    });
    intake.polled(taken, max, now_ns);
}

/// CLOCK_REALTIME now (ns), the clock of the ring's receive times.
fn realtime_now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

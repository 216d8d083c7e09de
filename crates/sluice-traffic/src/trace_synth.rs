//! Synthetic traces with the structure of real ones, for when no capture
//! is at hand: many concurrent TCP and UDP flows with heavy-tailed sizes,
//! TCP sending in window trains (slow start, then a capped window, one
//! window a round-trip) with an ACK stream coming back, and UDP flows at a
//! steady rate. Flows start at random (a Poisson process); `segments`
//! multiplexes k independent copies of that process, each with flow ids
//! of its own, into one trace (the Reframer paper's load knob: more
//! segments, more flows interleaved, less locality).
//!
//! Flow sizes are lognormal with a median of 4 and a mean of 63 data
//! packets (the paper's campus trace: mean 63, most flows a few packets,
//! a few elephants). Frames are real Ethernet/IPv4 or IPv6 (a share of
//! the flows)/TCP or UDP with valid checksums; payloads are cut to keep
//! files small (frames of 60–148 bytes, the IP lengths matching the
//! frame), as a capture with a short snap length would be.
//!
//! Memory is proportional to the flows active at once, not the trace.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::net::{Ipv4Addr, Ipv6Addr};

use etherparse::PacketBuilder;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};

use crate::error::{Error, Result};
use crate::template::ip_header;
use sluice_core::wire::Endpoints;

/// What a synthetic trace is made of.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthConfig {
    /// Packets to write (pkt).
    pub packets: u64,
    /// Independent copies of the flow process multiplexed (≥ 1).
    pub segments: u32,
    /// New flows a second, per segment.
    pub flows_per_s: f64,
    /// Share of flows that are TCP (the rest UDP).
    pub tcp_share: f64,
    /// Share of flows over IPv6 (the rest IPv4).
    pub ipv6_share: f64,
    /// Draws are repeatable from this seed.
    pub seed: u64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        Self { packets: 1_000_000, segments: 1, flows_per_s: 3_500.0, tcp_share: 0.8, ipv6_share: 0.0, seed: 1 }
    }
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynthSummary {
    /// Packets written (pkt).
    pub packets: u64,
    /// Flows started (data directions; a TCP flow's ACKs are one more 5-tuple).
    pub flows: u64,
    /// From the first packet to the last (ns).
    pub duration_ns: u64,
}

/// Median data packets of a flow.
const SIZE_MEDIAN: f64 = 4.0;
/// Mean data packets of a flow: lognormal σ² = 2 ln(mean / median).
const SIZE_MEAN: f64 = 63.0;
/// Largest flow (data packets).
const SIZE_MAX: f64 = 29e6;
/// TCP's first window and its largest (pkt).
const INITIAL_WINDOW: u32 = 10;
const MAX_WINDOW: u32 = 64;
/// Bytes of a full data segment, for pacing at a flow's bottleneck rate.
const MSS_BITS: f64 = 1500.0 * 8.0;
/// Payload bytes a data packet carries in the file (frames ≤ 128 bytes).
const DATA_PAYLOAD: usize = 74;
/// Most flows a segment keeps active; arrivals beyond are skipped (bounds memory).
const MAX_ACTIVE: usize = 1 << 20;
/// The fewest new flows a second a segment may have.
pub const MIN_FLOWS_PER_S: f64 = 1e-3;
/// The most new flows a second a segment may have.
pub const MAX_FLOWS_PER_S: f64 = 1e8;
/// The longest a trace may span (ns, 500 years): its timestamps, from 2026 on, stay within a u64 of ns.
const MAX_SPAN_NS: u64 = 500 * 365 * 86_400 * 1_000_000_000;

/// One flow's sending state.
struct Flow {
    /// Client and server addresses, client port, server port.
    ends: Endpoints,
    cport: u16,
    sport: u16,
    tcp: bool,
    /// Data packets left to send.
    left: u64,
    /// Spacing of packets within a train at its bottleneck (ns).
    gap_ns: u64,
    /// TCP: round-trip time (ns), window (pkt), packets left in this window, when it began (ns).
    rtt_ns: u64,
    window: u32,
    in_window: u32,
    window_start_ns: u64,
    seq: u32,
    /// ACKs still to come back (the flow is done when none are left and no data is).
    acks_due: u32,
}

/// What happens next, in time order: a data packet or an ACK of a flow, or a flow start.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Data(u32),
    Ack(u32, u32),
    Arrival,
}

/// One independent copy of the flow process.
struct Segment {
    index: u32,
    rng: SmallRng,
    flows: Vec<Option<Flow>>,
    free: Vec<u32>,
    events: BinaryHeap<Reverse<(u64, Event)>>,
    started: u64,
    arrivals: Exp<f64>,
    size: LogNormal<f64>,
    tcp_share: f64,
    ipv6_share: f64,
}

impl Segment {
    fn new(index: u32, config: &SynthConfig) -> Self {
        let mut rng = SmallRng::seed_from_u64(config.seed ^ (u64::from(index) << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let arrivals = Exp::new(config.flows_per_s * 1e-9).expect("a positive rate");
        let sigma = (2.0 * (SIZE_MEAN / SIZE_MEDIAN).ln()).sqrt();
        let size = LogNormal::new(SIZE_MEDIAN.ln(), sigma).expect("a valid lognormal");
        let mut events = BinaryHeap::new();
        let first = arrivals.sample(&mut rng) as u64;
        events.push(Reverse((first, Event::Arrival)));
        Self { index, rng, flows: Vec::new(), free: Vec::new(), events, started: 0, arrivals, size, tcp_share: config.tcp_share, ipv6_share: config.ipv6_share }
    }

    /// Time of its next event (ns).
    fn next_ns(&self) -> u64 {
        self.events.peek().map_or(u64::MAX, |Reverse((t, _))| *t)
    }

    /// Starts a flow at `now`.
    fn start_flow(&mut self, now: u64) {
        let rng = &mut self.rng;
        let n = self.started;
        self.started += 1;
        let tcp = rng.gen_bool(self.tcp_share);
        let left = self.size.sample(rng).clamp(1.0, SIZE_MAX).round() as u64;
        // Bottleneck 100 Mbit/s .. 10 Gbit/s, log-uniform; RTT 0.5 .. 50 ms.
        let rate = 10f64.powf(rng.gen_range(8.0..10.0));
        let gap_ns = (MSS_BITS / rate * 1e9) as u64;
        let rtt_ns = (10f64.powf(rng.gen_range(5.7..7.7))) as u64;
        let server = [rng.gen_range(0..2), rng.gen_range(0..250), rng.gen_range(1..255)];
        // Clients in 10.<segment>.0.0/16 or 2001:db8:<segment>::/48, servers in 20.0.0.0/15 or 2001:db8:ff<a>:<b>::<c>.
        let ends = if rng.gen_bool(self.ipv6_share) {
            let client = Ipv6Addr::new(0x2001, 0xdb8, self.index as u16, 0, 0, 0, (n >> 16) as u16, n as u16);
            let server = Ipv6Addr::new(0x2001, 0xdb8, 0xff00 | u16::from(server[0]), u16::from(server[1]), 0, 0, 0, u16::from(server[2]));
            Endpoints::V6(client.into(), server.into())
        } else {
            Endpoints::V4(Ipv4Addr::new(10, self.index as u8, (n >> 8) as u8, n as u8).into(), Ipv4Addr::new(20, server[0], server[1], server[2]).into())
        };
        let flow = Flow {
            ends,
            cport: rng.gen_range(1024..=65535),
            sport: if tcp { [80, 443, 8080][rng.gen_range(0..3)] } else { [53, 443, 4789][rng.gen_range(0..3)] },
            tcp,
            left,
            gap_ns: gap_ns.max(1),
            rtt_ns,
            window: INITIAL_WINDOW,
            in_window: INITIAL_WINDOW,
            window_start_ns: now,
            seq: rng.gen(),
            acks_due: 0,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.flows[id as usize] = Some(flow);
                id
            }
            None => {
                self.flows.push(Some(flow));
                self.flows.len() as u32 - 1
            }
        };
        self.events.push(Reverse((now, Event::Data(id))));
    }

    /// Does the next event; returns a packet to write (time, frame) if it makes one.
    fn step(&mut self, frame: &mut Vec<u8>) -> Option<u64> {
        let Reverse((now, event)) = self.events.pop()?;
        match event {
            Event::Arrival => {
                if self.flows.len() - self.free.len() < MAX_ACTIVE {
                    self.start_flow(now);
                }
                let next = now + self.arrivals.sample(&mut self.rng) as u64 + 1;
                self.events.push(Reverse((next, Event::Arrival)));
                None
            }
            Event::Data(id) => {
                let flow = self.flows[id as usize].as_mut().expect("an event's flow is live");
                data_frame(flow, frame);
                flow.left -= 1;
                flow.seq = flow.seq.wrapping_add(DATA_PAYLOAD as u32);
                if flow.tcp {
                    // The receiver acknowledges every second segment, and the last.
                    if flow.in_window.is_multiple_of(2) || flow.left == 0 {
                        flow.acks_due += 1;
                        self.events.push(Reverse((now + flow.rtt_ns / 2, Event::Ack(id, flow.seq))));
                    }
                    flow.in_window -= 1;
                }
                if flow.left > 0 {
                    let next = if flow.tcp && flow.in_window == 0 {
                        // Window sent: the next one starts a round-trip after this one did.
                        flow.window = (flow.window * 2).min(MAX_WINDOW);
                        flow.in_window = flow.window;
                        flow.window_start_ns = (flow.window_start_ns + flow.rtt_ns).max(now + flow.gap_ns);
                        flow.window_start_ns
                    } else if flow.tcp {
                        now + flow.gap_ns
                    } else {
                        now + (flow.gap_ns as f64 * (0.5 + self.rng.gen::<f64>())) as u64
                    };
                    self.events.push(Reverse((next, Event::Data(id))));
                } else if flow.acks_due == 0 {
                    self.end_flow(id);
                }
                Some(now)
            }
            Event::Ack(id, ack) => {
                let flow = self.flows[id as usize].as_mut().expect("an event's flow is live");
                ack_frame(flow, ack, frame);
                flow.acks_due -= 1;
                if flow.left == 0 && flow.acks_due == 0 {
                    self.end_flow(id);
                }
                Some(now)
            }
        }
    }

    fn end_flow(&mut self, id: u32) {
        self.flows[id as usize] = None;
        self.free.push(id);
    }
}

/// A data packet of `flow`, client to server, into `frame`.
fn data_frame(flow: &Flow, frame: &mut Vec<u8>) {
    frame.clear();
    let eth = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    let payload = [0x5a; DATA_PAYLOAD];
    let ip = eth.ip(ip_header(flow.ends, 64));
    let written = if flow.tcp {
        ip.tcp(flow.cport, flow.sport, flow.seq, 65535).ack(1).psh().write(frame, &payload)
    } else {
        ip.udp(flow.cport, flow.sport).write(frame, &payload)
    };
    written.expect("a frame of fixed size builds");
}

/// A pure ACK of `flow`, server to client, acknowledging `ack`, into `frame`.
fn ack_frame(flow: &Flow, ack: u32, frame: &mut Vec<u8>) {
    frame.clear();
    PacketBuilder::ethernet2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1])
        .ip(ip_header(flow.ends.reversed(), 64))
        .tcp(flow.sport, flow.cport, 1, 65535)
        .ack(ack)
        .write(frame, &[])
        .expect("a frame of fixed size builds");
}

/// Writes a synthetic trace of `config.packets` packets as pcap (ns timestamps) to `out`.
pub fn synthesize(config: &SynthConfig, out: impl Write) -> Result<SynthSummary> {
    let bad = |reason: String| Error::Pcap { path: "trace synth".into(), reason };
    if config.segments == 0 || config.segments > 255 {
        return Err(bad(format!("segments {} must be 1..=255", config.segments)));
    }
    if !((MIN_FLOWS_PER_S..=MAX_FLOWS_PER_S).contains(&config.flows_per_s) && (0.0..=1.0).contains(&config.tcp_share) && (0.0..=1.0).contains(&config.ipv6_share)) {
        let why = format!(
            "flows_per_s {} must be in [{MIN_FLOWS_PER_S}, {MAX_FLOWS_PER_S:e}], tcp_share {} and ipv6_share {} in [0, 1]",
            config.flows_per_s, config.tcp_share, config.ipv6_share
        );
        return Err(bad(why));
    }
    let header = PcapHeader { ts_resolution: pcap_file::TsResolution::NanoSecond, ..Default::default() };
    let mut writer = PcapWriter::with_header(out, header).map_err(|e| bad(e.to_string()))?;
    let mut segments: Vec<Segment> = (0..config.segments).map(|s| Segment::new(s, config)).collect();
    let mut frame = Vec::with_capacity(128);
    let (mut written, mut first, mut last) = (0u64, None, 0u64);
    // Start at a plausible wall-clock time (2026), so tools show a real date.
    const EPOCH_NS: u64 = 1_767_225_600_000_000_000;
    while written < config.packets {
        let s = (0..segments.len()).min_by_key(|&s| segments[s].next_ns()).expect("at least one segment");
        if let Some(at) = segments[s].step(&mut frame) {
            if at > MAX_SPAN_NS {
                let why = format!("{written} packets took 500 years at {} new flows a second: raise it, or write fewer packets", config.flows_per_s);
                return Err(bad(why));
            }
            let ts = std::time::Duration::from_nanos(EPOCH_NS + at);
            writer.write_packet(&PcapPacket::new(ts, frame.len() as u32, &frame)).map_err(|e| bad(e.to_string()))?;
            written += 1;
            first.get_or_insert(at);
            last = at;
        }
    }
    let flows = segments.iter().map(|s| s.started).sum();
    Ok(SynthSummary { packets: written, flows, duration_ns: last - first.unwrap_or(last) })
}

//! A rate-controlled sender: a source's packets put on a port's wire, for
//! traffic into pipelines that receive on real ports (`sluice gen`).

use std::time::{Duration, Instant};

use sluice_core::{Batch, PacketPool, PacketSink, PacketSource};

use crate::{PortName, Result, RingConfig, TxPort};

/// Packets the sender keeps in flight between the source and the ring.
const POOL: usize = 4096;
/// Packets asked of the source at a time.
const BURST: usize = 32;

/// What a sender put on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Sent {
    /// Frames the transmit ring took (pkt).
    pub packets: u64,
    /// Their bytes (bytes).
    pub bytes: u64,
    /// How long it sent (s).
    pub seconds: f64,
    /// Times the ring was full and the sender waited for the kernel.
    pub ring_full: u64,
}

/// Sends what `source` makes (at its own rates) on `port` for `seconds`,
/// or until `stop` says so; a packet the ring has no room for waits until
/// it has, so nothing made is lost.
pub fn send(port: &PortName, ring: RingConfig, source: &mut dyn PacketSource, seconds: f64, stop: &mut dyn FnMut() -> bool) -> Result<Sent> {
    let mut tx = TxPort::open(port, ring)?;
    let mut pool = PacketPool::new(POOL + port.lends(&ring));
    tx.bind(&mut pool)?;
    let mut batch = Batch::default();
    let mut sent = Sent::default();
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(seconds);
    let mut polls = 0u32;
    while Instant::now() < until {
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(1024) && stop() {
            break;
        }
        let now_ns = start.elapsed().as_nanos() as u64;
        source.fill(&mut pool, now_ns, &mut batch, BURST);
        let mut at = 0;
        while at < batch.len() {
            let n = tx.transmit(&mut pool, &batch.as_slice()[at..]);
            let taken = &batch.as_slice()[at..at + n];
            sent.bytes += taken.iter().map(|&id| pool.data(id).len() as u64).sum::<u64>();
            tx.let_go(&mut pool, taken);
            at += n;
            if at < batch.len() {
                sent.ring_full += 1;
                std::thread::yield_now();
            }
        }
        sent.packets += batch.len() as u64;
        batch.clear();
    }
    sent.seconds = start.elapsed().as_secs_f64();
    Ok(sent)
}

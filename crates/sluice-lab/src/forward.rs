//! The ceiling of a backend on this machine: frames received on one port
//! put straight back on another's wire through the same rings and pool
//! a pipeline's ports use, with no graph between them.

use std::time::{Duration, Instant};

use sluice_core::{Batch, PacketPool, PacketSink, PacketSource};
use sluice_traffic::FlowRules;

use sluice_port::{PortName, Result, RingConfig, RxPort, TxPort};

/// What a raw forwarding loop did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Forwarded {
    /// Frames received and transmitted (pkt).
    pub packets: u64,
    /// Frames received that the transmit ring had no room for (pkt).
    pub tx_full: u64,
    /// Frames lost at the receive ring (pkt).
    pub missed: u64,
    /// How long it ran (s).
    pub seconds: f64,
}

/// Forwards from `rx` to `tx` for `seconds`, `burst` frames a poll at most.
pub fn forward_raw(rx: &PortName, tx: &PortName, ring: RingConfig, burst: usize, seconds: f64) -> Result<Forwarded> {
    let mut pool = PacketPool::new(4 * burst.max(1) + rx.lends(&ring) + tx.lends(&ring));
    // Both open before either binds: on one queue they share a socket.
    let (mut rx, mut tx) = (RxPort::open(rx, ring, FlowRules::default(), None, sluice_core::packet::NO_PORT)?, TxPort::open(tx, ring)?);
    rx.bind(&mut pool)?;
    tx.bind(&mut pool)?;
    let mut batch = Batch::default();
    let mut done = Forwarded::default();
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(seconds);
    while Instant::now() < until {
        rx.fill(&mut pool, 0, &mut batch, burst);
        let sent = tx.transmit(&mut pool, batch.as_slice());
        done.packets += sent as u64;
        done.tx_full += (batch.len() - sent) as u64;
        tx.let_go(&mut pool, &batch.as_slice()[..sent]);
        for &id in &batch.as_slice()[sent..] {
            pool.free(id);
        }
        batch.clear();
    }
    done.seconds = start.elapsed().as_secs_f64();
    done.missed = rx.missed();
    Ok(done)
}

/// DPDK's own loop between two DPDK ports, with no copies into Sluice's
/// pool (see [`forward_raw`] for the loop with them), for `seconds`.
pub fn forward_bare(rx: &PortName, tx: &PortName, burst: usize, seconds: f64) -> Result<Forwarded> {
    let (packets, tx_full, seconds) = sluice_port::dpdk_forward_bare(rx, tx, burst, seconds)?;
    Ok(Forwarded { packets, tx_full, missed: 0, seconds })
}

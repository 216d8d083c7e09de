//! An algorithm chosen at run time (a pipeline's description names it),
//! behind the same interface, without a virtual call per packet.

use super::{Drr, Scheduler, Wf2qPlus};

/// DRR's base quantum (bytes): the largest Ethernet payload, so that a
/// turn always sends a packet.
const DRR_QUANTUM: u32 = 1500;

/// A scheduling algorithm, chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Deficit round robin.
    Drr,
    /// WF²Q+.
    Wf2qPlus,
}

impl Algorithm {
    /// By name: "drr" or "wf2q+".
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "drr" => Ok(Self::Drr),
            "wf2q+" => Ok(Self::Wf2qPlus),
            other => Err(format!("unknown scheduling algorithm '{other}' (known: drr, wf2q+)")),
        }
    }

    /// The scheduler over classes of `weights`, each queue holding up to `limit` packets.
    pub fn build(self, weights: &[u32], limit: usize) -> AnyScheduler {
        match self {
            Self::Drr => AnyScheduler::Drr(Drr::new(weights, DRR_QUANTUM, limit)),
            Self::Wf2qPlus => AnyScheduler::Wf2qPlus(Wf2qPlus::new(weights, limit)),
        }
    }
}

/// The scheduler of an [`Algorithm`].
pub enum AnyScheduler {
    /// DRR.
    Drr(Drr<u32>),
    /// WF²Q+.
    Wf2qPlus(Wf2qPlus<u32>),
}

impl Scheduler<u32> for AnyScheduler {
    #[inline]
    fn enqueue(&mut self, flow: usize, len: u32, item: u32) -> Result<(), u32> {
        match self {
            Self::Drr(s) => s.enqueue(flow, len, item),
            Self::Wf2qPlus(s) => s.enqueue(flow, len, item),
        }
    }

    #[inline]
    fn dequeue(&mut self) -> Option<(usize, u32, u32)> {
        match self {
            Self::Drr(s) => s.dequeue(),
            Self::Wf2qPlus(s) => s.dequeue(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Drr(s) => s.len(),
            Self::Wf2qPlus(s) => s.len(),
        }
    }

    fn drops(&self, flow: usize) -> u64 {
        match self {
            Self::Drr(s) => s.drops(flow),
            Self::Wf2qPlus(s) => s.drops(flow),
        }
    }
}


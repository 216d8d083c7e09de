//! An algorithm chosen at run time (a pipeline's description names it),
//! behind the same interface, without a virtual call per packet.

use super::{qfq, Drr, Qfq, Scheduler, Wf2qPlus};

/// DRR's base quantum (bytes): the largest Ethernet payload, so that a
/// turn always sends a packet.
const DRR_QUANTUM: u32 = 1500;
/// QFQ's largest packet and budget (bytes): every frame a pool buffer holds.
const QFQ_LMAX: u32 = 2048;

/// A scheduling algorithm, chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Deficit round robin.
    Drr,
    /// WF²Q+.
    Wf2qPlus,
    /// QFQ+.
    Qfq,
}

impl Algorithm {
    /// By name: "drr", "wf2q+" or "qfq".
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "drr" => Ok(Self::Drr),
            "wf2q+" => Ok(Self::Wf2qPlus),
            "qfq" => Ok(Self::Qfq),
            other => Err(format!("unknown scheduling algorithm '{other}' (known: drr, wf2q+, qfq)")),
        }
    }

    /// Whether the algorithm takes these weights (≥ 1; QFQ's at most [`qfq::MAX_WEIGHT`]).
    pub fn check(self, weights: &[u32]) -> Result<(), String> {
        let most = if self == Self::Qfq { qfq::MAX_WEIGHT } else { u32::MAX };
        match weights.iter().find(|&&w| !(1..=most).contains(&w)) {
            Some(w) => Err(format!("weight {w} is outside 1..={most} for {self:?}")),
            None => Ok(()),
        }
    }

    /// The scheduler over classes of `weights` (as [`Self::check`] takes
    /// them), each queue holding up to `limit` packets.
    pub fn build(self, weights: &[u32], limit: usize) -> AnyScheduler {
        match self {
            Self::Drr => AnyScheduler::Drr(Drr::new(weights, DRR_QUANTUM, limit)),
            Self::Wf2qPlus => AnyScheduler::Wf2qPlus(Wf2qPlus::new(weights, limit)),
            Self::Qfq => AnyScheduler::Qfq(Qfq::new(weights, QFQ_LMAX, limit).expect("weights as Algorithm::check takes them")),
        }
    }
}

/// The scheduler of an [`Algorithm`].
pub enum AnyScheduler {
    /// DRR.
    Drr(Drr<u32>),
    /// WF²Q+.
    Wf2qPlus(Wf2qPlus<u32>),
    /// QFQ+.
    Qfq(Qfq<u32>),
}

impl Scheduler<u32> for AnyScheduler {
    #[inline]
    fn enqueue(&mut self, flow: usize, len: u32, item: u32) -> Result<(), u32> {
        match self {
            Self::Drr(s) => s.enqueue(flow, len, item),
            Self::Wf2qPlus(s) => s.enqueue(flow, len, item),
            Self::Qfq(s) => s.enqueue(flow, len, item),
        }
    }

    #[inline]
    fn dequeue(&mut self) -> Option<(usize, u32, u32)> {
        match self {
            Self::Drr(s) => s.dequeue(),
            Self::Wf2qPlus(s) => s.dequeue(),
            Self::Qfq(s) => s.dequeue(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Drr(s) => s.len(),
            Self::Wf2qPlus(s) => s.len(),
            Self::Qfq(s) => s.len(),
        }
    }

    fn drops(&self, flow: usize) -> u64 {
        match self {
            Self::Drr(s) => s.drops(flow),
            Self::Wf2qPlus(s) => s.drops(flow),
            Self::Qfq(s) => s.drops(flow),
        }
    }
}


//! An algorithm chosen at run time (a pipeline's description names it),
//! behind the same interface, without a virtual call per packet.

use super::{qfq, Drr, Priority, Qfq, Scheduler, Tree, Wf2qPlus};

/// DRR's base quantum (bytes): the largest Ethernet payload, so that a
/// turn always sends a packet.
const DRR_QUANTUM: u32 = 1500;
/// QFQ's largest packet and budget (bytes): every frame a pool buffer holds.
pub const QFQ_LMAX: u32 = 2048;

/// A scheduling algorithm, chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "EgressAlgorithm")]
pub enum Algorithm {
    /// First in, first out over every class (their weights unused).
    Fifo,
    /// Strict priority: a class is served only while every class of a
    /// larger weight is empty (a weight is the class's priority); classes
    /// of one weight FIFO among themselves.
    Priority,
    /// Deficit round robin.
    Drr,
    /// WF²Q+.
    #[serde(rename = "wf2q+")]
    Wf2qPlus,
    /// QFQ+.
    Qfq,
}

impl Algorithm {
    /// By name: "fifo", "priority", "drr", "wf2q+" or "qfq".
    pub fn parse(name: &str) -> Result<Self, String> {
        use serde::de::{value::Error, Deserialize, IntoDeserializer};
        Self::deserialize(name.into_deserializer()).map_err(|e: Error| format!("scheduling algorithm: {e}"))
    }

    /// Its name, as [`Self::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fifo => "fifo",
            Self::Priority => "priority",
            Self::Drr => "drr",
            Self::Wf2qPlus => "wf2q+",
            Self::Qfq => "qfq",
        }
    }

    /// The largest weight the algorithm takes (QFQ's [`qfq::MAX_WEIGHT`]).
    pub fn max_weight(self) -> u32 {
        if self == Self::Qfq {
            qfq::MAX_WEIGHT
        } else {
            u32::MAX
        }
    }

    /// Whether the algorithm takes these weights (1..=[`Self::max_weight`]).
    pub fn check(self, weights: &[u32]) -> Result<(), String> {
        let most = self.max_weight();
        match weights.iter().find(|&&w| !(1..=most).contains(&w)) {
            Some(w) => Err(format!("weight {w} is outside 1..={most} for {self:?}")),
            None => Ok(()),
        }
    }

    /// The scheduler over classes of `weights` (as [`Self::check`] takes
    /// them), each queue holding up to `limit` packets.
    pub fn build(self, weights: &[u32], limit: usize) -> AnyScheduler {
        match self {
            Self::Fifo => AnyScheduler::Priority(Priority::fifo(weights.len(), limit)),
            Self::Priority => AnyScheduler::Priority(Priority::new(&levels_by_weight(weights), limit)),
            Self::Drr => AnyScheduler::Drr(Drr::new(weights, DRR_QUANTUM, limit)),
            Self::Wf2qPlus => AnyScheduler::Wf2qPlus(Wf2qPlus::new(weights, limit)),
            Self::Qfq => AnyScheduler::Qfq(Qfq::new(weights, QFQ_LMAX, limit).expect("weights as Algorithm::check takes them")),
        }
    }
}

/// Each class's priority level (0 first) from its weight: the largest weight first.
fn levels_by_weight(weights: &[u32]) -> Vec<usize> {
    let mut distinct = weights.to_vec();
    distinct.sort_unstable_by(|a, b| b.cmp(a));
    distinct.dedup();
    weights.iter().map(|w| distinct.iter().position(|d| d == w).expect("every weight is among them")).collect()
}

/// The scheduler of an [`Algorithm`].
pub enum AnyScheduler {
    /// FIFO and strict priority (FIFO: every class on one level).
    Priority(Priority<u32>),
    /// DRR.
    Drr(Drr<u32>),
    /// WF²Q+.
    Wf2qPlus(Wf2qPlus<u32>),
    /// QFQ+.
    Qfq(Qfq<u32>),
    /// Classes under shaped parents, each parent's under one of the above.
    Tree(Box<Tree>),
}

impl AnyScheduler {
    /// The same packets under new weights: a scheduler of `algorithm` over
    /// `weights` (as [`Algorithm::check`] takes them, one per class it
    /// has), its queues of `limit`, holding what this one holds, each
    /// class's packets in their order. The classes' turns start afresh;
    /// refusals counted so far ([`Scheduler::drops`]) start again at zero.
    pub fn reweigh(&mut self, algorithm: Algorithm, weights: &[u32], limit: usize) {
        if let Self::Tree(tree) = self {
            return tree.reweigh(algorithm, weights, limit);
        }
        let mut next = algorithm.build(weights, limit);
        while let Some((class, len, item)) = self.dequeue() {
            // Each class held at most `limit` here.
            assert!(next.enqueue(class, len, item).is_ok(), "class {class} holds no more than its queue's {limit} packets");
        }
        *self = next;
    }
}

impl AnyScheduler {
    /// Gives its class tree's parents new rates and ceilings, (rate, ceiling) each (bit/s; no tree: nothing to do).
    pub fn reshape(&mut self, parents: &[(f64, f64)]) {
        if let Self::Tree(tree) = self {
            tree.reshape(parents);
        }
    }
}

impl Scheduler<u32> for AnyScheduler {
    #[inline]
    fn enqueue(&mut self, flow: usize, len: u32, item: u32) -> Result<(), u32> {
        match self {
            Self::Priority(s) => s.enqueue(flow, len, item),
            Self::Drr(s) => s.enqueue(flow, len, item),
            Self::Wf2qPlus(s) => s.enqueue(flow, len, item),
            Self::Qfq(s) => s.enqueue(flow, len, item),
            Self::Tree(s) => s.enqueue(flow, len, item),
        }
    }

    #[inline]
    fn dequeue(&mut self) -> Option<(usize, u32, u32)> {
        match self {
            Self::Priority(s) => s.dequeue(),
            Self::Drr(s) => s.dequeue(),
            Self::Wf2qPlus(s) => s.dequeue(),
            Self::Qfq(s) => s.dequeue(),
            Self::Tree(s) => s.dequeue(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Priority(s) => s.len(),
            Self::Drr(s) => s.len(),
            Self::Wf2qPlus(s) => s.len(),
            Self::Qfq(s) => s.len(),
            Self::Tree(s) => s.len(),
        }
    }

    fn drops(&self, flow: usize) -> u64 {
        match self {
            Self::Priority(s) => s.drops(flow),
            Self::Drr(s) => s.drops(flow),
            Self::Wf2qPlus(s) => s.drops(flow),
            Self::Qfq(s) => s.drops(flow),
            Self::Tree(s) => s.drops(flow),
        }
    }

    #[inline]
    fn advance(&mut self, now_ns: u64) {
        if let Self::Tree(s) = self {
            s.advance(now_ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes of the packets `algorithm` sends, given one packet of
    /// each class queued in class order, over classes of `weights`.
    fn sent(algorithm: &str, weights: &[u32]) -> Vec<usize> {
        let mut s = Algorithm::parse(algorithm).unwrap().build(weights, 4);
        for class in 0..weights.len() {
            s.enqueue(class, 64, class as u32).unwrap();
        }
        std::iter::from_fn(|| s.dequeue().map(|(class, _, _)| class)).collect()
    }

    #[test]
    fn reweighing_keeps_every_packet_in_its_class_order_and_takes_the_new_shares() {
        for algorithm in ["fifo", "priority", "drr", "wf2q+", "qfq"] {
            let a = Algorithm::parse(algorithm).unwrap();
            let mut s = a.build(&[1, 1], 100);
            for i in 0..100 {
                s.enqueue(0, 1000, i).unwrap();
                s.enqueue(1, 1000, 1000 + i).unwrap();
            }
            for _ in 0..20 {
                s.dequeue().unwrap();
            }
            s.reweigh(a, &[1, 9], 100);
            assert_eq!(s.len(), 180, "{algorithm}");
            let out: Vec<(usize, u32)> = std::iter::from_fn(|| s.dequeue().map(|(c, _, item)| (c, item))).collect();
            for class in 0..2 {
                let items: Vec<u32> = out.iter().filter(|o| o.0 == class).map(|o| o.1).collect();
                assert!(items.windows(2).all(|w| w[0] < w[1]), "{algorithm}: class {class} in its order");
            }
            if matches!(algorithm, "drr" | "wf2q+" | "qfq") {
                // Both backlogged: of the first 50 sent, 9 in 10 are class 1's.
                let ones = out[..50].iter().filter(|o| o.0 == 1).count();
                assert!((43..=47).contains(&ones), "{algorithm}: {ones} of 50");
            }
        }
    }

    #[test]
    fn fifo_sends_in_arrival_order_and_priority_the_largest_weight_first() {
        assert_eq!(sent("fifo", &[1, 5, 3]), [0, 1, 2]);
        assert_eq!(sent("priority", &[1, 5, 3, 5]), [1, 3, 2, 0]);
        for name in ["fifo", "priority", "drr", "wf2q+", "qfq"] {
            assert_eq!(Algorithm::parse(name).unwrap().name(), name);
        }
        assert!(Algorithm::parse("lifo").unwrap_err().contains("`lifo`, expected one of `fifo`, `priority`, `drr`, `wf2q+`, `qfq`"));
    }
}

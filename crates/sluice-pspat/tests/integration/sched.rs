//! Properties of the scheduling algorithms on random workloads: work
//! conserving, FIFO within a flow, every packet accounted for; weighted
//! shares within each algorithm's bound for continuously backlogged flows;
//! WF²Q+'s order equal to a straightforward O(N) implementation's (QFQ's,
//! the algorithm on plain data structures, is in `src/sched/qfq_linear.rs`).

use proptest::prelude::*;
use sluice_pspat::{Drr, Priority, Qfq, Scheduler, Wf2qPlus};

const FLOWS: usize = 5;
const LIMIT: usize = 16;
const MAX_LEN: u32 = 1500;

/// One step of a workload: a packet of `len` bytes for `flow`, or a dequeue.
#[derive(Clone, Debug)]
enum Op {
    Enqueue { flow: usize, len: u32 },
    Dequeue,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0..FLOWS, 64..=MAX_LEN).prop_map(|(flow, len)| Op::Enqueue { flow, len }),
        2 => Just(Op::Dequeue),
    ];
    prop::collection::vec(op, 1..400)
}

fn weights() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(1u32..=10, FLOWS)
}

/// A scheduler of (flow, sequence number) items, by name.
type Named = (&'static str, Box<dyn Scheduler<(usize, u64)>>);

fn every_algorithm(weights: &[u32]) -> Vec<Named> {
    let levels: Vec<usize> = weights.iter().map(|&w| w as usize % 3).collect();
    vec![
        ("fifo", Box::new(Priority::fifo(FLOWS, LIMIT))),
        ("priority", Box::new(Priority::new(&levels, LIMIT))),
        ("drr", Box::new(Drr::new(weights, MAX_LEN, LIMIT))),
        ("wf2q+", Box::new(Wf2qPlus::new(weights, LIMIT))),
        ("qfq", Box::new(Qfq::new(weights, MAX_LEN, LIMIT).unwrap())),
    ]
}

proptest! {
    #[test]
    fn every_algorithm_conserves_work_keeps_flow_order_and_accounts_every_packet(ops in ops(), weights in weights()) {
        for (name, mut s) in every_algorithm(&weights) {
            let (mut seq, mut next_out, mut refused) = ([0u64; FLOWS], [0u64; FLOWS], [0u64; FLOWS]);
            let mut queued = 0usize;
            for op in &ops {
                match *op {
                    Op::Enqueue { flow, len } => {
                        match s.enqueue(flow, len, (flow, seq[flow])) {
                            Ok(()) => queued += 1,
                            Err(item) => { prop_assert_eq!(item, (flow, seq[flow])); refused[flow] += 1; }
                        }
                        seq[flow] += 1;
                    }
                    Op::Dequeue => match s.dequeue() {
                        Some((flow, _, (f, n))) => {
                            prop_assert_eq!(flow, f, "{}", name);
                            prop_assert!(n >= next_out[f], "{}: flow {} sent {} after {}", name, f, n, next_out[f]);
                            next_out[f] = n + 1;
                            queued -= 1;
                        }
                        None => prop_assert_eq!(queued, 0, "{}: idle with packets queued", name),
                    },
                }
                prop_assert_eq!(s.len(), queued, "{}", name);
            }
            for (f, &n) in refused.iter().enumerate() {
                prop_assert_eq!(s.drops(f), n, "{}: drops of flow {}", name, f);
            }
        }
    }

    #[test]
    fn drr_wf2q_plus_and_qfq_serve_backlogged_flows_in_proportion_to_their_weights(weights in weights(), lens in prop::collection::vec(64..=MAX_LEN, 64)) {
        // Every flow stays backlogged: refilled after each dequeue.
        let total: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        for (name, mut s, bound) in [
            // DRR: a quantum plus a largest packet per flow, per unit of weight.
            ("drr", Box::new(Drr::new(&weights, MAX_LEN, 4)) as Box<dyn Scheduler<()>>, 2.0 * f64::from(MAX_LEN) + f64::from(MAX_LEN)),
            // WF²Q+: within a largest packet of each flow's fluid share.
            ("wf2q+", Box::new(Wf2qPlus::new(&weights, 4)), 2.0 * f64::from(MAX_LEN)),
            // QFQ+: a turn's budget (a largest packet) and the slot rounding of its group on top.
            ("qfq", Box::new(Qfq::new(&weights, MAX_LEN, 4).unwrap()), 5.0 * f64::from(MAX_LEN)),
        ] {
            let mut next = 0usize;
            let mut len_of = |_: usize| { next += 1; lens[next % lens.len()] };
            for f in 0..FLOWS {
                for _ in 0..4 { s.enqueue(f, len_of(f), ()).unwrap(); }
            }
            let mut sent = [0f64; FLOWS];
            let mut served = 0f64;
            for _ in 0..3000 {
                let (f, len, ()) = s.dequeue().expect("backlogged");
                sent[f] += f64::from(len);
                served += f64::from(len);
                s.enqueue(f, len_of(f), ()).unwrap();
                for g in 0..FLOWS {
                    // Service per unit of weight against the fluid share's.
                    let lag = (sent[g] - served * f64::from(weights[g]) / total) / f64::from(weights[g]);
                    prop_assert!(lag.abs() <= bound, "{}: flow {} off its share by {:.0} bytes per unit of weight", name, g, lag);
                }
            }
        }
    }

    #[test]
    fn wf2q_plus_picks_what_a_linear_scan_picks(ops in ops(), weights in weights()) {
        let mut fast = Wf2qPlus::new(&weights, LIMIT);
        let mut slow = LinearWf2qPlus::new(&weights, LIMIT);
        for op in &ops {
            match *op {
                Op::Enqueue { flow, len } => prop_assert_eq!(fast.enqueue(flow, len, ()).is_ok(), slow.enqueue(flow, len)),
                Op::Dequeue => prop_assert_eq!(fast.dequeue().map(|(f, l, ())| (f, l)), slow.dequeue()),
            }
        }
    }
}

#[test]
fn strict_priority_serves_a_lower_level_only_when_the_higher_ones_are_empty() {
    let mut s = Priority::new(&[1, 0, 1], 8);
    for (flow, item) in [(0, 'a'), (2, 'b'), (1, 'c'), (0, 'd'), (1, 'e')] {
        s.enqueue(flow, 100, item).unwrap();
    }
    let order: String = std::iter::from_fn(|| s.dequeue().map(|p| p.2)).collect();
    assert_eq!(order, "ceabd");
}

/// WF²Q+ as its definition reads, by scanning every flow per packet.
struct LinearWf2qPlus {
    queues: Vec<std::collections::VecDeque<u32>>,
    limit: usize,
    per_byte: Vec<u128>,
    start: Vec<u128>,
    finish: Vec<u128>,
    now: u128,
}

impl LinearWf2qPlus {
    fn new(weights: &[u32], limit: usize) -> Self {
        let total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
        let n = weights.len();
        Self {
            queues: vec![Default::default(); n],
            limit,
            per_byte: weights.iter().map(|&w| (total << 24) / u128::from(w)).collect(),
            start: vec![0; n],
            finish: vec![0; n],
            now: 0,
        }
    }

    fn enqueue(&mut self, flow: usize, len: u32) -> bool {
        if self.queues[flow].len() >= self.limit {
            return false;
        }
        if self.queues[flow].is_empty() {
            self.start[flow] = self.finish[flow].max(self.now);
            self.finish[flow] = self.start[flow] + u128::from(len) * self.per_byte[flow];
        }
        self.queues[flow].push_back(len);
        true
    }

    fn dequeue(&mut self) -> Option<(usize, u32)> {
        let backlogged: Vec<usize> = (0..self.queues.len()).filter(|&f| !self.queues[f].is_empty()).collect();
        let min_start = backlogged.iter().map(|&f| self.start[f]).min()?;
        self.now = self.now.max(min_start);
        let flow = backlogged.iter().copied().filter(|&f| self.start[f] <= self.now).min_by_key(|&f| (self.finish[f], f))?;
        let len = self.queues[flow].pop_front()?;
        self.now += u128::from(len) << 24;
        if let Some(&next) = self.queues[flow].front() {
            self.start[flow] = self.finish[flow];
            self.finish[flow] = self.start[flow] + u128::from(next) * self.per_byte[flow];
        }
        Some((flow, len))
    }
}

//! FQ-CoDel (RFC 8290) on a class of the scheduled egress: the class's
//! packets are queued by flow (a hash of the 5-tuple picks one of
//! `flows` queues), the class's turn on the link goes to its queues in
//! deficit round robin (a `quantum` of bytes each, queues that have just
//! become busy first: a sparse flow such as a ping waits behind no bulk
//! transfer), and each queue runs its own CoDel.
//!
//! The scheduler between classes still sees one queue per class: each of
//! the class's packets holds a place in it, and when the scheduler gives
//! the class a turn, this module chooses which of its packets fills it.
//! One place, one packet, sent or dropped: a drop is a turn used, and the
//! next turn goes on with the same queue, as RFC 8290's dequeue goes on
//! after CoDel dropped. A full class takes the arriving packet and drops
//! the head of its fattest queue instead (by bytes). The packets live in
//! one arena of the class's size: nothing is allocated once running.

use sluice_core::codel::{CoDel, CoDelConfig, Verdict};
use crate::entry::Entry;

/// FQ-CoDel's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FqCoDelConfig {
    /// Flow queues; a flow's 5-tuple hash picks one (RFC 8290, Linux: 1024).
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// Bytes a queue may send per round (RFC 8290, Linux: 1514, an Ethernet frame).
    #[serde(default = "default_quantum")]
    pub quantum_bytes: u32,
    /// Each queue's CoDel.
    #[serde(default)]
    pub codel: CoDelConfig,
}

/// The most flow queues a class may have.
pub const MAX_FLOWS: u32 = 1 << 16;

fn default_flows() -> u32 {
    1024
}

fn default_quantum() -> u32 {
    1514
}

impl Default for FqCoDelConfig {
    fn default() -> Self {
        Self { flows: default_flows(), quantum_bytes: default_quantum(), codel: CoDelConfig::default() }
    }
}

impl FqCoDelConfig {
    /// Checks the settings; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        if self.flows == 0 || self.flows > MAX_FLOWS {
            return Err(format!("fq_codel: flows {} is out of range 1..={MAX_FLOWS}", self.flows));
        }
        if self.quantum_bytes == 0 {
            return Err("fq_codel: quantum_bytes must be > 0".into());
        }
        self.codel.check().map_err(|e| format!("fq_codel: {e}"))
    }
}

/// Where a queue is in the round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// No slot.
const END: u32 = u32::MAX;

/// One flow queue: its packets (a list through the arena), its deficit and its CoDel.
#[derive(Clone, Debug)]
struct FlowQueue {
    head: u32,
    tail: u32,
    len: u32,
    /// Bytes queued.
    bytes: u64,
    /// Bytes it may still send this round.
    deficit: i64,
    codel: CoDel,
    list: List,
}

/// A queued packet.
#[derive(Clone, Copy, Debug)]
struct Slot {
    entry: Entry,
    /// When it was queued (ns).
    queued_ns: u64,
    ect: bool,
    /// The next in its queue, or the next free slot.
    next: u32,
}

/// One class's FQ-CoDel.
pub struct FqCoDel {
    quantum: i64,
    queues: Box<[FlowQueue]>,
    slots: Box<[Slot]>,
    /// The first free slot.
    free: u32,
    new_flows: std::collections::VecDeque<u32>,
    old_flows: std::collections::VecDeque<u32>,
    /// The queue the last turn dropped from: the next turn goes on with it.
    going_on: Option<u32>,
    /// Packets queued.
    len: usize,
}

impl FqCoDel {
    /// A class of `capacity` packets under `config` (as [`FqCoDelConfig::check`] takes it).
    pub fn new(config: &FqCoDelConfig, capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let queue = FlowQueue { head: END, tail: END, len: 0, bytes: 0, deficit: 0, codel: CoDel::new(&config.codel), list: List::None };
        let slots = (0..capacity).map(|i| Slot { entry: Entry { flow: 0, len: 0, id: 0 }, queued_ns: 0, ect: false, next: if i + 1 < capacity { i as u32 + 1 } else { END } }).collect();
        Self {
            quantum: i64::from(config.quantum_bytes),
            queues: vec![queue; config.flows as usize].into(),
            slots,
            free: 0,
            new_flows: std::collections::VecDeque::with_capacity(config.flows as usize),
            old_flows: std::collections::VecDeque::with_capacity(config.flows as usize),
            going_on: None,
            len: 0,
        }
    }

    /// The queue of a flow of hash `flow_hash`.
    #[inline]
    pub fn queue_of(&self, flow_hash: u32) -> u32 {
        flow_hash % self.queues.len() as u32
    }

    /// Takes new CoDel settings on every flow queue (see [`CoDel::set`]).
    pub fn set_codel(&mut self, config: &CoDelConfig) {
        for queue in self.queues.iter_mut() {
            queue.codel.set(config);
        }
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `entry`, ECN-capable when `ect`, of the flow of hash
    /// `flow_hash`, at `now_ns`; where the class is full (it holds its
    /// capacity), takes it and gives back the head of the fattest queue,
    /// to be dropped.
    pub fn enqueue(&mut self, entry: Entry, now_ns: u64, ect: bool, flow_hash: u32) -> Option<Entry> {
        let victim = if self.free == END { Some(self.drop_from_fattest()) } else { None };
        let q = self.queue_of(flow_hash);
        let s = self.free;
        self.free = self.slots[s as usize].next;
        self.slots[s as usize] = Slot { entry, queued_ns: now_ns, ect, next: END };
        let queue = &mut self.queues[q as usize];
        if queue.tail == END {
            queue.head = s;
        } else {
            self.slots[queue.tail as usize].next = s;
        }
        queue.tail = s;
        queue.len += 1;
        queue.bytes += u64::from(entry.len);
        if queue.list == List::None {
            queue.list = List::New;
            queue.deficit = self.quantum;
            self.new_flows.push_back(q);
        }
        self.len += 1;
        victim
    }

    /// Fills the class's turn at `now_ns`: the packet chosen and CoDel's
    /// verdict on it; `None` only when nothing is queued.
    pub fn dequeue(&mut self, now_ns: u64) -> Option<(Entry, Verdict)> {
        let q = match self.going_on.take() {
            Some(q) if self.queues[q as usize].len > 0 => q,
            _ => self.choose()?,
        };
        let (entry, queued_ns, ect) = self.pop(q);
        let queue = &mut self.queues[q as usize];
        let verdict = queue.codel.verdict(now_ns, now_ns.saturating_sub(queued_ns), self.len, ect);
        if verdict == Verdict::Drop {
            self.going_on = Some(q);
        } else {
            queue.deficit -= i64::from(entry.len);
        }
        if self.len == 0 {
            self.all_empty();
        }
        Some((entry, verdict))
    }

    /// The queue whose packet goes next, in RFC 8290's round: new queues
    /// first, a queue out of deficit topped up and sent to the old ones'
    /// end, an empty one out of the round (a new one to the old ones' end
    /// while there are old ones, as Linux does).
    fn choose(&mut self) -> Option<u32> {
        loop {
            let (q, from_new) = match self.new_flows.front() {
                Some(&q) => (q, true),
                None => (*self.old_flows.front()?, false),
            };
            let queue = &mut self.queues[q as usize];
            if queue.deficit > 0 && queue.len > 0 {
                return Some(q);
            }
            if from_new {
                self.new_flows.pop_front();
            } else {
                self.old_flows.pop_front();
            }
            let to_old = if queue.deficit <= 0 {
                queue.deficit += self.quantum;
                true
            } else {
                queue.codel.found_empty();
                from_new && !self.old_flows.is_empty()
            };
            queue.list = if to_old { List::Old } else { List::None };
            if to_old {
                self.old_flows.push_back(q);
            }
        }
    }

    /// Nothing is queued: every queue in the round would be found empty
    /// (RFC 8290's dequeue of an empty class takes them all out).
    fn all_empty(&mut self) {
        for q in self.new_flows.drain(..).chain(self.old_flows.drain(..)) {
            let queue = &mut self.queues[q as usize];
            queue.codel.found_empty();
            queue.list = List::None;
        }
        self.going_on = None;
    }

    /// Takes the head of queue `q`: its entry, when it was queued, whether it is ECN-capable.
    fn pop(&mut self, q: u32) -> (Entry, u64, bool) {
        let queue = &mut self.queues[q as usize];
        let s = queue.head;
        let slot = self.slots[s as usize];
        queue.head = slot.next;
        if queue.head == END {
            queue.tail = END;
        }
        queue.len -= 1;
        queue.bytes -= u64::from(slot.entry.len);
        self.slots[s as usize].next = self.free;
        self.free = s;
        self.len -= 1;
        (slot.entry, slot.queued_ns, slot.ect)
    }

    /// Takes the head of the queue with the most bytes (RFC 8290 §4.1).
    fn drop_from_fattest(&mut self) -> Entry {
        let fattest = (0..self.queues.len()).max_by_key(|&q| self.queues[q].bytes).expect("a class has a queue");
        self.pop(fattest as u32).0
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    /// RFC 8290's dequeue (section 4.2, as Linux's fq_codel_dequeue runs
    /// it), each flow queue running RFC 8289's CoDel with Linux's ECN
    /// marking, its "queue of at most one packet" read on the whole class.
    struct Rfc8290 {
        queues: Vec<RfcQueue>,
        new_flows: VecDeque<usize>,
        old_flows: VecDeque<usize>,
        quantum: i64,
        target: u64,
        interval: u64,
    }

    #[derive(Clone, Default)]
    struct RfcQueue {
        packets: VecDeque<(u64, bool, u16)>,
        deficit: i64,
        listed: bool,
        first_above_time: u64,
        drop_next: u64,
        count: u32,
        lastcount: u32,
        dropping: bool,
    }

    impl Rfc8290 {
        fn backlog(&self) -> usize {
            self.queues.iter().map(|q| q.packets.len()).sum()
        }

        fn enqueue(&mut self, q: usize, packet: (u64, bool, u16)) {
            self.queues[q].packets.push_back(packet);
            if !self.queues[q].listed {
                self.queues[q].listed = true;
                self.queues[q].deficit = self.quantum;
                self.new_flows.push_back(q);
            }
        }

        /// CoDel's `dodequeue` on queue `q`.
        fn dodequeue(&mut self, q: usize, now: u64) -> (Option<(u64, bool, u16)>, bool) {
            let Some(p) = self.queues[q].packets.pop_front() else {
                self.queues[q].first_above_time = 0;
                return (None, false);
            };
            let left = self.backlog();
            let (target, interval) = (self.target, self.interval);
            let queue = &mut self.queues[q];
            if now - p.0 < target || left <= 1 {
                queue.first_above_time = 0;
                return (Some(p), false);
            }
            if queue.first_above_time == 0 {
                queue.first_above_time = now + interval;
                return (Some(p), false);
            }
            (Some(p), now >= queue.first_above_time)
        }

        fn control_law(&self, q: usize, t: u64) -> u64 {
            t + (self.interval as f64 / f64::from(self.queues[q].count).sqrt()) as u64
        }

        /// CoDel's dequeue on queue `q`: the packet it sends (marked or
        /// not), the drops on the way pushed to `out`.
        fn codel_dequeue(&mut self, q: usize, now: u64, out: &mut Vec<(Verdict, u16)>) -> Option<(Verdict, u16)> {
            let (mut p, mut ok_to_drop) = self.dodequeue(q, now);
            if self.queues[q].dropping {
                if !ok_to_drop {
                    self.queues[q].dropping = false;
                }
                while now >= self.queues[q].drop_next && self.queues[q].dropping {
                    self.queues[q].count += 1;
                    if let Some(marked) = p.filter(|p| p.1) {
                        self.queues[q].drop_next = self.control_law(q, self.queues[q].drop_next);
                        return Some((Verdict::Mark, marked.2));
                    }
                    if let Some(dropped) = p {
                        out.push((Verdict::Drop, dropped.2));
                    }
                    (p, ok_to_drop) = self.dodequeue(q, now);
                    if !ok_to_drop {
                        self.queues[q].dropping = false;
                    } else {
                        self.queues[q].drop_next = self.control_law(q, self.queues[q].drop_next);
                    }
                }
            } else if ok_to_drop {
                if let Some(marked) = p.filter(|p| p.1) {
                    self.enter(q, now);
                    return Some((Verdict::Mark, marked.2));
                }
                out.push((Verdict::Drop, p.expect("ok_to_drop has a packet").2));
                (p, _) = self.dodequeue(q, now);
                self.enter(q, now);
            }
            p.map(|p| (Verdict::Send, p.2))
        }

        fn enter(&mut self, q: usize, now: u64) {
            let interval = self.interval;
            let queue = &mut self.queues[q];
            queue.dropping = true;
            let delta = queue.count.wrapping_sub(queue.lastcount);
            queue.count = 1;
            if delta > 1 && (now as i64 - queue.drop_next as i64) < 16 * interval as i64 {
                queue.count = delta;
            }
            let count = queue.count;
            self.queues[q].drop_next = self.control_law(q, now);
            self.queues[q].lastcount = count;
        }

        /// One dequeue at `now`: the verdicts on the packets it took, in order.
        fn dequeue(&mut self, now: u64, out: &mut Vec<(Verdict, u16)>) {
            loop {
                let (q, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                    (Some(&q), _) => (q, true),
                    (None, Some(&q)) => (q, false),
                    (None, None) => return,
                };
                if self.queues[q].deficit <= 0 {
                    self.queues[q].deficit += self.quantum;
                    if from_new { self.new_flows.pop_front() } else { self.old_flows.pop_front() };
                    self.old_flows.push_back(q);
                    continue;
                }
                let Some((verdict, len)) = self.codel_dequeue(q, now, out) else {
                    if from_new { self.new_flows.pop_front() } else { self.old_flows.pop_front() };
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(q);
                    } else {
                        self.queues[q].listed = false;
                    }
                    continue;
                };
                self.queues[q].deficit -= i64::from(len);
                out.push((verdict, len));
                return;
            }
        }
    }

    #[test]
    fn its_verdicts_are_rfc_8290s_on_flows_that_build_and_drain() {
        let config = FqCoDelConfig { flows: 16, quantum_bytes: 1514, codel: CoDelConfig { target_us: 5_000, interval_us: 100_000, ecn: true } };
        for seed in 0..20 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut rfc = Rfc8290 { queues: vec![RfcQueue::default(); 16], new_flows: VecDeque::new(), old_flows: VecDeque::new(), quantum: 1514, target: 5_000_000, interval: 100_000_000 };
            let mut ours = FqCoDel::new(&config, 100_000);
            let (mut theirs, mut mine) = (Vec::new(), Vec::new());
            // A link of 1 000 pkt/s; 6 flows, some bulk and some sparse, of mixed sizes, some ECN-capable.
            let ect_share = if seed % 2 == 0 { 0.0 } else { 0.3 };
            let mut now = 0u64;
            for phase in 0..10 {
                let per_ms: f64 = if phase % 3 == 2 { 0.3 } else { rng.gen_range(1.05..2.5) };
                for _ in 0..rng.gen_range(200..1200) {
                    now += 1_000_000;
                    let mut arrivals = per_ms.floor() as usize + usize::from(rng.gen_bool(per_ms.fract()));
                    while arrivals > 0 {
                        let flow = if rng.gen_bool(0.05) { rng.gen_range(3..6u32) } else { rng.gen_range(0..3u32) };
                        let len = if rng.gen_bool(0.7) { 1500 } else { rng.gen_range(64..1500u16) };
                        let (at, ect) = (now - rng.gen_range(0..1_000_000), rng.gen_bool(ect_share));
                        rfc.enqueue(flow as usize, (at, ect, len));
                        assert!(ours.enqueue(Entry { flow: 0, len, id: 0 }, at, ect, flow).is_none());
                        arrivals -= 1;
                    }
                    rfc.dequeue(now, &mut theirs);
                    if rfc.backlog() == 0 {
                        // The link asks again at once, as Linux's qdisc_run does until the queue gives nothing.
                        rfc.dequeue(now, &mut theirs);
                    }
                    while let Some((e, verdict)) = ours.dequeue(now) {
                        mine.push((verdict, e.len));
                        if verdict != Verdict::Drop {
                            break;
                        }
                    }
                }
            }
            let first = mine.iter().zip(&theirs).position(|(a, b)| a != b).unwrap_or(mine.len().min(theirs.len()));
            assert_eq!(mine.len(), theirs.len(), "seed {seed}: first difference at {first}: {:?} against {:?}", &mine[first.saturating_sub(3)..(first + 3).min(mine.len())], &theirs[first.saturating_sub(3)..(first + 3).min(theirs.len())]);
            assert!(first == mine.len(), "seed {seed}: first difference at {first}: {:?} against {:?}", &mine[first.saturating_sub(3)..(first + 3).min(mine.len())], &theirs[first.saturating_sub(3)..(first + 3).min(theirs.len())]);
            assert!(mine.iter().filter(|v| v.0 == Verdict::Drop).count() > 20, "seed {seed}: the overloads are controlled");
        }
    }

    #[test]
    fn a_sparse_flow_goes_first_and_a_full_class_drops_from_its_fattest_queue() {
        let mut fq = FqCoDel::new(&FqCoDelConfig::default(), 100);
        for i in 0..100 {
            assert!(fq.enqueue(Entry { flow: 0, len: 1500, id: i }, 0, false, 7).is_none());
        }
        // A full class: the ping goes in, the bulk flow's head goes out.
        assert_eq!(fq.enqueue(Entry { flow: 0, len: 84, id: 1000 }, 0, false, 8), Some(Entry { flow: 0, len: 1500, id: 0 }));
        // The bulk flow's quantum takes two frames (1514 bytes: 14 left after
        // the first); then the ping's queue, new too, goes before its third.
        let order: Vec<u32> = (0..4).map(|_| fq.dequeue(1).expect("queued").0.id).collect();
        assert_eq!(order, [1, 2, 1000, 3]);
        assert_eq!(fq.len(), 96);
        assert_eq!(FqCoDelConfig { flows: 0, ..FqCoDelConfig::default() }.check().unwrap_err(), "fq_codel: flows 0 is out of range 1..=65536");
    }
}

//! CoDel (RFC 8289) on a queue (a class of the scheduled egress, an
//! inter-worker ring): at each of the queue's packets about to leave it, a
//! verdict from how long it waited (its sojourn time). While the sojourn
//! time has stayed above `target` for an `interval`, packets are dropped (or, where they are
//! ECN-capable and `ecn` is on, marked congestion experienced: RFC 3168,
//! as Linux's codel marks), ever more often (the control law: the next
//! after `interval / √count`), until a packet waited less than `target`
//! again. (`sluice_pspat::aqm` keeps it for the egress's classes that
//! have it, beside the scheduler; the walker for its inbound rings.)
//!
//! RFC 8289's pseudo-code drops a packet and dequeues the next from the
//! same queue in one call. Here the queue's owner takes every packet, so
//! the verdict is given a packet at a time: after a drop the queue's next
//! packet is judged as the pseudo-code judges the one it dequeues next.
//! On entering the dropping state, the count starts where the last
//! dropping state left it if that ended recently (Linux's variant, which
//! the RFC's pseudo-code shows). The RFC's "bytes in the queue at most
//! one MTU" is read as "at most one packet left in the queue".

/// CoDel's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoDelConfig {
    /// The sojourn time it keeps the queue to (µs; RFC 8289: 5 ms).
    #[serde(default = "default_target_us")]
    pub target_us: u64,
    /// How long the sojourn time may stay above the target before it acts,
    /// and the control law's base (µs; RFC 8289: 100 ms).
    #[serde(default = "default_interval_us")]
    pub interval_us: u64,
    /// Mark ECN-capable packets congestion experienced instead of dropping them (RFC 3168).
    #[serde(default = "default_ecn")]
    pub ecn: bool,
}

fn default_target_us() -> u64 {
    5_000
}

fn default_interval_us() -> u64 {
    100_000
}

fn default_ecn() -> bool {
    true
}

impl Default for CoDelConfig {
    fn default() -> Self {
        Self { target_us: default_target_us(), interval_us: default_interval_us(), ecn: default_ecn() }
    }
}

impl CoDelConfig {
    /// Checks the settings; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        if self.target_us == 0 || self.interval_us == 0 {
            return Err("codel: target_us and interval_us must be > 0".into());
        }
        if self.target_us >= self.interval_us {
            return Err(format!("codel: target_us {} must be below interval_us {}", self.target_us, self.interval_us));
        }
        Ok(())
    }
}

/// What becomes of a packet about to be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Sent.
    Send,
    /// Sent, marked congestion experienced.
    Mark,
    /// Dropped.
    Drop,
}

/// Where the pseudo-code's dequeue would be with the queue's next packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// A fresh dequeue.
    Fresh,
    /// The packet after the drop that entered the dropping state: sent.
    AfterEntry,
    /// The packet after a drop inside the drop loop: the loop goes on with it.
    InLoop,
}

/// One queue's CoDel state.
#[derive(Clone, Debug)]
pub struct CoDel {
    target_ns: u64,
    interval_ns: u64,
    ecn: bool,
    /// When the sojourn time will have been above target for an interval (ns; 0: it is not above).
    first_above_ns: u64,
    /// When the next drop is due, while dropping (ns).
    drop_next_ns: u64,
    /// Drops (and marks) since entering the dropping state.
    count: u32,
    /// `count` when the last dropping state was entered.
    last_count: u32,
    dropping: bool,
    next: Next,
    /// Packets dropped (cumulative).
    pub dropped: u64,
    /// Packets marked (cumulative).
    pub marked: u64,
}

impl CoDel {
    /// A queue's CoDel under `config` (as [`CoDelConfig::check`] takes it).
    pub fn new(config: &CoDelConfig) -> Self {
        let mut codel = Self {
            target_ns: 0,
            interval_ns: 0,
            ecn: false,
            first_above_ns: 0,
            drop_next_ns: 0,
            count: 0,
            last_count: 0,
            dropping: false,
            next: Next::Fresh,
            dropped: 0,
            marked: 0,
        };
        codel.set(config);
        codel
    }

    /// Takes new settings (as [`CoDelConfig::check`] takes them) and keeps
    /// its state, as Linux's `tc qdisc change` does: the verdicts from the
    /// next one on judge by them.
    pub fn set(&mut self, config: &CoDelConfig) {
        self.target_ns = config.target_us * 1_000;
        self.interval_ns = config.interval_us * 1_000;
        self.ecn = config.ecn;
    }

    /// Whether it marks ECN-capable packets rather than drop them (its
    /// `ecn`): a caller that knows it does not need not read them.
    pub fn marks(&self) -> bool {
        self.ecn
    }

    /// The verdict on the queue's packet about to leave it at `now_ns`,
    /// which waited `sojourn_ns`, leaves `left` packets behind it, and is
    /// ECN-capable when `ect`.
    pub fn verdict(&mut self, now_ns: u64, sojourn_ns: u64, left: usize, ect: bool) -> Verdict {
        let ok_to_drop = self.ok_to_drop(now_ns, sojourn_ns, left);
        match std::mem::replace(&mut self.next, Next::Fresh) {
            Next::AfterEntry => Verdict::Send,
            Next::InLoop if !ok_to_drop => {
                self.dropping = false;
                Verdict::Send
            }
            Next::InLoop => {
                self.drop_next_ns = self.control_law(self.drop_next_ns);
                self.drop_in_loop(now_ns, ect)
            }
            Next::Fresh if self.dropping => {
                if !ok_to_drop {
                    self.dropping = false;
                    return Verdict::Send;
                }
                self.drop_in_loop(now_ns, ect)
            }
            Next::Fresh if ok_to_drop => self.enter_dropping(now_ns, ect),
            Next::Fresh => Verdict::Send,
        }
    }

    /// The queue is empty (the pseudo-code's dequeue of nothing).
    pub fn emptied(&mut self) {
        self.first_above_ns = 0;
        if self.next == Next::InLoop {
            self.dropping = false;
        }
        self.next = Next::Fresh;
    }

    /// A dequeue found the queue empty (RFC 8289's dequeue of nothing): it
    /// leaves the dropping state, and the sojourn time is below target.
    pub fn found_empty(&mut self) {
        self.first_above_ns = 0;
        self.dropping = false;
        self.next = Next::Fresh;
    }

    /// The pseudo-code's `dodequeue`: whether the sojourn time has been
    /// above target for an interval.
    fn ok_to_drop(&mut self, now_ns: u64, sojourn_ns: u64, left: usize) -> bool {
        if sojourn_ns < self.target_ns || left <= 1 {
            self.first_above_ns = 0;
            return false;
        }
        if self.first_above_ns == 0 {
            self.first_above_ns = now_ns + self.interval_ns;
            return false;
        }
        now_ns >= self.first_above_ns
    }

    /// The drop loop's step while dropping: a drop (or mark) if one is due.
    fn drop_in_loop(&mut self, now_ns: u64, ect: bool) -> Verdict {
        if now_ns < self.drop_next_ns {
            return Verdict::Send;
        }
        self.count += 1;
        if self.ecn && ect {
            // Marked and sent: the loop ends with it, the next drop scheduled.
            self.marked += 1;
            self.drop_next_ns = self.control_law(self.drop_next_ns);
            return Verdict::Mark;
        }
        self.dropped += 1;
        self.next = Next::InLoop;
        Verdict::Drop
    }

    /// Enters the dropping state with this packet dropped (or marked).
    fn enter_dropping(&mut self, now_ns: u64, ect: bool) -> Verdict {
        let verdict = if self.ecn && ect {
            self.marked += 1;
            Verdict::Mark
        } else {
            self.dropped += 1;
            self.next = Next::AfterEntry;
            Verdict::Drop
        };
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.last_count);
        self.count = if delta > 1 && now_ns.saturating_sub(self.drop_next_ns) < 16 * self.interval_ns { delta } else { 1 };
        self.drop_next_ns = self.control_law(now_ns);
        self.last_count = self.count;
        verdict
    }

    /// `t + interval / √count` (ns).
    fn control_law(&self, t: u64) -> u64 {
        t + (self.interval_ns as f64 / f64::from(self.count.max(1)).sqrt()) as u64
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    /// RFC 8289's pseudo-code (section 5), transcribed over a FIFO of
    /// (arrival ns, ECN-capable) packets, with Linux's ECN marking (a
    /// packet marked is sent, and ends the drop loop) and its signed
    /// "now − drop_next < 16 · interval".
    struct Rfc8289 {
        queue: VecDeque<(u64, bool)>,
        target: u64,
        interval: u64,
        first_above_time: u64,
        drop_next: u64,
        count: u32,
        lastcount: u32,
        dropping: bool,
    }

    impl Rfc8289 {
        fn dodequeue(&mut self, now: u64) -> (Option<(u64, bool)>, bool) {
            let Some(p) = self.queue.pop_front() else {
                self.first_above_time = 0;
                return (None, false);
            };
            let sojourn_time = now - p.0;
            if sojourn_time < self.target || self.queue.len() <= 1 {
                self.first_above_time = 0;
                return (Some(p), false);
            }
            if self.first_above_time == 0 {
                self.first_above_time = now + self.interval;
                return (Some(p), false);
            }
            (Some(p), now >= self.first_above_time)
        }

        fn control_law(&self, t: u64) -> u64 {
            t + (self.interval as f64 / f64::from(self.count).sqrt()) as u64
        }

        /// One dequeue at `now`: the verdicts on the packets it took, in order.
        fn dequeue(&mut self, now: u64, out: &mut Vec<Verdict>) {
            let (mut p, mut ok_to_drop) = self.dodequeue(now);
            if self.dropping {
                if !ok_to_drop {
                    self.dropping = false;
                }
                while now >= self.drop_next && self.dropping {
                    self.count += 1;
                    if p.is_some_and(|p| p.1) {
                        out.push(Verdict::Mark);
                        self.drop_next = self.control_law(self.drop_next);
                        return;
                    }
                    if p.is_some() {
                        out.push(Verdict::Drop);
                    }
                    (p, ok_to_drop) = self.dodequeue(now);
                    if !ok_to_drop {
                        self.dropping = false;
                    } else {
                        self.drop_next = self.control_law(self.drop_next);
                    }
                }
            } else if ok_to_drop {
                if p.is_some_and(|p| p.1) {
                    out.push(Verdict::Mark);
                    p = None;
                } else {
                    out.push(Verdict::Drop);
                    (p, _) = self.dodequeue(now);
                }
                self.dropping = true;
                let delta = self.count.wrapping_sub(self.lastcount);
                self.count = 1;
                if delta > 1 && (now as i64 - self.drop_next as i64) < 16 * self.interval as i64 {
                    self.count = delta;
                }
                self.drop_next = self.control_law(now);
                self.lastcount = self.count;
            }
            if p.is_some() {
                out.push(Verdict::Send);
            }
        }
    }

    /// This module's CoDel, asked packet by packet at the same send
    /// opportunities: the verdicts, in order.
    fn ours(codel: &mut CoDel, queue: &mut VecDeque<(u64, bool)>, now: u64, out: &mut Vec<Verdict>) {
        loop {
            let Some((arrived, ect)) = queue.pop_front() else {
                codel.emptied();
                return;
            };
            let verdict = codel.verdict(now, now - arrived, queue.len(), ect);
            out.push(verdict);
            if queue.is_empty() {
                codel.emptied();
            }
            if verdict != Verdict::Drop {
                return;
            }
        }
    }

    #[test]
    fn its_verdicts_are_rfc_8289s_on_a_queue_that_builds_and_drains() {
        let config = CoDelConfig { target_us: 5_000, interval_us: 100_000, ecn: true };
        for seed in 0..20 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut rfc = Rfc8289 { queue: VecDeque::new(), target: 5_000_000, interval: 100_000_000, first_above_time: 0, drop_next: 0, count: 0, lastcount: 0, dropping: false };
            let (mut codel, mut queue) = (CoDel::new(&config), VecDeque::new());
            let (mut theirs, mut mine) = (Vec::new(), Vec::new());
            // A link of 1 000 pkt/s fed in phases of over- and underload; a quarter of the packets ECN-capable.
            let service_ns = 1_000_000;
            let ect_share = if seed % 2 == 0 { 0.0 } else { 0.25 };
            let mut now = 0;
            for phase in 0..12 {
                let per_ms: f64 = if phase % 3 == 2 { 0.3 } else { rng.gen_range(1.05..2.5) };
                for _ in 0..rng.gen_range(200..1500) {
                    now += service_ns;
                    let mut arrivals = per_ms.floor() as usize + usize::from(rng.gen_bool(per_ms.fract()));
                    while arrivals > 0 {
                        let packet = (now - rng.gen_range(0..service_ns), rng.gen_bool(ect_share));
                        rfc.queue.push_back(packet);
                        queue.push_back(packet);
                        arrivals -= 1;
                    }
                    rfc.dequeue(now, &mut theirs);
                    ours(&mut codel, &mut queue, now, &mut mine);
                }
            }
            assert_eq!(mine, theirs, "seed {seed}");
            let drops = mine.iter().filter(|&&v| v == Verdict::Drop).count() as u64;
            let marks = mine.iter().filter(|&&v| v == Verdict::Mark).count() as u64;
            assert!(drops > 50, "seed {seed}: the overloads are controlled ({drops} drops)");
            assert_eq!((codel.dropped, codel.marked), (drops, marks));
            assert_eq!(marks > 0, ect_share > 0.0, "seed {seed}: ECN-capable packets are marked, not dropped");
        }
    }

    #[test]
    fn a_short_burst_or_a_queue_of_one_is_left_alone() {
        let mut codel = CoDel::new(&CoDelConfig { ecn: false, ..CoDelConfig::default() });
        // 50 ms above target is less than the interval: no drop.
        for ms in 0..50 {
            assert_eq!(codel.verdict(ms * 1_000_000, 20_000_000, 10, true), Verdict::Send);
        }
        codel.emptied();
        // Above target for a second, but one packet left each time: no drop.
        for ms in 0..1000 {
            assert_eq!(codel.verdict(ms * 1_000_000, 20_000_000, 1, true), Verdict::Send);
        }
        assert_eq!(CoDelConfig { target_us: 100_000, ..CoDelConfig::default() }.check().unwrap_err(), "codel: target_us 100000 must be below interval_us 100000");
    }
}

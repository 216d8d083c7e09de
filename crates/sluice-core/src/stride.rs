//! Stride scheduling (Waldspurger & Weihl, 1995) over a worker's
//! weighted-fair units: each turn goes to the runnable unit with the
//! smallest pass, whose pass then advances by a stride inversely
//! proportional to its weight, so turns are shared in proportion to weight.

/// Pass advance of a unit of weight 1.
const STRIDE1: u64 = 1 << 20;

/// Pass values of `n` units, and which of them may be runnable.
pub(crate) struct Stride {
    pass: Vec<u64>,
    /// Bit u: unit u may be runnable. A unit found not runnable, or put
    /// to sleep by its owner once served, sleeps until woken, so a turn
    /// looks only at units with work rather than at every queue (L2L3(16)
    /// under NFVnice: scanning all 50 units was 30% of the worker's time).
    awake: Vec<u64>,
    /// Pass of the last unit served: a unit that was idle rejoins here, so
    /// it cannot claim the turns it missed.
    vtime: u64,
}

impl Stride {
    /// A scheduler over `units` units.
    pub(crate) fn new(units: usize) -> Self {
        let mut s = Self { pass: vec![0; units], awake: vec![0; units.div_ceil(64)], vtime: 0 };
        s.wake_all();
        s
    }

    /// Unit `u` may have become runnable.
    #[inline]
    pub(crate) fn wake(&mut self, u: usize) {
        self.awake[u / 64] |= 1 << (u % 64);
    }

    /// Unit `u` is not runnable until woken.
    #[inline]
    pub(crate) fn sleep(&mut self, u: usize) {
        self.awake[u / 64] &= !(1 << (u % 64));
    }

    /// Every unit may have become runnable.
    pub(crate) fn wake_all(&mut self) {
        self.awake.fill(u64::MAX);
        if let Some(last) = self.awake.last_mut() {
            *last >>= (64 - self.pass.len() % 64) % 64;
        }
    }

    /// Starts the turns afresh: every unit at the same pass, every unit
    /// awake. Passes carry the weights they were earned at; kept across a
    /// change of weights, they set the order of turns for good (a generated
    /// pipeline under wfq-opt, back on equal weights after one period of
    /// others, served its tightest flow's queues in a phase that held it at
    /// 22 µs rather than the 14 µs it had from a fresh start).
    pub(crate) fn restart(&mut self) {
        self.pass.fill(self.vtime);
        self.wake_all();
    }

    /// The runnable unit whose turn it is, charged one turn at its weight
    /// (weights below 1 count as 1); `None` when no unit is runnable. Of
    /// the awake units it asks `runnable` only those that could win, and
    /// puts to sleep those that are not.
    #[inline]
    pub(crate) fn pick(&mut self, runnable: impl Fn(usize) -> bool, weight: impl Fn(usize) -> u32) -> Option<usize> {
        let mut best: Option<(usize, u64)> = None;
        for w in 0..self.awake.len() {
            let mut bits = self.awake[w];
            while bits != 0 {
                let u = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let pass = self.pass[u].max(self.vtime);
                if best.is_none_or(|(_, b)| pass < b) {
                    if runnable(u) {
                        best = Some((u, pass));
                    } else {
                        self.sleep(u);
                    }
                }
            }
        }
        let (u, pass) = best?;
        self.vtime = pass;
        self.pass[u] = pass + STRIDE1 / weight(u).max(1) as u64;
        Some(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_follow_weights_and_skip_idle_units() {
        let mut s = Stride::new(3);
        let weights = [1u32, 3, 2];
        let mut turns = [0; 3];
        for _ in 0..600 {
            turns[s.pick(|u| u != 2, |u| weights[u]).unwrap()] += 1;
        }
        assert_eq!(turns, [150, 450, 0]);
        s.wake(2);
        for _ in 0..600 {
            turns[s.pick(|_| true, |u| weights[u]).unwrap()] += 1;
        }
        assert_eq!(turns, [250, 750, 200], "unit 2 rejoins at the current pass, not with a backlog of turns");
        assert_eq!(s.pick(|_| false, |_| 1), None);
    }

    #[test]
    fn a_unit_found_not_runnable_sleeps_until_woken() {
        let mut s = Stride::new(70);
        let asked = std::cell::Cell::new(0);
        let ready = |u: usize| {
            asked.set(asked.get() + 1);
            u == 69
        };
        assert_eq!(s.pick(ready, |_| 1), Some(69));
        assert_eq!(asked.replace(0), 70);
        assert_eq!(s.pick(ready, |_| 1), Some(69));
        assert_eq!(asked.replace(0), 1, "only the runnable unit is still awake");
        s.wake(3);
        assert_eq!(s.pick(|u| u == 3 || u == 69, |_| 1), Some(3), "woken, and its pass is the smallest");
        s.wake_all();
        assert_eq!(s.pick(|_| false, |_| 1), None);
        assert_eq!(s.pick(|_| true, |_| 1), None, "all asleep until woken");
    }
}

//! Stride scheduling (Waldspurger & Weihl, 1995) over a worker's
//! weighted-fair units: each turn goes to the runnable unit with the
//! smallest pass, whose pass then advances by a stride inversely
//! proportional to its weight, so turns are shared in proportion to weight.

/// Pass advance of a unit of weight 1.
const STRIDE1: u64 = 1 << 20;

/// Pass values of `n` units.
pub(crate) struct Stride {
    pass: Vec<u64>,
    /// Pass of the last unit served: a unit that was idle rejoins here, so
    /// it cannot claim the turns it missed.
    vtime: u64,
}

impl Stride {
    /// A scheduler over `units` units.
    pub(crate) fn new(units: usize) -> Self {
        Self { pass: vec![0; units], vtime: 0 }
    }

    /// The runnable unit whose turn it is, charged one turn at its weight
    /// (weights below 1 count as 1); `None` when no unit is runnable.
    #[inline]
    pub(crate) fn pick(&mut self, runnable: impl Fn(usize) -> bool, weight: impl Fn(usize) -> u32) -> Option<usize> {
        let mut best: Option<(usize, u64)> = None;
        for (u, &pass) in self.pass.iter().enumerate() {
            let pass = pass.max(self.vtime);
            if best.is_none_or(|(_, b)| pass < b) && runnable(u) {
                best = Some((u, pass));
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
        for _ in 0..600 {
            turns[s.pick(|_| true, |u| weights[u]).unwrap()] += 1;
        }
        assert_eq!(turns, [250, 750, 200], "unit 2 rejoins at the current pass, not with a backlog of turns");
        assert_eq!(s.pick(|_| false, |_| 1), None);
    }
}

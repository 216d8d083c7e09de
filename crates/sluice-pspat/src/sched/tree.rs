//! A class tree in the manner of Linux's HTB: the classes are the leaves
//! of shaped parents, each parent with a rate it is given (bit/s) and a
//! ceiling it may reach by borrowing what the other parents leave of the
//! link. Within a parent its classes share by the egress's algorithm and
//! their weights.
//!
//! Each parent keeps two token buckets in bits, filled at its rate and at
//! its ceiling and charged every bit it sends, framing included as the
//! link charges it. A turn goes first to a
//! backlogged parent with rate tokens left (round robin among them); when
//! none has, to a backlogged one with ceiling tokens left, the one that
//! has borrowed least for its rate first, so that the link's excess goes
//! to the borrowers in proportion to their rates (as HTB's quanta share
//! it). A parent with neither waits: the tree sends nothing while every
//! backlogged parent is at its ceiling.

use super::{Algorithm, AnyScheduler, Scheduler};

/// A parent's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// What it is given (bit/s, > 0).
    pub rate_bits_per_s: f64,
    /// What it may reach by borrowing (bit/s, ≥ the rate).
    pub ceil_bits_per_s: f64,
}

impl Shape {
    /// Checks the shape; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        if !(self.rate_bits_per_s > 0.0 && self.rate_bits_per_s.is_finite()) {
            return Err(format!("rate_bits_per_s {} must be > 0", self.rate_bits_per_s));
        }
        if !(self.ceil_bits_per_s >= self.rate_bits_per_s && self.ceil_bits_per_s.is_finite()) {
            return Err(format!("ceil_bits_per_s {} must be ≥ rate_bits_per_s {}", self.ceil_bits_per_s, self.rate_bits_per_s));
        }
        Ok(())
    }
}

/// A bucket's depth beyond its rate's millisecond: a 64 KiB GSO frame (bits).
const BURST_BITS: f64 = 65_536.0 * 8.0;

/// A token bucket (bits).
#[derive(Clone, Copy, Debug)]
struct Bucket {
    bits_per_ns: f64,
    depth: f64,
    tokens: f64,
}

impl Bucket {
    /// Full, filling at `bits_per_s`, a millisecond of it and a GSO frame deep.
    fn new(bits_per_s: f64) -> Self {
        let depth = bits_per_s * 1e-3 + BURST_BITS;
        Self { bits_per_ns: bits_per_s * 1e-9, depth, tokens: depth }
    }

    /// Fills at `bits_per_s` from now on, its tokens kept up to its new depth.
    fn reshape(&mut self, bits_per_s: f64) {
        let tokens = self.tokens;
        *self = Self::new(bits_per_s);
        self.tokens = tokens.min(self.depth);
    }

    fn fill(&mut self, elapsed_ns: u64) {
        self.tokens = (self.tokens + elapsed_ns as f64 * self.bits_per_ns).min(self.depth);
    }
}

/// A parent: its classes' scheduler and its buckets.
struct Parent {
    inner: AnyScheduler,
    /// Its classes, by their index in the tree.
    classes: Vec<usize>,
    rate: Bucket,
    ceil: Bucket,
    /// Bits it borrowed beyond its rate, over its rate (ns): its place among borrowers.
    borrowed_ns: f64,
}

/// The class tree.
pub struct Tree {
    parents: Vec<Parent>,
    /// Per class: its parent and its index among the parent's classes.
    place: Vec<(usize, usize)>,
    /// The time its buckets are filled to (ns).
    now_ns: u64,
    /// The parent a rate turn went to last.
    cursor: usize,
    len: usize,
    /// Framing charged per packet, as the link charges it (bytes).
    overhead: u32,
}

impl Tree {
    /// Classes of `weights` under `algorithm`, class c a child of parent
    /// `parent_of[c]` of `shapes` (as [`Shape::check`] takes them; each
    /// parent with a class), each queue holding up to `limit` packets, each
    /// packet charged `overhead` bytes of framing beside its length.
    pub fn new(algorithm: Algorithm, weights: &[u32], parent_of: &[usize], shapes: &[Shape], limit: usize, overhead: u32) -> Self {
        let mut place = vec![(0, 0); weights.len()];
        let parents = shapes
            .iter()
            .enumerate()
            .map(|(p, shape)| {
                let classes: Vec<usize> = (0..weights.len()).filter(|&c| parent_of[c] == p).collect();
                for (i, &c) in classes.iter().enumerate() {
                    place[c] = (p, i);
                }
                let own: Vec<u32> = classes.iter().map(|&c| weights[c]).collect();
                Parent { inner: algorithm.build(&own, limit), classes, rate: Bucket::new(shape.rate_bits_per_s), ceil: Bucket::new(shape.ceil_bits_per_s), borrowed_ns: 0.0 }
            })
            .collect();
        Self { parents, place, now_ns: 0, cursor: 0, len: 0, overhead }
    }

    /// The same packets under new weights (see [`AnyScheduler::reweigh`]), the parents' buckets as they are.
    pub fn reweigh(&mut self, algorithm: Algorithm, weights: &[u32], limit: usize) {
        for parent in &mut self.parents {
            let own: Vec<u32> = parent.classes.iter().map(|&c| weights[c]).collect();
            parent.inner.reweigh(algorithm, &own, limit);
        }
    }

    /// Gives the parents new rates and ceilings, (rate, ceiling) each
    /// (bit/s, as [`Shape::check`] takes them): their buckets fill at the
    /// new rates from now on, keeping their tokens up to their new depths.
    pub fn reshape(&mut self, shapes: &[(f64, f64)]) {
        for (parent, &(rate, ceil)) in self.parents.iter_mut().zip(shapes) {
            parent.rate.reshape(rate);
            parent.ceil.reshape(ceil);
        }
    }

    /// Takes the next packet of parent `p`, charged to its buckets.
    fn send(&mut self, p: usize, borrowing: bool) -> Option<(usize, u32, u32)> {
        let parent = &mut self.parents[p];
        let (local, len, item) = parent.inner.dequeue()?;
        let bits = f64::from(len + self.overhead) * 8.0;
        parent.rate.tokens -= bits;
        parent.ceil.tokens -= bits;
        if borrowing {
            parent.borrowed_ns += bits / parent.rate.bits_per_ns;
        }
        self.len -= 1;
        Some((parent.classes[local], len, item))
    }
}

impl Scheduler<u32> for Tree {
    fn enqueue(&mut self, flow: usize, len: u32, item: u32) -> Result<(), u32> {
        let (p, local) = self.place[flow];
        let was_idle = self.parents[p].inner.is_empty();
        self.parents[p].inner.enqueue(local, len, item)?;
        self.len += 1;
        if was_idle {
            // A parent back from idle borrows from where the busy ones are, not from before.
            let least = self.parents.iter().filter(|q| !q.inner.is_empty()).map(|q| q.borrowed_ns).fold(f64::INFINITY, f64::min);
            let parent = &mut self.parents[p];
            if least.is_finite() {
                parent.borrowed_ns = parent.borrowed_ns.max(least);
            }
        }
        Ok(())
    }

    fn dequeue(&mut self) -> Option<(usize, u32, u32)> {
        let n = self.parents.len();
        if let Some(p) = (1..=n).map(|k| (self.cursor + k) % n).find(|&p| !self.parents[p].inner.is_empty() && self.parents[p].rate.tokens > 0.0) {
            self.cursor = p;
            return self.send(p, false);
        }
        let borrower = (0..n)
            .filter(|&p| !self.parents[p].inner.is_empty() && self.parents[p].ceil.tokens > 0.0)
            .min_by(|&a, &b| self.parents[a].borrowed_ns.total_cmp(&self.parents[b].borrowed_ns))?;
        self.send(borrower, true)
    }

    fn advance(&mut self, now_ns: u64) {
        let elapsed = now_ns.saturating_sub(self.now_ns);
        self.now_ns = self.now_ns.max(now_ns);
        for parent in &mut self.parents {
            parent.rate.fill(elapsed);
            parent.ceil.fill(elapsed);
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn drops(&self, flow: usize) -> u64 {
        let (p, local) = self.place[flow];
        self.parents[p].inner.drops(local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{Link, LinkClock};

    /// Bits each class sends over `seconds` behind a link of `link_bps`,
    /// every class kept backlogged with 1500-byte packets except those
    /// `idle` names, the link released every 100 µs.
    fn sent(tree: &mut Tree, classes: usize, link_bps: f64, seconds: f64, idle: &[usize]) -> Vec<f64> {
        let mut link = LinkClock::new(Link { bits_per_s: link_bps, overhead: 0 });
        let mut bits = vec![0.0; classes];
        let step = 100_000;
        for t in (0..(seconds * 1e9) as u64).step_by(step) {
            for c in (0..classes).filter(|c| !idle.contains(c)) {
                while tree.enqueue(c, 1500, 0).is_ok() {}
            }
            link.release(tree, t, &mut |e| bits[usize::from(e.flow)] += f64::from(e.len) * 8.0);
        }
        bits.iter().map(|b| b / seconds).collect()
    }

    #[test]
    fn parents_get_their_rates_and_share_the_rest_by_them_up_to_their_ceilings() {
        // A 100 Mbit/s link: parent A given 20 (ceiling 100) with classes of
        // weights 1 and 3, parent B given 40 (ceiling 60) with one class.
        let shapes = [Shape { rate_bits_per_s: 20e6, ceil_bits_per_s: 100e6 }, Shape { rate_bits_per_s: 40e6, ceil_bits_per_s: 60e6 }];
        let mut tree = Tree::new(Algorithm::Drr, &[1, 3, 1], &[0, 0, 1], &shapes, 100, 0);
        let rates = sent(&mut tree, 3, 100e6, 2.0, &[]);
        // The 40 left over is borrowed 1:2 by the rates: A 20 + 13.3, B 40 + 26.7, over B's ceiling of 60: B 60, A 40.
        let within = |got: f64, want: f64| (got - want).abs() <= 0.05 * want;
        assert!(within(rates[0] + rates[1], 40e6) && within(rates[2], 60e6), "{rates:?}");
        assert!(within(rates[1], 3.0 * rates[0]), "A's classes by their weights: {rates:?}");
        // B idle: A borrows the whole link.
        let mut tree = Tree::new(Algorithm::Drr, &[1, 3, 1], &[0, 0, 1], &shapes, 100, 0);
        let alone = sent(&mut tree, 3, 100e6, 1.0, &[2]);
        assert!(within(alone[0] + alone[1], 100e6), "{alone:?}");
        // Ceilings below the link: the tree leaves it idle (its buckets' first burst spread over 4 s).
        let capped = [Shape { rate_bits_per_s: 10e6, ceil_bits_per_s: 30e6 }, Shape { rate_bits_per_s: 10e6, ceil_bits_per_s: 10e6 }];
        let mut tree = Tree::new(Algorithm::Fifo, &[1, 1], &[0, 1], &capped, 100, 0);
        let rates = sent(&mut tree, 2, 100e6, 4.0, &[]);
        assert!(within(rates[0], 30e6) && within(rates[1], 10e6), "{rates:?}");
        assert_eq!(Shape { rate_bits_per_s: 2e6, ceil_bits_per_s: 1e6 }.check().unwrap_err(), "ceil_bits_per_s 1000000 must be ≥ rate_bits_per_s 2000000");
    }
}

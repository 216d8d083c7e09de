//! Token-bucket pacing of a packet stream to a target rate.

/// Lets a stream emit at `rate` pkt/s on average, with bursts of up to
/// `max(MAX_BURST, 1 ms of traffic)` to make up for long worker rounds.
#[derive(Clone, Debug)]
pub struct Pacer {
    tokens: f64,
    last_ns: Option<u64>,
}

impl Default for Pacer {
    fn default() -> Self {
        Self { tokens: 0.0, last_ns: None }
    }
}

impl Pacer {
    /// Packets the stream may emit now at `rate` pkt/s (infinite rate: unlimited).
    #[inline]
    pub fn allowance(&mut self, rate: f64, now_ns: u64) -> usize {
        if rate.is_infinite() {
            return usize::MAX;
        }
        let last = *self.last_ns.get_or_insert(now_ns);
        let cap = (rate * 1e-3).max(sluice_core::MAX_BURST as f64);
        self.tokens = (self.tokens + rate * now_ns.saturating_sub(last) as f64 * 1e-9).min(cap);
        self.last_ns = Some(now_ns);
        self.tokens as usize
    }

    /// Takes `n` tokens after emitting `n` packets.
    #[inline]
    pub fn spend(&mut self, n: usize) {
        self.tokens -= n as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paces_to_the_rate() {
        let mut p = Pacer::default();
        let mut sent = 0;
        for t in 0..=1000u64 {
            let n = p.allowance(100_000.0, t * 10_000);
            p.spend(n);
            sent += n;
        }
        assert!((999..=1001).contains(&sent), "{sent}");
        assert_eq!(Pacer::default().allowance(f64::INFINITY, 0), usize::MAX);
    }
}

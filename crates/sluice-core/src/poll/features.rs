//! What the learned poll policy reads: the sizes of a worker's last rounds,
//! how long it has found no work and the rate packets came at, kept as it
//! goes; and, for training,
//! a log of the features at the worker's decisions (taken each period into
//! its reading, see [`Counters::poll_features`](crate::Counters::poll_features)).

use std::time::Instant;

/// Rounds whose sizes are kept (the longest history a model may read).
pub const HISTORY: usize = 128;
/// Features a decision sees: [`HISTORY`] round sizes (the latest first),
/// then the time since the last round with work (µs), then the arrival rate (pkt/µs).
pub const FEATURES: usize = HISTORY + 2;
/// The shortest stretch of time the arrival rate is taken over (µs): it
/// spans the last one or two windows of at least this length, so it holds
/// tens of packets at 1 kpps and follows a change within ~20 ms.
pub const RATE_WINDOW_US: f64 = 10_000.0;
/// Decisions a worker logs a period, at most (the last ones).
pub const SAMPLES: usize = 64;

/// The sizes of a worker's last rounds and when it last had work.
#[derive(Clone, Debug)]
pub struct RoundHistory {
    /// Packets each of the last [`HISTORY`] rounds moved, a ring (pkt, saturating).
    sizes: [u16; HISTORY],
    /// Where the latest round's size is.
    latest: usize,
    /// When the first decision was taken: the times below count from it (µs).
    base: Option<Instant>,
    /// The first round without work since the last with work.
    idle_since: Option<f64>,
    /// Time since then at the latest decision (µs).
    idle_us: f64,
    /// Packets the rounds moved since `window_start`, and in the window before it.
    window_pkts: u64,
    previous_pkts: u64,
    /// When the current window and the one before it began (the first decision's time, at first).
    window_start: Option<f64>,
    previous_start: Option<f64>,
    /// Packets a µs over both windows at the latest decision.
    rate: f64,
    /// Packets the rounds moved since the decision before the latest, and when that was.
    cycle_pkts: u64,
    cycle_start: Option<f64>,
    /// Packets a µs between the last two decisions.
    cycle_rate: f64,
    /// The highest windows' rate seen (pkt/µs): a burst after any lull may come at it again.
    peak_rate: f64,
}

impl Default for RoundHistory {
    fn default() -> Self {
        Self {
            sizes: [0; HISTORY],
            latest: 0,
            base: None,
            idle_since: None,
            idle_us: 0.0,
            window_pkts: 0,
            previous_pkts: 0,
            window_start: None,
            previous_start: None,
            rate: 0.0,
            cycle_pkts: 0,
            cycle_start: None,
            cycle_rate: 0.0,
            peak_rate: 0.0,
        }
    }
}

impl RoundHistory {
    /// Notes a round that moved `work` packets.
    #[inline]
    pub fn note(&mut self, work: usize) {
        self.latest = (self.latest + 1) % HISTORY;
        self.sizes[self.latest] = work.min(u16::MAX as usize) as u16;
        self.window_pkts += work as u64;
        self.cycle_pkts += work as u64;
        if work > 0 {
            self.idle_since = None;
        }
    }

    /// Takes the time for a decision after a round that drained the input
    /// (fewer packets than a full batch): the idle time (0 after a round
    /// with work), the arrival rate over the windows since `previous_start`
    /// (a window closes at the first decision `RATE_WINDOW_US` after it
    /// opened) and over the cycle since the previous decision.
    #[inline]
    pub fn before_decision(&mut self, work: usize) {
        // One clock read and one conversion a decision: the times kept are µs since the first.
        let since_base = Instant::now().duration_since(*self.base.get_or_insert_with(Instant::now));
        let now = since_base.as_secs() as f64 * 1e6 + f64::from(since_base.subsec_nanos()) / 1e3;
        self.idle_us = if work > 0 { 0.0 } else { now - *self.idle_since.get_or_insert(now) };
        // Both decisions found the input drained: what came between them arrived between them.
        if let Some(cycle) = self.cycle_start.replace(now) {
            let span = now - cycle;
            self.cycle_rate = if span > 0.0 { self.cycle_pkts as f64 / span } else { 0.0 };
        }
        self.cycle_pkts = 0;
        let start = *self.window_start.get_or_insert_with(|| {
            self.window_pkts = 0; // moved before the first decision: no time to measure them over
            now
        });
        let closed = now - start >= RATE_WINDOW_US;
        if closed {
            (self.previous_start, self.previous_pkts) = (Some(start), self.window_pkts);
            (self.window_start, self.window_pkts) = (Some(now), 0);
        }
        let span = now - self.previous_start.unwrap_or(start);
        self.rate = if span > 0.0 { (self.previous_pkts + self.window_pkts) as f64 / span } else { 0.0 };
        if closed {
            self.peak_rate = self.peak_rate.max(self.rate);
        }
    }

    /// The arrival rate at the latest decision (pkt/µs).
    #[inline]
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The arrival rate a sleep must leave queue room for (pkt/µs): the
    /// largest of the windows' rate, the last cycle's (a rise shows at
    /// once) and the highest windows' rate seen (a burst after a lull,
    /// however long, may arrive at it while the sleep was sized in the
    /// lull: the receive queue loses nothing to it).
    #[inline]
    pub fn bounding_rate(&self) -> f64 {
        self.rate.max(self.cycle_rate).max(self.peak_rate)
    }

    /// Feature `i` of a model that reads the last `rounds` sizes: the size
    /// of the round `i` back for i < `rounds`, then the idle time (µs),
    /// then the arrival rate (pkt/µs).
    #[inline]
    pub fn feature(&self, i: usize, rounds: usize) -> f64 {
        match i.checked_sub(rounds) {
            None => f64::from(self.sizes[(self.latest + HISTORY - i) % HISTORY]),
            Some(0) => self.idle_us,
            Some(_) => self.rate,
        }
    }
}

/// The features at a worker's last [`SAMPLES`] decisions of a period, rows of [`FEATURES`].
#[derive(Clone, Debug)]
pub struct FeatureLog {
    rows: Vec<f32>,
    /// Decisions logged since the last [`take`](Self::take).
    logged: usize,
}

impl Default for FeatureLog {
    fn default() -> Self {
        Self { rows: vec![0.0; SAMPLES * FEATURES], logged: 0 }
    }
}

impl FeatureLog {
    /// Logs the features `history` gives now.
    pub fn log(&mut self, history: &RoundHistory) {
        let row = &mut self.rows[(self.logged % SAMPLES) * FEATURES..][..FEATURES];
        for (i, x) in row.iter_mut().enumerate() {
            *x = history.feature(i, HISTORY) as f32;
        }
        self.logged += 1;
    }

    /// Moves the rows logged since the last call into `out` (replacing what it held).
    pub fn take(&mut self, out: &mut Vec<f32>) {
        out.clear();
        out.extend_from_slice(&self.rows[..self.logged.min(SAMPLES) * FEATURES]);
        self.logged = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_read_the_latest_rounds_first_then_the_idle_time_and_the_log_keeps_the_last_decisions() {
        let mut h = RoundHistory::default();
        for work in [3, 7, 0] {
            h.note(work);
        }
        h.before_decision(0);
        assert_eq!([h.feature(0, 2), h.feature(1, 2), h.feature(2, 2)], [0.0, 7.0, 0.0], "just idle: no time yet");
        std::thread::sleep(std::time::Duration::from_millis(2));
        h.note(0);
        h.before_decision(0);
        assert!(h.feature(2, 2) >= 2_000.0, "idle since the first empty round");
        let mut log = FeatureLog::default();
        for _ in 0..SAMPLES + 3 {
            log.log(&h);
        }
        let mut out = Vec::new();
        log.take(&mut out);
        assert_eq!(out.len(), SAMPLES * FEATURES);
        assert_eq!((out[2], out[HISTORY] as f64), (7.0, h.feature(2, 2) as f32 as f64));
        log.take(&mut out);
        assert!(out.is_empty(), "taken once");
    }

    #[test]
    fn the_arrival_rate_counts_the_packets_of_the_last_windows_over_their_time() {
        use std::time::{Duration, Instant};
        let mut h = RoundHistory::default();
        h.note(1_000); // before the first decision: no time to measure it over
        h.note(0);
        let start = Instant::now();
        h.before_decision(0);
        assert_eq!(h.feature(2, 1), 0.0);
        h.note(50);
        std::thread::sleep(Duration::from_micros(12_000));
        h.note(0);
        h.before_decision(0); // closes the first window: 50 packets in ≥ 12 ms
        h.note(30);
        h.note(0);
        h.before_decision(0);
        let most = 80.0 / 12_000.0;
        let least = 80.0 / (start.elapsed().as_nanos() as f64 / 1e3);
        assert!((least..=most).contains(&h.feature(2, 1)), "{} pkt/µs, want {least}..={most}", h.feature(2, 1));
        for _ in 0..2 {
            std::thread::sleep(Duration::from_micros(11_000));
            h.note(0);
            h.before_decision(0);
        }
        assert_eq!(h.feature(2, 1), 0.0, "no packets for two windows");
        // The burst's rate is still what a sleep leaves room for, however long the lull.
        let peak = h.bounding_rate();
        assert!(peak > 0.0 && peak <= most, "{peak} pkt/µs");
        std::thread::sleep(Duration::from_micros(11_000));
        h.note(0);
        h.before_decision(0);
        assert_eq!(h.bounding_rate(), peak);
    }
}

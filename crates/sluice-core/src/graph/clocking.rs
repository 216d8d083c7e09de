//! The worker's clock and what it times: when rounds read the clock, which
//! rounds time their NF runs (busy sampling), which packets' delays are
//! measured (delay sampling), and the readings a round hands on so that
//! each costs one clock read.

use super::gates;
use super::WalkerConfig;
use crate::telemetry::DelaySampling;

/// Clock readings and sampling draws of one worker. Readings are raw
/// clock ticks unless a name says ns.
pub(super) struct Clocking {
    pub(super) clock: quanta::Clock,
    /// The run's origin (raw ticks): times in ns count from it.
    pub(super) origin: u64,
    /// Whether the worker measures at all: packet delays, NF busy times
    /// (on sampled rounds) and the core probe ([`WalkerConfig::timing`]).
    pub(super) measures: bool,
    /// Whether rounds read the clock: to measure, or for paced sources,
    /// age bounds or held packets, which need the time.
    pub(super) reads_clock: bool,
    /// Whether this round times its NF runs (one round in `busy_sampling`, when measuring).
    pub(super) times_runs: bool,
    /// Rounds per round that times its NF runs (a power of two).
    pub(super) busy_sampling: u64,
    /// Which delivered packets are timed (see [`DelaySampling::weight`]).
    pub(super) delay_sampling: DelaySampling,
    /// This round's random bits that draw timed packets for a flow.
    pub(super) delay_draw: u64,
    /// This worker's own bits in every delay draw: workers that drew the
    /// same rounds would time their packets together.
    delay_salt: u64,
    /// State of the xorshift generator that draws sampled rounds and gate
    /// orders. (rand's `SmallRng` and `shuffle`, which the NFs use, ran the
    /// engine 2–4% slower here for the same instruction count.)
    pub(super) draws: u64,
    /// Reading at the end of the last timed step: the start of the next
    /// NF run, so that each timed run costs one clock read.
    pub(super) mark: u64,
    /// The last reading of the current walk, while nothing ran after it (see `delivery`).
    pub(super) last_read: Option<u64>,
    /// The reading that ended the last round, which the next starts at;
    /// `None` when work followed the round's last read.
    pub(super) carried: Option<u64>,
    /// When the core probe runs next (ns since the origin).
    pub(super) next_probe_ns: u64,
}

impl Clocking {
    /// Worker `worker`'s clocking, times counted from `origin` on `clock`.
    pub(super) fn new(clock: quanta::Clock, origin: u64, config: &WalkerConfig, worker: usize) -> Self {
        Self {
            clock,
            origin,
            measures: config.timing,
            reads_clock: config.timing,
            times_runs: false,
            busy_sampling: u64::from(config.busy_sampling),
            delay_sampling: config.delay_sampling,
            delay_draw: 0,
            delay_salt: (worker as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 32,
            draws: 0x9E37_79B9_7F4A_7C15,
            mark: 0,
            last_read: None,
            carried: None,
            next_probe_ns: 0,
        }
    }

    /// Time now (ns since the origin).
    #[inline]
    pub(super) fn now_ns(&self) -> u64 {
        self.clock.delta_as_nanos(self.origin, self.clock.raw())
    }

    /// Starts a round: its start (raw; the last round's end when carried
    /// over, 0 when rounds read no clock) and the time then (ns since the origin).
    #[inline]
    pub(super) fn start_round(&mut self) -> (u64, u64) {
        let start = match self.carried.take() {
            Some(end) => end,
            None if self.reads_clock => self.clock.raw(),
            None => 0,
        };
        self.last_read = None;
        self.mark = start;
        (start, if self.reads_clock { self.clock.delta_as_nanos(self.origin, start) } else { 0 })
    }

    /// Draws whether this round times its NF runs and its delay-sampling
    /// bits (from different bits of one draw).
    #[inline]
    pub(super) fn draw_round(&mut self) {
        let draw = gates::draw(&mut self.draws);
        self.times_runs = self.measures && draw & (self.busy_sampling - 1) == 0;
        self.delay_draw = (draw >> 32) ^ self.delay_salt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clocking(timing: bool, busy_sampling: u32, worker: usize) -> Clocking {
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        Clocking::new(clock, origin, &WalkerConfig { timing, busy_sampling, ..WalkerConfig::default() }, worker)
    }

    #[test]
    fn one_round_in_busy_sampling_times_its_runs_and_none_without_timing() {
        let mut c = clocking(true, 32, 0);
        let timed = (0..64_000).filter(|_| {
            c.draw_round();
            c.times_runs
        });
        let timed = timed.count();
        assert!((1_700..2_300).contains(&timed), "{timed} of 64 000 rounds timed, one in 32 expected");
        let mut off = clocking(false, 1, 0);
        assert!((0..1000).all(|_| {
            off.draw_round();
            !off.times_runs
        }));
    }

    #[test]
    fn workers_draw_their_delay_bits_apart_from_the_same_seed() {
        let (mut a, mut b) = (clocking(true, 32, 0), clocking(true, 32, 1));
        let same = (0..1000).filter(|_| {
            a.draw_round();
            b.draw_round();
            a.delay_draw == b.delay_draw
        });
        assert_eq!(same.count(), 0, "two workers never draw the same delay bits in a round");
    }

    #[test]
    fn a_round_starts_at_the_reading_the_last_one_carried_and_reads_no_clock_when_not_needed() {
        let mut c = clocking(true, 32, 0);
        let end = c.clock.raw();
        c.carried = Some(end);
        c.last_read = Some(end);
        let (start, now_ns) = c.start_round();
        assert_eq!((start, c.mark, c.last_read, c.carried), (end, end, None, None));
        assert_eq!(now_ns, c.clock.delta_as_nanos(c.origin, end));
        let mut quiet = clocking(false, 1, 0);
        assert_eq!(quiet.start_round(), (0, 0), "no clock read where nothing needs the time");
        assert!(c.start_round().0 >= end, "a fresh reading when nothing was carried");
    }
}

//! The T-WFI of a scheduling algorithm behind the arbiter, measured on a
//! virtual clock (PSPAT §5): the most a packet of client k completes after
//! it would in the ideal fluid system holding the same backlogs when it
//! arrives.
//!
//! The scenario makes the ideal completions exact. Every other client is
//! backlogged all the time (each packet it sends is replaced at once), and
//! client k sends bursts of 1 to 16 packets into an empty queue: in the
//! fluid system a burst is served at k's share φ_k of the link from its
//! arrival, so its j-th packet completes j·L_k / (φ_k B) later. Bursts
//! arrive spread uniformly over the others' round, so that they meet the
//! algorithm in every state it passes through. The arbiter takes in arrivals at its
//! scans, Δ_A apart (0: at once), and the algorithm decides when the link
//! is idle; the link has no FIFO after it (Δ_D = 0), so eq. (1) of the
//! paper bounds the measure by T-WFI_SA + Δ_A.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use sluice_pspat::sched::{Algorithm, Scheduler};

/// The largest packet every client sends (bytes): L.
pub const PACKET: u32 = 1500;

/// The clients of the paper's example (§5.2): the one measured (client 0)
/// has half the link, one other the least share (weight 1 of `2 × half`),
/// and the rest share what is left.
pub fn example_weights(clients: usize, half: u32) -> Vec<u32> {
    assert!(clients >= 3 && half as usize >= clients - 1, "{clients} clients: client 0, the least one and at least one more");
    let rest = half - 1;
    let others = (clients - 2) as u32;
    let mut weights = vec![half, 1];
    weights.extend((0..others).map(|i| rest / others + u32::from(i < rest % others)));
    weights
}

/// What the measure found for client 0, in units of L/B (one full
/// packet's time on the link).
#[derive(Clone, Copy, Debug)]
pub struct Twfi {
    /// The most a packet of client 0 completed after its ideal completion.
    pub measured: f64,
    /// Client 0's packets measured.
    pub packets: u64,
}

/// Client 0's bursts: 1 to this many packets at once.
const MOST_BURST: u64 = 16;

/// Measures client 0's T-WFI under `algorithm` with `weights`, over
/// `packets` of its packets, the arbiter scanning every `scan` (in units
/// of L/B; 0: arrivals taken at once); `seed` spreads the arrivals.
pub fn measure(algorithm: Algorithm, weights: &[u32], packets: u64, scan: f64, seed: u64) -> Twfi {
    let total: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    // Every packet is L: time in units of L/B is in packets, and client 0's
    // fluid service takes 1/φ_0 a packet.
    let fluid = total / f64::from(weights[0]);
    let mut s = algorithm.build(weights, MOST_BURST as usize);
    for flow in 1..weights.len() {
        for _ in 0..2 {
            s.enqueue(flow, PACKET, 0).expect("room for two");
        }
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    // The spread of the bursts' arrivals: a round of the others, at least one packet.
    let spread = (weights.len() as f64).max(fluid);
    let (mut now, mut worst, mut measured) = (0.0f64, f64::NEG_INFINITY, 0);
    // The burst: when it arrived, its packets, those sent.
    let (mut arrival, mut burst, mut sent) = (rng.gen_range(0.0..spread), 0, 0);
    while measured < packets {
        // A burst enters at the arbiter's first scan at or after its arrival.
        let entry = if scan > 0.0 { (arrival / scan).ceil() * scan } else { arrival };
        if burst == 0 && entry <= now {
            burst = rng.gen_range(1..=MOST_BURST);
            for _ in 0..burst {
                s.enqueue(0, PACKET, 0).expect("a burst fits client 0's queue");
            }
        }
        let (flow, _, _) = s.dequeue().expect("the others are always backlogged");
        now += 1.0;
        if flow != 0 {
            s.enqueue(flow, PACKET, 0).expect("a backlogged client's packet is replaced");
            continue;
        }
        // The fluid system serves the burst at φ_0 of the link from its arrival.
        sent += 1;
        worst = worst.max(now - arrival - sent as f64 * fluid);
        measured += 1;
        if sent == burst {
            (burst, sent) = (0, 0);
            arrival = now + rng.gen_range(0.0..spread);
        }
    }
    Twfi { measured: worst, packets: measured }
}

/// The paper's bound on client 0's T-WFI_SA (units of L/B): eq. (2) for
/// QFQ, with L_k its packets' budget `lmax` (bytes), eq. (3) for DRR;
/// `None` for the others (WF²Q+ is not in the paper's §5.2; FIFO and
/// priority have no bound).
pub fn bound(algorithm: Algorithm, weights: &[u32], lmax: u32) -> Option<f64> {
    let total: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    let phi = |w: u32| f64::from(w) / total;
    let (phi_k, phi_min) = (phi(weights[0]), phi(*weights.iter().min()?));
    match algorithm {
        Algorithm::Qfq => Some(6.0 * f64::from(lmax) / f64::from(PACKET) / phi_k),
        Algorithm::Drr => Some(1.0 / phi_min + 1.0 / phi_k + weights.len() as f64 - 1.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_weights_give_client_0_half_the_link_and_one_client_the_least() {
        let w = example_weights(25, 100);
        assert_eq!(w.len(), 25);
        assert_eq!(w.iter().sum::<u32>(), 200);
        assert_eq!((w[0], *w.iter().min().unwrap()), (100, 1));
    }

    #[test]
    fn each_algorithm_stays_within_its_bound_and_the_bounds_are_the_papers() {
        // The paper's example (§5.2): half the link for client 0, the least share 0.005.
        let w = example_weights(25, 100);
        assert!((bound(Algorithm::Drr, &w, PACKET).unwrap() - 226.0).abs() < 1e-9);
        assert!((bound(Algorithm::Qfq, &w, PACKET).unwrap() - 12.0).abs() < 1e-9);
        for (algorithm, lmax) in [(Algorithm::Drr, PACKET), (Algorithm::Qfq, 2048)] {
            let b = bound(algorithm, &w, lmax).unwrap();
            for scan in [0.0, 2.0] {
                let t = measure(algorithm, &w, 20_000, scan, 7);
                assert_eq!(t.packets, 20_000);
                // Eq. (1) with Δ_D = 0: the arbiter's scan period adds to the algorithm's bound.
                assert!(t.measured <= b + scan, "{algorithm:?} scan {scan}: {} over {b} + {scan}", t.measured);
            }
        }
    }

    #[test]
    fn drr_lags_by_the_others_round_where_wf2q_plus_and_qfq_lag_by_a_few_packets() {
        let w = example_weights(25, 100);
        let lag = |a| measure(a, &w, 20_000, 0.0, 7).measured;
        let (drr, wf2q, qfq) = (lag(Algorithm::Drr), lag(Algorithm::Wf2qPlus), lag(Algorithm::Qfq));
        // DRR: a burst arriving just after client 0's turn waits out the others' round (100 packets).
        assert!(drr > 50.0, "{drr}");
        assert!(wf2q <= 1.0 && qfq <= 3.0, "{wf2q} {qfq}");
    }
}

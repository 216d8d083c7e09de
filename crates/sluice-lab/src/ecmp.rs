//! How an LPM's multipath route spreads flows (ECMP, see
//! `sluice_nf::multipath`): real UDP frames of `flows` flows, a 5-tuple
//! each, through the `lpm` NF; each path's share of the flows against its
//! weight's, flows whose packets took two paths, and which flows move when
//! the last path is removed.

use sluice_core::harness::Harness;
use sluice_core::MAX_BURST;
use sluice_nf::lpm::LpmSpec;
use sluice_nf::NfConfig;
use sluice_traffic::TemplateSpec;

/// What one spread came to.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    /// Per path, its share of the flows.
    pub shares: Vec<f64>,
    /// Flows whose packets, sent again in the reverse order, took another path.
    pub split_flows: usize,
    /// Share of the flows on another path once the last path is removed.
    pub moved: f64,
    /// Flows that moved though the removed path was not theirs.
    pub moved_from_others: usize,
}

/// Frame `i` of `flows`: UDP to the multipath prefix of `v6`'s family,
/// from an address and port of its own.
fn frame(i: usize, v6: bool) -> Result<Vec<u8>, String> {
    let (src_ip, dst_ip) = if v6 { (format!("2001:db8:9::{:x}:{:x}", i >> 16, i & 0xffff), "2001:db8:2::9".to_string()) } else { (format!("10.{}.{}.{}", i >> 16 & 255, i >> 8 & 255, i & 255), "20.0.0.9".to_string()) };
    let template = TemplateSpec { src_ip, dst_ip, src_port: 1024 + (i % 60_000) as u16, dst_port: 443, size: 128, ..TemplateSpec::default() };
    template.build().map_err(|e| e.to_string())
}

/// The LPM with 20.0.0.0/8 and 2001:db8:2::/48 over `paths` (gate, weight), hashed under `seed`.
fn lpm(paths: &[(u16, u32)], seed: u64) -> LpmSpec {
    LpmSpec { multipath: vec![("20.0.0.0/8".into(), paths.to_vec()), ("2001:db8:2::/48".into(), paths.to_vec())], hash_seed: seed, ..LpmSpec::default() }
}

/// The gate `spec`'s LPM sends each frame of `frames` to, in their order.
fn gates_of(spec: &LpmSpec, frames: &[&Vec<u8>]) -> Result<Vec<usize>, String> {
    let mut lpm = spec.build()?;
    let mut gates = Vec::with_capacity(frames.len());
    for chunk in frames.chunks(MAX_BURST) {
        let chunk: Vec<Vec<u8>> = chunk.iter().map(|f| f.to_vec()).collect();
        let out = Harness::default().run(lpm.as_mut(), &chunk);
        for f in &chunk {
            gates.push(out.gates.iter().position(|g| g.contains(f)).ok_or("a frame left by no gate")?);
        }
    }
    Ok(gates)
}

/// `flows` flows of `v6`'s family over paths weighted `weights` (gates
/// 0, 1, …), the hash seeded with `seed`.
pub fn spread(weights: &[u32], flows: usize, v6: bool, seed: u64) -> Result<Spread, String> {
    if weights.len() < 2 || flows == 0 {
        return Err(format!("ECMP spread: {} paths and {flows} flows (at least 2 paths and a flow)", weights.len()));
    }
    let frames = (0..flows).map(|i| frame(i, v6)).collect::<Result<Vec<_>, _>>()?;
    let paths: Vec<(u16, u32)> = weights.iter().enumerate().map(|(g, &w)| (g as u16, w)).collect();
    let gates = gates_of(&lpm(&paths, seed), &frames.iter().collect::<Vec<_>>())?;
    let shares = (0..paths.len()).map(|g| gates.iter().filter(|&&x| x == g).count() as f64 / flows as f64).collect();
    let mut again = gates_of(&lpm(&paths, seed), &frames.iter().rev().collect::<Vec<_>>())?;
    again.reverse();
    let split_flows = gates.iter().zip(&again).filter(|(a, b)| a != b).count();
    let removed = paths.len() - 1;
    let after = gates_of(&lpm(&paths[..removed], seed), &frames.iter().collect::<Vec<_>>())?;
    let moved = gates.iter().zip(&after).filter(|(a, b)| a != b).count();
    let moved_from_others = gates.iter().zip(&after).filter(|(a, b)| a != b && **a != removed).count();
    Ok(Spread { shares, split_flows, moved: moved as f64 / flows as f64, moved_from_others })
}

#[cfg(test)]
mod tests {
    use super::*;

    // How the spread itself behaves is sluice-nf's multipath tests'; these check the reading of it.
    #[test]
    fn a_spread_counts_every_flow_once_and_the_moves_are_the_removed_path_s() {
        let s = spread(&[1, 2, 3, 4], 2_000, true, 11).unwrap();
        assert!((s.shares.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{:?}", s.shares);
        assert_eq!((s.split_flows, s.moved_from_others), (0, 0));
        assert!((s.moved - s.shares[3]).abs() < 1e-9, "what moves is what the removed path had");
        assert!(spread(&[1], 10, false, 0).unwrap_err().contains("at least 2 paths"));
    }
}

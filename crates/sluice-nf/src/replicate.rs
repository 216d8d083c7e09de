//! `replicate(copies)`: the ingress of a high-availability flow, which
//! sends every packet down `copies + 1` disjoint paths (one per gate) so
//! that some copy survives the failure of up to `copies` cores.

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs};

/// Sends each packet out of gate 0 and a copy of it (same bytes, flow,
/// sequence number and ingress time) out of each of gates 1..=copies. A copy
/// the pool has no buffer for is not made (the module's count of packets
/// made shows the copies that were).
pub struct Replicate {
    copies: usize,
}

impl Replicate {
    /// A replicator that makes `copies` (≥ 1) copies of each packet.
    pub fn new(copies: usize) -> Result<Self, String> {
        if copies == 0 {
            return Err("a replicator makes at least one copy".into());
        }
        Ok(Self { copies })
    }
}

impl NetworkFunction for Replicate {
    fn outgates(&self) -> usize {
        self.copies + 1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for gate in 1..=self.copies {
            for &id in input.as_slice() {
                if let Some(copy) = ctx.copy_packet(id) {
                    out.push(gate, copy);
                }
            }
        }
        out.forward(0, input);
    }
}

/// `replicate`: the ingress of high-availability flows: each packet out of
/// gate 0 and a copy out of each of gates 1..=copies.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplicateSpec {
    /// Copies per packet (≥ 1).
    pub copies: usize,
}

impl crate::NfConfig for ReplicateSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        Ok(Box::new(Replicate::new(self.copies)?))
    }

    fn outgates(&self) -> usize {
        self.copies + 1
    }
}

#[cfg(test)]
mod tests {
    use sluice_core::harness::Harness;
    use sluice_core::PacketMeta;

    use super::*;

    #[test]
    fn every_gate_gets_every_packet_with_its_metadata() {
        let mut h = Harness::default();
        let mut nf = Replicate::new(2).unwrap();
        let frames = [vec![1u8; 60], vec![2u8; 70]];
        let metas = [PacketMeta { flow: 3, seq: 41, ts_ns: 1000, ..PacketMeta::default() }, PacketMeta { flow: 3, seq: 42, ts_ns: 1010, ..PacketMeta::default() }];
        let out = h.run_with_meta(&mut nf, &frames, &metas);
        assert_eq!(out.dropped, 0);
        for gate in 0..3 {
            assert_eq!(out.gates[gate], frames.to_vec(), "gate {gate}");
            let seen: Vec<_> = out.metas[gate].iter().map(|m| (m.flow, m.seq, m.ts_ns)).collect();
            assert_eq!(seen, vec![(3, 41, 1000), (3, 42, 1010)], "gate {gate}");
        }
        assert!(Replicate::new(0).is_err());
    }
}

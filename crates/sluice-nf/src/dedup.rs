//! `dedup(ingates, flows)`: the egress of a high-availability flow, which
//! keeps the first copy of each packet to arrive over any of its paths and
//! drops the others, by the packet's flow and sequence number.

use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, NO_FLOW};

/// Sequence numbers remembered per flow behind the highest one seen (pkt).
pub const WINDOW: u32 = 4096;
const WORDS: usize = WINDOW as usize / 64;

/// What one flow has seen: the highest sequence number and which of the
/// `WINDOW` before it arrived.
#[derive(Clone)]
struct Seen {
    /// One past the highest sequence number seen (0: none yet).
    next: u32,
    /// Bit s % WINDOW is set when sequence number s (in the window) arrived.
    bits: [u64; WORDS],
}

impl Seen {
    /// Whether `seq` is new, marking it seen. Numbers more than WINDOW
    /// behind the highest are taken as already seen (a late copy).
    fn first_time(&mut self, seq: u32) -> bool {
        let bit = |s: u32| ((s % WINDOW) as usize / 64, 1u64 << (s % 64));
        if seq >= self.next {
            // Forget the numbers that fall out of the window.
            let gap = seq - self.next;
            if gap >= WINDOW {
                self.bits = [0; WORDS];
            } else {
                for s in self.next..=seq {
                    let (w, b) = bit(s);
                    self.bits[w] &= !b;
                }
            }
            self.next = seq + 1;
        } else if self.next - seq > WINDOW {
            return false;
        }
        let (w, b) = bit(seq);
        let new = self.bits[w] & b == 0;
        self.bits[w] |= b;
        new
    }
}

/// Passes the first packet of each (flow, sequence number) from any
/// ingate and drops later copies (counted as dropped: duplicates, not
/// losses). Packets without a flow, or of a flow id ≥ `flows`, pass as they
/// are. Sequence numbers must not wrap within a run (2³² packets per flow).
pub struct Dedup {
    ingates: usize,
    seen: Vec<Seen>,
}

impl Dedup {
    /// De-duplicates `ingates` paths of flows 0..`flows`.
    pub fn new(ingates: usize, flows: usize) -> Result<Self, String> {
        if ingates == 0 {
            return Err("a de-duplicator needs at least one ingate".into());
        }
        Ok(Self { ingates, seen: vec![Seen { next: 0, bits: [0; WORDS] }; flows] })
    }
}

impl NetworkFunction for Dedup {
    fn outgates(&self) -> usize {
        1
    }

    fn ingates(&self) -> usize {
        self.ingates
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            let meta = ctx.pool.meta(id);
            let keep = match self.seen.get_mut(meta.flow as usize) {
                Some(seen) if meta.flow != NO_FLOW => seen.first_time(meta.seq),
                _ => true,
            };
            if keep {
                out.push(0, id);
            } else {
                ctx.drop_duplicate(id);
            }
        }
        input.clear();
    }
}

/// `dedup`: the egress of a high-availability flow: the first copy of each
/// (flow, sequence number) from any of `ingates`; later copies dropped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DedupSpec {
    /// Number of ingates (paths, ≥ 1).
    pub ingates: usize,
    /// Flow ids 0..flows are de-duplicated.
    pub flows: usize,
}

impl crate::NfConfig for DedupSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        use sluice_core::limits::MAX_FLOWS;
        if self.flows > MAX_FLOWS {
            return Err(format!("flows {} is out of range 0..={MAX_FLOWS}", self.flows));
        }
        Ok(Box::new(Dedup::new(self.ingates, self.flows)?))
    }

    fn ingates(&self) -> usize {
        self.ingates
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use sluice_core::harness::Harness;
    use sluice_core::PacketMeta;

    use super::*;

    fn run(nf: &mut Dedup, h: &mut Harness, packets: &[(u16, u32)]) -> Vec<(u16, u32)> {
        let frames = vec![vec![0u8; 60]; packets.len()];
        let metas: Vec<_> = packets.iter().map(|&(flow, seq)| PacketMeta { flow, seq, ..PacketMeta::default() }).collect();
        h.run_with_meta(nf, &frames, &metas).metas[0].iter().map(|m| (m.flow, m.seq)).collect()
    }

    #[test]
    fn keeps_the_first_copy_per_flow_and_sequence_number() {
        let (mut h, mut nf) = (Harness::default(), Dedup::new(2, 2).unwrap());
        assert_eq!(run(&mut nf, &mut h, &[(0, 0), (0, 1), (1, 0), (0, 0), (0, 2), (1, 0)]), vec![(0, 0), (0, 1), (1, 0), (0, 2)]);
        // The late copy of 1 and a copy far behind the window are dropped; a gap is fine.
        assert_eq!(run(&mut nf, &mut h, &[(0, 1), (0, 9000), (0, 3), (0, 9000), (NO_FLOW, 5), (NO_FLOW, 5)]), vec![(0, 9000), (NO_FLOW, 5), (NO_FLOW, 5)]);
    }

    proptest! {
        /// Two paths deliver the same sequence each in order but interleaved
        /// arbitrarily: every number passes exactly once.
        #[test]
        fn two_interleaved_copies_pass_each_number_once(n in 1u32..600, picks in proptest::collection::vec(any::<bool>(), 1200)) {
            let (mut h, mut nf) = (Harness::default(), Dedup::new(2, 1).unwrap());
            let (mut a, mut b, mut arrivals) = (0u32, 0u32, Vec::new());
            for pick in picks.iter().copied().chain(std::iter::repeat(true)) {
                if a == n && b == n { break; }
                if (pick && a < n) || b == n { arrivals.push((0u16, a)); a += 1; } else { arrivals.push((0, b)); b += 1; }
            }
            let mut passed = Vec::new();
            for chunk in arrivals.chunks(200) {
                passed.extend(run(&mut nf, &mut h, chunk));
            }
            let mut seqs: Vec<u32> = passed.iter().map(|p| p.1).collect();
            seqs.sort_unstable();
            prop_assert_eq!(seqs, (0..n).collect::<Vec<_>>());
        }
    }
}

//! ACL lookups per packet against a linear first-match scan of the same
//! rules, in the same run: 100, 1 000 and 10 000 rules of mixed prefixes,
//! protocols and port ranges (`cargo bench -p sluice-nf --bench acl`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sluice_core::wire::ipv4::{mask, parse_prefix};
use sluice_nf::acl::{Acl, FiveTuple, RuleSpec};

/// A deterministic generator (xorshift), so both sides see the same rules and probes.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % u64::from(n)) as u32
    }
}

fn rules(n: usize, g: &mut Xorshift) -> Vec<RuleSpec> {
    (0..n)
        .map(|_| {
            let prefix = |g: &mut Xorshift| format!("{}.{}.{}.0/{}", 10 + g.next(4), g.next(4), g.next(64), [0, 8, 16, 24, 24, 32][g.next(6) as usize]);
            let ports = |g: &mut Xorshift| match g.next(3) {
                0 => (0, 65535),
                1 => { let p = g.next(2048) as u16; (p, p) }
                _ => { let p = g.next(2048) as u16; (p, p + g.next(512) as u16) }
            };
            RuleSpec { src: prefix(g), dst: prefix(g), proto: [None, Some(6), Some(17)][g.next(3) as usize], sport: ports(g), dport: ports(g), permit: g.next(2) == 0 }
        })
        .collect()
}

/// A rule as the baseline scans it: source net and mask, destination net
/// and mask, protocol, port ranges, permit.
type FlatRule = (u32, u32, u32, u32, Option<u8>, (u16, u16), (u16, u16), bool);

/// The baseline: every rule in priority order until one matches.
fn linear(rules: &[FlatRule], t: &FiveTuple) -> bool {
    rules
        .iter()
        .find(|r| t.src & r.1 == r.0 && t.dst & r.3 == r.2 && r.4.is_none_or(|p| p == t.proto) && (r.5 .0..=r.5 .1).contains(&t.sport) && (r.6 .0..=r.6 .1).contains(&t.dport))
        .is_some_and(|r| r.7)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("acl");
    for n in [100, 1_000, 10_000] {
        let mut g = Xorshift(0x9E37_79B9_7F4A_7C15);
        let specs = rules(n, &mut g);
        let acl = Acl::new(&specs).unwrap();
        let flat: Vec<FlatRule> = specs
            .iter()
            .map(|r| {
                let (s, sl) = parse_prefix(&r.src).unwrap();
                let (d, dl) = parse_prefix(&r.dst).unwrap();
                (s, mask(sl), d, mask(dl), r.proto, r.sport, r.dport, r.permit)
            })
            .collect();
        let probes: Vec<FiveTuple> = (0..1024)
            .map(|_| {
                let addr = |g: &mut Xorshift| u32::from_be_bytes([10 + g.next(4) as u8, g.next(4) as u8, g.next(64) as u8, g.next(256) as u8]);
                FiveTuple { src: addr(&mut g), dst: addr(&mut g), proto: [6, 17, 1][g.next(3) as usize], sport: g.next(2600) as u16, dport: g.next(2600) as u16 }
            })
            .collect();
        assert!(probes.iter().all(|t| acl.permits(t) == linear(&flat, t)));
        group.throughput(Throughput::Elements(probes.len() as u64));
        group.bench_with_input(BenchmarkId::new("tree", n), &probes, |b, p| b.iter(|| p.iter().filter(|t| acl.permits(t)).count()));
        group.bench_with_input(BenchmarkId::new("linear", n), &probes, |b, p| b.iter(|| p.iter().filter(|t| linear(&flat, t)).count()));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! ACL lookups per packet against a linear first-match scan of the same
//! rules, in the same run: 100, 1 000 and 10 000 rules of mixed prefixes,
//! protocols and port ranges (`cargo bench -p sluice-nf --bench acl`; DPDK's
//! rte_acl is in `make bench-dpdk`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sluice_core::wire::ipv4::{mask, parse_prefix};
use sluice_nf::acl::{sample_rules, sample_tuples, Acl, FiveTuple};

/// A rule as the baseline scans it: source net and mask, destination net
/// and mask, protocol, port ranges, permit.
type FlatRule = (u32, u32, u32, u32, Option<u8>, (u16, u16), (u16, u16), bool);

/// The baseline: every rule in priority order until one matches.
fn linear(rules: &[FlatRule], t: &FiveTuple) -> bool {
    let (src, dst) = t.v4_addresses().expect("IPv4 samples");
    rules
        .iter()
        .find(|r| src & r.1 == r.0 && dst & r.3 == r.2 && r.4.is_none_or(|p| p == t.proto) && (r.5 .0..=r.5 .1).contains(&t.sport) && (r.6 .0..=r.6 .1).contains(&t.dport))
        .is_some_and(|r| r.7)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("acl");
    let probes = sample_tuples(1024, 2);
    for n in [100, 1_000, 10_000] {
        let specs = sample_rules(n, 1);
        let acl = Acl::new(&specs).unwrap();
        let flat: Vec<FlatRule> = specs
            .iter()
            .map(|r| {
                let (s, sl) = parse_prefix(&r.src).unwrap();
                let (d, dl) = parse_prefix(&r.dst).unwrap();
                (s, mask(sl), d, mask(dl), r.proto, r.sport, r.dport, r.permit)
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

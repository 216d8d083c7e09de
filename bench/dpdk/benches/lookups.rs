//! Sluice's lookups against DPDK's, same tables, same keys, same run, at
//! bulk sizes 1 and 32 (ns per lookup = time per batch / batch size):
//! LPM (500 routes, DIR-24-8 both), IPv6 LPM (a full table's 120 000
//! prefixes, /48 and /32 heavy; a trie of 24-bit then 8-bit strides both), exact match (4 096 IPv4 keys; Sluice's
//! FxHash map, DPDK's CRC cuckoo hash) and ACL (1 000 and 10 000 rules;
//! Sluice's decision tree, DPDK's multi-trie).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sluice_core::wire::ipv4::{mask, parse_prefix};
use sluice_dpdk_bench as dpdk;
use sluice_nf::acl::{sample_rules, sample_tuples, Acl};
use sluice_nf::exact_match::ExactTable;
use sluice_nf::lpm::LpmTable;
use sluice_nf::lpm6::{sample_routes6, Lpm6Table};

const BULKS: [usize; 2] = [1, 32];
/// Keys looked up per measured iteration.
const KEYS: usize = 1024;

/// Deterministic xorshift: the same rules and keys for both sides.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % u64::from(n)) as u32
    }
}

/// Times `ours` against `theirs` in chunks of each bulk size: each takes a
/// chunk of its own keys (the same lookups, in each side's form) and
/// writes one result per key.
fn pair<K, L, A: Clone + Default, B: Clone + Default>(
    c: &mut Criterion,
    name: &str,
    (our_keys, their_keys): (&[K], &[L]),
    mut ours: impl FnMut(&[K], &mut [A]),
    mut theirs: impl FnMut(&[L], &mut [B]),
) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(our_keys.len() as u64));
    for bulk in BULKS {
        side(&mut group, "sluice", bulk, our_keys, &mut ours);
        side(&mut group, "dpdk", bulk, their_keys, &mut theirs);
    }
    group.finish();
}

/// One side of [`pair`] at one bulk size.
fn side<K, R: Clone + Default>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: &str,
    bulk: usize,
    keys: &[K],
    lookup: &mut impl FnMut(&[K], &mut [R]),
) {
    group.bench_function(BenchmarkId::new(label, bulk), |b| {
        let mut out = vec![R::default(); bulk];
        b.iter(|| {
            for k in keys.chunks(bulk) {
                lookup(k, &mut out[..k.len()]);
                black_box(&out);
            }
        })
    });
}

fn lpm(c: &mut Criterion, rng: &mut Rng) {
    // The L2L3 table: 490 /24s and 10 /8s over 16 next hops.
    let mut routes: Vec<(u32, u8, u16)> = (0..490).map(|i| ((20 << 24) | (i << 8), 24, (i % 16) as u16)).collect();
    routes.extend((0..10).map(|i| ((30 + i) << 24, 8, i as u16)));
    let ours = LpmTable::new(&routes).unwrap();
    let theirs = dpdk::Lpm::new(&routes).unwrap();
    let keys: Vec<u32> = (0..KEYS).map(|_| (20 << 24) | (rng.below(490) << 8) | rng.below(256)).collect();
    for &k in &keys {
        assert_eq!(ours.lookup(k), theirs.lookup(k), "{k:#x}");
    }
    pair(c, "lpm", (&keys, &keys), |k, out| ours.lookup_bulk(k, out), |k, out: &mut [u32]| match k {
        [one] => out[0] = theirs.lookup(*one).map_or(0, u32::from),
        _ => theirs.lookup_bulk(k, out),
    });
}

/// Routes of the IPv6 table.
const ROUTES6: usize = 120_000;

fn lpm6(c: &mut Criterion, rng: &mut Rng) {
    let routes = sample_routes6(ROUTES6, 6);
    let ours = Lpm6Table::new(&routes).unwrap();
    // Room for the groups our trie took, which rte_lpm6's like layout needs too, and some.
    let theirs = dpdk::Lpm6::new(&routes, (ours.bytes() / 1024) as u32 * 2).unwrap();
    // Addresses inside random routes' prefixes, host bits random: each finds its route or a longer one.
    let keys: Vec<u128> = (0..KEYS)
        .map(|_| {
            let (net, len, _) = routes[rng.below(ROUTES6 as u32) as usize];
            let host = (0..4).fold(0u128, |host, _| host << 32 | u128::from(rng.below(u32::MAX)));
            net | (host & !sluice_core::wire::ipv6::mask(len))
        })
        .collect();
    let bytes: Vec<[u8; 16]> = keys.iter().map(|k| k.to_be_bytes()).collect();
    for (k, b) in keys.iter().zip(&bytes) {
        assert_eq!(ours.lookup(*k), theirs.lookup(b), "{k:#x}");
    }
    pair(c, "lpm6", (&keys, &bytes), |k, out| ours.lookup_bulk(k, out), |k, out: &mut [i32]| match k {
        [one] => out[0] = theirs.lookup(one).map_or(-1, i32::from),
        _ => theirs.lookup_bulk(k, out),
    });
}

fn exact(c: &mut Criterion, rng: &mut Rng) {
    let table: Vec<u32> = (0..4096u32).map(|i| (100 << 24) | (i * 7919 % (1 << 20))).collect();
    let ours = ExactTable::new(&table.iter().enumerate().map(|(i, &k)| (u64::from(k), i as u16)).collect::<Vec<_>>()).unwrap();
    let theirs = dpdk::Hash::new(&table).unwrap();
    // Nine lookups in ten hit.
    let keys: Vec<u32> = (0..KEYS).map(|_| if rng.below(10) < 9 { table[rng.below(4096) as usize] } else { 0xdead_0000 | rng.below(65536) }).collect();
    for &k in &keys {
        assert_eq!(ours.lookup(u64::from(k)).map_or(0, |g| u32::from(g) + 1), theirs.lookup(k), "{k:#x}");
    }
    pair(
        c,
        "exact_match",
        (&keys, &keys),
        |k, out: &mut [Option<u16>]| k.iter().zip(out).for_each(|(&k, o)| *o = ours.lookup(u64::from(k))),
        |k, out: &mut [u32]| match k {
            [one] => out[0] = theirs.lookup(*one),
            _ => theirs.lookup_bulk(k, out),
        },
    );
}

fn acl(c: &mut Criterion) {
    let tuples = sample_tuples(KEYS, 2);
    let packed: Vec<[u8; 16]> = tuples
        .iter()
        .map(|t| {
            let (src, dst) = t.v4_addresses().expect("IPv4 samples");
            dpdk::Acl::tuple(t.proto, src, dst, t.sport, t.dport)
        })
        .collect();
    let ptrs: Vec<*const u8> = packed.iter().map(|p| p.as_ptr()).collect();
    for n in [1_000, 10_000] {
        let specs = sample_rules(n, 1);
        let mut ours = Acl::new(&specs).unwrap();
        let rules: Vec<dpdk::AclRule> = specs
            .iter()
            .map(|r| {
                let (src, src_len) = parse_prefix(&r.src).unwrap();
                let (dst, dst_len) = parse_prefix(&r.dst).unwrap();
                dpdk::AclRule {
                    src: src & mask(src_len),
                    src_len: u32::from(src_len),
                    dst: dst & mask(dst_len),
                    dst_len: u32::from(dst_len),
                    proto: r.proto.unwrap_or(0),
                    proto_mask: if r.proto.is_some() { 0xff } else { 0 },
                    sport_lo: r.sport.0,
                    sport_hi: r.sport.1,
                    dport_lo: r.dport.0,
                    dport_hi: r.dport.1,
                }
            })
            .collect();
        let theirs = dpdk::Acl::new(&rules).unwrap();
        let mut matched = vec![0u32; KEYS];
        ptrs.chunks(32).zip(matched.chunks_mut(32)).for_each(|(k, out)| theirs.classify(k, out));
        for (t, &rule) in tuples.iter().zip(&matched) {
            assert_eq!(ours.permits(t), rule != 0 && specs[rule as usize - 1].permit, "{t:?}");
        }
        pair(
            c,
            &format!("acl-{n}"),
            (&tuples, &ptrs),
            |k, out: &mut [bool]| match k {
                [one] => out[0] = ours.permits(one),
                _ => ours.permits_bulk(k, out),
            },
            |k, out: &mut [u32]| theirs.classify(k, out),
        );
    }
}

fn lookups(c: &mut Criterion) {
    dpdk::init().expect("DPDK's environment starts without hugepages");
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    lpm(c, &mut rng);
    lpm6(c, &mut rng);
    exact(c, &mut rng);
    acl(c);
}

criterion_group!(benches, lookups);
criterion_main!(benches);

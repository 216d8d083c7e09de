//! The arbiter alone: decisions per second with its clients' mailboxes
//! filled beforehand, an unlimited link and a no-op transmit (PSPAT's
//! arbiter-only figure), for DRR, WF²Q+ and QFQ over 4 clients and 64
//! flows, and DRR with CoDel or FQ-CoDel on every class (what their
//! bookkeeping costs a decision: nothing waits, so nothing is dropped);
//! and what a scan costs with 256 clients of which 2 have work, before
//! the idle ones are retired (every mailbox read) and after.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sluice_pspat::aqm::{Aqm, QueueManagement};
use sluice_pspat::{Arbiter, Drr, Entry, Link, Qfq, Scheduler, Wf2qPlus};

const CLIENTS: usize = 4;
const FLOWS: usize = 64;
/// Entries per client per iteration.
const PER_CLIENT: usize = 2048;

/// Time of `iters` rounds of filling every client's mailbox and deciding
/// them all, every class under `management` (each handle carries a flow
/// hash from bit 16 up, for FQ-CoDel's queues).
fn decisions<S: Scheduler<u32>>(make: impl Fn() -> S, management: QueueManagement, iters: u64) -> Duration {
    let (arbiter, mut clients) = Arbiter::new(make(), Link { bits_per_s: f64::INFINITY, overhead: 0 }, CLIENTS, PER_CLIENT, 256);
    let mut arbiter = arbiter.with_aqm(Aqm::new(&[management; FLOWS], CLIENTS * PER_CLIENT), 16);
    let mut spent = Duration::ZERO;
    for _ in 0..iters {
        for (c, client) in clients.iter_mut().enumerate() {
            for i in 0..PER_CLIENT {
                let flow = ((c * PER_CLIENT + i) * 7 % FLOWS) as u16;
                let hash = ((c * PER_CLIENT + i) % 97) as u32;
                assert!(client.send(Entry { flow, len: 64 + (i % 1400) as u16, id: hash << 16 | i as u32 }));
            }
        }
        let start = Instant::now();
        let mut sent = 0;
        while sent < (CLIENTS * PER_CLIENT) as u64 {
            sent += arbiter.scan(0, &mut |e| { std::hint::black_box(e); }, &mut |_| unreachable!("queues hold every entry")).sent;
        }
        spent += start.elapsed();
    }
    spent
}

/// Clients of the scan benchmark, and those of them that send.
const MANY: usize = 256;
const BUSY: usize = 2;

/// Time of `iters` scans over `MANY` clients of which `BUSY` send a packet
/// before each; with `retired`, the idle clients were retired first.
fn scans(retired: bool, iters: u64) -> Duration {
    let (mut arbiter, mut clients) = Arbiter::new(Drr::new(&[1; BUSY], 1500, 1 << 16), Link { bits_per_s: f64::INFINITY, overhead: 0 }, MANY, 1024, 64);
    let mut transmit = |e: Entry| {
        std::hint::black_box(e);
    };
    // At the retirement age the idle clients, which never worked, are retired; before it none is.
    let now_ns = if retired { sluice_pspat::RETIRE_NS } else { 0 };
    arbiter.scan(now_ns, &mut transmit, &mut |_| {});
    let start = Instant::now();
    for i in 0..iters {
        for (flow, client) in clients.iter_mut().take(BUSY).enumerate() {
            assert!(client.send(Entry { flow: flow as u16, len: 64, id: i as u32 + 1 }));
        }
        arbiter.scan(now_ns, &mut transmit, &mut |_| unreachable!("queues hold every entry"));
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("arbiter");
    g.measurement_time(Duration::from_secs(3)).throughput(Throughput::Elements((CLIENTS * PER_CLIENT) as u64));
    let weights: Vec<u32> = (0..FLOWS as u32).map(|f| 1 + f % 8).collect();
    let drr = || Drr::new(&weights, 1500, CLIENTS * PER_CLIENT);
    let tail = QueueManagement::TailDrop;
    g.bench_function(BenchmarkId::new("decisions", "drr"), |b| b.iter_custom(|n| decisions(drr, tail, n)));
    g.bench_function(BenchmarkId::new("decisions", "drr+codel"), |b| b.iter_custom(|n| decisions(drr, QueueManagement::CoDel(Default::default()), n)));
    g.bench_function(BenchmarkId::new("decisions", "drr+fq_codel"), |b| b.iter_custom(|n| decisions(drr, QueueManagement::FqCoDel(Default::default()), n)));
    g.bench_function(BenchmarkId::new("decisions", "wf2q+"), |b| b.iter_custom(|n| decisions(|| Wf2qPlus::new(&weights, CLIENTS * PER_CLIENT), tail, n)));
    g.bench_function(BenchmarkId::new("decisions", "qfq"), |b| b.iter_custom(|n| decisions(|| Qfq::new(&weights, 1500, CLIENTS * PER_CLIENT).expect("weights of 1-8"), tail, n)));
    g.finish();
    let mut g = c.benchmark_group("scan");
    g.measurement_time(Duration::from_secs(3));
    g.bench_function(BenchmarkId::new("256 clients, 2 busy", "every mailbox read"), |b| b.iter_custom(|n| scans(false, n)));
    g.bench_function(BenchmarkId::new("256 clients, 2 busy", "idle ones retired"), |b| b.iter_custom(|n| scans(true, n)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

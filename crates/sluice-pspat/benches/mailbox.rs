//! ns per packet through an SPSC queue, producer and consumer pinned to
//! different cores, at bursts of 1 and 32: PSPAT's mailbox against
//! Sluice's ring (sluice-core) and rtrb, in one run.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// Capacity of each queue (values).
const CAPACITY: usize = 1024;

/// The two ends of one queue kind, boxed so one harness drives all three.
trait Ends: Send + 'static {
    type Rx: Send + 'static;
    fn new() -> (Self, Self::Rx)
    where
        Self: Sized;
    fn push(&mut self, v: u64) -> bool;
    fn pop(rx: &mut Self::Rx) -> Option<u64>;
}

struct Mailbox(sluice_pspat::Producer);
impl Ends for Mailbox {
    type Rx = sluice_pspat::Consumer;
    fn new() -> (Self, Self::Rx) {
        let (p, c) = sluice_pspat::mailbox(CAPACITY);
        (Mailbox(p), c)
    }
    fn push(&mut self, v: u64) -> bool {
        self.0.push(v)
    }
    fn pop(rx: &mut Self::Rx) -> Option<u64> {
        rx.pop()
    }
}

struct Ring(sluice_core::ring::Producer<u64>);
impl Ends for Ring {
    type Rx = sluice_core::ring::Consumer<u64>;
    fn new() -> (Self, Self::Rx) {
        let (p, c) = sluice_core::ring::spsc(CAPACITY);
        (Ring(p), c)
    }
    fn push(&mut self, v: u64) -> bool {
        self.0.push(v).is_ok()
    }
    fn pop(rx: &mut Self::Rx) -> Option<u64> {
        rx.pop()
    }
}

struct Rtrb(rtrb::Producer<u64>);
impl Ends for Rtrb {
    type Rx = rtrb::Consumer<u64>;
    fn new() -> (Self, Self::Rx) {
        let (p, c) = rtrb::RingBuffer::new(CAPACITY);
        (Rtrb(p), c)
    }
    fn push(&mut self, v: u64) -> bool {
        self.0.push(v).is_ok()
    }
    fn pop(rx: &mut Self::Rx) -> Option<u64> {
        rx.pop().ok()
    }
}

fn pin(core: usize) {
    if let Some(id) = core_affinity::get_core_ids().and_then(|ids| ids.get(core).copied()) {
        core_affinity::set_for_current(id);
    }
}

/// Time to pass `n` values in bursts of `burst` (the producer writes a
/// burst, the consumer takes up to a burst at a time). Both ends run on
/// threads of their own, pinned apart (the consumer, the arbiter's end, on
/// core 0): pinning the bench's main thread left both ends on one core here.
fn transfer<Q: Ends>(n: u64, burst: usize) -> Duration {
    let (mut tx, mut rx) = Q::new();
    let consumer = std::thread::spawn(move || {
        pin(0);
        let mut got = 0u64;
        while got < n {
            for _ in 0..burst {
                match Q::pop(&mut rx) {
                    Some(_) => got += 1,
                    None => break,
                }
            }
        }
    });
    let producer = std::thread::spawn(move || {
        pin(1);
        let start = Instant::now();
        let mut v = 1u64;
        while v <= n {
            let end = (v + burst as u64).min(n + 1);
            while v < end {
                if tx.push(v) {
                    v += 1;
                } else {
                    std::hint::spin_loop();
                }
            }
        }
        start
    });
    let start = producer.join().unwrap();
    consumer.join().unwrap();
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    // One iteration passes PER_ITER values: a thread start per sample is then noise.
    const PER_ITER: u64 = 4096;
    let mut g = c.benchmark_group("spsc");
    g.measurement_time(Duration::from_secs(3)).throughput(Throughput::Elements(PER_ITER));
    for burst in [1usize, 32] {
        g.bench_with_input(BenchmarkId::new("pspat_mailbox", burst), &burst, |b, &burst| b.iter_custom(|n| transfer::<Mailbox>(n * PER_ITER, burst)));
        g.bench_with_input(BenchmarkId::new("sluice_ring", burst), &burst, |b, &burst| b.iter_custom(|n| transfer::<Ring>(n * PER_ITER, burst)));
        g.bench_with_input(BenchmarkId::new("rtrb", burst), &burst, |b, &burst| b.iter_custom(|n| transfer::<Rtrb>(n * PER_ITER, burst)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

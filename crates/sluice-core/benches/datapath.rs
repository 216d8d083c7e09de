//! Fractional-buffer push: one arriving batch admitted (and, every
//! trigger/arrival pushes, one NF-sized batch taken out).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sluice_core::{Batch, FractionalBuffer, PacketId};

fn buffer_push(c: &mut Criterion) {
    let mut group = c.benchmark_group("fractional_buffer_push");
    for (arrival, trigger) in [(8usize, 0usize), (8, 32), (32, 32), (1, 32)] {
        group.throughput(Throughput::Elements(arrival as u64));
        let id = BenchmarkId::new(format!("arrival{arrival}"), format!("trigger{trigger}"));
        group.bench_function(id, |b| {
            let mut buf = FractionalBuffer::default();
            let mut input = Batch::default();
            let mut scratch = Batch::default();
            let ids: Vec<PacketId> = (0..arrival as u32).map(PacketId).collect();
            b.iter(|| {
                input.extend_from_slice(&ids);
                buf.admit(trigger, &mut input);
                while let Some(run) = buf.next_run(trigger, &mut input, &mut scratch) {
                    std::hint::black_box(run.as_slice());
                    run.clear();
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, buffer_push);
criterion_main!(benches);

//! Fractional-buffer push: one arriving batch admitted (and, every
//! trigger/arrival pushes, one NF-sized batch taken out). IPv4 header
//! checksum over a batch of headers: `fill_checksum` against zeroing the
//! field and summing after (the store stalls the loads behind it).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sluice_core::wire::{checksum, ipv4};
use sluice_core::{Batch, FractionalBuffer, PacketId};

fn buffer_push(c: &mut Criterion) {
    let mut group = c.benchmark_group("fractional_buffer_push");
    for (arrival, trigger) in [(8usize, 0usize), (8, 32), (32, 32), (1, 32), (2, 16)] {
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

/// 32 UDP/IPv4 headers, 2 KiB + 64 B apart as in the packet pool.
fn headers() -> Vec<[u8; 2112]> {
    (0..32u8)
        .map(|i| {
            let mut buf = [0u8; 2112];
            buf[..20].copy_from_slice(&[0x45, 0, 0, 46, 0, i, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 20, 0, i, 1]);
            buf
        })
        .collect()
}

fn ipv4_checksum(c: &mut Criterion) {
    let mut group = c.benchmark_group("ipv4_checksum_per_32_headers");
    group.throughput(Throughput::Elements(32));
    let mut bufs = headers();
    group.bench_function("fill_checksum", |b| {
        b.iter(|| {
            for buf in bufs.iter_mut() {
                ipv4::Header::new_checked(&mut buf[..20]).expect("a header").fill_checksum();
            }
        })
    });
    group.bench_function("zero_then_sum", |b| {
        b.iter(|| {
            for buf in bufs.iter_mut() {
                buf[10..12].fill(0);
                let c = !checksum::sum(std::hint::black_box(&buf[..20]));
                buf[10..12].copy_from_slice(&c.to_be_bytes());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, buffer_push, ipv4_checksum);
criterion_main!(benches);

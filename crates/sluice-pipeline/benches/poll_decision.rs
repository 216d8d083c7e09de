//! What a poll policy's decision after a round costs the worker (ns), the
//! learned policy with the model shipped in the package against the
//! rule-based ones in the same run; the goal is ≤ 1 µs.

use criterion::{criterion_group, criterion_main, Criterion};
use sluice_core::poll::{Poller, Wait};
use sluice_core::PollPolicy;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/sluice/models/polling.json");

fn policies() -> Vec<(&'static str, PollPolicy)> {
    let learned = sluice_pipeline::poll_model_file::read(MODEL, 500_000).expect("the shipped model reads");
    vec![
        ("busy", PollPolicy::Busy),
        ("empty-poll", PollPolicy::sleeping(false, 64, 50_000, 500_000).unwrap()),
        ("slo-batching", PollPolicy::slo_batching(50_000, 500_000).unwrap()),
        ("vpp-adaptive", PollPolicy::VppAdaptive { threshold_pkts: 8, max_wait_ns: 500_000 }),
        ("learned", PollPolicy::Learned(std::sync::Arc::new(learned))),
    ]
}

/// A decision after a round that drained the input (here: without work), after rounds of a light load.
fn decision(c: &mut Criterion) {
    let mut group = c.benchmark_group("poll_decision");
    for (name, policy) in policies() {
        let mut poller = Poller::new(policy, false);
        for i in 0..256 {
            poller.after_round(usize::from(i % 8 == 0), || u64::MAX);
        }
        group.bench_function(name, |b| b.iter(|| std::hint::black_box::<Wait>(poller.after_round(std::hint::black_box(0), || u64::MAX))));
    }
    group.finish();
}

criterion_group!(benches, decision);
criterion_main!(benches);

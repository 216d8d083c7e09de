//! The packet path allocates nothing in steady state: a counting global
//! allocator watches 20 000 rounds of RC(4) with real sources and NFs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice_core::{wire, Counters, ModuleCode, Knobs, ModelBuilder, ModuleDecl, Role, Schedule, WalkerConfig, WorkerGraph};
use sluice_nf::{Bypass, RandomSplit};
use sluice_traffic::{Stream, SyntheticSource, TemplateSpec};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn decl(name: &str, role: Role, ingates: usize, outgates: usize) -> ModuleDecl {
    ModuleDecl { controlled: true, ..ModuleDecl::new(name, role, ingates, outgates) }
}

#[test]
fn steady_state_rounds_do_not_allocate() {
    // One test body for both schedules: the counter is process-wide, so they must not run in parallel.
    rounds_do_not_allocate(Schedule::RunToCompletion);
    rounds_do_not_allocate(Schedule::WeightedFair { backpressure: Some(256), buffered_only: false });
    rounds_do_not_allocate(Schedule::WeightedFair { backpressure: Some(256), buffered_only: true });
}

fn rounds_do_not_allocate(schedule: Schedule) {
    let mut b = ModelBuilder::default();
    b.module(decl("src", Role::Source, 0, 1)).module(decl("split", Role::Function, 1, 2));
    b.connect("src", 0, "split", 0);
    for i in 0..2 {
        let (nf, out) = (format!("nf{i}"), format!("out{i}"));
        b.module(decl(&nf, Role::Function, 1, 1)).module(decl(&out, Role::Sink, 1, 0));
        b.connect("split", i, &nf, 0).connect(&nf, 0, &out, 0);
        b.flow(&format!("f{i}"), &["src", "split", &nf, &out], Some(100.0));
    }
    let model = b.build(32).unwrap();
    let frames = |i: u8| TemplateSpec { dst_ip: format!("20.0.{i}.1"), ..TemplateSpec::default() }.build().unwrap();
    let streams = (0..2).map(|i| Stream { frame: frames(i + 1), flow: None, rate_pps: f64::INFINITY, burst_pkts: 1 }).collect();
    let mut source = Some(SyntheticSource::new(streams, 1).unwrap());
    let mut instances: Vec<Option<ModuleCode>> = model
        .modules
        .iter()
        .map(|m| match m.role {
            Role::Source => ModuleCode::Source(Box::new(source.take().unwrap())),
            Role::Sink => ModuleCode::Egress,
            Role::Function if m.name == "split" => ModuleCode::Function(Box::new(RandomSplit::new(&[1.0, 1.0], 3).unwrap())),
            Role::Function => ModuleCode::Function(Box::new(Bypass::new(20, 1))),
        })
        .map(Some)
        .collect();
    let knobs = Knobs::new(&model);
    let triggers = &knobs.triggers;
    triggers[2].store(7, Ordering::Relaxed);
    triggers[4].store(32, Ordering::Relaxed);
    let clock = quanta::Clock::new();
    let origin = clock.raw();
    let config = WalkerConfig { schedule, ..WalkerConfig::default() };
    let mut graph = WorkerGraph::new(&model, 0, &mut instances, &knobs, clock, origin, config, wire(&model, schedule, None).pop().unwrap()).unwrap();
    let mut reading = Counters::for_model(&model, 1);
    for _ in 0..2_000 {
        graph.round();
    }
    graph.read_counters(&mut reading);
    for f in &mut reading.flows {
        f.delays.reset();
    }

    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let mut moved = 0;
    for i in 0..20_000 {
        moved += graph.round();
        if i == 10_000 {
            triggers[2].store(3, Ordering::Relaxed);
        }
        if i % 5_000 == 0 {
            graph.read_counters(&mut reading);
            for f in &mut reading.flows {
                f.delays.reset();
            }
        }
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    assert!(moved >= 20_000 * 8, "{moved} packets moved ({schedule:?})");
    assert_eq!(allocations, 0, "{allocations} heap allocations in 20 000 rounds ({schedule:?})");
    graph.drain();
    assert_eq!(graph.in_flight(), 0);
}

//! The walker's own tests, on graphs built here: a source that sends a
//! given list of packets, NFs that steer, drop or log them, and egresses.
//! [`TestGraph`] builds one worker's graph from a [`ModelBuilder`] and
//! reads what the walker counted.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::backend::Actions;
use crate::batch::Batch;
use crate::knobs::Knobs;
use crate::model::{ModelBuilder, ModuleDecl, Role};
use crate::nf::{ModuleCode, NetworkFunction, NfContext, Outputs, PacketSource};
use crate::packet::PacketMeta;
use crate::pool::PacketPool;
use crate::telemetry::{Counters, DelaySampling};
use crate::wiring::wire;
use crate::{Model, WalkerConfig, WorkerGraph};

/// Sends packets of the given flows, in order, as fast as it is polled.
pub(super) struct Listed {
    /// (flow, sequence number) of the packets still to send.
    queue: VecDeque<(u16, u32)>,
    /// Packets sent per flow (pkt).
    made: Vec<u64>,
}

impl Listed {
    pub(super) fn new(flows: &[u16]) -> Self {
        let queue = flows.iter().enumerate().map(|(i, &f)| (f, i as u32)).collect();
        Self { queue, made: vec![0; flows.iter().map(|&f| f as usize + 1).max().unwrap_or(0)] }
    }
}

impl PacketSource for Listed {
    fn fill(&mut self, pool: &mut PacketPool, now_ns: u64, out: &mut Batch, max: usize) {
        while out.len() < max {
            let Some(&(flow, seq)) = self.queue.front() else { return };
            let Some(id) = pool.alloc_copy(&[0; 60], PacketMeta { ts_ns: now_ns, flow, seq, len: 60, ..PacketMeta::default() }) else { return };
            self.queue.pop_front();
            self.made[flow as usize] += 1;
            out.push(id);
        }
    }

    fn count_generated(&self, generated: &mut dyn FnMut(usize, u64)) {
        for (flow, &n) in self.made.iter().enumerate() {
            generated(flow, n);
        }
    }
}

/// Sends each packet out of the gate its flow's number names (mod the gates);
/// logs its name and the packets of each run.
pub(super) struct ByFlow {
    pub(super) name: &'static str,
    pub(super) gates: usize,
    pub(super) log: Log,
}

impl NetworkFunction for ByFlow {
    fn outgates(&self) -> usize {
        self.gates
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        self.log.lock().unwrap().push((self.name, input.len()));
        for &id in input.as_slice() {
            out.push(ctx.pool.meta(id).flow as usize % self.gates, id);
        }
        input.clear();
    }
}

/// Drops packets with an odd sequence number (denied), passes the rest.
pub(super) struct DropOdd;

impl NetworkFunction for DropOdd {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        for &id in input.as_slice() {
            if ctx.pool.meta(id).seq % 2 == 1 {
                ctx.drop_packet(id, crate::DropReason::Denied);
            } else {
                out.push(0, id);
            }
        }
        input.clear();
    }
}

/// The NF runs in the order they happened: (NF, packets in the run).
pub(super) type Log = Arc<Mutex<Vec<(&'static str, usize)>>>;

/// One worker's graph with its model and knobs.
pub(super) struct TestGraph {
    pub(super) model: Model,
    pub(super) knobs: Knobs,
    pub(super) graph: WorkerGraph,
}

impl TestGraph {
    /// Builds `builder`'s model at batch size `batch`, with one instance per
    /// module in declaration order.
    pub(super) fn new(builder: &ModelBuilder, batch: usize, instances: Vec<ModuleCode>) -> Self {
        Self::with_config(builder, batch, instances, WalkerConfig { timing: false, ..WalkerConfig::default() })
    }

    /// [`Self::new`] under walker settings `config`.
    pub(super) fn with_config(builder: &ModelBuilder, batch: usize, instances: Vec<ModuleCode>, config: WalkerConfig) -> Self {
        let model = builder.build(batch).expect("a valid model");
        let knobs = Knobs::new(&model);
        let mut instances: Vec<Option<ModuleCode>> = instances.into_iter().map(Some).collect();
        let wiring = wire(&model, config.schedule, None).pop().expect("one worker");
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        let graph = WorkerGraph::new(&model, 0, &mut instances, &knobs, clock, origin, config, wiring).expect("a valid graph");
        Self { model, knobs, graph }
    }

    /// Sets module `name`'s trigger (pkt).
    pub(super) fn trigger(&mut self, name: &str, b: u32) {
        let m = self.model.module_id(name).expect("a module of the model");
        self.knobs.apply(&self.model, &Actions { triggers: vec![(m, b)], ..Actions::default() }).expect("a valid trigger");
    }

    /// Runs `n` rounds; returns the packets they took in.
    pub(super) fn rounds(&mut self, n: usize) -> usize {
        (0..n).map(|_| self.graph.round()).sum()
    }

    pub(super) fn counters(&mut self) -> Counters {
        let mut counters = Counters::for_model(&self.model, 1);
        self.graph.read_counters(&mut counters);
        counters
    }

    pub(super) fn module(&self, name: &str) -> usize {
        self.model.module_id(name).expect("a module of the model")
    }
}

/// The graphs of every worker of a model, with its knobs.
pub(super) struct TestWorkers {
    pub(super) model: Model,
    pub(super) knobs: Knobs,
    pub(super) graphs: Vec<WorkerGraph>,
}

impl TestWorkers {
    /// Builds `builder`'s model at batch size `batch` on its workers, with
    /// one instance per module in declaration order.
    pub(super) fn new(builder: &ModelBuilder, batch: usize, instances: Vec<ModuleCode>, config: WalkerConfig) -> Self {
        Self::with_clock(builder, batch, instances, config, quanta::Clock::new())
    }

    /// The same, every worker reading `clock` (a mock one: time moves when the test moves it).
    pub(super) fn with_clock(builder: &ModelBuilder, batch: usize, instances: Vec<ModuleCode>, config: WalkerConfig, clock: quanta::Clock) -> Self {
        let model = builder.build(batch).expect("a valid model");
        let knobs = Knobs::new(&model);
        let mut instances: Vec<Option<ModuleCode>> = instances.into_iter().map(Some).collect();
        let origin = clock.raw();
        let graphs = wire(&model, config.schedule, None)
            .into_iter()
            .enumerate()
            .map(|(w, wiring)| WorkerGraph::new(&model, w, &mut instances, &knobs, clock.clone(), origin, config, wiring).expect("a valid graph"))
            .collect();
        Self { model, knobs, graphs }
    }

    /// Runs a round on every worker in turn, `n` times; returns the packets they moved.
    pub(super) fn rounds(&mut self, n: usize) -> usize {
        (0..n).map(|_| self.graphs.iter_mut().map(|g| g.round()).sum::<usize>()).sum()
    }

    /// Per flow, its packets generated, delivered and dropped over every
    /// worker; and the packets the workers hold.
    pub(super) fn tally(&mut self) -> (Vec<[u64; 3]>, i64) {
        let mut flows = vec![[0; 3]; self.model.flows.len()];
        let mut in_flight = 0;
        let workers = self.graphs.len();
        for g in &mut self.graphs {
            let mut c = Counters::for_model(&self.model, workers);
            g.read_counters(&mut c);
            for (sum, f) in flows.iter_mut().zip(&c.flows) {
                sum[0] += f.generated + f.claimed;
                sum[1] += f.delivered;
                sum[2] += f.dropped;
            }
            in_flight += c.in_flight;
        }
        (flows, in_flight)
    }
}

/// src → split (by flow) → a0 / a1 → out0 / out1, flow i through a(i) and
/// out(i); `slos` per flow (µs).
pub(super) fn split_in_two(flows: &[u16], slos: [Option<f64>; 2], log: &Log) -> TestGraph {
    split_in_two_aged(flows, slos, log, None)
}

/// [`split_in_two`] with an age bound on a0's buffer (ns).
fn split_in_two_aged(flows: &[u16], slos: [Option<f64>; 2], log: &Log, a0_max_age_ns: Option<u64>) -> TestGraph {
    let mut b = ModelBuilder::default();
    b.module(ModuleDecl::new("src", Role::Source, 0, 1))
        .module(ModuleDecl::new("split", Role::Function, 1, 2))
        .module(ModuleDecl { max_age_ns: a0_max_age_ns, ..ModuleDecl::new("a0", Role::Function, 1, 1) })
        .module(ModuleDecl::new("a1", Role::Function, 1, 1))
        .module(ModuleDecl::new("out0", Role::Sink, 1, 0))
        .module(ModuleDecl::new("out1", Role::Sink, 1, 0));
    b.connect("src", 0, "split", 0).connect("split", 0, "a0", 0).connect("split", 1, "a1", 0);
    b.connect("a0", 0, "out0", 0).connect("a1", 0, "out1", 0);
    b.flow("f0", &["src", "split", "a0", "out0"], slos[0]).flow("f1", &["src", "split", "a1", "out1"], slos[1]);
    let by_flow = |name, gates| ModuleCode::Function(Box::new(ByFlow { name, gates, log: log.clone() }));
    let instances = vec![
        ModuleCode::Source(Box::new(Listed::new(flows))),
        by_flow("split", 2),
        by_flow("a0", 1),
        by_flow("a1", 1),
        ModuleCode::Egress,
        ModuleCode::Egress,
    ];
    TestGraph::new(&b, 32, instances)
}

#[test]
fn every_packet_is_delivered_to_its_flows_egress_and_counted_once() {
    let flows: Vec<u16> = (0..100).map(|i| (i % 3 == 0) as u16).collect();
    let mut g = split_in_two(&flows, [None, None], &Log::default());
    assert_eq!(g.rounds(10), 100);
    let c = g.counters();
    let wanted = [flows.iter().filter(|&&f| f == 0).count() as u64, flows.iter().filter(|&&f| f == 1).count() as u64];
    for (f, n) in wanted.into_iter().enumerate() {
        let flow = &c.flows[f];
        assert_eq!((flow.generated, flow.delivered, flow.dropped, flow.misdelivered), (n, n, 0, 0), "flow {f}");
    }
    assert_eq!(c.in_flight, 0);
    assert_eq!(c.modules[g.module("split")].run_pkts, 100);
}

#[test]
fn a_splitter_serves_the_gate_with_the_tighter_slo_first() {
    for (slos, first) in [([Some(10.0), Some(1000.0)], "a0"), ([Some(1000.0), Some(10.0)], "a1"), ([None, Some(50.0)], "a1")] {
        let log = Log::default();
        let mut g = split_in_two(&[0, 1, 0, 1], slos, &log);
        g.rounds(1);
        let runs: Vec<&str> = log.lock().unwrap().iter().map(|r| r.0).filter(|&n| n != "split").collect();
        assert_eq!(runs[0], first, "SLOs {slos:?}: runs {runs:?}");
    }
}

#[test]
fn a_trigger_holds_packets_until_it_is_reached_and_a_drain_releases_the_rest() {
    let log = Log::default();
    // 20 packets of flow 0, then nothing: a0's buffer fires at 8, 16 and holds 4.
    let mut g = split_in_two(&[0; 20], [None, None], &log);
    g.trigger("a0", 8);
    for _ in 0..5 {
        g.rounds(1);
    }
    let a0 = |log: &Log| log.lock().unwrap().iter().filter(|r| r.0 == "a0").map(|r| r.1).collect::<Vec<_>>();
    assert_eq!(a0(&log), [8, 8], "the NF runs on exactly the trigger");
    let held = g.counters();
    assert_eq!((held.flows[0].delivered, held.in_flight), (16, 4));
    g.graph.drain();
    assert_eq!(a0(&log), [8, 8, 4], "a drain runs what is held");
    let c = g.counters();
    assert_eq!((c.flows[0].generated, c.flows[0].delivered, c.in_flight), (20, 20, 0));
}

#[test]
fn an_age_bound_flushes_a_buffer_whose_oldest_packet_waited_longer() {
    let log = Log::default();
    let mut g = split_in_two_aged(&[0; 4], [None, None], &log, Some(1));
    g.trigger("a0", 8);
    g.rounds(1);
    std::thread::sleep(std::time::Duration::from_micros(10));
    g.rounds(1);
    let a0: Vec<usize> = log.lock().unwrap().iter().filter(|r| r.0 == "a0").map(|r| r.1).collect();
    assert_eq!(a0, [4], "four packets older than the bound ran short of the trigger");
    assert_eq!(g.counters().flows[0].delivered, 4);
}

#[test]
fn a_packet_dropped_by_an_nf_is_its_flows_drop_and_the_modules() {
    let mut b = ModelBuilder::default();
    b.module(ModuleDecl::new("src", Role::Source, 0, 1))
        .module(ModuleDecl::new("odd", Role::Function, 1, 1))
        .module(ModuleDecl::new("out", Role::Sink, 1, 0));
    b.connect("src", 0, "odd", 0).connect("odd", 0, "out", 0);
    b.flow("f", &["src", "odd", "out"], Some(100.0));
    let mut g = TestGraph::new(&b, 4, vec![ModuleCode::Source(Box::new(Listed::new(&[0; 10]))), ModuleCode::Function(Box::new(DropOdd)), ModuleCode::Egress]);
    assert_eq!(g.rounds(5), 10, "a round takes one batch of 4");
    let c = g.counters();
    assert_eq!((c.flows[0].generated, c.flows[0].delivered, c.flows[0].dropped), (10, 5, 5));
    assert_eq!(c.modules[g.module("odd")].dropped, 5);
    assert_eq!(c.in_flight, 0);
}

#[test]
fn delays_are_timed_for_every_packet_up_to_the_floor_then_on_drawn_rounds_standing_for_the_rest() {
    // Periods of the packets given, one a round: the delays timed (the packets they stand for) and their sample, per period.
    let timed = |periods: &[usize], sampling: DelaySampling| {
        let mut b = ModelBuilder::default();
        b.module(ModuleDecl::new("src", Role::Source, 0, 1)).module(ModuleDecl::new("out", Role::Sink, 1, 0));
        b.connect("src", 0, "out", 0).flow("f", &["src", "out"], Some(100.0));
        let config = WalkerConfig { delay_sampling: sampling, ..WalkerConfig::default() };
        let all: usize = periods.iter().sum();
        let mut g = TestGraph::with_config(&b, 1, vec![ModuleCode::Source(Box::new(Listed::new(&vec![0; all]))), ModuleCode::Egress], config);
        let mut delivered = 0;
        periods
            .iter()
            .map(|&packets| {
                assert_eq!(g.rounds(packets), packets);
                let c = g.counters();
                delivered += packets as u64;
                assert_eq!(c.flows[0].delivered, delivered, "every packet delivered, timed or not");
                (c.flows[0].delays.len(), c.flows[0].sample)
            })
            .collect::<Vec<_>>()
    };
    let sampled = DelaySampling { floor_pkts: 101, one_in: 4 };
    assert_eq!(timed(&[101], sampled)[0].0, 101, "up to the floor, every packet");
    assert_eq!(timed(&[20_000], DelaySampling::EVERY_PACKET)[0].0, 20_000);
    // A first period has no rounds to size a sample by: every packet. Its
    // 19 899 rounds past the floor let the next draw one in four (≥ 4096 drawn).
    let [(first, exact), (stood_for, sample), (after, few)] = timed(&[20_000, 20_000, 2_000], sampled)[..] else { panic!("three periods") };
    assert_eq!((first, exact.one_in, exact.rounds, exact.error_pct()), (20_000, 1, 19_899, 0.0));
    assert_eq!(sample.one_in, 4);
    assert_eq!((stood_for - 101) % 4, 0, "past the floor each timed packet stands for four");
    // One round in four drawn: 4 · Binomial(19 899, 1/4), within 4σ (4 · 61) of 19 899.
    assert!(stood_for.abs_diff(20_000) < 4 * 4 * 61, "the timed packets stand for all delivered: {stood_for}");
    assert_eq!(4 * sample.drawn, stood_for - 101);
    let dkw = 100.0 * (40f64.ln() / (2.0 * sample.drawn as f64)).sqrt();
    assert!((sample.error_pct() - dkw).abs() < 1e-9 && sample.error_pct() < 2.2, "{}", sample.error_pct());
    // 2 000 packets: a sample of a quarter of its 1 899 rounds would hold too few: the next period times every packet.
    assert_eq!((few.one_in, (after - 101) % 4), (4, 0), "this period still sampled");
    let [_, _, _, (every, next)] = timed(&[20_000, 20_000, 2_000, 5_000], sampled)[..] else { panic!("four periods") };
    assert_eq!((every, next.one_in), (5_000, 1));
}

#[test]
fn an_egress_that_ends_several_flows_delivers_each_packet_to_its_own_and_flows_come_and_go() {
    let mut b = ModelBuilder::default();
    b.module(ModuleDecl::new("src", Role::Source, 0, 1)).module(ModuleDecl::new("a", Role::Function, 1, 1)).module(ModuleDecl::new("out", Role::Sink, 1, 0));
    b.connect("src", 0, "a", 0).connect("a", 0, "out", 0);
    b.flow("f0", &["src", "a", "out"], None).flow("f1", &["src", "a", "out"], None);
    // 30 packets of flows 0 and 1 in turn, then 10 of flow 2, which is added before they come.
    let sent: Vec<u16> = (0..30).map(|i| i % 2).chain([2; 10]).collect();
    let a = ModuleCode::Function(Box::new(ByFlow { name: "a", gates: 1, log: Log::default() }));
    let mut g = TestGraph::new(&b, 10, vec![ModuleCode::Source(Box::new(Listed::new(&sent))), a, ModuleCode::Egress]);
    assert_eq!(g.rounds(3), 30);
    let delivered = |g: &mut TestGraph| g.counters().flows.iter().map(|f| (f.delivered, f.misdelivered)).collect::<Vec<_>>();
    assert_eq!(delivered(&mut g), [(15, 0), (15, 0)], "each to its own flow");
    let path: Vec<usize> = ["src", "a", "out"].iter().map(|n| g.module(n)).collect();
    let model = g.model.with_flow_added("f2", &path, Some(1_000_000)).unwrap().with_flow_removed(0).unwrap();
    g.graph.set_flows(&model);
    g.model = model;
    assert_eq!(g.rounds(1), 10);
    assert_eq!(delivered(&mut g), [(15, 0), (15, 0), (10, 0)], "the added flow's packets are its own; the removed one keeps what it had");
    let c = g.counters();
    assert_eq!((c.flows[2].generated, c.in_flight), (10, 0));
}

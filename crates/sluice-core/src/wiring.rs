//! What connects workers: packet pools over one arena, and a lock-free
//! ring for every edge between modules on different workers.

use crate::batch::MAX_BURST;
use crate::limits::{MAX_ARENA_BUFFERS, MAX_POOL_BUFFERS};
use crate::schedule::Schedule;
use crate::model::Model;
use crate::nf::EgressLink;
use crate::packet::PacketId;
use crate::pool::PacketPool;
use crate::ring::{spsc, Consumer, Producer};

/// Slots of an inter-worker ring (pkt).
pub const RING_SLOTS: usize = 4096;
/// Capacity of a weighted-fair module queue (pkt); arrivals beyond it are dropped.
pub const WFQ_QUEUE: usize = 2048;

/// One worker's share of the wiring.
pub struct WorkerWiring {
    /// The worker's packet pool.
    pub pool: PacketPool,
    /// Rings this worker sends on, with the crossing edge (index into `Model::edges`) each carries.
    pub outbound: Vec<(usize, Producer<PacketId>)>,
    /// Rings this worker receives from, with their crossing edges.
    pub inbound: Vec<(usize, Consumer<PacketId>)>,
    /// The worker's way onto the scheduled link, where the pipeline has one.
    pub egress: Option<Box<dyn EgressLink>>,
}

/// Packet buffers one worker needs so that its sources are never starved by
/// packets parked in buffers, queues, NFs and rings (pkt), within the pool and
/// arena bounds (see [`crate::limits`]): a pool smaller than that only
/// makes its sources pause, and a copy that finds no buffer is dropped
/// and counted. `waiting` more can wait outside the graph (in a scheduled
/// egress, see [`crate::nf::EgressLink`]).
pub fn pool_capacity(model: &Model, schedule: Schedule, waiting: usize) -> usize {
    let modules = model.modules.len();
    let rtc = ((modules + 4) * 2 * model.batch_size).max(1024);
    let queues = match schedule {
        Schedule::RunToCompletion => 0,
        Schedule::WeightedFair { .. } => 4 * WFQ_QUEUE,
    };
    // A spare worker, once modules move to it, brings a ring of its own.
    let rings = (model.crossings.len() + model.idle_workers().len()).min(4) * RING_SLOTS;
    let queue_modules: usize = model.modules.iter().map(|m| m.queue_pkts.unwrap_or(0) + m.held_pkts).sum();
    let wanted = (rtc + rings + queue_modules + waiting).max(queues + waiting).max(2 * MAX_BURST);
    wanted.min(MAX_POOL_BUFFERS).min(MAX_ARENA_BUFFERS / model.workers().max(1)).max(2 * MAX_BURST)
}

/// Wires every worker of `model`, each pool holding `capacity` buffers
/// (`None`: sized from the graph).
pub fn wire(model: &Model, schedule: Schedule, capacity: Option<usize>) -> Vec<WorkerWiring> {
    let workers = model.workers();
    let capacity = capacity.unwrap_or_else(|| pool_capacity(model, schedule, 0));
    let mut wiring: Vec<WorkerWiring> = PacketPool::shared(workers, capacity)
        .into_iter()
        .map(|pool| WorkerWiring { pool, outbound: Vec::new(), inbound: Vec::new(), egress: None })
        .collect();
    for &e in &model.crossings {
        let edge = model.edges[e];
        let (tx, rx) = spsc(RING_SLOTS);
        wiring[model.worker_of[edge.from]].outbound.push((e, tx));
        wiring[model.worker_of[edge.to]].inbound.push((e, rx));
    }
    wiring
}

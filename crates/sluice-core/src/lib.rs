//! Sluice data path: packets, pool, batches, modules, the graph walker,
//! fractional buffers, workers, rings and telemetry.
#![warn(missing_docs)]

pub mod backend;
pub mod batch;
pub mod buffer;
pub mod capture;
pub mod codel;
pub mod core_probe;
pub mod core_pinning;
pub mod drop_reason;
pub mod egress_knobs;
pub mod engine;
pub mod error;
pub mod graph;
pub mod harness;
pub mod knobs;
pub mod limits;
pub mod meter;
pub mod model;
pub mod nf;
pub mod packet;
pub mod packet_filter;
pub mod poll;
pub mod pool;
pub mod ring;
pub mod schedule;
mod stride;
pub mod telemetry;
pub mod trace;
pub mod watch;
pub mod wire;
pub mod wiring;

pub use backend::{Actions, Backend};
pub use batch::{Batch, MAX_BURST};
pub use buffer::FractionalBuffer;
pub use codel::CoDelConfig;
pub use drop_reason::{DropReason, NfDrops};
pub use egress_knobs::{EgressChange, EgressKnobs, EgressSettings};
pub use engine::{Engine, EngineConfig};
pub use error::{Error, Result};
pub use graph::{move_modules, WalkerConfig, WorkerGraph};
pub use meter::PeriodMeter;
pub use poll::PollPolicy;
pub use schedule::Schedule;
pub use knobs::Knobs;
pub use model::{Flow, FlowId, Model, ModelBuilder, ModuleDecl, ModuleId, Profile, Role};
pub use nf::{keep_or_drop, Decision, EgressLink, LinkReads, ModuleCode, LiveHandle, NetworkFunction, NfContext, Offered, Outputs, PacketSink, PacketSource, RateKnobs};
pub use packet::{PacketId, PacketMeta, NO_FLOW};
pub use pool::PacketPool;
pub use wiring::{wire, WorkerWiring};
pub use packet_filter::PacketFilter;
pub use trace::{Trace, TracedPacket};
pub use watch::Watch;
pub use telemetry::{Counters, DelaySampling, Drops, FlowTelemetry, FlowTotals, ModuleCounters, ModuleTelemetry, Telemetry, Totals, WorkerTelemetry};

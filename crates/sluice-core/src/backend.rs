//! What a control loop drives: the engine or the simulator, alike.

use crate::error::Result;
use crate::model::{Model, ModuleId};
use crate::nf::{LiveHandle, NetworkFunction};
use crate::telemetry::Telemetry;
use crate::watch::Watch;

/// Changes a controller asks for at the end of a period.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Actions {
    /// New fractional-buffer triggers (module, trigger in pkt; 0 = pass-through).
    pub triggers: Vec<(ModuleId, u32)>,
    /// New weighted-fair scheduling weights (module, weight ≥ 1).
    pub weights: Vec<(ModuleId, u32)>,
    /// New offered rates (source module, stream index, pkt/s; infinite = unlimited).
    pub rates: Vec<(ModuleId, usize, f64)>,
    /// Workers to take down (true: its modules stop and what reaches them
    /// is dropped and counted, as on a failed core) or bring back (false).
    pub halted: Vec<(usize, bool)>,
    /// Modules to move to another worker (module, worker) while the
    /// pipeline runs, buffered packets and NF state with them; edges that
    /// come to cross workers get rings (see [`crate::Model::with_moves`]).
    pub moves: Vec<(ModuleId, usize)>,
    /// Per worker, the longest it may sleep when idle (ns): a share of the
    /// delay slack of the flows it carries, for SLO-aware polling.
    pub sleep_bounds: Vec<(usize, u64)>,
    /// New hold times of NFs that hold packets (module, ns ≥ 1; a
    /// Reframer's T_buff), for modules with a hold bound (see
    /// [`crate::ModuleDecl::max_hold_ns`]).
    pub holds: Vec<(ModuleId, u64)>,
    /// A change of the scheduled egress's settings.
    #[serde(flatten)]
    pub egress: crate::EgressChange,
}

impl Actions {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.triggers.is_empty()
            && self.weights.is_empty()
            && self.rates.is_empty()
            && self.halted.is_empty()
            && self.moves.is_empty()
            && self.sleep_bounds.is_empty()
            && self.holds.is_empty()
            && self.egress.is_empty()
    }
}

/// A pipeline that runs for control periods and takes actions between them.
pub trait Backend {
    /// The pipeline it runs.
    fn model(&self) -> &Model;

    /// Which delivered packets its telemetry's delays are measured on
    /// (`None`: none, timing is off).
    fn delays_timed(&self) -> Option<crate::telemetry::DelaySampling>;

    /// Runs one control period of `period_ns` (ns) and returns its
    /// telemetry; ends it early (within a millisecond on the engine) once
    /// `stop` returns true, which it asks now and then.
    fn run_period(&mut self, period_ns: u64, stop: &dyn Fn() -> bool) -> Telemetry;

    /// Applies actions (they take effect at once, in the next period); the
    /// model then shows any moved modules on their new workers.
    fn apply(&mut self, actions: &Actions) -> Result<()>;

    /// Holds every running worker between two of its rounds until
    /// [`Backend::release`], so that the changes made meanwhile reach the
    /// data path together (a transaction's). Default: a backend that
    /// forwards nothing between two changes holds nothing.
    fn hold(&mut self) {}

    /// Lets the workers [`Backend::hold`] held run again, with every change
    /// made meanwhile.
    fn release(&mut self) {}

    /// Swaps module `m`'s network function for `nf` between two rounds of
    /// its worker (see `WorkerGraph::replace_function`); returns the old
    /// one, for the caller to free off the data path.
    fn replace_function(&mut self, m: ModuleId, nf: Box<dyn NetworkFunction>) -> Result<Box<dyn NetworkFunction>>;

    /// Puts worker `w` under poll policy `policy` from its next round.
    fn set_poll(&mut self, w: usize, policy: crate::poll::PollPolicy) -> Result<()>;

    /// The live handle of module `m`'s NF in force (see
    /// [`NetworkFunction::live`]), if it has one.
    fn live(&self, m: ModuleId) -> Option<LiveHandle>;

    /// Takes the flows of `of`, its model with flows added or removed (see
    /// [`Model::with_flow_added`]): every worker makes room for them and
    /// links again, between two of its rounds.
    fn set_flows(&mut self, of: &Model) -> Result<()>;

    /// Runs `edit` on source module `m` while its worker is held between
    /// two rounds (a change of how it sorts packets into flows: see
    /// [`PacketSource::set_flow_rules`](crate::nf::PacketSource::set_flow_rules));
    /// what `edit` refuses is refused, by name.
    fn edit_source(&mut self, m: ModuleId, edit: &mut dyn FnMut(&mut dyn crate::nf::PacketSource) -> std::result::Result<(), String>) -> Result<()>;

    /// Packet handles over its pool (what a [`crate::Trace`] is sized for).
    fn packet_handles(&self) -> usize;

    /// Runs `edit` on each worker's [`Watch`] (the trace and captures
    /// attached to its modules), with the worker's index, while every
    /// worker is held between two of its rounds: a trace's records are
    /// read there, and a change reaches every worker at once.
    fn watch(&mut self, edit: &mut dyn FnMut(usize, &mut Watch)) -> Result<()>;

    /// Stops the sources, drains every buffer and returns the last telemetry
    /// (whose totals then show nothing in flight).
    fn finish(&mut self) -> Telemetry;
}

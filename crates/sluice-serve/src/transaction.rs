//! Transactions (`POST /v1/transactions`): several changes made at one
//! period boundary, in order, each against the state the ones before it
//! left; where one is refused, those made before it are undone in
//! reverse order, so that all are made or none. Before each change is
//! made, what undoes it is read from the state it meets: the setting it
//! replaces, or for an NF replaced (a configuration, a rebuild of routes)
//! the NF itself and its configuration, swapped back whole.
//!
//! Flows are added and removed alone: a removed flow keeps its name for
//! the run, so an added one cannot be taken back without a trace.

use std::sync::MutexGuard;

use sluice_control::Boundary;
use sluice_core::EgressChange;
use sluice_pipeline::spec::SourceSpec;

use crate::change::{Change, Restore};
use crate::error::ApiError;
use crate::status::Status;

/// What makes a transaction's changes, one at a time (the control thread's steering).
pub trait Maker {
    /// Makes `change` at `at`; gives back the NF it replaced, if it replaced one.
    fn make_one(&self, at: &mut Boundary<'_>, change: Change) -> Result<(String, Option<Restore>), ApiError>;
    /// The status, locked.
    fn lock(&self) -> MutexGuard<'_, Status>;
    /// Writes a line to the operator's log.
    fn log(&self, line: &str);
}

/// Makes `changes` at `at` in order, every running worker held until all
/// are made or, where one is refused, those made are undone; returns the
/// one line that says what changed.
pub fn make(maker: &impl Maker, at: &mut Boundary<'_>, changes: Vec<Change>) -> Result<String, ApiError> {
    at.backend().hold();
    let made = make_all(maker, at, changes);
    at.backend().release();
    made
}

fn make_all(maker: &impl Maker, at: &mut Boundary<'_>, changes: Vec<Change>) -> Result<String, ApiError> {
    let count = changes.len();
    let (mut lines, mut undo) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for (i, change) in changes.into_iter().enumerate() {
        let inverse = inverse(&change, at, &maker.lock());
        match maker.make_one(at, change) {
            Ok((line, restore)) => {
                lines.push(line);
                undo.push(inverse.map_or_else(|| Undo::Restore(restore.expect("an NF replaced gives back the one it replaced")), Undo::Change));
            }
            Err(e) => {
                undo_all(maker, at, undo);
                return Err(ApiError { status: e.status, message: format!("changes[{i}]: {}; none of the {count} changes was made", e.message) });
            }
        }
    }
    Ok(format!("transaction of {count}: {}", lines.join("; ")))
}

/// Undoes the changes a refused transaction made, the last first.
fn undo_all(maker: &impl Maker, at: &mut Boundary<'_>, undo: Vec<Undo>) {
    for step in undo.into_iter().rev() {
        let undone = match step {
            Undo::Change(change) => maker.make_one(at, change).map(drop),
            Undo::Restore(restore) => restore.make(at, &mut maker.lock()),
        };
        if let Err(e) = undone {
            maker.log(&format!("a refused transaction's change could not be undone: {}", e.message));
        }
    }
}

/// The most changes one transaction makes.
pub const MAX_CHANGES: usize = 1024;

/// What undoes a change made.
enum Undo {
    /// The change that sets back what it changed.
    Change(Change),
    /// An NF replaced: the one it replaced, to swap back.
    Restore(Restore),
}

/// The change that undoes `change`, read from the state it is about to
/// meet (`at` and `status`); `None` for a change that replaces an NF,
/// which is undone by what its swap gives back (see [`Restore`]).
pub fn inverse(change: &Change, at: &mut Boundary<'_>, status: &Status) -> Option<Change> {
    Some(match change {
        Change::Slo { flow, .. } => Change::Slo { flow: *flow, slo_ns: at.model().flows[*flow].slo_ns },
        Change::Controller { .. } => Change::Controller { name: status.controller.clone() },
        Change::Trigger { module, .. } => Change::Trigger { module: *module, trigger: status.pins.iter().find(|(m, _)| m == module).map(|&(_, t)| t) },
        Change::Move { module, .. } => Change::Move { module: *module, worker: at.model().worker_of[*module] },
        Change::Weight { module, .. } => Change::Weight { module: *module, weight: status.weights[*module] },
        Change::Rate { module, stream, .. } => Change::Rate { module: *module, stream: *stream, rate_pps: rate_in_force(status, *module, *stream) },
        Change::Egress(egress) => {
            let plan = status.egress.as_ref().expect("checked when parsed");
            Change::Egress(EgressChange {
                weights: egress.weights.iter().map(|&(c, _)| (c, plan.config.weights[c])).collect(),
                link_bits_per_s: egress.link_bits_per_s.map(|_| plan.config.link.bits_per_s),
                parents: egress.parents.iter().map(|&(p, _, _)| (p, plan.config.parents[p].rate_bits_per_s, plan.config.parents[p].ceil_bits_per_s)).collect(),
                codel: egress.codel.iter().filter_map(|&(c, _)| Some((c, plan.config.aqm.get(c)?.codel()?))).collect(),
            })
        }
        Change::Poll { worker, .. } => {
            let spec = status.polls[*worker].clone();
            let policy = spec.policy().expect("the policy in force was read once");
            Change::Poll { worker: *worker, spec, policy }
        }
        Change::Down { worker, .. } => Change::Down { worker: *worker, down: status.down[*worker] },
        Change::Neighbor { interface, address, .. } => {
            let table = &status.interfaces.get(*interface).expect("checked when parsed").neighbors;
            let kept = table.entries(0).into_iter().find(|e| e.address == *address && e.state == sluice_nf::neighbor_table::State::Static);
            Change::Neighbor { interface: *interface, address: *address, mac: kept.map(|e| e.mac) }
        }
        Change::Config { .. } | Change::Routes { .. } => return None,
        Change::AddFlow { .. } | Change::RemoveFlow { .. } | Change::Transaction(_) | Change::Watch(_) => unreachable!("refused in a transaction when parsed"),
    })
}

/// The rate in force of `module`'s stream `stream` (pkt/s; infinite: unlimited).
fn rate_in_force(status: &Status, module: usize, stream: usize) -> f64 {
    if let Some(&rate) = status.served.rates.get(&(module, stream)) {
        return rate;
    }
    let rate = match &status.served.spec.modules[module].kind {
        sluice_pipeline::spec::KindSpec::Source(SourceSpec::Synthetic { streams, .. }) => streams.get(stream).and_then(|s| s.rate_pps),
        sluice_pipeline::spec::KindSpec::Source(SourceSpec::Pcap { rate_pps, .. }) => *rate_pps,
        _ => None,
    };
    rate.unwrap_or(f64::INFINITY)
}

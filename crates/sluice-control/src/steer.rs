//! Changes made to a run from outside it (an operator's, through `sluice
//! serve`'s control API), between two of its periods: the controller in
//! force, triggers pinned by hand, SLOs, and whatever the backend takes as
//! [`Actions`]. Each change is checked whole before it is made and leaves
//! one line in the next period's record.

use sluice_core::{Actions, Backend, Error, FlowId, Model, ModuleId, Result};

use crate::controller::Controller;

/// What a change may touch at a period boundary (see [`Steering`]).
pub struct Boundary<'a> {
    pub(crate) model: &'a mut Model,
    pub(crate) backend: &'a mut dyn Backend,
    pub(crate) pins: &'a mut Vec<(ModuleId, u32)>,
    pub(crate) controller: &'a str,
    pub(crate) switch_to: Option<Box<dyn Controller>>,
    pub(crate) changes: Vec<String>,
}

impl Boundary<'_> {
    /// The pipeline as the run sees it now (SLOs and placement included).
    pub fn model(&self) -> &Model {
        self.model
    }

    /// The backend, for what only it can change (an NF's configuration).
    pub fn backend(&mut self) -> &mut dyn Backend {
        self.backend
    }

    /// Name of the controller in force (or switched to at this boundary).
    pub fn controller(&self) -> &str {
        self.switch_to.as_ref().map_or(self.controller, |c| c.name())
    }

    /// Triggers pinned by hand (module, pkt).
    pub fn pins(&self) -> &[(ModuleId, u32)] {
        self.pins
    }

    /// Notes a change made at this boundary (one line, for the next period's record).
    pub fn note(&mut self, change: String) {
        self.changes.push(change);
    }

    /// Sets flow `flow`'s SLO (ns; `None`: no SLO) from the next period on.
    pub fn set_slo(&mut self, flow: usize, slo_ns: Option<u64>) -> Result<()> {
        let f = self.model.flows.get_mut(flow).ok_or_else(|| Error::Flow { flow: format!("#{flow}"), reason: "no such flow".into() })?;
        if slo_ns == Some(0) {
            return Err(Error::Flow { flow: f.name.clone(), reason: "an SLO must be > 0".into() });
        }
        f.slo_ns = slo_ns;
        Ok(())
    }

    /// Adds flow `name` along `path` under `slo_ns` (ns) from the next
    /// period on (see [`Model::with_flow_added`]); returns its id.
    pub fn add_flow(&mut self, name: &str, path: &[ModuleId], slo_ns: Option<u64>) -> Result<FlowId> {
        let added = self.model.with_flow_added(name, path, slo_ns)?;
        self.backend.set_flows(&added)?;
        *self.model = added;
        Ok(self.model.flows.len() - 1)
    }

    /// Removes flow `f` from the next period on (see [`Model::with_flow_removed`]).
    pub fn remove_flow(&mut self, f: FlowId) -> Result<()> {
        let removed = self.model.with_flow_removed(f)?;
        self.backend.set_flows(&removed)?;
        *self.model = removed;
        Ok(())
    }

    /// Applies `actions` to the backend (all or nothing, as it checks
    /// them); moved modules show in [`Self::model`] at once.
    pub fn apply(&mut self, actions: &Actions) -> Result<()> {
        let moved = if actions.moves.is_empty() { None } else { Some(self.model.with_moves(&actions.moves)?) };
        self.backend.apply(actions)?;
        if let Some(to) = moved {
            *self.model = to;
        }
        Ok(())
    }

    /// Pins module `m`'s trigger at `trigger` (pkt), whatever the
    /// controller decides, until unpinned.
    pub fn pin(&mut self, m: ModuleId, trigger: u32) -> Result<()> {
        self.apply(&Actions { triggers: vec![(m, trigger)], ..Actions::default() })?;
        self.pins.retain(|(p, _)| *p != m);
        self.pins.push((m, trigger));
        Ok(())
    }

    /// Hands module `m`'s trigger back to the controller (from its next step).
    pub fn unpin(&mut self, m: ModuleId) {
        self.pins.retain(|(p, _)| *p != m);
    }

    /// Puts `controller` in force from the next period on, with its
    /// initial settings applied now.
    pub fn switch(&mut self, mut controller: Box<dyn Controller>) -> Result<()> {
        let mut init = controller.init(self.model);
        pin_over(&mut init, self.pins);
        self.apply(&init)?;
        self.switch_to = Some(controller);
        Ok(())
    }
}

/// Replaces the triggers `actions` sets for pinned modules with their pins.
pub(crate) fn pin_over(actions: &mut Actions, pins: &[(ModuleId, u32)]) {
    if pins.is_empty() {
        return;
    }
    actions.triggers.retain(|(m, _)| !pins.iter().any(|(p, _)| p == m));
    actions.triggers.extend_from_slice(pins);
}

/// Makes changes to a run between its periods.
pub trait Steering {
    /// Called once at every period boundary, before the period starts.
    fn at_boundary(&mut self, boundary: &mut Boundary<'_>);
}

/// No changes from outside: a run as planned.
pub struct Unsteered;

impl Steering for Unsteered {
    fn at_boundary(&mut self, _: &mut Boundary<'_>) {}
}

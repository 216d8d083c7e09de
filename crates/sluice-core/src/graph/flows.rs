//! Flows added to and removed from a running pipeline (see
//! [`Model::with_flow_added`]): a worker takes the model's flows between
//! two of its rounds, with a recorder for each new one, and links again
//! (the hops that claim packets, the flows each egress ends, where each
//! flow ends). Flow ids stay: a removed flow keeps its recorder, and its
//! packets in flight are delivered or dropped to it.

use super::{Kind, WorkerGraph};
use crate::model::{Model, ModuleId};
use crate::nf::PacketSource;
use crate::telemetry::FlowRecorder;

impl WorkerGraph {
    /// Takes the flows of `model`, this worker's model with flows added or
    /// removed (the only time it allocates a recorder).
    pub fn set_flows(&mut self, model: &Model) {
        if self.flows.len() < model.flows.len() {
            self.flows.resize_with(model.flows.len(), FlowRecorder::default);
        }
        self.link(model);
    }

    /// Runs `edit` on source module `m` here (a change of its flow rules:
    /// see [`PacketSource::set_flow_rules`]), then links again by `model`,
    /// as whether its packets all come with a flow decides where they are
    /// claimed. `None` where `m` is not a source here.
    pub fn edit_source(&mut self, m: ModuleId, model: &Model, edit: &mut dyn FnMut(&mut dyn PacketSource) -> Result<(), String>) -> Option<Result<(), String>> {
        let source = self.nodes.iter_mut().find(|n| n.module == m).and_then(|n| match &mut n.kind {
            Kind::Source(source) => Some(source),
            _ => None,
        })?;
        let edited = edit(source.as_mut());
        self.link(model);
        Some(edited)
    }
}

//! The description in force: the one a pipeline was served from, with
//! what every change applied since has changed written into it, in the
//! same form (`GET /v1/pipeline`; `sluice ctl save`; `serve --state`,
//! which starts from it again).
//!
//! Written in: NF configurations and routes, flows added and removed
//! with the rules that sort packets into them, SLOs, placement, stream
//! rates, poll policies, the scheduled egress's weights and link, static
//! neighbours, and (beside the description) the controller. Not written:
//! triggers pinned and weighted-fair weights, which the description has
//! no field for, and workers taken down, which a restart brings back.

use serde_json::{json, Value};
use sluice_core::ModuleId;
use sluice_pipeline::spec::{FlowRuleSpec, FlowSpec, KindSpec, PipelineSpec, SourceSpec};

use crate::status::{show_address, show_mac, Served, Status};

impl Status {
    /// The description in force now.
    pub fn in_force(&self) -> PipelineSpec {
        let served = &self.served;
        let mut spec = served.spec.clone();
        let removed = |flow: &str| self.flow(flow).is_some_and(|f| self.model.flows[f].removed);
        for (m, module) in spec.modules.iter_mut().enumerate() {
            if let Some(nf) = self.config(m) {
                module.kind = KindSpec::Nf(nf);
            }
            if self.model.worker_of[m] != served.placed[m] {
                module.worker = Some(self.model.worker_of[m]);
            }
            if let KindSpec::Source(source) = &mut module.kind {
                write_source(source, m, served, &removed);
            }
        }
        spec.flows = self.model.flows.iter().filter(|f| !f.removed).map(|f| self.flow_in_force(f, served)).collect();
        spec.worker_poll = self.polls.iter().enumerate().filter(|(_, p)| **p != spec.poll).map(|(w, p)| (w, p.clone())).collect();
        if let (Some(egress), Some(plan)) = (spec.egress_scheduler.as_mut(), &self.egress) {
            for ((class, weight), management) in egress.classes.iter_mut().zip(&plan.config.weights).zip(&plan.config.aqm) {
                class.weight = *weight;
                if let Some(codel) = class.codel.as_mut().or(class.fq_codel.as_mut().map(|fq| &mut fq.codel)) {
                    *codel = management.codel().expect("a class with codel or fq_codel keeps it");
                }
            }
            egress.link_bits_per_s = plan.config.link.bits_per_s;
            for (parent, shape) in egress.parents.iter_mut().zip(&plan.config.parents) {
                parent.rate_bits_per_s = shape.rate_bits_per_s;
                parent.ceil_bits_per_s = Some(shape.ceil_bits_per_s);
            }
        }
        for (i, interface) in spec.interfaces.iter_mut().enumerate() {
            let Some(live) = u16::try_from(i).ok().and_then(|i| self.interfaces.get(i)) else { continue };
            let mut statics: Vec<_> = live.neighbors.entries(0).into_iter().filter(|e| e.state == sluice_nf::neighbor_table::State::Static).collect();
            statics.sort_by_key(|e| e.address);
            interface.neighbors = statics.into_iter().map(|e| sluice_nf::interfaces::NeighborSpec { address: show_address(e.address), mac: show_mac(e.mac) }).collect();
        }
        spec
    }

    /// Flow `f` as the description in force writes it.
    fn flow_in_force(&self, f: &sluice_core::Flow, served: &Served) -> FlowSpec {
        let schedule = served.spec.flows.iter().find(|s| s.name == f.name).map(|s| s.slo_schedule.clone()).unwrap_or_default();
        FlowSpec {
            name: f.name.clone(),
            path: f.path.iter().map(|&m| self.model.modules[m].name.clone()).collect(),
            slo_us: f.slo_ns.map(|ns| ns as f64 / 1e3),
            slo_schedule: schedule,
        }
    }

    /// What `GET /v1/pipeline` answers and `serve --state` starts from:
    /// the description in force, the controller, the batch size and the workers.
    pub fn pipeline_json(&self) -> Value {
        let spec = self.in_force();
        json!({"name": spec.name, "description": spec, "controller": self.controller, "batch_size": self.model.batch_size, "workers": self.model.workers()})
    }
}

/// Writes into source `m`'s description the rates set since and the
/// rules of flows added since, less those of flows removed.
fn write_source(source: &mut SourceSpec, m: ModuleId, served: &Served, removed: &dyn Fn(&str) -> bool) {
    let rate = |stream: usize| served.rates.get(&(m, stream)).map(|&r| r.is_finite().then_some(r));
    match source {
        SourceSpec::Synthetic { streams, .. } => {
            for (i, stream) in streams.iter_mut().enumerate() {
                if let Some(r) = rate(i) {
                    stream.rate_pps = r;
                }
            }
        }
        SourceSpec::Pcap { flows, rate_pps, .. } => {
            if let Some(r) = rate(0) {
                *rate_pps = r;
            }
            write_rules(flows, m, served, removed);
        }
        SourceSpec::Port { flows, .. } => write_rules(flows, m, served, removed),
    }
}

fn write_rules(rules: &mut Vec<FlowRuleSpec>, m: ModuleId, served: &Served, removed: &dyn Fn(&str) -> bool) {
    rules.extend(served.rules.iter().filter(|(s, _)| *s == m).map(|(_, r)| r.clone()));
    rules.retain(|r| !removed(&r.flow));
}

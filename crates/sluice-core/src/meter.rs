//! The per-period view: merges the workers' readings at the end of each
//! control period and turns them, against the previous period's, into
//! [`Telemetry`]. Both backends read their workers through one.

use crate::knobs::Knobs;
use crate::model::{Model, ModuleId, Role};
use crate::poll::features::FEATURES;
use crate::telemetry::{delay_stats, Counters, FlowTelemetry, FlowTotals, ModuleCounters, ModuleTelemetry, Telemetry, Totals, WorkerCounters, WorkerTelemetry};

/// The cumulative counts of the previous reading, which the next period is measured against.
#[derive(Default)]
struct Previous {
    at_ns: u64,
    modules: Vec<ModuleCounters>,
    /// Per flow.
    flows: Vec<FlowTotals>,
    workers: Vec<WorkerCounters>,
}

/// Merges the workers' readings at the end of each control period and
/// turns them, against the previous period's, into [`Telemetry`]. Both
/// backends read their workers through one.
#[derive(Default)]
pub struct PeriodMeter {
    /// This period's readings, merged.
    merged: Counters,
    previous: Previous,
    period: u64,
    /// Source modules: their NF runs count as generated packets.
    sources: Vec<ModuleId>,
    /// Trigger in force per module at the end of the period (pkt).
    triggers: Vec<u32>,
    /// Per module, whether its walker counts its arrivals by round (controlled modules).
    counts_rounds: Vec<bool>,
}

impl PeriodMeter {
    /// A meter for `model`.
    pub fn new(model: &Model) -> Self {
        let with = |role| (0..model.modules.len()).filter(|&m| model.modules[m].role == role).collect();
        Self {
            merged: Counters::for_model(model, model.workers()),
            sources: with(Role::Source),
            triggers: vec![0; model.modules.len()],
            counts_rounds: model.modules.iter().map(|m| m.controlled).collect(),
            ..Self::default()
        }
    }

    /// Makes room for the flows of `model`, flows having been added.
    pub fn set_flows(&mut self, model: &Model) {
        self.merged.flows.resize_with(model.flows.len(), Default::default);
    }

    /// Starts taking the readings of a period.
    pub fn begin(&mut self) {
        self.merged.at_ns = 0;
        self.merged.in_flight = 0;
        for f in &mut self.merged.flows {
            f.dropped = 0;
            f.generated = 0;
        }
        // Logged features are the period's own: a worker that gives no reading gives none.
        for f in &mut self.merged.poll_features {
            f.clear();
        }
    }

    /// Takes worker `w`'s slots from its reading `from` (see
    /// [`WorkerGraph::read_counters`](crate::WorkerGraph::read_counters)) and
    /// leaves the previous period's delays in `from`'s histograms: clear
    /// them ([`Counters::clear_delays`]) before `from` is read into again,
    /// off the path from period end to the controller's answer.
    pub fn merge(&mut self, from: &mut Counters, model: &Model, w: usize) {
        let merged = &mut self.merged;
        merged.at_ns = merged.at_ns.max(from.at_ns);
        merged.in_flight += from.in_flight;
        for (m, c) in from.modules.iter().enumerate() {
            if model.worker_of[m] == w {
                merged.modules[m] = *c;
            }
        }
        for (f, flow) in model.flows.iter().enumerate() {
            // Drops happen on any worker, and a flow's packets are made at
            // its source or claimed at a hop on any worker: each counts its own.
            merged.flows[f].dropped += from.flows[f].dropped;
            merged.flows[f].generated += from.flows[f].generated + from.flows[f].claimed;
            let sink = *flow.path.last().expect("validated paths are non-empty");
            if model.worker_of[sink] == w {
                let (mine, theirs) = (&mut merged.flows[f], &mut from.flows[f]);
                mine.delivered = theirs.delivered;
                mine.misdelivered = theirs.misdelivered;
                // A flow ends on one worker: its histogram is taken whole, and
                // the last period's is left in its place.
                mine.swap_delays(theirs);
            }
        }
        merged.workers[w] = from.workers[w];
        std::mem::swap(&mut merged.poll_features[w], &mut from.poll_features[w]);
    }

    /// Ends the period: the telemetry of what was merged, with the triggers
    /// in force in `knobs`; `at_ns` replaces the readings' time (a simulator
    /// ends periods on its own clock).
    pub fn end(&mut self, knobs: &Knobs, at_ns: Option<u64>) -> Telemetry {
        if let Some(at) = at_ns {
            self.merged.at_ns = at;
        }
        knobs.read_triggers(&mut self.triggers);
        let merged = std::mem::take(&mut self.merged);
        let telemetry = self.period(&merged);
        self.merged = merged;
        telemetry
    }

    /// The telemetry of the period that ends at `now`.
    fn period(&mut self, now: &Counters) -> Telemetry {
        let (sources, triggers, counts_rounds) = (&self.sources, &self.triggers, &self.counts_rounds);
        let prev = &mut self.previous;
        prev.modules.resize(now.modules.len(), ModuleCounters::default());
        prev.flows.resize(now.flows.len(), FlowTotals::default());
        prev.workers.resize(now.workers.len(), WorkerCounters::default());
        let period_ns = now.at_ns.saturating_sub(prev.at_ns).max(1);
        let per_s = 1e9 / period_ns as f64;
        let ratio = |num: u64, den: u64| if den == 0 { 0.0 } else { num as f64 / den as f64 };

        let modules = now
            .modules
            .iter()
            .zip(&prev.modules)
            .zip(triggers)
            .zip(counts_rounds)
            .map(|(((c, p), &trigger), &counts_rounds)| ModuleTelemetry {
                trigger,
                x: (c.runs - p.runs) as f64 * per_s,
                r: (c.run_pkts - p.run_pkts) as f64 * per_s,
                b_in: ratio(c.arrived_pkts - p.arrived_pkts, c.arrivals - p.arrivals),
                b_round: counts_rounds.then(|| ratio(c.arrived_pkts - p.arrived_pkts, c.arrival_rounds - p.arrival_rounds)),
                b_round_sd: counts_rounds.then(|| {
                    let rounds = c.arrival_rounds - p.arrival_rounds;
                    let mean = ratio(c.arrived_pkts - p.arrived_pkts, rounds);
                    (ratio(c.round_pkts_sq - p.round_pkts_sq, rounds) - mean * mean).max(0.0).sqrt()
                }),
                b: ratio(c.run_pkts - p.run_pkts, c.runs - p.runs),
                busy_ns: c.busy_ns - p.busy_ns,
                dropped: c.drops().since(&p.drops()).total(),
                drops: c.drops().since(&p.drops()),
                held: c.arrived_pkts.saturating_sub(c.run_pkts + c.queue_dropped + c.down_dropped),
                nf: std::array::from_fn(|i| c.nf[i].saturating_sub(p.nf[i])),
                nf_drops: std::array::from_fn(|i| c.nf_drops[i].saturating_sub(p.nf_drops[i])),
            })
            .collect();
        let flows = now
            .flows
            .iter()
            .zip(&prev.flows)
            .map(|(f, p)| {
                let [mean_ns, p50_ns, p95_ns, p99_ns, max_ns] = delay_stats(f);
                FlowTelemetry {
                    generated: f.generated - p.generated,
                    dropped: f.dropped - p.dropped,
                    delivered: f.delivered - p.delivered,
                    rate_pps: (f.delivered - p.delivered) as f64 * per_s,
                    mean_ns,
                    p50_ns,
                    p95_ns,
                    p99_ns,
                    max_ns,
                    misdelivered: f.misdelivered - p.misdelivered,
                    sample: f.sample,
                }
            })
            .collect();
        let workers = now
            .workers
            .iter()
            .zip(&prev.workers)
            .zip(now.poll_features.iter().chain(std::iter::repeat(&Vec::new())))
            .map(|((c, p), features)| WorkerTelemetry {
                busy_fraction: ((c.busy_ns - p.busy_ns) as f64 / period_ns as f64).min(1.0),
                turnaround_ns: ratio(c.busy_ns - p.busy_ns, c.busy_rounds - p.busy_rounds),
                probe_ns: ratio(c.probe_ns - p.probe_ns, c.probes - p.probes),
                cpu_fraction: match c.cpu_ns.saturating_sub(p.cpu_ns) {
                    0 => ((c.busy_ns - p.busy_ns) as f64 / period_ns as f64).min(1.0),
                    cpu => (cpu as f64 / period_ns as f64).min(1.0),
                },
                polls: c.polls - p.polls,
                empty_polls: c.empty_polls - p.empty_polls,
                waits: c.waits - p.waits,
                wait_asked_us: ratio(c.wait_asked_ns - p.wait_asked_ns, c.waits - p.waits) / 1e3,
                wait_late_us: ratio((c.wait_slept_ns - p.wait_slept_ns).saturating_sub(c.wait_asked_ns - p.wait_asked_ns), c.waits - p.waits) / 1e3,
                poll_features: features.chunks_exact(FEATURES).map(<[f32]>::to_vec).collect(),
            })
            .collect();
        let copied = now.modules.iter().map(|m| m.created).sum();
        let mut drops = crate::telemetry::Drops::default();
        for m in &now.modules {
            drops += m.drops();
        }
        let totals = Totals {
            generated: sources.iter().map(|&s| now.modules[s].run_pkts).sum::<u64>() + copied,
            copied,
            // At egresses, and to the router itself (NFs that take in packets addressed to it).
            delivered: now.modules.iter().map(|m| m.delivered).sum(),
            dropped: drops.total(),
            drops,
            in_flight: now.in_flight.max(0) as u64,
            missed: sources.iter().map(|&s| now.modules[s].missed).sum(),
        };
        let telemetry = Telemetry {
            period: self.period,
            t_s: now.at_ns as f64 * 1e-9,
            period_ns,
            modules,
            flows,
            workers,
            totals,
            flow_totals: now.flows.iter().map(FlowTotals::from).collect(),
            module_totals: now.modules.clone(),
            read_ns: 0,
        };
        self.period += 1;
        prev.at_ns = now.at_ns;
        prev.modules.copy_from_slice(&now.modules);
        for (p, f) in prev.flows.iter_mut().zip(&now.flows) {
            *p = f.into();
        }
        prev.workers.copy_from_slice(&now.workers);
        telemetry
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::FlowRecorder;

    #[test]
    fn period_rates_come_from_differences() {
        let mut meter = PeriodMeter { sources: vec![0], triggers: vec![20], counts_rounds: vec![true], ..PeriodMeter::default() };
        let mut c = Counters {
            at_ns: 1_000_000_000,
            modules: vec![ModuleCounters { arrivals: 10, arrived_pkts: 80, arrival_rounds: 5, round_pkts_sq: 1460, runs: 4, run_pkts: 80, busy_ns: 5, ..Default::default() }],
            flows: vec![FlowRecorder::default()],
            workers: vec![WorkerCounters { busy_ns: 500_000_000, busy_rounds: 10, ..Default::default() }],
            in_flight: 0,
            poll_features: vec![Vec::new()],
        };
        c.flows[0].record(1000);
        let t = meter.period(&c);
        assert_eq!(t.modules[0], ModuleTelemetry { trigger: 20, x: 4.0, r: 80.0, b_in: 8.0, b_round: Some(16.0), b_round_sd: Some(6.0), b: 20.0, busy_ns: 5, dropped: 0, drops: Default::default(), held: 0, nf: Default::default(), nf_drops: Default::default() });
        assert_eq!(t.flows[0].delivered, 1);
        assert_eq!(t.workers[0].busy_fraction, 0.5);
        c.at_ns = 1_500_000_000;
        c.modules[0].runs = 6;
        c.modules[0].run_pkts = 120;
        c.flows[0].reset_delays();
        let t = meter.period(&c);
        assert_eq!(t.modules[0].x, 4.0);
        assert_eq!(t.modules[0].b, 20.0);
        assert_eq!(t.flows[0].delivered, 0);
        assert_eq!(t.totals.generated, 120);
    }
}

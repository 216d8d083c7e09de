//! Projected gradient: one step of Rosen's gradient projection per period.

use nalgebra::{DMatrix, DVector};
use sluice_core::{Actions, FlowId, Model, ModuleId, Telemetry};

use crate::controller::Controller;
use crate::hindsight::Hindsight;
use crate::rules::{insert, one_level_at_a_time, recover, short_circuit, switched_off};
use crate::view::{ControlParams, View};

/// Pseudo-inverse cut-off for the (unit-row) active-constraint Gram matrix.
const PINV_EPS: f64 = 1e-9;
/// Packets a new buffer's trigger starts above its input batch size.
const INSERT_MARGIN: f64 = 1.0;

/// Batchy's projected-gradient controller. Each period: short-circuit
/// useless buffers and recover flows over their SLO; away from those flows'
/// paths, insert buffers where there is budget and take one
/// gradient-projection step that lowers the CPU load Σ x_v(T0_v + T1_v b_v)
/// while keeping the delays of the active flows (t_f ≥ (1 − δ)·D_f, or
/// at the growth target below that) where they are.
#[derive(Default)]
pub struct ProjGrad {
    params: ControlParams,
    hindsight: Hindsight,
}

impl ProjGrad {
    /// A projected-gradient controller with `params`.
    pub fn new(params: ControlParams) -> Self {
        Self { params, ..Self::default() }
    }
}

impl Controller for ProjGrad {
    fn name(&self) -> &str {
        "projgrad"
    }

    fn fallback(&self) -> Option<String> {
        self.hindsight.fallback()
    }

    fn step(&mut self, model: &Model, telemetry: &Telemetry) -> Actions {
        let (view, mut trigger, before) = self.hindsight.open(model, telemetry, &self.params);
        let recovery = recover(&view, self.params.delta, &before, &mut trigger);
        for raise in &recovery.mispriced {
            self.hindsight.learn(raise);
        }
        let probed = self.hindsight.explain(&view, recovery.unexplained);
        let mut frozen = recovery.frozen;
        let started: Vec<bool> = switched_off(&view.trigger, &trigger)
            .into_iter()
            .zip(probed)
            .zip(recovery.taken_back)
            .map(|((off, probed), back)| (off && !probed) || back)
            .collect();
        self.hindsight.cool(&started, &mut frozen);
        let variables: Vec<ModuleId> =
            view.live().filter(|&v| !frozen[v] && view.trigger[v] > 0 && trigger[v] > 0).collect();
        // A new buffer starts at the largest trigger that waits no longer
        // than one just above its input batch (the LPMs of VRF(2,4), 16
        // packets a round: 32, not 17) where its flows have the budget for
        // the longer runs, else just above, and grows from the next period,
        // on arrivals measured behind it; one whose full wait would cost its
        // flows next to nothing (RC's bulk buffers: about 1 ms to fill
        // against a 100 ms SLO) starts full, rather than holding the first
        // period at the unbuffered rate (RC(16) over its SLO then).
        insert(&view, self.params.delta, &mut trigger, &frozen, |v| {
            if view.full_buffer_is_negligible(v, self.params.delta) {
                view.batch..=view.batch
            } else {
                let above_input = view.b_in[v].ceil() + INSERT_MARGIN;
                let even = view.averages && view.rounds_are_even(v);
                let largest = if even { view.largest_trigger_waiting_as(v, above_input) } else { above_input };
                above_input..=largest
            }
        });
        gradient_step(&view, &self.params, &variables, &mut trigger);
        // A step down to the input batch leaves a buffer that only delays
        // (run-to-completion) or serves a queue less than a turn brings it,
        // so that the queue grows to the backpressure bound (weighted-fair).
        short_circuit(&view, &mut trigger);
        one_level_at_a_time(&view, &mut trigger);
        self.hindsight.close(&view, &trigger)
    }
}

/// Moves the triggers of `variables` along the projected descent direction
/// of the load, as far as the first flow budget or trigger bound allows,
/// in whole packets that keep every flow within its growth target. Leaves
/// them alone at a KKT point.
fn gradient_step(view: &View<'_>, params: &ControlParams, variables: &[ModuleId], trigger: &mut [u32]) {
    let mut vars: Vec<ModuleId> = variables.to_vec();
    let n = view.model.flows.len();
    // Each flow's growth target (s; ∞ without an SLO).
    let target: Vec<f64> = (0..n).map(|f| view.growth_target(f, params.delta).unwrap_or(f64::INFINITY)).collect();
    let flows: Vec<FlowId> = (0..n).filter(|&f| target[f].is_finite()).collect();
    // Active: the flows with less room to their growth target (which lies
    // below the δ band, (1 − δ)·D_f and up) than one packet of the
    // cheapest buffer on their path. Left out of the projection they would
    // stop every module's step within a packet, which rounding and taking
    // back makes 0, the steps of flows with room to grow included. Rosen
    // holds a constraint it is on; with whole-packet triggers, "on" is
    // within a packet.
    let mut active: Vec<FlowId> = flows
        .iter()
        .copied()
        .filter(|&f| {
            let packet = vars
                .iter()
                .filter(|&&v| view.flows_through[v].contains(&f))
                .map(|&v| view.dt_db(v))
                .reduce(f64::min)
                .unwrap_or(0.0);
            view.delay[f].is_some_and(|t| t >= target[f] - packet)
        })
        .collect();
    let direction = loop {
        if vars.is_empty() {
            return;
        }
        let b = |v: ModuleId| trigger[v] as f64;
        let grad = DVector::from_iterator(vars.len(), vars.iter().map(|&v| view.dl_db(v, b(v))));
        let rows = constraint_rows(view, &active, &vars);
        let (d, multipliers) = project(&grad, &rows);
        // A variable pinned at a bound the direction pushes against is fixed.
        let pinned = vars.iter().zip(d.iter()).position(|(&v, &dv)| {
            (dv > 0.0 && b(v) >= view.batch) || (dv < 0.0 && b(v) <= 1.0)
        });
        if let Some(i) = pinned {
            vars.remove(i);
            continue;
        }
        if d.norm() > 1e-9 * grad.norm().max(f64::MIN_POSITIVE) {
            break d;
        }
        match multipliers.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)) {
            Some((i, &mu)) if mu < 0.0 => {
                active.remove(i);
            }
            _ => return, // KKT point: no descent direction keeps the active delays.
        }
    };
    let mut step = f64::INFINITY;
    for (&v, &dv) in vars.iter().zip(direction.iter()) {
        let b = trigger[v] as f64;
        if dv > 0.0 {
            step = step.min((view.batch - b) / dv);
        } else if dv < 0.0 {
            step = step.min((1.0 - b) / dv);
        }
    }
    // ∂t_f/∂b over `vars`, per flow with an SLO (empty for the others).
    let mut slope = vec![Vec::new(); n];
    for &f in &flows {
        slope[f] = vars.iter().map(|&v| view.dt_f_db(f, v)).collect::<Vec<f64>>();
    }
    // The projection holds the active flows' delays; the others bound the step.
    for &f in flows.iter().filter(|f| !active.contains(f)) {
        let along: f64 = slope[f].iter().zip(direction.iter()).map(|(s, dv)| s * dv).sum();
        if along > 0.0 {
            // Aim below the active band, not at D_f itself: measured delays scatter.
            let room = target[f] - view.delay[f].unwrap_or(0.0);
            step = step.min(room.max(0.0) / along);
        }
    }
    if !step.is_finite() || step <= 0.0 {
        return;
    }
    let old: Vec<u32> = vars.iter().map(|&v| trigger[v]).collect();
    let predicted = |f: FlowId, trigger: &[u32]| -> Option<f64> {
        let delaying = vars.iter().zip(&old).zip(&slope[f]).filter(|&(_, &s)| s > 0.0);
        Some(view.delay[f]? + delaying.map(|((&v, &from), _)| view.delay_change(f, v, from, trigger[v])).sum::<f64>())
    };
    // A flow's predicted delay may go up to its growth target, also for a
    // flow already above it (the model's misses carry flows there). Such a
    // flow takes no raise that holds it up and keeps what its own buffer's
    // cut pays, so it moves back toward its target instead of creeping up
    // to its SLO one trade at a time.
    let over = |f: FlowId, trigger: &[u32]| predicted(f, trigger).is_some_and(|p| p > target[f]);
    // Whether every flow a longer run of `vars[i]` delays stays within its target.
    let fits = |i: usize, trigger: &[u32]| flows.iter().filter(|&&f| slope[f][i] > 0.0).all(|&f| !over(f, trigger));
    // Raised triggers round up. Lowered ones round down where a packet less
    // shortens the wait of the flows through them: the projection pays for
    // the others' raises with them (a packet less need not shorten a wait
    // counted in whole rounds, see `View::wait`).
    for (&v, &dv) in vars.iter().zip(direction.iter()) {
        let to = trigger[v] as f64 + step * dv;
        let (up, down) = (to.ceil().clamp(1.0, view.batch) as u32, to.floor().clamp(1.0, view.batch) as u32);
        let shorter = |f: &FlowId| view.delay_change(*f, v, up, down) < 0.0;
        trigger[v] = if dv < 0.0 && view.flows_through[v].iter().all(shorter) { down } else { up };
    }
    // Rounding up, and waits that grow in whole round gaps where the line
    // search priced 1/r a packet, may carry a flow past its growth target:
    // take back one packet at a time from the raised module that delays it
    // most.
    for &f in &flows {
        while over(f, trigger) {
            let raised = (0..vars.len()).filter(|&i| trigger[vars[i]] > old[i] && slope[f][i] > 0.0);
            let Some(i) = raised.max_by(|&a, &b| slope[f][a].total_cmp(&slope[f][b])) else { break };
            trigger[vars[i]] -= 1;
        }
    }
    // A lowered trigger pays for raises: give it back what the raises
    // that stayed do not need.
    for (i, (&v, &from)) in vars.iter().zip(&old).enumerate() {
        while trigger[v] < from {
            trigger[v] += 1;
            if !fits(i, trigger) {
                trigger[v] -= 1;
                break;
            }
        }
    }
}

/// Rows ∂t_f/∂b over `vars` for each active flow, scaled to unit length
/// (scaling leaves the projection unchanged and keeps it well conditioned).
fn constraint_rows(view: &View<'_>, active: &[FlowId], vars: &[ModuleId]) -> DMatrix<f64> {
    let mut m = DMatrix::zeros(active.len(), vars.len());
    for (i, &f) in active.iter().enumerate() {
        for (j, &v) in vars.iter().enumerate() {
            m[(i, j)] = view.dt_f_db(f, v);
        }
        let norm = m.row(i).norm();
        if norm > 0.0 {
            m.row_mut(i).scale_mut(1.0 / norm);
        }
    }
    m
}

/// Descent direction −P·∇l with P = I − Mᵀ(MMᵀ)⁺M, and the multipliers
/// μ = −(MMᵀ)⁺M∇l of the active constraints.
fn project(grad: &DVector<f64>, m: &DMatrix<f64>) -> (DVector<f64>, DVector<f64>) {
    if m.nrows() == 0 {
        return (-grad, DVector::zeros(0));
    }
    let gram = m * m.transpose();
    let pinv = gram.pseudo_inverse(PINV_EPS).expect("SVD of a finite matrix");
    let mu = -(&pinv * (m * grad));
    let d = -(grad + m.transpose() * &mu);
    (d, mu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_keeps_active_constraints_and_signs_multipliers() {
        // Minimise along -grad = (1, 1) while keeping b0 + b1 fixed: no descent (KKT, μ ≥ 0).
        let grad = DVector::from_vec(vec![-1.0, -1.0]);
        let m = DMatrix::from_row_slice(1, 2, &[1.0, 1.0]).scale(1.0 / 2f64.sqrt());
        let (d, mu) = project(&grad, &m);
        assert!(d.norm() < 1e-12);
        assert!(mu[0] > 0.0);
        // With unequal gradients the direction trades one variable for the other.
        let grad = DVector::from_vec(vec![-2.0, -1.0]);
        let (d, _) = project(&grad, &m);
        assert!(d[0] > 0.0 && d[1] < 0.0 && (d[0] + d[1]).abs() < 1e-12);
        // A constraint the gradient pulls away from gets a negative multiplier.
        let grad = DVector::from_vec(vec![1.0, 1.0]);
        let (_, mu) = project(&grad, &m);
        assert!(mu[0] < 0.0);
    }
}

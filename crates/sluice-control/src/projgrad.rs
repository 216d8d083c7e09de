//! Projected gradient: one step of Rosen's gradient projection per period.

use nalgebra::{DMatrix, DVector};
use sluice_core::{Actions, FlowId, Model, ModuleId, Telemetry};

use crate::controller::{changes, Controller};
use crate::noise::Noise;
use crate::rules::{insert, one_level_at_a_time, recover, short_circuit, switched_off, Before, Cooldown};
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
    cooldown: Cooldown,
    noise: Noise,
    before: Before,
}

impl ProjGrad {
    /// A projected-gradient controller with `params`.
    pub fn new(params: ControlParams) -> Self {
        Self { params, cooldown: Cooldown::default(), noise: Noise::default(), before: Before::default() }
    }
}

impl Controller for ProjGrad {
    fn name(&self) -> &str {
        "projgrad"
    }

    fn step(&mut self, model: &Model, telemetry: &Telemetry) -> Actions {
        let mut view = View::new(model, telemetry, &self.params);
        view.noise = self.noise.update(&view);
        let mut trigger = view.trigger.clone();
        short_circuit(&view, &mut trigger);
        let before = self.before.roll(&view);
        let recovery = recover(&view, self.params.delta, &before, &mut trigger);
        let mut frozen = recovery.frozen;
        let started: Vec<bool> =
            switched_off(&view.trigger, &trigger).into_iter().zip(recovery.taken_back).map(|(off, back)| off || back).collect();
        for (f, cooling) in frozen.iter_mut().zip(self.cooldown.update(&started)) {
            *f |= cooling;
        }
        let variables: Vec<ModuleId> =
            view.live().filter(|&v| !frozen[v] && view.trigger[v] > 0 && trigger[v] > 0).collect();
        insert(&view, self.params.delta, &mut trigger, &frozen, |v| view.b_in[v].ceil() + INSERT_MARGIN);
        gradient_step(&view, &self.params, &variables, &mut trigger);
        one_level_at_a_time(&view, &mut trigger);
        self.noise.predict(&view, &trigger);
        changes(&view.trigger, &trigger)
    }
}

/// Moves the triggers of `variables` along the projected descent direction
/// of the load, as far as the first flow budget or trigger bound allows,
/// rounding up. Leaves them alone at a KKT point.
fn gradient_step(view: &View<'_>, params: &ControlParams, variables: &[ModuleId], trigger: &mut [u32]) {
    let mut vars: Vec<ModuleId> = variables.to_vec();
    let flows: Vec<FlowId> = (0..view.model.flows.len()).filter(|&f| view.slo[f].is_some()).collect();
    // Active: the flows in the δ band, (1 − δ)·D_f and up, and those
    // between their growth target (which lies below the band) and the
    // band. Those have no room in the line search below: left out of the
    // projection they would stop every module's step at 0, including the
    // modules of flows with room to grow.
    let mut active: Vec<FlowId> = flows
        .iter()
        .copied()
        .filter(|&f| {
            let target = view.growth_target(f, params.delta).expect("flows with SLOs");
            view.delay[f].is_some_and(|t| t >= target)
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
    for &f in &flows {
        let slope: f64 = vars
            .iter()
            .zip(direction.iter())
            .map(|(&v, &dv)| view.dt_f_db(f, v) * dv)
            .sum();
        if slope > 0.0 {
            // Aim below the active band, not at D_f itself: measured delays scatter.
            let target = view.growth_target(f, params.delta).expect("flows with SLOs");
            let room = target - view.delay[f].unwrap_or(0.0);
            step = step.min(room.max(0.0) / slope);
        }
    }
    if !step.is_finite() || step <= 0.0 {
        return;
    }
    let old: Vec<u32> = vars.iter().map(|&v| trigger[v]).collect();
    for (&v, &dv) in vars.iter().zip(direction.iter()) {
        trigger[v] = (trigger[v] as f64 + step * dv).ceil().clamp(1.0, view.batch) as u32;
    }
    // Rounding up, and waits that grow in whole round gaps where the line
    // search priced 1/r a packet (see `View::wait`), may carry a flow past
    // its growth target: take back one packet at a time from the raised
    // module that delays it most.
    for &f in &flows {
        let target = view.growth_target(f, params.delta).expect("flows with SLOs");
        let Some(now) = view.delay[f] else { continue };
        let slope: Vec<f64> = vars.iter().map(|&v| view.dt_f_db(f, v)).collect();
        let on_path: Vec<usize> = (0..vars.len()).filter(|&i| slope[i] > 0.0).collect();
        let predicted =
            |trigger: &[u32]| now + on_path.iter().map(|&i| view.delay_change(f, vars[i], old[i], trigger[vars[i]])).sum::<f64>();
        while predicted(trigger) > target.max(now) {
            let raised = on_path.iter().copied().filter(|&i| trigger[vars[i]] > old[i]);
            let Some(i) = raised.max_by(|&a, &b| slope[a].total_cmp(&slope[b])) else { break };
            trigger[vars[i]] -= 1;
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

//! `wfq-opt`: weighted-fair scheduling with weights from the explicit
//! Batchy model, solved every period (beyond the paper, which left it open).
//!
//! With y_v = 1/x_v (time between runs of module v) the model is
//!
//! ```text
//! minimise  Σ_v T0_v / y_v                       (+ Σ_v T1_v R_v, a constant)
//! s.t.      Σ_{v∈f} (1 + T1_v R_v) · y_v ≤ D_f − T_turnaround − Σ_{v∈f} T0_v   for every flow f with an SLO
//!           1/R_v ≤ y_v ≤ B/R_v
//! ```
//!
//! a separable convex objective under linear constraints. Its Lagrangian
//! gives y_v = √(T0_v / Σ_f λ_f a_fv) clamped to the bounds, and dual
//! coordinate ascent on the multipliers λ (warm-started from the last
//! period) finds them. The weights are x_v = 1/y_v, scaled to integers; the
//! trigger of each module is its batch b_v = R_v·y_v.

use sluice_core::{Actions, Model, ModuleId, Schedule, Telemetry};

use crate::controller::Controller;
use crate::nfvnice::{equal_weights, weighted_fair};
use crate::view::{ControlParams, View};

/// Sweeps over the multipliers per period, at most.
const SWEEPS: usize = 50;
/// Bisection steps per multiplier.
const BISECTIONS: usize = 60;
/// Range of a multiplier (s⁻² per unit of constraint).
const PRICE_RANGE: (f64, f64) = (1e-12, 1e24);
/// Weight of the module that runs most often; the others in proportion (≥ 1).
const WEIGHT_SCALE: f64 = 1000.0;

/// The wfq-opt controller. Its state: the multipliers of the last solve,
/// the model's delay per flow for the weights it set, and per flow how far
/// the measured delay ran above the model's (s, smoothed) — the model has
/// no term for the wait for a weighted-fair turn, so this feedback keeps
/// it honest; and its floor (the unbuffered schedule it measures first).
#[derive(Default)]
pub struct WfqOpt {
    params: ControlParams,
    lambda: Vec<f64>,
    predicted: Vec<Option<f64>>,
    bias: Vec<f64>,
    floor: Floor,
}

/// The unbuffered weighted-fair schedule (trigger 0: a turn runs what it
/// finds queued; equal weights) is wfq-opt's floor, as Null's is the
/// SLO-aware controllers'. The controller starts there and measures it;
/// it never sets a module a batch below the one the module ran there (in
/// weighted-fair mode a smaller batch buys no delay, for there is no fill
/// to wait for, and costs capacity, so the queues grow); and when its
/// model's settings deliver less than the floor did, or put a flow over
/// its SLO that the floor kept inside, it goes back to the floor for a
/// while, longer each time, and says why.
#[derive(Default)]
struct Floor {
    /// Per module, the batch it ran on at trigger 0 (pkt).
    batch: Vec<f64>,
    /// The floor's delivered rate (pkt/s), as measured in the last period
    /// of the last hold.
    rate: Option<f64>,
    /// Whether the floor kept every flow inside its SLO in the last
    /// period of some hold. Once seen, it holds.
    met: bool,
    /// The flows' delays in the floor's previous period of this hold (s).
    previous: Vec<Option<f64>>,
    /// Periods a hold may still be drawn out while the floor settles: a
    /// hold's end measures start-up or the backlog the model's settings
    /// left behind as long as the delays still move (a generated
    /// pipeline: 1196 then 1434 µs in its first two periods, 20 µs from
    /// the third; another 436, 364, … µs after the model's).
    settle: u32,
    /// Why the controller holds the floor, while it does.
    reason: Option<String>,
    /// Periods left at the floor before the model is tried again.
    hold: u32,
    /// Periods the next fall back holds the floor (doubles each time, back
    /// to the first after as many good periods of the model's as the longest hold).
    next_hold: u32,
    /// Periods in a row the model's settings did no worse than the floor.
    good: u32,
}

/// How far below the floor's rate the model's settings may deliver (a
/// share): the period-to-period spread of the engine's rate.
const FLOOR_RATE_TOLERANCE: f64 = 0.03;
/// Periods a first fall back to the floor lasts (and the start, whose
/// first period measures start-up); each next one lasts twice as long.
const FIRST_HOLD: u32 = 2;
/// The longest hold (periods).
const LONGEST_HOLD: u32 = 64;

/// A floor period whose flows' delays moved by less than this share since
/// the floor's period before has settled.
const SETTLED: f64 = 0.1;

/// Share of the model's learnt error kept from one period to the next
/// while the measured error lies below it (half-life about 70 periods).
const BIAS_KEEP: f64 = 0.99;

impl WfqOpt {
    /// A wfq-opt controller with `params` (δ and the SLO statistic).
    pub fn new(params: ControlParams) -> Self {
        Self { params, ..Self::default() }
    }
}

impl WfqOpt {
    /// Goes back to the floor (see [`Floor`]) for a hold, twice as long as the last.
    fn fall_back(&mut self, model: &Model, why: String) -> Actions {
        let floor = &mut self.floor;
        floor.hold = floor.next_hold;
        floor.next_hold = (2 * floor.next_hold).min(LONGEST_HOLD);
        floor.reason = Some(why);
        floor.good = 0;
        floor.previous.clear();
        floor.settle = LONGEST_HOLD;
        self.lambda.clear();
        self.predicted.clear();
        floor_actions(model)
    }

    /// Learns how far last period's delays of `flows` (those with SLOs) ran
    /// above what the model predicted for its settings: a miss above the
    /// bias counts in full at once (the SLO is at stake), one below it
    /// wears the bias down slowly, so that a miss is not made again as soon
    /// as it is forgotten. Kept across falls back to the floor, where it
    /// wears off alike.
    fn learn_miss(&mut self, view: &View, flows: &[usize]) {
        self.bias.resize(flows.len(), 0.0);
        self.predicted.resize(flows.len(), None);
        for (c, &f) in flows.iter().enumerate() {
            self.bias[c] = match (view.delay[f], self.predicted[c]) {
                (Some(measured), Some(predicted)) => {
                    let miss = measured - predicted;
                    miss.max(BIAS_KEEP * self.bias[c] + (1.0 - BIAS_KEEP) * miss)
                }
                _ => BIAS_KEEP * self.bias[c],
            };
        }
    }
}

impl Floor {
    /// Whether every flow's `delay` (s) lies within [`SETTLED`] of the
    /// floor's period before.
    fn settled(&self, delay: &[Option<f64>]) -> bool {
        self.previous.len() == delay.len()
            && delay.iter().zip(&self.previous).all(|(now, then)| match (now, then) {
                (Some(t), Some(p)) => (t - p).abs() <= SETTLED * t.max(*p),
                (now, then) => now.is_none() && then.is_none(),
            })
    }
}

/// The floor's settings: every controlled module unbuffered (trigger 0), weight 1.
fn floor_actions(model: &Model) -> Actions {
    let controlled: Vec<ModuleId> = (0..model.modules.len()).filter(|&v| model.modules[v].controlled).collect();
    Actions { triggers: controlled.iter().map(|&v| (v, 0)).collect(), ..equal_weights(model) }
}

/// One module in the solve: bounds on y (s), T0 (s), and the flows it is on with a_fv.
struct Var {
    v: ModuleId,
    lo: f64,
    hi: f64,
    t0: f64,
    /// (constraint index, a_fv = 1 + T1_v R_v)
    rows: Vec<(usize, f64)>,
}

/// The y that minimises the Lagrangian for one variable at multipliers `lambda`.
fn y_of(x: &Var, lambda: &[f64]) -> f64 {
    let price: f64 = x.rows.iter().map(|&(c, a)| lambda[c] * a).sum();
    match (price > 0.0, x.t0 > 0.0) {
        (false, _) => x.hi,
        (true, false) => x.lo,
        (true, true) => (x.t0 / price).sqrt().clamp(x.lo, x.hi),
    }
}

/// Solves the model for `vars` under constraint right-hand sides `cap`
/// (s), starting from and updating `lambda`; returns y per variable.
/// Dual coordinate ascent: each sweep sets every multiplier, the others
/// fixed, to where its constraint just holds (0 if it holds anyway), by
/// bisection on a log scale (the constraint's use falls as its price rises).
/// A constraint that even every module at its lower bound cannot meet
/// keeps a price that holds its modules there.
fn solve(vars: &[Var], cap: &[f64], lambda: &mut Vec<f64>) -> Vec<f64> {
    lambda.resize(cap.len(), 0.0);
    let mut on: Vec<Vec<usize>> = vec![Vec::new(); cap.len()];
    for (i, x) in vars.iter().enumerate() {
        for &(c, _) in &x.rows {
            on[c].push(i);
        }
    }
    let used = |c: usize, lambda: &[f64]| -> f64 {
        on[c].iter().map(|&i| vars[i].rows.iter().filter(|r| r.0 == c).map(|r| r.1).sum::<f64>() * y_of(&vars[i], lambda)).sum()
    };
    for _ in 0..SWEEPS {
        let mut change = 0.0f64;
        for c in 0..cap.len() {
            let before = lambda[c];
            lambda[c] = 0.0;
            if used(c, lambda) > cap[c] {
                let (mut lo, mut hi) = (PRICE_RANGE.0.ln(), PRICE_RANGE.1.ln());
                for _ in 0..BISECTIONS {
                    let mid = 0.5 * (lo + hi);
                    lambda[c] = mid.exp();
                    if used(c, lambda) > cap[c] { lo = mid } else { hi = mid }
                }
                lambda[c] = hi.exp();
            }
            change = change.max((lambda[c] - before).abs() / lambda[c].max(before).max(f64::MIN_POSITIVE));
        }
        if change < 1e-6 {
            break;
        }
    }
    vars.iter().map(|x| y_of(x, lambda)).collect()
}

impl Controller for WfqOpt {
    fn name(&self) -> &str {
        "wfq-opt"
    }

    fn schedule(&self, model: &Model, configured: Schedule) -> Schedule {
        weighted_fair(model, configured, false)
    }

    fn init(&mut self, model: &Model) -> Actions {
        // Two periods: the first measures start-up (queues filling), the
        // floor is what the last period of a hold measured.
        self.floor = Floor {
            next_hold: FIRST_HOLD,
            reason: Some("measuring the unbuffered schedule first".into()),
            hold: FIRST_HOLD,
            settle: LONGEST_HOLD,
            ..Floor::default()
        };
        floor_actions(model)
    }

    fn fallback(&self) -> Option<String> {
        self.floor.reason.clone()
    }

    fn step(&mut self, model: &Model, telemetry: &Telemetry) -> Actions {
        let view = View::new(model, telemetry, &self.params);
        let rate: f64 = telemetry.flows.iter().map(|f| f.rate_pps).sum();
        let over = (0..model.flows.len()).any(|f| self.params.statistic.over(&telemetry.flows[f], model.flows[f].slo_ns));
        let flows: Vec<usize> = (0..model.flows.len()).filter(|&f| view.slo[f].is_some()).collect();
        self.learn_miss(&view, &flows);
        self.floor.batch.resize(model.modules.len(), 1.0);
        for v in view.live().filter(|&v| view.trigger[v] == 0) {
            self.floor.batch[v] = view.b[v].max(1.0);
        }
        if self.floor.reason.is_some() {
            // This period ran the floor.
            let settled = !over || self.floor.settled(&view.delay);
            self.floor.previous.clone_from(&view.delay);
            self.floor.hold = self.floor.hold.saturating_sub(1);
            if self.floor.hold > 0 {
                return Actions::default();
            }
            if !settled && self.floor.settle > 0 {
                self.floor.settle -= 1;
                return Actions::default();
            }
            self.floor.rate = Some(rate);
            self.floor.met |= !over;
            self.floor.reason = None;
        } else if let Some(floor_rate) = self.floor.rate {
            let worse = if rate < (1.0 - FLOOR_RATE_TOLERANCE) * floor_rate {
                Some(format!("the model's settings delivered {:.3} Mpps, the unbuffered schedule {:.3}", rate / 1e6, floor_rate / 1e6))
            } else if over && self.floor.met {
                Some("the model's settings put a flow over its SLO that the unbuffered schedule kept inside".to_string())
            } else {
                None
            };
            if let Some(why) = worse {
                return self.fall_back(model, why);
            }
            self.floor.good += 1;
            if self.floor.good >= LONGEST_HOLD {
                self.floor.next_hold = FIRST_HOLD;
            }
        }
        let turnaround = telemetry.workers.iter().map(|w| w.turnaround_ns).fold(0.0, f64::max) * 1e-9;
        let row_of = |f: usize| flows.iter().position(|&g| g == f);
        let cost = |v: ModuleId| model.modules[v].profile.map_or((0.0, 0.0), |p| (p.t0_ns * 1e-9, p.t1_ns * 1e-9));
        let vars: Vec<Var> = view
            .live()
            .map(|v| {
                let (t0, t1) = cost(v);
                let r = view.r[v];
                let rows = view.flows_through[v].iter().filter_map(|&f| row_of(f)).map(|c| (c, 1.0 + t1 * r)).collect();
                let least = self.floor.batch.get(v).copied().unwrap_or(1.0).clamp(1.0, view.batch);
                Var { v, lo: least / r, hi: view.batch / r, t0, rows }
            })
            .collect();
        if vars.is_empty() {
            return Actions::default();
        }
        // The SLO statistic bounds the delay; what the model controls is
        // the part above the turnaround, the fixed per-batch costs and the
        // model's measured error.
        let fixed: Vec<f64> = flows.iter().map(|&f| model.flows[f].path.iter().map(|&v| cost(v).0).sum::<f64>() + turnaround).collect();
        let cap: Vec<f64> = flows
            .iter()
            .enumerate()
            .map(|(c, &f)| ((1.0 - self.params.delta) * view.slo[f].expect("flows with SLOs") - fixed[c] - self.bias[c].max(0.0)).max(1e-9))
            .collect();
        // A flow whose SLO its modules' unbuffered batches already exceed in
        // the model is beyond what its own buffers can help. If the floor
        // kept every flow inside, hold the floor; if not, solve on: the
        // solve keeps that flow's modules at their floor batches and
        // batches the others, which can only shorten the rounds it waits
        // through (RC(16): the bulk modules' rounds are the turnaround that
        // puts the robot-control flow over under the floor).
        for (c, &f) in flows.iter().enumerate() {
            let least: f64 = vars.iter().flat_map(|x| x.rows.iter().filter(|r| r.0 == c).map(move |r| r.1 * x.lo)).sum();
            if least > cap[c] && self.floor.met {
                let why = format!("flow '{}' has no room for batching: its unbuffered batches already take its SLO budget", model.flows[f].name);
                return self.fall_back(model, why);
            }
        }
        let solved = solve(&vars, &cap, &mut self.lambda);

        // Triggers round down: up, they would spend delay the solve did not
        // grant (RC(16): 8.6 rounded to 9 put the p95 at 0.99 of the SLO).
        // A buffer whose full wait is not negligible to its flows at most
        // doubles a period: the model's error is learnt as the buffer grows
        // (RC(16)'s robot-control buffer, sent from 1 straight to 13, put
        // the flow's p95 at 1.24 of its SLO).
        let trigger: Vec<f64> = vars
            .iter()
            .zip(&solved)
            .map(|(x, &yv)| {
                let b = (view.r[x.v] * yv * (1.0 + 1e-9)).floor().clamp(1.0, view.batch);
                // Trigger 0 serves whatever a turn finds queued: the batches it ran are the base.
                let now = if view.trigger[x.v] == 0 { view.b[x.v] } else { f64::from(view.trigger[x.v]) };
                let doubled = 2.0 * now.max(1.0).floor();
                if b > doubled && !view.full_buffer_is_negligible(x.v, self.params.delta) { doubled } else { b }
            })
            .collect();
        // The intervals the triggers set give the model's delays to check
        // the next period's against.
        let y: Vec<f64> = vars.iter().zip(&trigger).map(|(x, &b)| b / view.r[x.v]).collect();
        for (c, predicted) in self.predicted.iter_mut().enumerate() {
            let on: f64 = vars.iter().zip(&y).flat_map(|(x, &yv)| x.rows.iter().filter(|r| r.0 == c).map(move |r| r.1 * yv)).sum();
            *predicted = Some(fixed[c] + on);
        }
        let fastest = y.iter().copied().fold(f64::INFINITY, f64::min);
        let mut actions = Actions::default();
        for ((x, &yv), &b) in vars.iter().zip(&y).zip(&trigger) {
            actions.weights.push((x.v, (WEIGHT_SCALE * fastest / yv).round().max(1.0) as u32));
            actions.triggers.push((x.v, b as u32));
        }
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two modules on one flow, one of them also alone on a second flow:
    /// the solution keeps both constraints and spends the slack where T0 is.
    #[test]
    fn the_dual_solve_meets_the_constraints_and_the_optimality_conditions() {
        let vars = vec![
            Var { v: 0, lo: 1e-6, hi: 32e-6, t0: 400e-9, rows: vec![(0, 1.0), (1, 1.0)] },
            Var { v: 1, lo: 1e-6, hi: 32e-6, t0: 100e-9, rows: vec![(0, 1.0)] },
        ];
        let cap = [20e-6, 12e-6];
        let mut lambda = Vec::new();
        let y = solve(&vars, &cap, &mut lambda);
        assert!(y[0] + y[1] <= cap[0] * 1.01 && y[0] <= cap[1] * 1.01, "{y:?}");
        // Both constraints bind (the objective wants every y large), and the
        // module with the larger T0 gets the larger interval, as far as its own flow allows.
        assert!((y[0] + y[1] - cap[0]).abs() / cap[0] < 0.02, "{y:?}");
        assert!(y[0] > y[1], "{y:?}");
        // Unconstrained modules run as rarely as B allows.
        let free = vec![Var { v: 2, lo: 1e-6, hi: 32e-6, t0: 100e-9, rows: vec![] }];
        assert_eq!(solve(&free, &[], &mut Vec::new()), vec![32e-6]);
    }
}

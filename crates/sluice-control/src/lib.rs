//! Sluice control plane: the [`Controller`] interface, the built-in
//! controllers, and [`drive`], the loop that runs a backend period by period.
#![warn(missing_docs)]

pub mod baseline;
pub mod controller;
pub mod decompose;
mod hindsight;
pub mod hold;
mod misprice;
pub mod nfvnice;
mod noise;
pub mod onoff;
pub mod projgrad;
mod registry;
mod rules;
pub mod run;
pub mod slack;
mod slo_statistic;
pub mod steer;
mod view;
pub mod wfq_opt;

pub use baseline::{Max, Null};
pub use controller::Controller;
pub use registry::{by_name, CONTROLLERS};
pub use decompose::decompose;
pub use nfvnice::NfVnice;
pub use onoff::OnOff;
pub use projgrad::ProjGrad;
pub use view::{ControlParams, DEFAULT_DELTA};
pub use slo_statistic::SloStatistic;
pub use steer::{Boundary, Steering};
pub use wfq_opt::WfqOpt;
pub use run::{drive, drive_steered, drive_until, Outage, PeriodRecord, Response, RunPlan, RunReport, Steps, Summary, DEFAULT_KEEP_PERIODS, STOPPED};

//! Sluice control plane: the [`Controller`] interface, the built-in
//! controllers, and [`drive`], the loop that runs a backend period by period.
#![warn(missing_docs)]

pub mod controller;
pub mod run;

pub use controller::{by_name, Controller, Max, Null, CONTROLLERS};
pub use run::{drive, PeriodRecord, RunPlan, RunReport, Steps, SloStatistic, Summary};

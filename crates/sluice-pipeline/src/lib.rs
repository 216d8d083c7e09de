//! Sluice pipeline descriptions: the JSON spec the Python front sends, its
//! validation into a [`sluice_core::Model`], instantiation on the engine or
//! the simulator, and run reports.
#![warn(missing_docs)]

pub mod chain;
pub mod egress_plan;
pub mod error;
pub mod source_rules;
pub mod pipeline;
pub mod poll_model_file;
pub mod profile;
pub mod report;
pub mod run_output;
pub mod run_params;
pub mod spec;
pub mod spec_error;
mod spread;

pub use error::{Error, Result};
pub use pipeline::Pipeline;
pub use run_params::{BackendKind, RunParams};
pub use sluice_nf::bypass::ns_per_cycle;
pub use report::{controller, run};
pub use run_output::{PeriodOutput, RunOutput};

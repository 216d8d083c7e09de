//! Resilient data-flow-graph embedding: which CPU core runs each module.
//!
//! An [`Instance`] is a set of modules with integer weights (CPU demand),
//! `cores` identical cores of `capacity` each, flows as module paths and
//! conflict pairs (modules that must not share a core, so that the copies
//! of a high-availability flow survive a core failure). A [`Placement`]
//! assigns every module a core; [`check`] verifies one independently of
//! how it was found, and the heuristics in [`heuristic`] find one fast
//! enough to re-run whenever the pipeline changes. Exact solvers (ILP) live
//! on the Python side, where OR-Tools and HiGHS are.
#![warn(missing_docs)]

mod check;
mod core_loads;
mod error;
pub mod heuristic;
mod instance;
pub mod path_fit;

pub use check::{check, crossings, Crossings};
pub use error::{EmbedError, Result};
pub use instance::{Instance, Placement};

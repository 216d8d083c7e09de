//! sluice-pipeline's integration tests in one binary (one link instead of one per
//! file), a module per file.

mod common;
mod accounting;
mod backends;
mod controllers;
mod decompose;
mod description_fuzz;
mod period_delays;
mod poll;
mod reframer;
mod safety;
mod scheduled_egress;
mod wfq;

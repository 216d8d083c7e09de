//! sluice-pspat's integration tests in one binary (one link instead of one per
//! file), a module per file.
mod arbiter;
mod mailbox_stress;
mod sched;
mod threads;

//! Sluice's lab: what the experiments measure and the product does not
//! run. The PSPAT paper's measurements (`pspat`) against the lock-based
//! scheduler PSPAT replaces (`locked`) and its fairness bound on a
//! virtual clock (`twfi`), the cost of a walker round on
//! fixed workloads (`round_cost`; its examples write the same workloads
//! for FastClick and for callgrind), and the bare forwarding loop that is
//! a port backend's ceiling (`forward`), and what the
//! worker's timers cost and miss by (`timers`), and how ECMP spreads
//! flows over an LPM's paths (`ecmp`). `sluice._core` carries their
//! bindings as `sluice.lab._core` only when built with its `lab` feature.
#![warn(missing_docs)]

pub mod ecmp;
pub mod forward;
pub mod locked;
pub mod pspat;
pub mod round_cost;
pub mod timers;
pub mod twfi;

pub use locked::Locked;

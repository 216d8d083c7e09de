//! The simulator on its own: virtual time, outages, determinism.

mod common;
mod outages;
mod virtual_time;

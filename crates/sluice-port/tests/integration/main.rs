//! sluice-port's integration tests in one binary (one link instead of one per
//! file), a module per file.

mod common;
mod af_packet;
#[cfg(af_xdp)]
mod af_xdp;
#[cfg(dpdk)]
mod dpdk;

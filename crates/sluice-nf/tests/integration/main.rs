//! sluice-nf's integration tests in one binary (one link instead of one per
//! file), a module per file.

mod common;
mod ipv6;
mod multipath;
mod nfs;
mod reframer;
mod registry;
mod router;

//! sluice-traffic's integration tests in one binary (one link instead of one per
//! file), a module per file.
mod pcap;
mod trace_analysis;
mod trace_synth;

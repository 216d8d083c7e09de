//! A trace's spatial and temporal locality, in one streaming pass with
//! memory proportional to the flows active within an idle timeout (not the
//! file): how long the runs of one flow's packets are in batches of B (the
//! spatial locality factor, SLF), how many other packets and how much time
//! lie between two packets of a flow, how large flows are, and the SLF a
//! Reframer holding each flow for T_buff would reach.
//!
//! Flows are IPv4 and IPv6 5-tuples (the upper protocol past IPv6's
//! extension headers, the ports of TCP and UDP, 0 otherwise); other packets
//! (ARP, …) are counted and left out of every figure.

use std::collections::hash_map::Entry;
use std::hash::BuildHasherDefault;
use std::io::Read;
use std::net::IpAddr;

use hdrhistogram::Histogram;
use rustc_hash::FxHasher;
use sluice_core::wire;

use crate::capture;
use crate::flow_table::FlowRow;
use crate::error::Result;

/// Batch sizes the SLF is reported at (pkt).
pub const BATCH_SIZES: [usize; 4] = [32, 64, 256, 1024];
/// Reframer hold times the reachable SLF is reported at (µs).
pub const T_BUFF_US: [u64; 5] = [16, 32, 64, 128, 256];
/// A flow silent this long is done: its size is counted, its state freed (ns).
pub const IDLE_TIMEOUT_NS: u64 = 60_000_000_000;
/// Packets between sweeps for idle flows.
const SWEEP_EVERY: u64 = 1 << 20;

/// Per flow, what the pass needs of it.
struct Flow {
    packets: u64,
    bytes: u64,
    first_ns: u64,
    /// Index of its last packet (among IP packets) and its time (ns).
    last_index: u64,
    last_ns: u64,
    /// Per T_BUFF_US, when the burst a Reframer would be holding for it began (ns).
    burst_start_ns: [u64; T_BUFF_US.len()],
}

/// Quantiles of a distribution.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quantiles {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

impl Quantiles {
    fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self { mean: h.mean(), p50: h.value_at_quantile(0.5), p90: h.value_at_quantile(0.9), p99: h.value_at_quantile(0.99), max: h.max() }
    }
}

/// What a pass found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analysis {
    /// Packets read (pkt).
    pub packets: u64,
    /// Of those, neither IPv4 nor IPv6 (left out of every figure below) (pkt).
    pub not_ip: u64,
    /// Flows seen (a flow silent for the idle timeout and seen again counts twice).
    pub flows: u64,
    /// Most flows active at once (within the idle timeout).
    pub active_flows_max: u64,
    /// From the first packet's timestamp to the last's (ns).
    pub duration_ns: u64,
    /// Per batch size in [`BATCH_SIZES`]: the SLF, packets per run of one flow within a batch.
    pub slf: Vec<(usize, f64)>,
    /// Per batch size: flow switches per batch (runs − 1).
    pub switches_per_batch: Vec<(usize, f64)>,
    /// Per hold time in [`T_BUFF_US`]: the SLF if each flow's packets within
    /// the hold time of its burst's first came out as one run.
    pub reframer_slf: Vec<(u64, f64)>,
    /// Packets per flow.
    pub flow_size: Quantiles,
    /// Packets of other flows between two consecutive packets of one flow.
    pub spatial_distance: Quantiles,
    /// Time between two consecutive packets of one flow (µs).
    pub temporal_distance_us: Quantiles,
}

/// A flow: source and destination address, protocol, source and destination port.
type Key = (IpAddr, IpAddr, u8, u16, u16);

/// The flow key of an Ethernet frame: its IP 5-tuple. An IPv6 chain that
/// does not parse keys the flow by its first next header.
fn flow_key(frame: &[u8]) -> Option<Key> {
    let ip = wire::ip_of(frame).ok()?;
    let (src, dst, first) = match &ip {
        wire::Ip::V4(h) => (IpAddr::from(std::net::Ipv4Addr::from(h.src())), IpAddr::from(std::net::Ipv4Addr::from(h.dst())), h.protocol()),
        wire::Ip::V6(h) => (IpAddr::from(std::net::Ipv6Addr::from(h.src())), IpAddr::from(std::net::Ipv6Addr::from(h.dst())), h.next_header()),
    };
    let (protocol, upper) = ip.upper().unwrap_or((first, &[]));
    let (sport, dport) = wire::l4::ports(protocol, upper).unwrap_or((0, 0));
    Some((src, dst, protocol, sport, dport))
}

/// A histogram of 3 significant digits up to 2^50 (larger values count as
/// that: no packet count or µs of a trace comes near).
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1 << 50, 3).expect("valid bounds")
}

/// Analyses the capture read from `reader` (pcap or pcapng; `name` labels errors).
pub fn analyze(reader: impl Read + Send, name: &str) -> Result<Analysis> {
    analyze_flows(reader, name, |_| Ok(()))
}

/// [`analyze`], handing each flow to `on_flow` as it ends (silent for the
/// idle timeout, or at the end of the capture).
pub fn analyze_flows(reader: impl Read + Send, name: &str, mut on_flow: impl FnMut(FlowRow) -> Result<()>) -> Result<Analysis> {
    type Flows = std::collections::HashMap<Key, Flow, BuildHasherDefault<FxHasher>>;
    let mut flows = Flows::default();
    let mut a = Analysis::default();
    let (mut sizes, mut spatial, mut temporal) = (histogram(), histogram(), histogram());
    // Per batch size: runs so far, and the flow of the last packet (its index).
    let mut runs = [0u64; BATCH_SIZES.len()];
    let mut last_flow: Option<Key> = None;
    let mut reframer_runs = [0u64; T_BUFF_US.len()];
    let (mut index, mut first_ns, mut last_ns) = (0u64, None, 0u64);
    let row = |k: &Key, f: &Flow| FlowRow {
        src: k.0, dst: k.1, proto: k.2, sport: k.3, dport: k.4, packets: f.packets, bytes: f.bytes, first_ns: f.first_ns, last_ns: f.last_ns,
    };
    capture::stream(reader, name, |frame, wire_len, ts_ns| {
        a.packets += 1;
        let Some(key) = flow_key(frame) else {
            a.not_ip += 1;
            return Ok(());
        };
        first_ns.get_or_insert(ts_ns);
        last_ns = last_ns.max(ts_ns);
        let same_as_last = last_flow == Some(key);
        for (r, &b) in runs.iter_mut().zip(&BATCH_SIZES) {
            if !same_as_last || index.is_multiple_of(b as u64) {
                *r += 1;
            }
        }
        last_flow = Some(key);
        match flows.entry(key) {
            Entry::Occupied(mut e) => {
                let f = e.get_mut();
                spatial.saturating_record(index - f.last_index - 1);
                temporal.saturating_record(ts_ns.saturating_sub(f.last_ns) / 1000);
                for ((start, runs), &t) in f.burst_start_ns.iter_mut().zip(&mut reframer_runs).zip(&T_BUFF_US) {
                    if ts_ns.saturating_sub(*start) > t * 1000 {
                        *start = ts_ns;
                        *runs += 1;
                    }
                }
                f.packets += 1;
                f.bytes += wire_len as u64;
                f.last_index = index;
                f.last_ns = ts_ns;
            }
            Entry::Vacant(e) => {
                e.insert(Flow { packets: 1, bytes: wire_len as u64, first_ns: ts_ns, last_index: index, last_ns: ts_ns, burst_start_ns: [ts_ns; T_BUFF_US.len()] });
                a.flows += 1;
                for r in &mut reframer_runs {
                    *r += 1;
                }
            }
        }
        a.active_flows_max = a.active_flows_max.max(flows.len() as u64);
        index += 1;
        if index.is_multiple_of(SWEEP_EVERY) {
            let mut ended = Ok(());
            flows.retain(|k, f| {
                let active = ts_ns.saturating_sub(f.last_ns) < IDLE_TIMEOUT_NS;
                if !active {
                    sizes.saturating_record(f.packets);
                    if ended.is_ok() {
                        ended = on_flow(row(k, f));
                    }
                }
                active
            });
            ended.map_err(|e| e.to_string())?;
        }
        Ok(())
    })?;
    for (k, f) in &flows {
        sizes.saturating_record(f.packets);
        on_flow(row(k, f))?;
    }
    let ip_packets = index as f64;
    a.duration_ns = last_ns.saturating_sub(first_ns.unwrap_or(last_ns));
    a.slf = BATCH_SIZES.iter().zip(&runs).map(|(&b, &r)| (b, if r > 0 { ip_packets / r as f64 } else { 0.0 })).collect();
    a.switches_per_batch = BATCH_SIZES
        .iter()
        .zip(&runs)
        .map(|(&b, &r)| {
            let batches = index.div_ceil(b as u64);
            (b, if batches > 0 { (r - batches) as f64 / batches as f64 } else { 0.0 })
        })
        .collect();
    a.reframer_slf = T_BUFF_US.iter().zip(&reframer_runs).map(|(&t, &r)| (t, if r > 0 { ip_packets / r as f64 } else { 0.0 })).collect();
    a.flow_size = Quantiles::of(&sizes);
    a.spatial_distance = Quantiles::of(&spatial);
    a.temporal_distance_us = Quantiles::of(&temporal);
    Ok(a)
}

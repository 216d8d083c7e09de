//! `GET /metrics`: the status in the Prometheus text exposition format
//! (version 0.0.4): counters since the start (`_total`), gauges of the last
//! period, times in seconds, one label per thing counted (flow, module,
//! worker, port).

use std::fmt::Write;

use crate::status::Status;

/// The exposition's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One metric family being written.
struct Family<'a> {
    out: &'a mut String,
    name: &'static str,
}

impl Family<'_> {
    /// One sample with `labels` (name, value) pairs.
    fn sample(&mut self, labels: &[(&str, &str)], value: f64) {
        let _ = write!(self.out, "{}", self.name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{k}=\"{}\"", escape(v));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", number(value));
    }
}

/// Starts a family: its HELP and TYPE lines.
fn family<'a>(out: &'a mut String, name: &'static str, kind: &str, help: &str) -> Family<'a> {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    Family { out, name }
}

/// A label value escaped (backslash, quote, newline).
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// A sample value as the format writes it.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// Port counters by the names the ports give them: metric, help.
const PORT_METRICS: &[(&str, &str, &str)] = &[
    ("rx_pkts", "sluice_port_rx_packets_total", "Frames received on the port."),
    ("rx_bytes", "sluice_port_rx_bytes_total", "Bytes received on the port."),
    ("ring_dropped", "sluice_port_rx_ring_dropped_total", "Frames the kernel or NIC dropped at the port's full receive ring."),
    ("oversize", "sluice_port_rx_oversize_total", "Frames too long to take, dropped at receive."),
    ("gso", "sluice_port_rx_gso_total", "GSO frames received whole (AF_PACKET)."),
    ("bad_vnet", "sluice_port_rx_bad_vnet_total", "Frames whose virtio-net header did not hold, dropped at receive."),
    ("tx_pkts", "sluice_port_tx_packets_total", "Frames sent on the port."),
    ("tx_bytes", "sluice_port_tx_bytes_total", "Bytes sent on the port."),
    ("tx_retries", "sluice_port_tx_retries_total", "Transmit attempts that found the ring full and were retried."),
    ("tx_full", "sluice_port_tx_full_total", "Frames dropped because the transmit ring stayed full."),
    ("tx_refused", "sluice_port_tx_refused_total", "Frames the port refused to send."),
    ("tx_gso", "sluice_port_tx_gso_total", "GSO frames sent whole (AF_PACKET)."),
    ("tx_segmented", "sluice_port_tx_segmented_total", "GSO packets cut into segments in software (AF_XDP, DPDK)."),
    ("tx_segments", "sluice_port_tx_segments_total", "Segments those were cut into."),
];

/// A neighbour table's counters: metric, help, which counter.
type NeighborCounter = fn(&sluice_nf::neighbor_table::Counters) -> &std::sync::atomic::AtomicU64;
const NEIGHBOR_METRICS: &[(&str, &str, NeighborCounter)] = &[
    ("sluice_neighbor_requests_total", "ARP requests and neighbour solicitations the interface sent, probes included.", |c| &c.requests),
    ("sluice_neighbor_resolutions_total", "Neighbours the interface's requests (or what it heard) resolved.", |c| &c.resolved),
    ("sluice_neighbor_learned_total", "Neighbours learned unasked (requests, solicitations, gratuitous ARP, unsolicited advertisements).", |c| &c.learned),
    ("sluice_neighbor_failed_total", "Resolutions that ended unanswered.", |c| &c.failed),
    ("sluice_neighbor_hold_dropped_total", "Packets dropped while held for a neighbour: their hold queue full, or the neighbour unreachable.", |c| &c.hold_dropped),
];

/// The exposition of `s`.
pub fn exposition(s: &Status) -> String {
    let mut out = String::with_capacity(8192);
    let model = &s.model;
    let flow_names: Vec<&str> = model.flows.iter().map(|f| f.name.as_str()).collect();
    let module_names: Vec<&str> = model.modules.iter().map(|m| m.name.as_str()).collect();

    let mut f = family(&mut out, "sluice_flow_packets_total", "counter", "Packets of the flow since the start, by what became of them.");
    for (i, t) in s.flow_totals.iter().enumerate() {
        for (fate, n) in [("generated", t.generated), ("delivered", t.delivered), ("dropped", t.dropped)] {
            f.sample(&[("flow", flow_names[i]), ("fate", fate)], n as f64);
        }
    }
    let mut f = family(&mut out, "sluice_flow_delay_seconds", "gauge", "Delay of the flow's packets over the last period, by quantile (1: the largest).");
    if let Some(t) = &s.last {
        for (i, ft) in t.flows.iter().enumerate() {
            for (q, ns) in [("0.5", ft.p50_ns), ("0.95", ft.p95_ns), ("0.99", ft.p99_ns), ("1", ft.max_ns)] {
                f.sample(&[("flow", flow_names[i]), ("quantile", q)], ns as f64 / 1e9);
            }
        }
    }
    let mut f = family(&mut out, "sluice_flow_slo_seconds", "gauge", "The flow's delay SLO (absent: none).");
    for (i, flow) in model.flows.iter().enumerate() {
        if let Some(ns) = flow.slo_ns {
            f.sample(&[("flow", flow_names[i])], ns as f64 / 1e9);
        }
    }
    let mut f = family(&mut out, "sluice_flow_periods_over_slo_total", "counter", "Control periods in which the flow's SLO statistic was over its SLO.");
    for (i, n) in s.periods_over.iter().enumerate() {
        f.sample(&[("flow", flow_names[i])], *n as f64);
    }

    let mut f = family(&mut out, "sluice_module_packets_total", "counter", "Packets that arrived at the module's fractional buffer.");
    for (m, c) in s.module_totals.iter().enumerate() {
        f.sample(&[("module", module_names[m])], c.arrived_pkts as f64);
    }
    let mut f = family(&mut out, "sluice_module_batches_total", "counter", "Batches the module's NF ran on.");
    for (m, c) in s.module_totals.iter().enumerate() {
        f.sample(&[("module", module_names[m])], c.runs as f64);
    }
    let mut f = family(&mut out, "sluice_module_dropped_packets_total", "counter",
        "Packets the module dropped, by reason: its NF's (no_route, ttl_expired, malformed, denied, ... once it has dropped any), queue_full, worker_down, egress_full, aqm.");
    for (m, c) in s.module_totals.iter().enumerate() {
        for (reason, n) in sluice_core::DropReason::counted(&c.nf_drops) {
            f.sample(&[("module", module_names[m]), ("reason", reason)], n as f64);
        }
        for (reason, n) in c.other_drops() {
            f.sample(&[("module", module_names[m]), ("reason", reason)], n as f64);
        }
    }
    let mut f = family(&mut out, "sluice_module_batch_packets", "gauge", "Mean batch the module's NF ran on over the last period (packets).");
    if let Some(t) = &s.last {
        for (m, mt) in t.modules.iter().enumerate() {
            f.sample(&[("module", module_names[m])], mt.b);
        }
    }
    let mut f = family(&mut out, "sluice_module_trigger_packets", "gauge", "The module's fractional-buffer trigger over the last period (0: pass-through).");
    if let Some(t) = &s.last {
        for (m, mt) in t.modules.iter().enumerate() {
            f.sample(&[("module", module_names[m])], f64::from(mt.trigger));
        }
    }

    for &(counter, name, help) in PORT_METRICS {
        let mut f = family(&mut out, name, "counter", help);
        for (m, c) in s.module_totals.iter().enumerate() {
            let (key, names) = s.own_counters[m];
            if key != "port" {
                continue;
            }
            if let Some(slot) = names.iter().position(|&n| n == counter) {
                f.sample(&[("module", module_names[m])], c.nf[slot] as f64);
            }
        }
    }
    let mut f = family(&mut out, "sluice_port_rx_missed_total", "counter", "Frames lost at the port's full receive queue before Sluice took them.");
    for (m, c) in s.module_totals.iter().enumerate() {
        if s.own_counters[m].0 == "port" && model.modules[m].role == sluice_core::Role::Source {
            f.sample(&[("module", module_names[m])], c.missed as f64);
        }
    }

    let mut f = family(&mut out, "sluice_worker_cpu_ratio", "gauge", "Share of a core the worker's thread used over the last period.");
    if let Some(t) = &s.last {
        for (w, wt) in t.workers.iter().enumerate() {
            f.sample(&[("worker", &w.to_string())], wt.cpu_fraction);
        }
    }
    let mut f = family(&mut out, "sluice_worker_busy_ratio", "gauge", "Share of the last period the worker spent in rounds that moved packets.");
    if let Some(t) = &s.last {
        for (w, wt) in t.workers.iter().enumerate() {
            f.sample(&[("worker", &w.to_string())], wt.busy_fraction);
        }
    }
    let mut f = family(&mut out, "sluice_worker_waits", "gauge", "Times the worker slept or waited for packets over the last period.");
    if let Some(t) = &s.last {
        for (w, wt) in t.workers.iter().enumerate() {
            f.sample(&[("worker", &w.to_string())], wt.waits as f64);
        }
    }
    let mut f = family(&mut out, "sluice_worker_down", "gauge", "1 while the worker is taken down.");
    for (w, down) in s.down.iter().enumerate() {
        f.sample(&[("worker", &w.to_string())], f64::from(u8::from(*down)));
    }

    if let Some(plan) = &s.egress {
        let mut f = family(&mut out, "sluice_egress_class_weight", "gauge", "The scheduled egress class's weight (its share of the link against the others').");
        for (name, w) in plan.class_names.iter().zip(&plan.config.weights) {
            f.sample(&[("class", name)], f64::from(*w));
        }
        let mut f = family(&mut out, "sluice_egress_link_bits_per_second", "gauge", "The rate of the scheduled egress's link.");
        f.sample(&[], plan.config.link.bits_per_s);
    }

    let now_ns = s.last.as_ref().map_or(0, |t| (t.t_s * 1e9) as u64);
    let mut f = family(&mut out, "sluice_neighbor_entries", "gauge", "Entries of the interface's neighbour table, by state.");
    for i in s.interfaces.all() {
        let entries = i.neighbors.entries(now_ns);
        for state in ["incomplete", "reachable", "stale", "failed", "static"] {
            f.sample(&[("interface", &i.name), ("state", state)], entries.iter().filter(|e| e.state.name() == state).count() as f64);
        }
    }
    for (name, help, get) in NEIGHBOR_METRICS {
        let mut f = family(&mut out, name, "counter", help);
        for i in s.interfaces.all() {
            f.sample(&[("interface", &i.name)], get(&i.neighbors.counters).load(std::sync::atomic::Ordering::Relaxed) as f64);
        }
    }

    let mut f = family(&mut out, "sluice_controller_fallbacks_total", "counter", "Periods whose settings were the controller's fallback.");
    f.sample(&[("controller", &s.controller)], s.fallbacks as f64);
    let mut f = family(&mut out, "sluice_periods_total", "counter", "Control periods run.");
    f.sample(&[], s.periods as f64);
    let mut f = family(&mut out, "sluice_packets_in_flight", "gauge", "Packets inside the pipeline at the end of the last period.");
    f.sample(&[], s.totals.in_flight as f64);
    out
}

//! `sluice.lab._core`: the lab's measurements (see `sluice-lab`), in a
//! build with the `lab` feature only: what the experiments call and the
//! product does not.

use pyo3::prelude::*;

use crate::invalid;

/// Time of one walker round of workload `case` (see `round_cost`) at batch size `batch` (ns).
#[pyfunction]
fn round_ns(py: Python<'_>, case: &str, batch: usize, timing: bool) -> PyResult<f64> {
    let mut graph = sluice_lab::round_cost::workload(case, batch, timing).map_err(invalid)?;
    Ok(py.allow_threads(|| sluice_lab::round_cost::round_ns(&mut graph)))
}

/// Forwards frames from port `rx` to port `tx` for `seconds` in a bare
/// loop over the same rings a pipeline's ports use: a backend's ceiling;
/// with `bare` (DPDK ports), DPDK's own loop, without Sluice's copies.
/// Returns JSON: packets, tx_full, missed, seconds.
#[pyfunction]
#[pyo3(signature = (rx, tx, seconds, burst, bare=false))]
fn forward_raw(py: Python<'_>, rx: &str, tx: &str, seconds: f64, burst: usize, bare: bool) -> PyResult<String> {
    let (rx, tx) = (sluice_port::PortName::parse(rx).map_err(invalid)?, sluice_port::PortName::parse(tx).map_err(invalid)?);
    if !(seconds > 0.0 && seconds.is_finite()) || burst == 0 {
        return Err(invalid(format!("forward for {seconds} s, {burst} frames a poll: both must be > 0")));
    }
    let done = py
        .allow_threads(|| match bare {
            true => sluice_lab::forward::forward_bare(&rx, &tx, burst, seconds),
            false => sluice_lab::forward::forward_raw(&rx, &tx, sluice_port::RingConfig::default(), burst, seconds),
        })
        .map_err(invalid)?;
    Ok(serde_json::json!({"packets": done.packets, "tx_full": done.tx_full, "missed": done.missed, "seconds": done.seconds}).to_string())
}

/// What one decision of poll policy `spec` (the description's `poll`
/// object, JSON) costs the worker (ns), over rounds of a light load (a
/// packet every 1024 rounds: a learned model is asked, its rate bound passed).
#[pyfunction]
fn poll_decision_ns(spec: &str) -> PyResult<f64> {
    let spec: sluice_pipeline::spec::PollSpec = serde_json::from_str(spec).map_err(|e| invalid(format!("poll: {e}")))?;
    Ok(sluice_lab::timers::decision_ns(spec.policy().map_err(invalid)?))
}

/// How late sleeps of `request_us` end on this machine (µs): the median
/// and 99th percentile of plain sleeps and of precise ones (an absolute
/// deadline early by the usual oversleep, then a spin), `samples` each.
#[pyfunction]
fn sleep_error_us(py: Python<'_>, request_us: f64, samples: usize) -> PyResult<String> {
    if !(request_us > 0.0 && request_us <= 1e5) || samples == 0 {
        return Err(invalid(format!("sleeps of {request_us} µs, {samples} samples: 0 < µs ≤ 100 000 and samples ≥ 1")));
    }
    let request = std::time::Duration::from_nanos((request_us * 1e3) as u64);
    let e = py.allow_threads(|| sluice_lab::timers::sleep_error(request, samples));
    let us = |ns: u64| ns as f64 / 1e3;
    Ok(serde_json::json!({
        "request_us": request_us, "plain": {"p50": us(e.plain.0), "p99": us(e.plain.1)},
        "precise": {"p50": us(e.precise.0), "p99": us(e.precise.1)}, "spin_us": us(e.spin_ns),
    })
    .to_string())
}

/// The PSPAT measurements (see `sluice_lab::pspat`), by name.
fn pspat_names(architecture: &str, algorithm: &str) -> PyResult<(sluice_lab::pspat::Architecture, sluice_pspat::sched::Algorithm)> {
    use sluice_lab::pspat::Architecture;
    use sluice_pspat::sched::Algorithm;
    let architecture = match architecture {
        "pspat" => Architecture::Pspat,
        "mutex" => Architecture::Mutex,
        "none" => Architecture::Unscheduled,
        other => return Err(invalid(format!("unknown scheduler architecture '{other}' (known: pspat, mutex, none)"))),
    };
    Ok((architecture, Algorithm::parse(algorithm).map_err(invalid)?))
}

/// Checks a measurement's duration (s).
fn pspat_seconds(seconds: f64) -> PyResult<()> {
    if seconds > 0.0 && seconds <= 3600.0 {
        Ok(())
    } else {
        Err(invalid(format!("a measurement of {seconds} s: must be in (0, 3600]")))
    }
}

/// Decisions per second of the PSPAT arbiter alone over `clients`
/// pre-filled mailboxes of `per_client` packets each (M/s).
#[pyfunction]
fn pspat_arbiter_alone(py: Python<'_>, algorithm: &str, clients: usize, per_client: usize, seconds: f64) -> PyResult<f64> {
    let (_, algorithm) = pspat_names("pspat", algorithm)?;
    pspat_seconds(seconds)?;
    if clients == 0 || clients > 4096 {
        return Err(invalid(format!("{clients} clients: must be 1..=4096")));
    }
    Ok(py.allow_threads(|| sluice_lab::pspat::arbiter_alone(algorithm, clients, per_client, seconds)))
}

/// Packets per second (M/s) `clients` greedy clients get through
/// `architecture` (pspat, mutex, none), and the arbiter's decisions per
/// second of its busy time (M/s; PSPAT only).
#[pyfunction]
fn pspat_throughput(py: Python<'_>, architecture: &str, algorithm: &str, clients: usize, seconds: f64) -> PyResult<(f64, f64)> {
    let (architecture, algorithm) = pspat_names(architecture, algorithm)?;
    pspat_seconds(seconds)?;
    if clients == 0 || clients > 256 {
        return Err(invalid(format!("{clients} clients: must be 1..=256")));
    }
    let t = py.allow_threads(|| sluice_lab::pspat::throughput(architecture, algorithm, clients, seconds));
    Ok((t.mpps, t.arbiter_mdps))
}

/// The 10:1 test: packets of the weight-10 and weight-1 flow in each
/// `window_ms` window over a link of `link_pps` 60-byte packets a second
/// (inf: unlimited).
#[pyfunction]
fn pspat_share(py: Python<'_>, architecture: &str, algorithm: &str, link_pps: f64, seconds: f64, window_ms: f64) -> PyResult<Vec<[u64; 2]>> {
    let (architecture, algorithm) = pspat_names(architecture, algorithm)?;
    pspat_seconds(seconds)?;
    if architecture == sluice_lab::pspat::Architecture::Unscheduled || !(link_pps > 0.0) || !(window_ms >= 1.0 && window_ms * 1e-3 < seconds) {
        return Err(invalid(format!("share test: a scheduler, a link rate > 0 ({link_pps} pkt/s; inf: unlimited) and 1 ms ≤ window ({window_ms} ms) < run are needed")));
    }
    Ok(py.allow_threads(|| sluice_lab::pspat::share(architecture, algorithm, link_pps, seconds, window_ms)))
}

/// The latency test: the victim's latency quantiles p10, p50, p90, p99
/// and max (µs), how many of its packets were timed and the share of the
/// run PSPAT's arbiter spent off its core (%; None for the mutex).
#[pyfunction]
fn pspat_victim(py: Python<'_>, architecture: &str, algorithm: &str, interferers: usize, victim_pps: f64, link_bits_per_s: f64, seconds: f64) -> PyResult<([f64; 5], u64, Option<f64>)> {
    let (architecture, algorithm) = pspat_names(architecture, algorithm)?;
    pspat_seconds(seconds)?;
    if architecture == sluice_lab::pspat::Architecture::Unscheduled || interferers > 256 || !(victim_pps > 0.0 && victim_pps <= 1e6) || !(link_bits_per_s > 0.0) {
        return Err(invalid(format!("latency test: a scheduler, ≤ 256 interferers ({interferers}), a victim rate in (0, 1e6] pkt/s ({victim_pps}) and a link rate > 0 are needed")));
    }
    let l = py.allow_threads(|| sluice_lab::pspat::victim(architecture, algorithm, interferers, victim_pps, link_bits_per_s, seconds));
    Ok((l.quantiles, l.packets, l.arbiter_off_core_pct))
}

/// The T-WFI test on a virtual clock (see `sluice_pspat::twfi`): the
/// client with half the link among `clients` with the paper's example
/// weights, `packets` of its packets, the arbiter scanning every `scan`
/// packet times (Δ_A); its T-WFI measured and the paper's bound for the
/// algorithm with Δ_A added (eq. (1)–(3); None where the paper gives
/// none), in units of L/B (one 1500-byte packet's time on the link).
#[pyfunction]
fn pspat_twfi(algorithm: &str, clients: usize, packets: u64, scan: f64) -> PyResult<(f64, Option<f64>)> {
    use sluice_lab::twfi;
    let (_, algorithm) = pspat_names("pspat", algorithm)?;
    if !(3..=1000).contains(&clients) || !(1..=100_000_000).contains(&packets) || !(0.0..=1e6).contains(&scan) {
        return Err(invalid(format!("T-WFI test: 3..=1000 clients ({clients}), 1..=1e8 packets ({packets}) and a scan period in [0, 1e6] packet times ({scan}) are needed")));
    }
    let weights = twfi::example_weights(clients, (clients as u32).max(100));
    let measured = twfi::measure(algorithm, &weights, packets, scan, 7);
    Ok((measured.measured, twfi::bound(algorithm, &weights, sluice_pspat::sched::QFQ_LMAX).map(|b| b + scan)))
}

/// How an LPM's multipath route spreads `flows` flows of a 5-tuple each
/// (IPv6 if `v6`) over paths weighted `weights`, its hash seeded with
/// `seed` (see `sluice_lab::ecmp`): each path's share of the flows, the
/// flows whose packets took two paths, the share of the flows that moves
/// when the last path is removed, and the flows of other paths among them.
#[pyfunction]
fn ecmp_spread(weights: Vec<u32>, flows: usize, v6: bool, seed: u64) -> PyResult<(Vec<f64>, usize, f64, usize)> {
    if flows > 1_000_000 {
        return Err(invalid(format!("ECMP spread: {flows} flows (at most 1 000 000)")));
    }
    let s = sluice_lab::ecmp::spread(&weights, flows, v6, seed).map_err(invalid)?;
    Ok((s.shares, s.split_flows, s.moved, s.moved_from_others))
}

/// T0 (ns) and T1 (ns/pkt) of ns per round = T0 + T1·B through [(B, ns per round)] (see `round_cost::fit`).
#[pyfunction]
fn round_fit(points: Vec<(f64, f64)>) -> (f64, f64) {
    sluice_lab::round_cost::fit(&points)
}

/// What one NF visit costs the walker (ns), from the chain's and the replay's T0 (see `round_cost::nf_visit_ns`).
#[pyfunction]
fn round_visit_ns(chain_t0_ns: f64, replay_t0_ns: f64) -> f64 {
    sluice_lab::round_cost::nf_visit_ns(chain_t0_ns, replay_t0_ns)
}

/// Names of the round-cost workloads.
#[pyfunction]
fn round_cases() -> Vec<&'static str> {
    sluice_lab::round_cost::CASES.to_vec()
}

/// Registers the lab's functions as module `sluice.lab._core` (in
/// `sys.modules`: imported as `from sluice.lab import _core`).
pub fn register(py: Python<'_>) -> PyResult<()> {
    let m = PyModule::new_bound(py, "sluice.lab._core")?;
    m.add_function(wrap_pyfunction!(round_ns, &m)?)?;
    m.add_function(wrap_pyfunction!(forward_raw, &m)?)?;
    m.add_function(wrap_pyfunction!(poll_decision_ns, &m)?)?;
    m.add_function(wrap_pyfunction!(sleep_error_us, &m)?)?;
    m.add_function(wrap_pyfunction!(pspat_arbiter_alone, &m)?)?;
    m.add_function(wrap_pyfunction!(pspat_throughput, &m)?)?;
    m.add_function(wrap_pyfunction!(pspat_share, &m)?)?;
    m.add_function(wrap_pyfunction!(pspat_victim, &m)?)?;
    m.add_function(wrap_pyfunction!(pspat_twfi, &m)?)?;
    m.add_function(wrap_pyfunction!(ecmp_spread, &m)?)?;
    m.add_function(wrap_pyfunction!(round_fit, &m)?)?;
    m.add_function(wrap_pyfunction!(round_visit_ns, &m)?)?;
    m.add_function(wrap_pyfunction!(round_cases, &m)?)?;
    py.import_bound("sys")?.getattr("modules")?.set_item("sluice.lab._core", m)
}

//! `sluice._core`: the compiled part of the Python package. Bindings only:
//! JSON in, JSON out; every rule lives in the Rust crates behind it.

// PyO3 0.22's #[pyfunction] expansion converts PyErr into itself.
#![allow(clippy::useless_conversion)]

use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use sluice_control::{ControlParams, SloStatistic};
use sluice_embed::{heuristic, Instance};
use sluice_pipeline::{period_json, report_json, Pipeline};

mod controller;
mod signals;
use controller::PyController;
use signals::{signal_pending, Stoppable};

fn invalid(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Why long work failed: the exception of the signal that stopped it, if
/// one did (kept in `raised`), else error `e`.
fn stopped_or_invalid(raised: Mutex<Option<PyErr>>, e: impl std::fmt::Display) -> PyErr {
    raised.into_inner().expect("no panic while it is held").unwrap_or_else(|| invalid(e))
}

/// The pipeline of description `spec` (JSON), validated; Ctrl-C or
/// SIGTERM stops the loading of its captures and raises.
fn pipeline_of(spec: &str) -> PyResult<Pipeline> {
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let built = Pipeline::from_json_until(spec, &|| signal_pending(&raised));
    built.map_err(|e| stopped_or_invalid(raised, e))
}

/// Validates a pipeline description (JSON) and returns its model as JSON.
#[pyfunction]
fn validate(spec: &str) -> PyResult<String> {
    let pipeline = pipeline_of(spec)?;
    serde_json::to_string(pipeline.model()).map_err(invalid)
}

/// Runs a pipeline description (JSON) and returns the report (JSON).
/// `controller` is a built-in controller's name or a Python object with
/// `name`, `init_json` and `step_json`; `on_period`, if given, is called
/// with each period's JSON as it ends; `delta` is the built-in SLO-aware
/// controllers' δ; `keep_periods` bounds the periods the report keeps.
///
/// A signal (Ctrl-C), an exception in `on_period` or in a Python
/// controller, or an action the pipeline refuses stops the run within a
/// period: the pipeline drains, and the exception (a RuntimeError for a
/// refused action) is raised with the report of the periods done, marked
/// interrupted, as its `sluice_report` attribute.
#[pyfunction]
#[pyo3(signature = (spec, controller, backend="engine", periods=10, warmup_periods=1, period_ms=100.0, slo_statistic="p95", delta=sluice_control::DEFAULT_DELTA, timing=true, on_period=None, keep_periods=sluice_control::DEFAULT_KEEP_PERIODS))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    spec: &str,
    controller: PyObject,
    backend: &str,
    periods: usize,
    warmup_periods: usize,
    period_ms: f64,
    slo_statistic: &str,
    delta: f64,
    timing: bool,
    on_period: Option<PyObject>,
    keep_periods: usize,
) -> PyResult<String> {
    let pipeline = pipeline_of(spec)?;
    let max_ms = sluice_core::limits::MAX_PERIOD_NS as f64 / 1e6;
    if !(period_ms > 0.0 && period_ms <= max_ms) {
        return Err(invalid(format!("control period {period_ms} ms must be > 0 and ≤ {max_ms} (an hour)")));
    }
    let stat = SloStatistic::parse(slo_statistic)
        .ok_or_else(|| invalid(format!("unknown SLO statistic '{slo_statistic}' (known: p50, p95, p99, max, mean)")))?;
    let control = ControlParams::new(delta, stat).map_err(invalid)?;
    let mut plan = pipeline.plan(periods, warmup_periods, (period_ms * 1e6).round() as u64, control);
    plan.keep_periods = keep_periods;
    let mut controller_error = None;
    let ctl: Box<dyn sluice_control::Controller> = match controller.extract::<String>(py) {
        Ok(name) => sluice_pipeline::controller(&name, &plan).map_err(invalid)?,
        Err(_) => {
            let (adapter, error) = PyController::new(py, controller)?;
            controller_error = Some(error);
            Box::new(adapter)
        }
    };
    // The first Python exception of the run: a signal's, the callback's.
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let report = py.allow_threads(|| {
        let mut notify = |p: &sluice_control::PeriodRecord| {
            let Some(cb) = &on_period else { return };
            if raised.lock().expect("one run").is_some() {
                return;
            }
            let text = period_json(&pipeline, pipeline.model(), p).to_string();
            Python::with_gil(|py| {
                if let Err(e) = cb.call1(py, (text,)) {
                    *raised.lock().expect("one run") = Some(e);
                }
            });
        };
        let stop = || {
            let controller_failed = controller_error.as_ref().is_some_and(|slot| slot.lock().is_ok_and(|e| e.is_some()));
            if controller_failed || raised.lock().expect("one run").is_some() {
                return true;
            }
            signal_pending(&raised)
        };
        sluice_pipeline::run(&pipeline, ctl, backend, timing, &plan, &mut notify, &stop)
    });
    let report = report.map_err(invalid)?;
    let json = report_json(&pipeline, &report, backend, &plan).to_string();
    let failure = raised
        .into_inner()
        .expect("one run")
        .or_else(|| controller_error.and_then(|slot| slot.lock().ok().and_then(|mut e| e.take())))
        .or_else(|| report.interrupted.filter(|why| why != sluice_control::STOPPED).map(PyRuntimeError::new_err));
    match failure {
        Some(e) => {
            e.value_bound(py).setattr("sluice_report", json)?;
            Err(e)
        }
        None => Ok(json),
    }
}

/// Makes the run directory `run_dir` (0700) if it is not there and checks
/// that a daemon may keep its socket and reports there (the caller's,
/// writable by no one else, under directories no one else can change);
/// returns its absolute path.
#[pyfunction]
fn prepare_run_dir(run_dir: &str) -> PyResult<String> {
    sluice_serve::prepare_run_dir(std::path::Path::new(run_dir)).map(|p| p.display().to_string()).map_err(invalid)
}

/// Serves a pipeline description (JSON) until SIGINT or SIGTERM (see
/// `sluice_serve`): the control API listens on `run_dir`/sluice.sock (and
/// on `listen` with `token`, if given); each change made is printed on
/// stderr. Returns the report of the whole run (JSON) once it has drained.
#[pyfunction]
#[pyo3(signature = (spec, run_dir, controller="null", period_ms=100.0, slo_statistic="p95", delta=sluice_control::DEFAULT_DELTA, timing=true, listen=None, token=None, keep_periods=sluice_control::DEFAULT_KEEP_PERIODS))]
#[allow(clippy::too_many_arguments)]
fn serve(
    py: Python<'_>,
    spec: &str,
    run_dir: &str,
    controller: &str,
    period_ms: f64,
    slo_statistic: &str,
    delta: f64,
    timing: bool,
    listen: Option<String>,
    token: Option<String>,
    keep_periods: usize,
) -> PyResult<String> {
    let pipeline = pipeline_of(spec)?;
    let description: serde_json::Value = serde_json::from_str(spec).map_err(invalid)?;
    let max_ms = sluice_core::limits::MAX_PERIOD_NS as f64 / 1e6;
    if !(period_ms > 0.0 && period_ms <= max_ms) {
        return Err(invalid(format!("control period {period_ms} ms must be > 0 and ≤ {max_ms} (an hour)")));
    }
    let statistic = SloStatistic::parse(slo_statistic)
        .ok_or_else(|| invalid(format!("unknown SLO statistic '{slo_statistic}' (known: p50, p95, p99, max, mean)")))?;
    let tcp = match (listen, token) {
        (Some(addr), Some(token)) => Some((addr, token)),
        (None, None) => None,
        (Some(addr), None) => return Err(invalid(format!("listening on {addr} needs a token"))),
        (None, Some(_)) => return Err(invalid("a token without a TCP address to listen on")),
    };
    let options = sluice_serve::ServeOptions {
        run_dir: run_dir.into(),
        tcp,
        controller: controller.to_owned(),
        period_ns: (period_ms * 1e6).round() as u64,
        control: ControlParams::new(delta, statistic).map_err(invalid)?,
        timing,
        keep_periods,
    };
    // A signal is how a served pipeline is meant to stop: not an error.
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let report = py.allow_threads(|| {
        let stop = || raised.lock().expect("one server").is_some() || signal_pending(&raised);
        sluice_serve::serve(&pipeline, description, &options, &stop, std::sync::Arc::new(|line: &str| eprintln!("{line}")))
    });
    let report = report.map_err(invalid)?;
    let plan = pipeline.plan(report.periods.len(), 0, options.period_ns, options.control);
    Ok(report_json(&pipeline, &report, "engine", &plan).to_string())
}

/// Profiles each NF kind (eight modules of it in a row) at batch sizes 1..=max_batch; returns
/// `{"nfs": {NAME: {"t0_ns", "t1_ns", "r2", "beta"}}}` as JSON.
#[pyfunction]
#[pyo3(signature = (kinds, max_batch=32, reps=200))]
fn profile(py: Python<'_>, kinds: Vec<String>, max_batch: usize, reps: usize) -> PyResult<String> {
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let stop = || signal_pending(&raised);
    let fits = py.allow_threads(|| {
        kinds
            .iter()
            .map(|k| sluice_pipeline::profile::profile(k, max_batch, reps, &stop).map(|f| (k.clone(), f)))
            .collect::<Result<std::collections::BTreeMap<_, _>, _>>()
    });
    if let Some(e) = raised.into_inner().expect("one profile") {
        return Err(e);
    }
    let fits = fits.map_err(invalid)?;
    Ok(serde_json::json!({ "nfs": fits }).to_string())
}

/// Time of one walker round of workload `case` (see `round_cost`) at batch size `batch` (ns).
#[pyfunction]
fn round_ns(py: Python<'_>, case: &str, batch: usize, timing: bool) -> PyResult<f64> {
    let mut graph = sluice_pipeline::round_cost::workload(case, batch, timing).map_err(invalid)?;
    Ok(py.allow_threads(|| sluice_pipeline::round_cost::round_ns(&mut graph)))
}

/// Sends the pipeline description's (JSON) source's packets on `port` for
/// `seconds`; returns what was sent (JSON: packets, bytes, seconds,
/// ring_full). Ctrl-C stops it early: the signal's exception carries what
/// was sent until then as `sluice_sent`.
#[pyfunction]
fn send(py: Python<'_>, spec: &str, port: &str, seconds: f64) -> PyResult<String> {
    let pipeline = pipeline_of(spec)?;
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let sent = py.allow_threads(|| {
        let mut stop = || signal_pending(&raised);
        pipeline.send(port, seconds, &mut stop)
    });
    let sent = sent.map_err(invalid)?;
    let json = serde_json::json!({"packets": sent.packets, "bytes": sent.bytes, "seconds": sent.seconds, "ring_full": sent.ring_full}).to_string();
    match raised.into_inner().expect("one sender") {
        Some(e) => {
            e.value_bound(py).setattr("sluice_sent", json)?;
            Err(e)
        }
        None => Ok(json),
    }
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
            true => sluice_port::forward_bare(&rx, &tx, burst, seconds),
            false => sluice_port::forward_raw(&rx, &tx, sluice_port::RingConfig::default(), burst, seconds),
        })
        .map_err(invalid)?;
    Ok(serde_json::json!({"packets": done.packets, "tx_full": done.tx_full, "missed": done.missed, "seconds": done.seconds}).to_string())
}

/// Analyses a capture's locality in one streaming pass (see
/// `sluice_traffic::trace_analysis`); returns JSON with the analysis and
/// the pass's speed (`packets_per_s`).
/// With `flows`, also writes one row per flow there as Parquet.
#[pyfunction]
#[pyo3(signature = (path, flows=None))]
fn trace_analyze(py: Python<'_>, path: &str, flows: Option<&str>) -> PyResult<String> {
    use sluice_traffic::flow_table::FlowTableWriter;
    use sluice_traffic::trace_analysis::{analyze_flows, Quantiles};
    let mut file = Stoppable::new(sluice_traffic::capture::open(path).map_err(invalid)?);
    let mut table = flows.map(FlowTableWriter::create).transpose().map_err(invalid)?;
    let start = std::time::Instant::now();
    let a = py.allow_threads(|| {
        let a = analyze_flows(std::io::BufReader::new(&mut file), path, |row| table.as_mut().map_or(Ok(()), |t| t.push(row)))?;
        table.take().map_or(Ok(()), |t| t.finish())?;
        Ok::<_, sluice_traffic::Error>(a)
    });
    let a = a.map_err(|e| stopped_or_invalid(file.raised, e))?;
    let seconds = start.elapsed().as_secs_f64();
    let q = |q: &Quantiles| serde_json::json!({"mean": q.mean, "p50": q.p50, "p90": q.p90, "p99": q.p99, "max": q.max});
    let by = |v: &[(usize, f64)]| v.iter().map(|(k, x)| (k.to_string(), serde_json::json!(x))).collect::<serde_json::Map<_, _>>();
    Ok(serde_json::json!({
        "packets": a.packets, "not_ip": a.not_ip, "flows": a.flows, "active_flows_max": a.active_flows_max,
        "duration_s": a.duration_ns as f64 * 1e-9,
        "slf": by(&a.slf), "switches_per_batch": by(&a.switches_per_batch),
        "reframer_slf_by_t_buff_us": a.reframer_slf.iter().map(|(t, x)| (t.to_string(), serde_json::json!(x))).collect::<serde_json::Map<_, _>>(),
        "flow_size": q(&a.flow_size), "spatial_distance": q(&a.spatial_distance), "temporal_distance_us": q(&a.temporal_distance_us),
        "seconds": seconds, "packets_per_s": a.packets as f64 / seconds.max(1e-9),
    })
    .to_string())
}

/// Writes a synthetic trace to `path` (see `sluice_traffic::trace_synth`);
/// returns JSON with what was written and how fast.
#[pyfunction]
#[pyo3(signature = (path, packets, segments=1, flows_per_s=3500.0, tcp_share=0.8, seed=1, ipv6_share=0.0))]
#[allow(clippy::too_many_arguments)]
fn trace_synth(py: Python<'_>, path: &str, packets: u64, segments: u32, flows_per_s: f64, tcp_share: f64, seed: u64, ipv6_share: f64) -> PyResult<String> {
    use sluice_traffic::trace_synth::{synthesize, SynthConfig};
    let mut file = Stoppable::new(std::fs::File::create(path).map_err(|e| invalid(format!("trace '{path}': {e}")))?);
    let config = SynthConfig { packets, segments, flows_per_s, tcp_share, ipv6_share, seed };
    let start = std::time::Instant::now();
    let s = py.allow_threads(|| synthesize(&config, std::io::BufWriter::new(&mut file))).map_err(|e| match file.raised.into_inner().expect("no panic while it is held") {
        // Stopped: the trace is not the one asked for, and not left behind.
        Some(signal) => {
            let _ = std::fs::remove_file(path);
            signal
        }
        None => invalid(e),
    })?;
    Ok(serde_json::json!({
        "packets": s.packets, "flows": s.flows, "duration_s": s.duration_ns as f64 * 1e-9, "seconds": start.elapsed().as_secs_f64(),
    })
    .to_string())
}

/// What one decision of poll policy `spec` (the description's `poll`
/// object, JSON) costs the worker (ns), over rounds of a light load (a
/// packet every 1024 rounds: a learned model is asked, its rate bound passed).
#[pyfunction]
fn poll_decision_ns(spec: &str) -> PyResult<f64> {
    let spec: sluice_pipeline::spec::PollSpec = serde_json::from_str(spec).map_err(|e| invalid(format!("poll: {e}")))?;
    let mut poller = sluice_core::poll::Poller::new(spec.policy().map_err(invalid)?, false);
    let rounds = 1_000_000u32;
    let start = std::time::Instant::now();
    for i in 0..rounds {
        // The decision is kept from being optimised away.
        let work = usize::from(i % 1024 == 0);
        std::hint::black_box(poller.after_round(std::hint::black_box(work), || u64::MAX));
    }
    Ok(start.elapsed().as_nanos() as f64 / f64::from(rounds))
}

/// What the learned poll model at `path` predicts (µs of sleep) for each
/// of `rows` (its features: the last round sizes, latest first, then the
/// idle time in µs and the arrival rate in pkt/µs), before the policy bounds it.
#[pyfunction]
fn poll_model_predict(path: &str, rows: Vec<Vec<f64>>) -> PyResult<Vec<f64>> {
    let forest = sluice_pipeline::poll_model::read(path, 1_000_000_000).map_err(invalid)?.into_forest();
    if let Some(row) = rows.iter().find(|r| r.len() != forest.features()) {
        return Err(invalid(format!("poll model {path} reads {} features; a row has {}", forest.features(), row.len())));
    }
    Ok(rows.iter().map(|r| forest.predict(|i| r[i])).collect())
}

/// How late sleeps of `request_us` end on this machine (µs): the median
/// and 99th percentile of plain sleeps and of precise ones (an absolute
/// deadline early by the usual oversleep, then a spin), `samples` each.
#[pyfunction]
fn sleep_error_us(py: Python<'_>, request_us: f64, samples: usize) -> PyResult<String> {
    use sluice_core::poll::{lateness_ns, oversleep_ns, sleep_precisely, spin_before_deadline, tight_timer_slack};
    if !(request_us > 0.0 && request_us <= 1e5) || samples == 0 {
        return Err(invalid(format!("sleeps of {request_us} µs, {samples} samples: 0 < µs ≤ 100 000 and samples ≥ 1")));
    }
    let request = std::time::Duration::from_nanos((request_us * 1e3) as u64);
    let out = py.allow_threads(|| {
        tight_timer_slack();
        let plain = oversleep_ns(request, samples);
        let spin = spin_before_deadline();
        let precise = lateness_ns(request, samples, |d| sleep_precisely(d, spin));
        let us = |ns: u64| ns as f64 / 1e3;
        serde_json::json!({
            "request_us": request_us, "plain": {"p50": us(plain.0), "p99": us(plain.1)},
            "precise": {"p50": us(precise.0), "p99": us(precise.1)}, "spin_us": us(spin.as_nanos() as u64),
        })
    });
    Ok(out.to_string())
}

/// The PSPAT measurements (see `sluice_pspat::lab`), by name.
fn pspat_names(architecture: &str, algorithm: &str) -> PyResult<(sluice_pspat::lab::Architecture, sluice_pspat::sched::Algorithm)> {
    use sluice_pspat::lab::Architecture;
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
    Ok(py.allow_threads(|| sluice_pspat::lab::arbiter_alone(algorithm, clients, per_client, seconds)))
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
    let t = py.allow_threads(|| sluice_pspat::lab::throughput(architecture, algorithm, clients, seconds));
    Ok((t.mpps, t.arbiter_mdps))
}

/// The 10:1 test: packets of the weight-10 and weight-1 flow in each
/// `window_ms` window over a link of `link_pps` 60-byte packets a second
/// (inf: unlimited).
#[pyfunction]
fn pspat_share(py: Python<'_>, architecture: &str, algorithm: &str, link_pps: f64, seconds: f64, window_ms: f64) -> PyResult<Vec<[u64; 2]>> {
    let (architecture, algorithm) = pspat_names(architecture, algorithm)?;
    pspat_seconds(seconds)?;
    if architecture == sluice_pspat::lab::Architecture::Unscheduled || !(link_pps > 0.0) || !(window_ms >= 1.0 && window_ms * 1e-3 < seconds) {
        return Err(invalid(format!("share test: a scheduler, a link rate > 0 ({link_pps} pkt/s; inf: unlimited) and 1 ms ≤ window ({window_ms} ms) < run are needed")));
    }
    Ok(py.allow_threads(|| sluice_pspat::lab::share(architecture, algorithm, link_pps, seconds, window_ms)))
}

/// The latency test: the victim's latency quantiles p10, p50, p90, p99
/// and max (µs), how many of its packets were timed and the share of the
/// run PSPAT's arbiter spent off its core (%; None for the mutex).
#[pyfunction]
fn pspat_victim(py: Python<'_>, architecture: &str, algorithm: &str, interferers: usize, victim_pps: f64, link_bits_per_s: f64, seconds: f64) -> PyResult<([f64; 5], u64, Option<f64>)> {
    let (architecture, algorithm) = pspat_names(architecture, algorithm)?;
    pspat_seconds(seconds)?;
    if architecture == sluice_pspat::lab::Architecture::Unscheduled || interferers > 256 || !(victim_pps > 0.0 && victim_pps <= 1e6) || !(link_bits_per_s > 0.0) {
        return Err(invalid(format!("latency test: a scheduler, ≤ 256 interferers ({interferers}), a victim rate in (0, 1e6] pkt/s ({victim_pps}) and a link rate > 0 are needed")));
    }
    let l = py.allow_threads(|| sluice_pspat::lab::victim(architecture, algorithm, interferers, victim_pps, link_bits_per_s, seconds));
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
    use sluice_pspat::twfi;
    let (_, algorithm) = pspat_names("pspat", algorithm)?;
    if !(3..=1000).contains(&clients) || !(1..=100_000_000).contains(&packets) || !(0.0..=1e6).contains(&scan) {
        return Err(invalid(format!("T-WFI test: 3..=1000 clients ({clients}), 1..=1e8 packets ({packets}) and a scan period in [0, 1e6] packet times ({scan}) are needed")));
    }
    let weights = twfi::example_weights(clients, (clients as u32).max(100));
    let measured = twfi::measure(algorithm, &weights, packets, scan, 7);
    Ok((measured.measured, twfi::bound(algorithm, &weights, sluice_pspat::sched::QFQ_LMAX).map(|b| b + scan)))
}

/// T0 (ns) and T1 (ns/pkt) of ns per round = T0 + T1·B through [(B, ns per round)] (see `round_cost::fit`).
#[pyfunction]
fn round_fit(points: Vec<(f64, f64)>) -> (f64, f64) {
    sluice_pipeline::round_cost::fit(&points)
}

/// What one NF visit costs the walker (ns), from the chain's and the replay's T0 (see `round_cost::nf_visit_ns`).
#[pyfunction]
fn round_visit_ns(chain_t0_ns: f64, replay_t0_ns: f64) -> f64 {
    sluice_pipeline::round_cost::nf_visit_ns(chain_t0_ns, replay_t0_ns)
}

/// Names of the round-cost workloads.
#[pyfunction]
fn round_cases() -> Vec<&'static str> {
    sluice_pipeline::round_cost::CASES.to_vec()
}

/// Packets per destination prefix of a capture (IPv4 /24, IPv6 /48), most
/// first: [("a.b.c.0/24", count)], in one pass. Ctrl-C stops it.
#[pyfunction]
fn pcap_prefixes(py: Python<'_>, path: &str) -> PyResult<Vec<(String, u64)>> {
    let mut file = Stoppable::new(sluice_traffic::capture::open(path).map_err(invalid)?);
    let counted = py.allow_threads(|| sluice_traffic::capture::destinations_by_prefix(&mut file, path));
    let counted = counted.map_err(|e| stopped_or_invalid(file.raised, e))?;
    Ok(counted.into_iter().map(|(net, len, n)| (format!("{net}/{len}"), n)).collect())
}

/// Every NF's name, class name and the JSON Schema of its configuration
/// (JSON text): what `sluice.nf` is generated from.
#[pyfunction]
fn nf_schemas() -> PyResult<Vec<(&'static str, &'static str, String)>> {
    sluice_nf::NfSpec::schemas().into_iter().map(|(kind, class, schema)| Ok((kind, class, serde_json::to_string(&schema).map_err(invalid)?))).collect()
}

/// Checks NF `kind`'s fields (a JSON object) as a description's are read;
/// the error names the field.
#[pyfunction]
fn check_nf(kind: &str, fields: &str) -> PyResult<()> {
    let fields: serde_json::Value = serde_json::from_str(fields).map_err(invalid)?;
    sluice_nf::NfSpec::from_fields(kind, fields).map(drop).map_err(invalid)
}

/// The JSON Schema of a part of a description (JSON text), by name
/// ("template", "poll"): what `sluice.template` and `sluice.poll` are generated from.
#[pyfunction]
fn part_schema(part: &str) -> PyResult<String> {
    let schema = match part {
        "template" => schemars::schema_for!(sluice_traffic::TemplateSpec),
        "poll" => schemars::schema_for!(sluice_pipeline::spec::PollSpec),
        "interface" => schemars::schema_for!(sluice_nf::InterfaceSpec),
        "icmp" => schemars::schema_for!(sluice_nf::icmp_limit::IcmpSettings),
        other => return Err(invalid(format!("no part '{other}' (known: template, poll, interface, icmp)"))),
    };
    serde_json::to_string(&schema).map_err(invalid)
}

/// Checks the fields (a JSON object) of a part of a description
/// ("template", "poll") as a description's are read (their types and
/// names; what they mean together is checked with the pipeline); the error
/// names the field.
#[pyfunction]
fn check_part(part: &str, fields: &str) -> PyResult<()> {
    fn read<T: serde::de::DeserializeOwned>(fields: serde_json::Value) -> PyResult<()> {
        serde_path_to_error::deserialize::<_, T>(fields).map(drop).map_err(|e| invalid(sluice_pipeline::spec_error::describe(&e)))
    }
    let fields: serde_json::Value = serde_json::from_str(fields).map_err(invalid)?;
    match part {
        "template" => read::<sluice_traffic::TemplateSpec>(fields),
        "poll" => read::<sluice_pipeline::spec::PollSpec>(fields),
        "interface" => read::<sluice_nf::InterfaceSpec>(fields),
        "icmp" => read::<sluice_nf::icmp_limit::IcmpSettings>(fields),
        other => Err(invalid(format!("no part '{other}' (known: template, poll, interface, icmp)"))),
    }
}

/// Names of the NF kinds the profiler knows.
#[pyfunction]
fn profiled_kinds() -> Vec<&'static str> {
    sluice_nf::NfSpec::profiled_kinds()
}

/// The bounds a description must keep (see `sluice_core::limits`), by name.
#[pyfunction]
fn limits() -> std::collections::BTreeMap<&'static str, f64> {
    use sluice_core::limits::*;
    std::collections::BTreeMap::from([
        ("max_workers", MAX_WORKERS as f64),
        ("max_modules", MAX_MODULES as f64),
        ("max_flows", MAX_FLOWS as f64),
        ("max_periods", MAX_PERIODS as f64),
        ("max_period_ms", MAX_PERIOD_NS as f64 / 1e6),
        ("max_rate_pps", MAX_RATE_PPS),
        ("max_batch", sluice_core::MAX_BURST as f64),
        ("min_synth_flows_per_s", sluice_traffic::trace_synth::MIN_FLOWS_PER_S),
        ("max_synth_flows_per_s", sluice_traffic::trace_synth::MAX_FLOWS_PER_S),
    ])
}

/// Names of the built-in controllers.
#[pyfunction]
fn controllers() -> Vec<&'static str> {
    sluice_control::CONTROLLERS.to_vec()
}

/// Names of the backends.
#[pyfunction]
fn backends() -> Vec<&'static str> {
    sluice_pipeline::BACKENDS.to_vec()
}

/// The port backends this build has (`af_xdp` where it was built with libxdp).
#[pyfunction]
fn port_backends() -> Vec<&'static str> {
    sluice_port::built()
}

/// Length of one Bypass cycle (ns): of a nominal 2.6 GHz clock, on every machine.
#[pyfunction]
fn ns_per_cycle() -> f64 {
    sluice_pipeline::ns_per_cycle()
}

/// Builds an embedding instance from plain lists (see `sluice.embed`).
fn embed_instance(weights: Vec<u64>, cores: usize, capacity: u64, flows: Vec<Vec<usize>>, conflicts: Vec<(usize, usize)>) -> PyResult<Instance> {
    Instance::new(weights, cores, capacity, flows, &conflicts).map_err(invalid)
}

/// Checks an embedding instance; raises ValueError naming the problem.
#[pyfunction]
fn embed_validate(weights: Vec<u64>, cores: usize, capacity: u64, flows: Vec<Vec<usize>>, conflicts: Vec<(usize, usize)>) -> PyResult<()> {
    embed_instance(weights, cores, capacity, flows, conflicts).map(drop)
}

/// Places modules on cores with a heuristic (round-robin, random,
/// best-fit, path-fit); returns each module's core.
#[pyfunction]
#[pyo3(signature = (method, weights, cores, capacity, flows, conflicts, seed=0))]
#[allow(clippy::too_many_arguments)]
fn embed_place(
    py: Python<'_>,
    method: &str,
    weights: Vec<u64>,
    cores: usize,
    capacity: u64,
    flows: Vec<Vec<usize>>,
    conflicts: Vec<(usize, usize)>,
    seed: u64,
) -> PyResult<Vec<usize>> {
    let instance = embed_instance(weights, cores, capacity, flows, conflicts)?;
    let place = match method {
        "round-robin" => heuristic::round_robin,
        "best-fit" => heuristic::best_fit,
        "path-fit" => sluice_embed::path_fit::path_fit,
        "random" => return py.allow_threads(|| heuristic::random(&instance, seed)).map_err(invalid),
        _ => return Err(invalid(format!("unknown embedding heuristic '{method}' (known: round-robin, random, best-fit, path-fit)"))),
    };
    py.allow_threads(|| place(&instance)).map_err(invalid)
}

/// Checks that `placement` embeds the instance (capacity, conflicts, one
/// existing core per module); returns the crossings of each flow.
#[pyfunction]
fn embed_check(
    weights: Vec<u64>,
    cores: usize,
    capacity: u64,
    flows: Vec<Vec<usize>>,
    conflicts: Vec<(usize, usize)>,
    placement: Vec<usize>,
) -> PyResult<Vec<u32>> {
    let instance = embed_instance(weights, cores, capacity, flows, conflicts)?;
    Ok(sluice_embed::check(&instance, &placement).map_err(invalid)?.per_flow)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(nf_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(check_nf, m)?)?;
    m.add_function(wrap_pyfunction!(part_schema, m)?)?;
    m.add_function(wrap_pyfunction!(check_part, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(serve, m)?)?;
    m.add_function(wrap_pyfunction!(prepare_run_dir, m)?)?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(limits, m)?)?;
    m.add_function(wrap_pyfunction!(backends, m)?)?;
    m.add_function(wrap_pyfunction!(port_backends, m)?)?;
    m.add_function(wrap_pyfunction!(ns_per_cycle, m)?)?;
    m.add_function(wrap_pyfunction!(profile, m)?)?;
    m.add_function(wrap_pyfunction!(profiled_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_prefixes, m)?)?;
    m.add_function(wrap_pyfunction!(round_ns, m)?)?;
    m.add_function(wrap_pyfunction!(round_cases, m)?)?;
    m.add_function(wrap_pyfunction!(round_fit, m)?)?;
    m.add_function(wrap_pyfunction!(round_visit_ns, m)?)?;
    m.add_function(wrap_pyfunction!(pspat_arbiter_alone, m)?)?;
    m.add_function(wrap_pyfunction!(pspat_throughput, m)?)?;
    m.add_function(wrap_pyfunction!(pspat_share, m)?)?;
    m.add_function(wrap_pyfunction!(pspat_victim, m)?)?;
    m.add_function(wrap_pyfunction!(pspat_twfi, m)?)?;
    m.add_function(wrap_pyfunction!(send, m)?)?;
    m.add_function(wrap_pyfunction!(forward_raw, m)?)?;
    m.add_function(wrap_pyfunction!(trace_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(trace_synth, m)?)?;
    m.add_function(wrap_pyfunction!(poll_decision_ns, m)?)?;
    m.add_function(wrap_pyfunction!(sleep_error_us, m)?)?;
    m.add_function(wrap_pyfunction!(poll_model_predict, m)?)?;
    m.add_function(wrap_pyfunction!(embed_place, m)?)?;
    m.add_function(wrap_pyfunction!(embed_check, m)?)?;
    m.add_function(wrap_pyfunction!(embed_validate, m)?)?;
    m.add("DEFAULT_DELTA", sluice_control::DEFAULT_DELTA)?;
    m.add("POLL_HISTORY", sluice_core::poll::features::HISTORY)?;
    m.add("POLL_MODEL_FORMAT", sluice_pipeline::poll_model::FORMAT)?;
    m.add("POLL_MODEL_VERSION", sluice_pipeline::poll_model::VERSION)?;
    m.add("DEFAULT_KEEP_PERIODS", sluice_control::DEFAULT_KEEP_PERIODS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

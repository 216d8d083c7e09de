//! `sluice._core`: the compiled part of the Python package. Bindings only:
//! JSON in, JSON out; every rule lives in the Rust crates behind it.

// PyO3 0.22's #[pyfunction] expansion converts PyErr into itself.
#![allow(clippy::useless_conversion)]

use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use sluice_embed::{heuristic, Instance};
use sluice_pipeline::{BackendKind, PeriodOutput, Pipeline, RunOutput, RunParams};

mod controller;
#[cfg(feature = "lab")]
mod lab;
mod signals;
use controller::PyController;
use signals::{signal_pending, Stoppable};

fn invalid(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `value` as JSON text (plain data: a non-finite number becomes null).
fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("plain data, string keys")
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
    Ok(json_text(pipeline.model()))
}

/// Runs a pipeline description (JSON) and returns the report (JSON).
/// `controller` is a built-in controller's name or a Python object with
/// `name`, `init_json` and `step_json`; `on_period`, if given, is called
/// with each period's JSON as it ends; `params` are the run's
/// `sluice_pipeline::RunParams` (JSON; a field left out keeps its default).
///
/// A signal (Ctrl-C), an exception in `on_period` or in a Python
/// controller, or an action the pipeline refuses stops the run within a
/// period: the pipeline drains, and the exception (a RuntimeError for a
/// refused action) is raised with the report of the periods done, marked
/// interrupted, as its `sluice_report` attribute.
#[pyfunction]
#[pyo3(signature = (spec, controller, params, on_period=None))]
fn run(py: Python<'_>, spec: &str, controller: PyObject, params: &str, on_period: Option<PyObject>) -> PyResult<String> {
    let pipeline = pipeline_of(spec)?;
    let params = RunParams::from_json(params).map_err(invalid)?;
    let plan = params.plan(&pipeline).map_err(invalid)?;
    let (backend, timing) = (params.backend, params.timing);
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
            let text = json_text(&PeriodOutput::of(&pipeline, pipeline.model(), p));
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
    let json = json_text(&RunOutput::of(&pipeline, &report, backend, &plan));
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
/// stderr; `params` as `run`'s, whose periods it ignores (it runs until
/// stopped); the description in force is written to `state` (a path)
/// after every change, if given (see `read_state`). Returns the report of
/// the whole run (JSON) once it has drained.
#[pyfunction]
#[pyo3(signature = (spec, run_dir, controller, params, listen=None, token=None, state=None))]
#[allow(clippy::too_many_arguments)] // the CLI's options, each named at the call
fn serve(py: Python<'_>, spec: &str, run_dir: &str, controller: &str, params: &str, listen: Option<String>, token: Option<String>, state: Option<String>) -> PyResult<String> {
    let pipeline = pipeline_of(spec)?;
    let params = RunParams::from_json(params).map_err(invalid)?;
    if params.backend != BackendKind::Engine {
        return Err(invalid("sluice serve runs on the engine (backend \"engine\")"));
    }
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
        period_ns: params.period_ns(),
        control: params.control().map_err(invalid)?,
        timing: params.timing,
        keep_periods: params.keep_periods,
        state: state.map(Into::into),
    };
    // A signal is how a served pipeline is meant to stop: not an error.
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let report = py.allow_threads(|| {
        let stop = || raised.lock().expect("one server").is_some() || signal_pending(&raised);
        sluice_serve::serve(&pipeline, &options, &stop, std::sync::Arc::new(|line: &str| eprintln!("{line}")))
    });
    let report = report.map_err(invalid)?;
    let plan = pipeline.plan(report.periods.len(), 0, options.period_ns, options.control);
    Ok(json_text(&RunOutput::of(&pipeline, &report, BackendKind::Engine, &plan)))
}

/// The text of the state file `path` of `serve` (`None`: there is none
/// yet), its place checked as `serve` checks it: a JSON object with the
/// description in force and the controller, as `GET /v1/pipeline` answers.
#[pyfunction]
fn read_state(path: &str) -> PyResult<Option<String>> {
    sluice_serve::StateFile::at(std::path::Path::new(path)).and_then(|file| file.read()).map_err(invalid)
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
    let json = json_text(&sent);
    match raised.into_inner().expect("one sender") {
        Some(e) => {
            e.value_bound(py).setattr("sluice_sent", json)?;
            Err(e)
        }
        None => Ok(json),
    }
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

/// What the learned poll model at `path` predicts (µs of sleep) for each
/// of `rows` (its features: the last round sizes, latest first, then the
/// idle time in µs and the arrival rate in pkt/µs), before the policy bounds it.
#[pyfunction]
fn poll_model_predict(path: &str, rows: Vec<Vec<f64>>) -> PyResult<Vec<f64>> {
    let forest = sluice_pipeline::poll_model_file::read(path, 1_000_000_000).map_err(invalid)?.into_forest();
    if let Some(row) = rows.iter().find(|r| r.len() != forest.features()) {
        return Err(invalid(format!("poll model {path} reads {} features; a row has {}", forest.features(), row.len())));
    }
    Ok(rows.iter().map(|r| forest.predict(|i| r[i])).collect())
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
    sluice_nf::NfSpec::from_fields(kind, &fields).map(drop).map_err(invalid)
}

/// The JSON Schema of what the core writes as `T`.
fn output_schema<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::default().for_serialize().into_generator().into_root_schema_for::<T>()
}

/// The parts of a description `check_part` knows.
const PARTS: &str = "run, template, poll, scheduler, egress_scheduler, interface, icmp";
/// What `part_schema` knows: the whole description, its parts and what the core returns.
const SCHEMAS: &str = "pipeline, run, template, poll, scheduler, egress_scheduler, interface, icmp, report, model, sent";

/// The JSON Schema of a whole description ("pipeline"), of a run's
/// parameters ("run"), of a part of a description, or of what the core
/// returns (a run's "report", whose periods `on_period` receives; the
/// "model" `validate` returns; what `send` "sent"), by name (see
/// `SCHEMAS`): what the typed Python of `sluice` is generated from.
#[pyfunction]
fn part_schema(part: &str) -> PyResult<String> {
    let schema = match part {
        "pipeline" => schemars::schema_for!(sluice_pipeline::spec::PipelineSpec),
        "run" => schemars::schema_for!(RunParams),
        "template" => schemars::schema_for!(sluice_traffic::TemplateSpec),
        "poll" => schemars::schema_for!(sluice_pipeline::spec::PollSpec),
        "scheduler" => schemars::schema_for!(sluice_pipeline::spec::SchedulerSpec),
        "egress_scheduler" => schemars::schema_for!(sluice_pipeline::egress_plan::EgressSchedulerSpec),
        "interface" => schemars::schema_for!(sluice_nf::InterfaceSpec),
        "icmp" => schemars::schema_for!(sluice_nf::icmp_limit::IcmpSettings),
        // What the core writes, not reads: a field it leaves out when empty is not required.
        "report" => output_schema::<RunOutput>(),
        "model" => output_schema::<sluice_core::Model>(),
        "sent" => output_schema::<sluice_port::Sent>(),
        other => return Err(invalid(format!("no schema '{other}' (known: {SCHEMAS})"))),
    };
    serde_json::to_string(&schema).map_err(invalid)
}

/// Checks the fields (a JSON object) of a part (see `PARTS`) as a
/// description's are read (their types and names, and the rules of a part
/// on its own; what they mean with the rest is checked with the pipeline);
/// the error names the field.
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
        "egress_scheduler" => read::<sluice_pipeline::egress_plan::EgressSchedulerSpec>(fields),
        "scheduler" => {
            let scheduler = serde_path_to_error::deserialize::<_, sluice_pipeline::spec::SchedulerSpec>(fields).map_err(|e| invalid(sluice_pipeline::spec_error::describe(&e)))?;
            scheduler.check().map_err(invalid)
        }
        "run" => RunParams::from_json(&fields.to_string()).map(drop).map_err(invalid),
        other => Err(invalid(format!("no part '{other}' (known: {PARTS})"))),
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

/// Checks an embedding instance whose modules are called `names`; raises
/// ValueError naming the problem (and the module, by its name).
#[pyfunction]
fn embed_validate(names: Vec<String>, weights: Vec<u64>, cores: usize, capacity: u64, flows: Vec<Vec<usize>>, conflicts: Vec<(usize, usize)>) -> PyResult<()> {
    if names.len() != weights.len() {
        return Err(invalid(format!("{} module names but {} weights", names.len(), weights.len())));
    }
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    if let Some(twice) = names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(invalid(format!("module '{twice}' appears twice")));
    }
    Instance::new(weights, cores, capacity, flows, &conflicts).map(drop).map_err(|e| match e.module() {
        Some(v) => invalid(format!("module '{}': {e}", names[v])),
        None => invalid(e),
    })
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
    m.add_function(wrap_pyfunction!(read_state, m)?)?;
    m.add_function(wrap_pyfunction!(prepare_run_dir, m)?)?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(limits, m)?)?;
    m.add_function(wrap_pyfunction!(port_backends, m)?)?;
    m.add_function(wrap_pyfunction!(ns_per_cycle, m)?)?;
    m.add_function(wrap_pyfunction!(profile, m)?)?;
    m.add_function(wrap_pyfunction!(profiled_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_prefixes, m)?)?;
    m.add_function(wrap_pyfunction!(send, m)?)?;
    m.add_function(wrap_pyfunction!(trace_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(trace_synth, m)?)?;
    m.add_function(wrap_pyfunction!(poll_model_predict, m)?)?;
    m.add_function(wrap_pyfunction!(embed_place, m)?)?;
    m.add_function(wrap_pyfunction!(embed_check, m)?)?;
    m.add_function(wrap_pyfunction!(embed_validate, m)?)?;
    // Round sizes a learned poll policy sees (the engine's `poll::features::HISTORY`).
    m.add("POLL_HISTORY", sluice_core::poll::features::HISTORY)?;
    // The poll model file's format name.
    m.add("POLL_MODEL_FORMAT", sluice_pipeline::poll_model_file::FORMAT)?;
    // The poll model file's format version.
    m.add("POLL_MODEL_VERSION", sluice_pipeline::poll_model_file::VERSION)?;
    // The package's version.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    #[cfg(feature = "lab")]
    lab::register(m.py())?;
    Ok(())
}

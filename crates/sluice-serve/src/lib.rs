//! `sluice serve`: a pipeline that runs until it is stopped, its
//! controller deciding every period, changed live through an HTTP/JSON
//! control API and watched through Prometheus metrics.
//!
//! Three kinds of thread: the caller's runs the control loop
//! ([`sluice_control::drive_steered`]) and makes the changes at period
//! boundaries; the engine's workers forward; the listeners answer reads from
//! the `Status` the control thread keeps (`status.rs`), queue changes for
//! it, and make small IPv4 route changes themselves, at once, in place on
//! the running table (`sluice_nf::lpm4`). Nothing here touches the data
//! path but through the backend's own hand-overs (knobs, parked graphs) and
//! that table's atomic entries.
#![warn(missing_docs)]

mod api;
mod bpf;
mod change;
mod error;
mod http;
mod in_force;
mod listener;
mod metrics;
mod routes;
mod run_dir;
mod server;
mod state_file;
mod status;
mod transaction;
mod watch;

use std::path::PathBuf;
use std::sync::mpsc::{channel, sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_control::{Boundary, ControlParams, RunPlan, RunReport, Steering};
use sluice_core::limits::MAX_PERIODS;
use sluice_core::{Backend, Schedule};
use sluice_pipeline::Pipeline;

pub use crate::error::ApiError;
use crate::change::{Change, Context};
pub use crate::listener::{OPENAPI, SOCKET};
pub use crate::run_dir::prepare as prepare_run_dir;
pub use crate::listener::Log;
pub use crate::state_file::StateFile;
use crate::listener::{change_line, Listener, Pending};
use crate::status::Status;

/// How a pipeline is served.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Where the control socket (`sluice.sock`) is made: a directory of
    /// the caller's that no one else can write (made 0700 if it is not
    /// there; see [`prepare_run_dir`]).
    pub run_dir: PathBuf,
    /// A TCP address to listen on as well, and the token its requests must carry.
    pub tcp: Option<(String, String)>,
    /// The controller to start with.
    pub controller: String,
    /// Control period (ns).
    pub period_ns: u64,
    /// The SLO statistic and δ of the SLO-aware controllers.
    pub control: ControlParams,
    /// Delay histograms and busy times on.
    pub timing: bool,
    /// The most recent periods the final report keeps.
    pub keep_periods: usize,
    /// Where the description in force is written after every change (see `state_file.rs`).
    pub state: Option<PathBuf>,
}

/// Serves `pipeline` until `stop` returns true; then it drains and
/// returns the report of the whole run. `log` gets one line per change
/// made (and a state file's failed writes).
pub fn serve(pipeline: &Pipeline, options: &ServeOptions, stop: &dyn Fn() -> bool, log: Log) -> Result<RunReport, String> {
    let state = options.state.as_deref().map(StateFile::at).transpose()?;
    let mut plan = pipeline.plan(MAX_PERIODS, 0, options.period_ns, options.control);
    plan.keep_periods = options.keep_periods;
    let controller = sluice_pipeline::controller(&options.controller, &plan).map_err(|e| e.to_string())?;
    let schedule = controller.schedule(pipeline.model(), pipeline.schedule());
    let status = Arc::new(Mutex::new(Status::new(pipeline, controller.name())));
    let mut engine = pipeline.engine_with(options.timing, schedule).map_err(|e| e.to_string())?;
    {
        let mut status = status.lock().expect("no panic while it is held");
        status.live = (0..pipeline.model().modules.len()).map(|m| engine.live(m)).collect();
        status.interfaces = pipeline.interfaces().unwrap_or_else(sluice_nf::Interfaces::none);
        status.run_dir = std::path::absolute(&options.run_dir).map_err(|e| format!("run directory {}: {e}", options.run_dir.display()))?;
    }
    // Before the API listens: no change is made before the keeper hears of changes.
    let keeper = state.map(|file| keep_state(file, status.clone(), log.clone())).transpose()?;
    let (changes, queued) = channel();
    // A change waits for the next boundary: a period, and what the control thread does between two.
    let wait = Duration::from_nanos(options.period_ns) + Duration::from_secs(30);
    let tcp = options.tcp.as_ref().map(|(a, t)| (a.as_str(), t.as_str()));
    let listener = match Listener::start(&options.run_dir, tcp, status.clone(), changes, wait, log.clone()) {
        Ok(listener) => listener,
        Err(e) => {
            stop_keeping(&status, keeper);
            return Err(e);
        }
    };
    let socket = options.run_dir.join(SOCKET);
    let also = tcp.map_or(String::new(), |(addr, _)| format!(" and {addr}"));
    log(&format!("{} ready: forwarding; control API on {}{also}", humantime::format_rfc3339_seconds(std::time::SystemTime::now()), socket.display()));
    let statistic = options.control.statistic;
    let mut on_period = |p: &sluice_control::PeriodRecord| status.lock().expect("no panic while it is held").record(p, statistic);
    let mut steering = Steer { queued, status: status.clone(), pipeline, plan: &plan, schedule, log };
    let report = sluice_control::drive_steered(&mut engine, controller, &plan, &mut on_period, stop, &mut steering);
    status.lock().expect("no panic while it is held").stopping = true;
    // Changes still queued are refused (their callers hear 503) as the queue goes.
    drop(steering);
    listener.stop();
    stop_keeping(&status, keeper);
    report.map_err(|e| e.to_string())
}

/// Ends the state file's keeper, once it has written what the last change left.
fn stop_keeping(status: &Mutex<Status>, keeper: Option<std::thread::JoinHandle<()>>) {
    status.lock().expect("no panic while it is held").on_change = None;
    if let Some(keeper) = keeper {
        let _ = keeper.join();
    }
}

/// Writes the description in force to `file` now (before the pipeline
/// is ready: a file that cannot be written stops it here), then after
/// every change applied on a thread of its own (a large table's takes a
/// while), until the status stops telling it of changes.
fn keep_state(file: StateFile, status: Arc<Mutex<Status>>, log: Log) -> Result<std::thread::JoinHandle<()>, String> {
    let text = status.lock().expect("no panic while it is held").pipeline_json().to_string();
    file.write(text.as_bytes())?;
    let (tell, changed) = sync_channel(1);
    status.lock().expect("no panic while it is held").on_change = Some(tell);
    let write = move || {
        while changed.recv().is_ok() {
            let text = status.lock().expect("no panic while it is held").pipeline_json().to_string();
            if let Err(e) = file.write(text.as_bytes()) {
                log(&e);
            }
        }
    };
    std::thread::Builder::new().name("sluice-state".into()).spawn(write).map_err(|e| format!("cannot start the state file's writer: {e}"))
}

/// Reads a control-API request (`method`, `path`, `body`) against
/// `pipeline` as it stands before it runs, without serving it: `Ok` for a
/// read or a change the API would queue, else the refusal it would answer.
pub fn check_request(pipeline: &Pipeline, method: &str, path: &str, body: &str) -> Result<(), ApiError> {
    api::parse(method, path, api::Body::decode(method, path, body), &Status::new(pipeline, "null")).map(drop)
}

/// Makes the queued changes at each period boundary.
struct Steer<'a> {
    queued: Receiver<Pending>,
    status: Arc<Mutex<Status>>,
    pipeline: &'a Pipeline,
    plan: &'a RunPlan,
    schedule: Schedule,
    log: Log,
}

/// Times a change that replaces an NF is built before it is refused,
/// where routes are edited in place faster than it is built.
const BUILD_TRIES: usize = 3;

impl Steer<'_> {
    /// Makes `change` at `at`: a transaction's changes all or none, the
    /// workers held until all are made or undone (see `transaction.rs`),
    /// any other alone.
    fn make(&self, at: &mut Boundary<'_>, change: Change) -> Result<String, ApiError> {
        match change {
            Change::Transaction(changes) => transaction::make(self, at, changes),
            Change::Watch(watch) => watch.make(at, &mut transaction::Maker::lock(self), &self.log),
            change => transaction::Maker::make_one(self, at, change).map(|(line, _)| line),
        }
    }
}

impl transaction::Maker for Steer<'_> {
    /// One that replaces an NF is read under the status lock, built with
    /// it free, and swapped in under it again.
    fn make_one(&self, at: &mut Boundary<'_>, change: Change) -> Result<(String, Option<change::Restore>), ApiError> {
        for _ in 0..BUILD_TRIES {
            let Some(to_build) = change.to_build(&self.lock()) else {
                let mut status = self.lock();
                return change.make(at, Context { pipeline: self.pipeline, plan: self.plan, schedule: self.schedule, status: &mut status }).map(|line| (line, None));
            };
            let built = to_build.build()?;
            if let Some(result) = built.swap(at, &mut self.lock()) {
                return result.map(|(line, restore)| (line, Some(restore)));
            }
        }
        Err(ApiError::conflict(format!("routes were edited in place {BUILD_TRIES} times while this change was built: nothing was changed; send it again")))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().expect("no panic while it is held")
    }

    fn log(&self, line: &str) {
        (self.log)(line);
    }
}

impl Steering for Steer<'_> {
    fn at_boundary(&mut self, at: &mut Boundary<'_>) {
        for line in std::mem::take(&mut self.status.lock().expect("no panic while it is held").unrecorded) {
            at.note(line);
        }
        while let Ok(pending) = self.queued.try_recv() {
            if !pending.take() {
                continue;
            }
            let read = matches!(&pending.change, Change::Watch(w) if !w.changes());
            let result = self.make(at, pending.change);
            let line = result.as_ref().ok().filter(|_| !read).map(|change| change_line(&pending.caller, change));
            let mut status = self.status.lock().expect("no panic while it is held");
            if let Some(line) = &line {
                at.note(line.clone());
                status.log(line.clone());
                status.model = at.model().clone();
            }
            drop(status);
            // Logged with the status free: a slow log holds up no read.
            if let Some(line) = &line {
                (self.log)(line);
            }
            let _ = pending.reply.send(result);
        }
    }
}

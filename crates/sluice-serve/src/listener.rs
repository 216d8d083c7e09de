//! Where the control API listens: a Unix socket in the run directory
//! (mode 0600, the directory 0700), and a TCP address only when asked,
//! then only for requests that carry its token. A few threads per
//! listener answer reads from the status at once; a change waits for the
//! control thread to make it at the next period boundary.

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Sender, SyncSender};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};
use tiny_http::{Header, Response, Server};

use crate::api::{self, Read, Request};
use crate::error::ApiError;
use crate::change::{self, Change};
use crate::metrics;
use crate::status::Status;

/// The API's description, served at `GET /v1/openapi.json`.
pub const OPENAPI: &str = include_str!("../../../docs/api/openapi.json");

/// Name of the socket in the run directory.
pub const SOCKET: &str = "sluice.sock";

/// Threads answering each listener's requests.
const THREADS: usize = 4;

/// The largest request body (bytes): a million routes in one request fit.
const MAX_BODY: u64 = 64 << 20;

/// A change on its way to the control thread, with who asked and where
/// the outcome goes.
pub struct Pending {
    pub change: Change,
    pub caller: String,
    pub reply: SyncSender<Result<String, ApiError>>,
    /// Set by whichever side takes the change first: the control thread
    /// to make it, or the caller giving up waiting (then it is not made).
    pub taken: Arc<AtomicBool>,
}

impl Pending {
    /// Whether the control thread may make it (the caller still waits).
    pub fn take(&self) -> bool {
        !self.taken.swap(true, Ordering::AcqRel)
    }
}

/// Writes one change line to the operator's log.
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// What every request handler shares.
struct Shared {
    status: Arc<Mutex<Status>>,
    log: Log,
    changes: Mutex<Sender<Pending>>,
    /// The description the pipeline was started from.
    description: Value,
    /// How long a change may wait for its boundary.
    wait: Duration,
}

/// The running listeners.
pub struct Listener {
    servers: Vec<Arc<Server>>,
    threads: Vec<JoinHandle<()>>,
    socket: PathBuf,
}

impl Listener {
    /// Listens on `run_dir/sluice.sock` and, with `tcp` (address, token),
    /// on that address too.
    #[allow(clippy::too_many_arguments)]
    pub fn start(run_dir: &Path, tcp: Option<(&str, &str)>, status: Arc<Mutex<Status>>, changes: Sender<Pending>, description: Value, wait: Duration, log: Log) -> Result<Self, String> {
        let socket = unix_socket(run_dir)?;
        let unix = Server::http_unix(&socket).map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).map_err(|e| format!("{}: {e}", socket.display()))?;
        let shared = Arc::new(Shared { status, log, changes: Mutex::new(changes), description, wait });
        let mut listener = Self { servers: Vec::new(), threads: Vec::new(), socket };
        listener.spawn(Arc::new(unix), None, &shared, "unix")?;
        if let Some((addr, token)) = tcp {
            if token.len() < 16 {
                return Err(format!("the token for {addr} is {} characters long: at least 16 are needed", token.len()));
            }
            let server = Server::http(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            listener.spawn(Arc::new(server), Some(token.to_owned()), &shared, "tcp")?;
        }
        Ok(listener)
    }

    fn spawn(&mut self, server: Arc<Server>, token: Option<String>, shared: &Arc<Shared>, transport: &'static str) -> Result<(), String> {
        for i in 0..THREADS {
            let (server, shared, token) = (server.clone(), shared.clone(), token.clone());
            let thread = std::thread::Builder::new()
                .name(format!("sluice-api-{transport}-{i}"))
                .spawn(move || {
                    while let Ok(request) = server.recv() {
                        handle(request, &shared, token.as_deref(), transport);
                    }
                })
                .map_err(|e| format!("cannot start an API thread: {e}"))?;
            self.threads.push(thread);
        }
        self.servers.push(server);
        Ok(())
    }

    /// Stops listening, once the requests under way are answered, and
    /// removes the socket.
    pub fn stop(self) {
        for server in &self.servers {
            for _ in 0..THREADS {
                server.unblock();
            }
        }
        for t in self.threads {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The socket's path in `run_dir` (made 0700 if it is not there), a stale
/// socket removed; an error if a live one answers there.
fn unix_socket(run_dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(run_dir).map_err(|e| format!("run directory {}: {e}", run_dir.display()))?;
    std::fs::set_permissions(run_dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| format!("run directory {}: {e}", run_dir.display()))?;
    let socket = run_dir.join(SOCKET);
    if socket.exists() {
        if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
            return Err(format!("{} answers: another sluice serve runs in {}", socket.display(), run_dir.display()));
        }
        std::fs::remove_file(&socket).map_err(|e| format!("stale socket {}: {e}", socket.display()))?;
    }
    Ok(socket)
}

fn respond(request: tiny_http::Request, status: u16, body: String, content_type: &str) {
    let header = Header::from_bytes("Content-Type", content_type).expect("a valid header");
    let _ = request.respond(Response::from_string(body).with_status_code(status).with_header(header));
}

fn respond_json(request: tiny_http::Request, status: u16, body: &Value) {
    respond(request, status, body.to_string(), "application/json");
}

fn refuse(request: tiny_http::Request, e: &ApiError) {
    respond(request, e.status, e.body(), "application/json");
}

/// Whether `request` carries `token` as `Authorization: Bearer TOKEN`.
fn authorised(request: &tiny_http::Request, token: &str) -> bool {
    let expected = format!("Bearer {token}");
    request.headers().iter().any(|h| h.field.equiv("Authorization") && constant_time_eq(h.value.as_str().as_bytes(), expected.as_bytes()))
}

/// Byte strings compared in time that depends on their length only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn handle(mut request: tiny_http::Request, shared: &Shared, token: Option<&str>, transport: &str) {
    if let Some(token) = token {
        if !authorised(&request, token) {
            return refuse(request, &ApiError { status: 401, message: "this listener needs 'Authorization: Bearer <token>'".into() });
        }
    }
    let mut body = String::new();
    let read = request.as_reader().take(MAX_BODY + 1).read_to_string(&mut body);
    if read.is_err() {
        return refuse(request, &ApiError::bad("the body is not UTF-8 text"));
    }
    if body.len() as u64 > MAX_BODY {
        return refuse(request, &ApiError { status: 413, message: format!("the body is over {MAX_BODY} bytes") });
    }
    let caller = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("X-Sluice-Caller"))
        .map(|h| h.value.as_str().chars().filter(|c| c.is_ascii_graphic()).take(64).collect::<String>())
        .unwrap_or_else(|| request.remote_addr().map_or_else(|| transport.to_owned(), |a| format!("{transport}:{a}")));
    let parsed = {
        let status = shared.status.lock().expect("no panic while it is held");
        api::parse(request.method().as_str(), request.url(), &body, &status)
    };
    match parsed {
        Err(e) => refuse(request, &e),
        Ok(Request::Read(Read::Metrics)) => {
            let text = metrics::exposition(&shared.status.lock().expect("no panic while it is held"));
            respond(request, 200, text, metrics::CONTENT_TYPE);
        }
        Ok(Request::Read(Read::OpenApi)) => respond(request, 200, OPENAPI.to_owned(), "application/json"),
        Ok(Request::Read(Read::Pipeline)) => {
            let status = shared.status.lock().expect("no panic while it is held");
            let body = json!({"name": shared.description["name"], "description": shared.description, "batch_size": status.model.batch_size, "workers": status.model.workers()});
            drop(status);
            respond_json(request, 200, &body);
        }
        Ok(Request::Read(read)) => {
            let status = shared.status.lock().expect("no panic while it is held");
            let body = match read {
                Read::Flows => status.flows_json(),
                Read::Modules => status.modules_json(),
                Read::Workers => status.workers_json(),
                Read::Controller => status.controller_json(),
                Read::Changes => json!(status.changes),
                Read::Egress => status.egress_json().unwrap_or_default(),
                Read::Config(m) => config_json(&status, m),
                Read::Neighbors => status.neighbors_json(),
                Read::Metrics | Read::OpenApi | Read::Pipeline => unreachable!("answered above"),
            };
            drop(status);
            respond_json(request, 200, &body);
        }
        Ok(Request::Change(Change::Routes { module, add, delete })) if !add.is_empty() || !delete.is_empty() => {
            let (in_place, line) = {
                let mut status = shared.status.lock().expect("no panic while it is held");
                let made = change::routes_in_place(&mut status, module, &add, &delete);
                let line = made.as_ref().and_then(|m| m.as_ref().ok()).map(|change| change_line(&caller, change));
                if let Some(line) = &line {
                    status.log(line.clone());
                    status.unrecorded.push(line.clone());
                }
                (made, line)
            };
            // Logged with the status free: a slow log holds up no read and no period.
            if let Some(line) = &line {
                (shared.log)(line);
            }
            match in_place {
                Some(Ok(line)) => respond_json(request, 200, &json!({ "applied": line })),
                Some(Err(e)) => refuse(request, &e),
                None => queue(request, shared, Change::Routes { module, add, delete }, caller),
            }
        }
        Ok(Request::Change(change)) => queue(request, shared, change, caller),
    }
}

/// Queues `change` for the control thread's next period boundary and
/// answers with its outcome.
fn queue(request: tiny_http::Request, shared: &Shared, change: Change, caller: String) {
    let (reply, outcome) = sync_channel(1);
    let taken = Arc::new(AtomicBool::new(false));
    let sent = shared.changes.lock().expect("no panic while it is held").send(Pending { change, caller, reply, taken: taken.clone() });
    let stopping = || ApiError { status: 503, message: "the pipeline is stopping: no changes are made".into() };
    let result = match sent {
        Err(_) => Err(stopping()),
        Ok(()) => match outcome.recv_timeout(shared.wait) {
            Ok(result) => result,
            // Given up before the control thread took it: never made.
            Err(_) if !taken.swap(true, Ordering::AcqRel) => Err(ApiError { status: 503, message: format!("no period boundary came within {:?} (or the pipeline is stopping): nothing was changed", shared.wait) }),
            // Taken meanwhile: its outcome comes.
            Err(_) => outcome.recv().unwrap_or_else(|_| Err(stopping())),
        },
    };
    match result {
        Ok(line) => respond_json(request, 200, &json!({ "applied": line })),
        Err(e) => refuse(request, &e),
    }
}

/// The line that logs a change: time, caller, what changed.
pub fn change_line(caller: &str, change: &str) -> String {
    format!("{} caller={caller} {change}", humantime::format_rfc3339_seconds(std::time::SystemTime::now()))
}

/// An NF's configuration in force, as `PUT …/config` takes it (its fields, no "type").
fn config_json(status: &Status, m: usize) -> Value {
    let mut v = serde_json::to_value(status.config(m).expect("checked when parsed")).unwrap_or(Value::Null);
    if let Some(fields) = v.as_object_mut() {
        fields.remove("type");
    }
    v
}

//! Where the control API listens: a Unix socket in the run directory
//! (see `run_dir.rs`), and a TCP address on loopback only when asked, then
//! only for requests that carry its token. Each connection is read within
//! bounds (`http.rs`) by one of a bounded number of threads
//! (`server.rs`): the token is checked before the body is read, the body
//! is decoded before the status is locked, and reads hold the lock only
//! to copy what they answer with; a change waits for the control thread
//! to make it at the next period boundary.

use std::net::{TcpListener, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use crate::api::{self, Body, Read, Request};
use crate::change::{self, Change};
use crate::error::ApiError;
use crate::http::{self, Conn};
use crate::metrics;
use crate::server::{self, Socket};
use crate::status::Status;

/// The API's description, served at `GET /v1/openapi.json`.
pub const OPENAPI: &str = include_str!("../../../docs/api/openapi.json");

/// Name of the socket in the run directory.
pub const SOCKET: &str = "sluice.sock";

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
    /// How long a change may wait for its boundary.
    wait: Duration,
}

/// The running listeners.
pub struct Listener {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    socket: PathBuf,
}

impl Listener {
    /// Listens on `run_dir/sluice.sock` and, with `tcp` (address, token),
    /// on that address too.
    #[allow(clippy::too_many_arguments)]
    pub fn start(run_dir: &Path, tcp: Option<(&str, &str)>, status: Arc<Mutex<Status>>, changes: Sender<Pending>, wait: Duration, log: Log) -> Result<Self, String> {
        let tcp = tcp.map(|(addr, token)| loopback(addr, token).map(|l| (l, token.to_owned()))).transpose()?;
        let run_dir = crate::run_dir::prepare(run_dir)?;
        let (unix, socket) = crate::run_dir::listen(&run_dir, SOCKET)?;
        let shared = Arc::new(Shared { status, log, changes: Mutex::new(changes), wait });
        let stop = Arc::new(AtomicBool::new(false));
        let mut listener = Self { stop: stop.clone(), threads: Vec::new(), socket };
        let served = |token: Option<String>, transport: &'static str| -> server::Converse {
            let shared = shared.clone();
            Arc::new(move |conn: &mut dyn Conn, peer: &str, stopping: &dyn Fn() -> bool| converse(conn, peer, &shared, token.as_deref(), transport, stopping))
        };
        listener.threads.push(server::spawn(Socket::Unix(unix), "sluice-api-unix".into(), served(None, "unix"), stop.clone())?);
        if let Some((tcp, token)) = tcp {
            listener.threads.push(server::spawn(Socket::Tcp(tcp), "sluice-api-tcp".into(), served(Some(token), "tcp"), stop)?);
        }
        Ok(listener)
    }

    /// Stops listening, once the requests under way are answered (a
    /// client still sending is let go), and removes the socket.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        for t in self.threads {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Listens on `addr` for requests carrying `token`: on loopback only, as
/// the token would cross the network in clear text.
fn loopback(addr: &str, token: &str) -> Result<TcpListener, String> {
    if token.len() < 16 {
        return Err(format!("the token for {addr} is {} characters long: at least 16 are needed", token.len()));
    }
    let addresses: Vec<_> = addr.to_socket_addrs().map_err(|e| format!("--listen {addr}: {e}"))?.collect();
    if let Some(open) = addresses.iter().find(|a| !a.ip().is_loopback()) {
        return Err(format!("--listen {addr}: {} is not a loopback address; the API has no TLS, so its token would cross the network in clear text: listen on 127.0.0.1 or ::1 and reach it from elsewhere through an SSH tunnel or a TLS proxy", open.ip()));
    }
    TcpListener::bind(&addresses[..]).map_err(|e| format!("cannot listen on {addr}: {e}"))
}

/// Reads one request from `conn` within bounds and answers it.
fn converse(conn: &mut dyn Conn, peer: &str, shared: &Shared, token: Option<&str>, transport: &str, stopping: &dyn Fn() -> bool) {
    let refuse = |conn: &mut dyn Conn, e: &ApiError, extra: &str| http::respond(conn, e.status, "application/json", extra, &e.body());
    let head = match http::read_head(conn, http::HEAD_TIME, stopping) {
        Ok(head) => head,
        Err(Some(e)) => return refuse(conn, &e, ""),
        Err(None) => return,
    };
    if let Some(token) = token {
        if !http::authorised(&head, token) {
            let e = ApiError { status: 401, message: "this listener needs 'Authorization: Bearer <token>'".into() };
            return refuse(conn, &e, "WWW-Authenticate: Bearer\r\n");
        }
    }
    let caller = head
        .header("X-Sluice-Caller")
        .map(|v| v.chars().filter(|c| c.is_ascii_graphic()).take(64).collect::<String>())
        .unwrap_or_else(|| if peer.is_empty() { transport.to_owned() } else { format!("{transport}:{peer}") });
    let (method, target) = (head.method.clone(), head.target.clone());
    let limit = api::body_limit(&method, &target);
    let text = match http::read_body(conn, head, limit, http::BODY_TIME, stopping) {
        Ok(text) => text,
        Err(Some(e)) => return refuse(conn, &e, ""),
        Err(None) => return,
    };
    let body = Body::decode(&method, &target, &text);
    drop(text);
    let answer = handle(&method, &target, body, caller, shared);
    http::respond(conn, answer.status, answer.content_type, "", &answer.body);
}

/// What a request is answered with.
struct Answer {
    status: u16,
    content_type: &'static str,
    body: String,
}

impl Answer {
    fn json(body: &Value) -> Self {
        Self { status: 200, content_type: "application/json", body: body.to_string() }
    }

    fn refused(e: &ApiError) -> Self {
        Self { status: e.status, content_type: "application/json", body: e.body() }
    }

    fn applied(result: Result<String, ApiError>) -> Self {
        match result {
            Ok(line) => Self::json(&json!({ "applied": line })),
            Err(e) => Self::refused(&e),
        }
    }
}

/// Answers `method` `target` with its decoded `body`: a read from the
/// status, a route change made in place, or a change queued for the
/// control thread.
fn handle(method: &str, target: &str, body: Body, caller: String, shared: &Shared) -> Answer {
    let locked = || shared.status.lock().expect("no panic while it is held");
    let parsed = api::parse(method, target, body, &locked());
    match parsed {
        Err(e) => Answer::refused(&e),
        Ok(Request::Read(Read::Metrics)) => {
            let text = metrics::exposition(&locked());
            Answer { status: 200, content_type: metrics::CONTENT_TYPE, body: text }
        }
        Ok(Request::Read(Read::OpenApi)) => Answer { status: 200, content_type: "application/json", body: OPENAPI.to_owned() },
        Ok(Request::Read(Read::Pipeline)) => {
            let body = locked().pipeline_json();
            Answer::json(&body)
        }
        Ok(Request::Read(read)) => {
            let status = locked();
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
            Answer::json(&body)
        }
        Ok(Request::Change(Change::Routes { module, edit })) if !edit.is_empty() => {
            let (in_place, line) = {
                let mut status = locked();
                let made = change::routes_in_place(&mut status, module, &edit);
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
                Some(result) => Answer::applied(result),
                None => queue(shared, Change::Routes { module, edit }, caller),
            }
        }
        Ok(Request::Change(Change::Watch(watch))) if !watch.changes() => match queue_at_boundary(shared, Change::Watch(watch), caller) {
            Ok(text) => Answer { status: 200, content_type: "application/json", body: text },
            Err(e) => Answer::refused(&e),
        },
        Ok(Request::Change(change)) => queue(shared, change, caller),
    }
}

/// Queues `change` for the control thread's next period boundary and
/// answers with its outcome.
fn queue(shared: &Shared, change: Change, caller: String) -> Answer {
    Answer::applied(queue_at_boundary(shared, change, caller))
}

/// Queues `change` for the control thread's next period boundary and
/// waits for its outcome.
fn queue_at_boundary(shared: &Shared, change: Change, caller: String) -> Result<String, ApiError> {
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
    result
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

//! A listening socket served by at most [`MAX_CONNECTIONS`] threads, one
//! per connection: a client past the bound is answered 503 at once and
//! let go, so that slow clients hold up no one but themselves, and a
//! flood of connections costs a bounded number of threads. Stopping is
//! seen within [`POLL`] by the accepting thread and every connection's.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::http::{self, Conn};

/// Connections served at once per listening socket.
pub const MAX_CONNECTIONS: usize = 16;

/// The longest a write of an answer waits for a client that does not read.
const WRITE_TIME: Duration = Duration::from_secs(10);

/// How long the accepting thread waits for a connection before it looks
/// at whether the server stops.
const POLL: Duration = Duration::from_millis(100);

/// A listening socket.
pub enum Socket {
    Unix(UnixListener),
    Tcp(TcpListener),
}

impl Socket {
    fn fd(&self) -> RawFd {
        match self {
            Socket::Unix(l) => l.as_raw_fd(),
            Socket::Tcp(l) => l.as_raw_fd(),
        }
    }

    /// The next connection and who it is from, if one waits.
    fn accept(&self) -> std::io::Result<(Box<dyn Conn>, String)> {
        match self {
            Socket::Unix(l) => l.accept().and_then(|(s, _)| {
                s.set_nonblocking(false)?;
                s.set_write_timeout(Some(WRITE_TIME))?;
                Ok((Box::new(s) as Box<dyn Conn>, String::new()))
            }),
            Socket::Tcp(l) => l.accept().and_then(|(s, peer)| {
                s.set_nonblocking(false)?;
                s.set_write_timeout(Some(WRITE_TIME))?;
                s.set_nodelay(true)?;
                Ok((Box::new(s) as Box<dyn Conn>, peer.to_string()))
            }),
        }
    }
}

/// Answers one connection: the connection, its peer ("" on a Unix
/// socket), and whether the server stops.
pub type Converse = Arc<dyn Fn(&mut dyn Conn, &str, &dyn Fn() -> bool) + Send + Sync>;

/// Whether `fd` has a connection waiting within `timeout`.
fn readable(fd: RawFd, timeout: Duration) -> bool {
    let mut poll = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    unsafe { libc::poll(&mut poll, 1, ms) > 0 }
}

/// Serves `socket` on a thread named `name` until `stop` is set; the
/// thread ends once every connection's has.
pub fn spawn(socket: Socket, name: String, converse: Converse, stop: Arc<AtomicBool>) -> Result<JoinHandle<()>, String> {
    match &socket {
        Socket::Unix(l) => l.set_nonblocking(true),
        Socket::Tcp(l) => l.set_nonblocking(true),
    }
    .map_err(|e| format!("{name}: {e}"))?;
    let thread = std::thread::Builder::new().name(name.clone());
    thread.spawn(move || accept_until_stopped(&socket, &name, &converse, &stop)).map_err(|e| format!("cannot start an API thread: {e}"))
}

fn accept_until_stopped(socket: &Socket, name: &str, converse: &Converse, stop: &Arc<AtomicBool>) {
    let mut serving: Vec<JoinHandle<()>> = Vec::new();
    while !stop.load(Ordering::Acquire) {
        if !readable(socket.fd(), POLL) {
            continue;
        }
        let (mut conn, peer) = match socket.accept() {
            Ok(c) => c,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => continue,
            // Out of descriptors or memory: wait for some to be given back.
            Err(_) => {
                std::thread::sleep(POLL);
                continue;
            }
        };
        serving.retain(|t| !t.is_finished());
        if serving.len() >= MAX_CONNECTIONS {
            let body = crate::error::ApiError { status: 503, message: format!("{MAX_CONNECTIONS} connections are being served: try again") }.body();
            http::respond(conn.as_mut(), 503, "application/json", "Retry-After: 1\r\n", &body);
            continue;
        }
        let (converse, stop) = (converse.clone(), stop.clone());
        let thread = std::thread::Builder::new().name(format!("{name}-conn")).spawn(move || converse(conn.as_mut(), &peer, &|| stop.load(Ordering::Acquire)));
        if let Ok(t) = thread {
            serving.push(t);
        }
    }
    for t in serving {
        let _ = t.join();
    }
}

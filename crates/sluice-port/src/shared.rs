//! A device queue that the ports of this process share. A pipeline that
//! forwards back out of the interface it receives on has a receive port
//! and transmit ports (one per egress) on one queue, and a queue takes one
//! socket (AF_XDP) or one configuration (DPDK): the first port to attach
//! opens it with what every side that joined needs, the others use it.
//! The receive side and the transmit side each use their own rings; the
//! transmitting ports share theirs, so they must run on one worker.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::error::{Error, Result};

/// Which side of a queue a port is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// Receives: one port per queue.
    Receive,
    /// Transmits: any number of ports of one worker.
    Transmit,
}

/// The queues of one backend that ports have open.
pub type Registry<D> = Mutex<Vec<Weak<Shared<D>>>>;

/// One queue of a device and what was opened on it (`D`: a socket, a configured port).
pub struct Shared<D> {
    device: String,
    queue: u32,
    receives: AtomicBool,
    transmits: AtomicBool,
    opened: Mutex<Option<Arc<D>>>,
    /// The worker whose ports transmit here, once one has attached.
    transmitter: Mutex<Option<usize>>,
}

/// A port's place on a shared queue: its side, left when it is dropped.
pub struct Joined<D> {
    queue: Arc<Shared<D>>,
    side: Side,
}

impl<D> Joined<D> {
    /// What is open on the queue (see [`Shared::get`]), for port `port` on worker `worker`.
    pub fn get(&self, port: &str, worker: usize, open: impl FnOnce(bool, bool) -> Result<D>) -> Result<Arc<D>> {
        self.queue.get(port, self.side, worker, open)
    }
}

impl<D> Drop for Joined<D> {
    /// A receiving port leaves its place to another (transmitting ports share theirs).
    fn drop(&mut self) {
        if self.side == Side::Receive {
            self.queue.receives.store(false, Ordering::Relaxed);
        }
    }
}

/// Queues of `device` that ports of `registry` have joined: the highest one's number and one (at least one).
#[cfg_attr(not(dpdk), allow(dead_code))]
pub fn queues_joined<D>(registry: &Registry<D>, device: &str) -> u32 {
    let open = registry.lock().expect("no port panics while holding the list");
    open.iter().filter_map(Weak::upgrade).filter(|s| s.device == device).map(|s| s.queue + 1).max().unwrap_or(1)
}

impl<D> Shared<D> {
    /// Joins queue `queue` of `device` as port `port` on `side`, with the
    /// ports of `registry` that have it open already.
    pub fn join(registry: &Registry<D>, port: &str, device: &str, queue: u32, side: Side) -> Result<Joined<D>> {
        let mut open = registry.lock().expect("no port panics while holding the list");
        open.retain(|s| s.strong_count() > 0);
        let shared = match open.iter().filter_map(Weak::upgrade).find(|s| s.device == device && s.queue == queue) {
            Some(s) => s,
            None => {
                let s = Arc::new(Self {
                    device: device.into(),
                    queue,
                    receives: AtomicBool::new(false),
                    transmits: AtomicBool::new(false),
                    opened: Mutex::new(None),
                    transmitter: Mutex::new(None),
                });
                open.push(Arc::downgrade(&s));
                s
            }
        };
        match side {
            Side::Receive if shared.receives.swap(true, Ordering::Relaxed) => {
                return Err(Error::Name { port: port.into(), reason: format!("another port of this pipeline receives on queue {queue} of '{device}' already") })
            }
            Side::Receive => {}
            Side::Transmit => shared.transmits.store(true, Ordering::Relaxed),
        }
        Ok(Joined { queue: shared, side })
    }

    /// What is open on the queue, opened by `open(receive, transmit)` (the
    /// sides that joined) if this is the first port to ask; port `port`
    /// asks on `side` from worker `worker`.
    fn get(&self, port: &str, side: Side, worker: usize, open: impl FnOnce(bool, bool) -> Result<D>) -> Result<Arc<D>> {
        if side == Side::Transmit {
            let mut transmitter = self.transmitter.lock().expect("no port panics while holding its queue");
            match *transmitter {
                Some(w) if w != worker => {
                    return Err(Error::Name {
                        port: port.into(),
                        reason: format!("ports on workers {w} and {worker} transmit on queue {} of '{}': they share its ring, so they must share a worker", self.queue, self.device),
                    })
                }
                _ => *transmitter = Some(worker),
            }
        }
        let mut opened = self.opened.lock().expect("no port panics while holding its queue");
        if let Some(d) = opened.as_ref() {
            return Ok(d.clone());
        }
        let d = Arc::new(open(self.receives.load(Ordering::Relaxed), self.transmits.load(Ordering::Relaxed))?);
        *opened = Some(d.clone());
        Ok(d)
    }
}

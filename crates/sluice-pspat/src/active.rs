//! Which clients have work, so that a scan visits only those (PSPAT's
//! per-CPU client lists, §4.3): one bit per client. A client sets its bit
//! after a push if it finds it clear; the arbiter clears the bit of a
//! client whose mailbox it found empty for [`RETIRE_NS`].
//!
//! Clearing races a push: the client may have read its bit as set just
//! before the arbiter cleared it, while its packet was not yet visible to
//! the arbiter. The kernel's per-CPU lists avoid that by having the client
//! alone write its CPU's list; here the arbiter settles it after clearing,
//! with `membarrier` (a full barrier on every thread of the process): after
//! it, either the arbiter sees the packet (and sets the bit again) or the
//! client sees its bit clear (and sets it). The client's push stays a
//! plain store and a load. Without `membarrier` no client is retired: a
//! scan visits every client, as before.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How long a client's mailbox stays empty before its bit is cleared (ns):
/// long enough that a paced client is not retired between its packets,
/// so the barriers stay rare (at most one per client per this time).
pub const RETIRE_NS: u64 = 1_000_000;

/// The bits of every client, 64 to a word.
pub(crate) struct ActiveSet {
    words: Arc<[AtomicU64]>,
    /// Per client, when its mailbox last had work (ns, the arbiter's clock).
    worked_ns: Vec<u64>,
    /// Clients whose bits the current scan cleared (capacity: every client).
    retired: Vec<usize>,
    /// Whether `membarrier` can settle a clearing (else none is cleared).
    can_retire: bool,
}

/// A client's bit.
pub(crate) struct Mark {
    words: Arc<[AtomicU64]>,
    word: usize,
    bit: u64,
}

impl Mark {
    /// Says the client has work: after a push.
    #[inline]
    pub(crate) fn set(&self) {
        // Orders the push's Release store of the packet (its mailbox slot)
        // before this Relaxed load of the bit. Against the compiler only:
        // the CPU's side of the pair is the arbiter's `membarrier`, a full
        // barrier on this thread, issued after it clears a bit and before
        // it looks at the mailbox again (see `ActiveSet::settle`). Either
        // the arbiter then sees the packet, or this load sees the bit clear.
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        let w = &self.words[self.word];
        if w.load(Ordering::Relaxed) & self.bit == 0 {
            w.fetch_or(self.bit, Ordering::Release);
        }
    }
}

impl ActiveSet {
    /// The set of `clients` clients, every one active, and their marks.
    pub(crate) fn new(clients: usize) -> (Self, Vec<Mark>) {
        let words: Arc<[AtomicU64]> = (0..clients.div_ceil(64)).map(|w| AtomicU64::new(bits_of_word(w, clients))).collect();
        let marks = (0..clients).map(|c| Mark { words: words.clone(), word: c / 64, bit: 1 << (c % 64) }).collect();
        let set = Self { words, worked_ns: vec![0; clients], retired: Vec::with_capacity(clients), can_retire: membarrier::register() };
        (set, marks)
    }

    /// Calls `visit` on every active client, in order; `visit` returns
    /// whether the client had work. Clients without work for
    /// [`RETIRE_NS`] by `now_ns` are retired: call [`Self::settle`] next.
    /// Returns how many clients were visited.
    #[inline]
    pub(crate) fn visit(&mut self, now_ns: u64, mut visit: impl FnMut(usize) -> bool) -> u64 {
        let mut visited = 0;
        for (w, word) in self.words.iter().enumerate() {
            let mut bits = word.load(Ordering::Acquire);
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let c = w * 64 + b;
                visited += 1;
                if visit(c) {
                    self.worked_ns[c] = now_ns;
                } else if self.can_retire && now_ns.saturating_sub(self.worked_ns[c]) >= RETIRE_NS {
                    word.fetch_and(!(1 << b), Ordering::Relaxed);
                    self.retired.push(c);
                }
            }
        }
        visited
    }

    /// After a visit that retired clients: the barrier, then each retired
    /// client that `has_work` (its packet arrived meanwhile) set active again.
    #[inline]
    pub(crate) fn settle(&mut self, now_ns: u64, has_work: impl Fn(usize) -> bool) {
        if !self.retired.is_empty() {
            self.settle_retired(now_ns, has_work);
        }
    }

    #[cold]
    fn settle_retired(&mut self, now_ns: u64, has_work: impl Fn(usize) -> bool) {
        membarrier::all_threads();
        for c in self.retired.drain(..) {
            if has_work(c) {
                self.words[c / 64].fetch_or(1 << (c % 64), Ordering::Relaxed);
                self.worked_ns[c] = now_ns;
            }
        }
    }
}

/// The bits of word `w` with every one of `clients` clients set.
fn bits_of_word(w: usize, clients: usize) -> u64 {
    let n = clients.saturating_sub(w * 64).min(64);
    if n == 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// The `membarrier` system call's private expedited barrier (Linux ≥ 4.14).
mod membarrier {
    const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;
    const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;

    /// Registers the process for the barrier; false where the kernel has none.
    pub(super) fn register() -> bool {
        // SAFETY: the system call takes a command and flags and touches no memory of ours.
        unsafe { libc::syscall(libc::SYS_membarrier, REGISTER_PRIVATE_EXPEDITED, 0) == 0 }
    }

    /// A full memory barrier on every running thread of the process.
    pub(super) fn all_threads() {
        // SAFETY: as above; the process registered before any client was retired.
        let rc = unsafe { libc::syscall(libc::SYS_membarrier, PRIVATE_EXPEDITED, 0) };
        assert_eq!(rc, 0, "membarrier after registering: {}", std::io::Error::last_os_error());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Says that the calling test did not run, and why, on the terminal
    /// itself: the harness shows a passing test's own output to no one.
    fn skipped(why: &str) {
        use std::io::Write;
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {why}");
    }

    #[test]
    fn idle_clients_are_retired_and_a_push_brings_one_back() {
        let (mut set, marks) = ActiveSet::new(70);
        if !set.can_retire {
            return skipped("no membarrier here: no client is retired");
        }
        let working = |c: usize| c == 3 || c == 66;
        let scan = |set: &mut ActiveSet, now_ns: u64| {
            let visited = set.visit(now_ns, working);
            set.settle(now_ns, |_| false);
            visited
        };
        // At first every client is visited; they all worked at 0.
        assert_eq!(scan(&mut set, 0), 70);
        assert_eq!(scan(&mut set, RETIRE_NS), 70, "retired in this scan, after it is visited");
        assert_eq!(scan(&mut set, RETIRE_NS + 1), 2, "only the clients with work");
        marks[40].set();
        let mut seen = Vec::new();
        assert_eq!(set.visit(RETIRE_NS + 2, |c| { seen.push(c); working(c) }), 3);
        assert_eq!(seen, [3, 40, 66], "in client order");
    }

    #[test]
    fn a_packet_that_came_while_its_client_was_retired_brings_it_back() {
        let (mut set, _marks) = ActiveSet::new(4);
        if !set.can_retire {
            return skipped("no membarrier here: no client is retired");
        }
        // Client 2 looked empty at its visit, but after the barrier its mailbox holds a packet.
        assert_eq!(set.visit(RETIRE_NS, |_| false), 4);
        set.settle(RETIRE_NS, |c| c == 2);
        assert_eq!(set.visit(RETIRE_NS + 1, |_| false), 1, "client 2 alone");
    }
}

//! Long work done with the GIL released stops when Python has a signal to
//! raise (Ctrl-C, SIGTERM): it looks now and then, keeps the signal's
//! exception, and the binding raises it once the work has ended.

use std::io::{Read, Result, Write};
use std::sync::Mutex;

use pyo3::prelude::*;

/// Whether Python has a signal to raise; if so its exception goes into
/// `raised`. Takes the GIL for a moment.
pub fn signal_pending(raised: &Mutex<Option<PyErr>>) -> bool {
    match Python::with_gil(|py| py.check_signals()) {
        Ok(()) => false,
        Err(e) => {
            *raised.lock().expect("no panic while it is held") = Some(e);
            true
        }
    }
}

/// Bytes moved between two looks for a pending signal.
const CHECK_EVERY_BYTES: usize = 1 << 20;

/// A file read or written in one long pass, whose reads or writes fail
/// once a signal is pending (the signal's exception in `raised`).
pub struct Stoppable<T> {
    inner: T,
    /// Bytes moved since the last look.
    unchecked: usize,
    /// The exception of the signal that stopped the pass.
    pub raised: Mutex<Option<PyErr>>,
}

impl<T> Stoppable<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Self { inner, unchecked: 0, raised: Mutex::new(None) }
    }

    /// Counts `n` bytes moved; every [`CHECK_EVERY_BYTES`], fails if a signal is pending.
    fn moved(&mut self, n: usize) -> Result<usize> {
        self.unchecked += n;
        if self.unchecked >= CHECK_EVERY_BYTES {
            self.unchecked = 0;
            if signal_pending(&self.raised) {
                return Err(std::io::Error::other("stopped by a signal"));
            }
        }
        Ok(n)
    }
}

impl<R: Read> Read for Stoppable<R> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = self.inner.read(buf)?;
        self.moved(n)
    }
}

impl<W: Write> Write for Stoppable<W> {
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        let n = self.inner.write(buf)?;
        self.moved(n)
    }

    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
}

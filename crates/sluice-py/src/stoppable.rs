//! A file read or written in one long pass that stops when Python has a
//! signal to raise (Ctrl-C, SIGTERM): the pass fails with an I/O error
//! within a moment, and the signal's exception is kept for the caller.

use std::io::{Read, Result, Write};

use pyo3::prelude::*;

/// Bytes moved between two looks for a pending signal (a look takes the GIL).
const CHECK_EVERY_BYTES: usize = 1 << 20;

/// `inner`, failing its reads or writes once a signal is pending.
pub struct Stoppable<T> {
    inner: T,
    /// Bytes moved since the last look.
    unchecked: usize,
    /// The exception of the signal that stopped the pass.
    pub raised: Option<PyErr>,
}

impl<T> Stoppable<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Self { inner, unchecked: 0, raised: None }
    }

    /// Counts `n` bytes moved; every [`CHECK_EVERY_BYTES`], fails if a signal is pending.
    fn moved(&mut self, n: usize) -> Result<usize> {
        self.unchecked += n;
        if self.unchecked >= CHECK_EVERY_BYTES {
            self.unchecked = 0;
            if let Err(e) = Python::with_gil(|py| py.check_signals()) {
                self.raised = Some(e);
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

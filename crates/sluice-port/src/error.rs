//! Errors of opening a port.

/// Result with the port [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a port could not be opened; every message names the port.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A port name that does not parse or names a backend not built here.
    #[error("port '{port}': {reason}")]
    Name {
        /// The name as given.
        port: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The operating system refused a step of opening the port.
    #[error("port '{port}': {step}: {source}")]
    Os {
        /// The port.
        port: String,
        /// What was being done.
        step: &'static str,
        /// The error the system returned.
        source: std::io::Error,
    },
    /// A ring setting out of range.
    #[error("port '{port}': {reason}")]
    Ring {
        /// The port.
        port: String,
        /// What is wrong.
        reason: String,
    },
}

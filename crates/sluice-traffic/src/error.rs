//! Errors of traffic configuration and capture files.

/// Result with the traffic [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why traffic could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A template field that does not parse.
    #[error("packet template: {0}")]
    Template(String),
    /// A capture file that cannot be read.
    #[error("pcap file '{path}': {reason}")]
    Pcap {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A source setting out of range.
    #[error("source: {0}")]
    Source(String),
}

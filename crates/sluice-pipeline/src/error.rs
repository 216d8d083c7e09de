//! Errors of pipeline descriptions.

/// Result with the pipeline [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a pipeline description was refused or could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The description is refused: the message names the field's path.
    #[error("pipeline description: {0}")]
    Spec(String),
    /// The graph, a flow or a module setting is invalid.
    #[error(transparent)]
    Core(#[from] sluice_core::Error),
    /// Traffic could not be set up.
    #[error(transparent)]
    Traffic(#[from] sluice_traffic::Error),
    /// A port could not be opened.
    #[error(transparent)]
    Port(#[from] sluice_port::Error),
    /// The profiler was asked for an NF kind it has no setup for.
    #[error("profiler: {0}")]
    Profile(String),
    /// Work ended early because it was asked to stop.
    #[error("stopped")]
    Stopped,
}

//! The one error type of the core: configuration problems named precisely.

/// Result with the core's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a pipeline was refused. Every variant names the module, gate or flow at fault.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// B outside 1..=MAX_BURST.
    #[error("batch size {0} is out of range 1..=256")]
    BatchSize(usize),
    /// Two modules with one name.
    #[error("module '{0}' is declared twice")]
    DuplicateModule(String),
    /// Two flows with one name.
    #[error("flow '{0}' is declared twice")]
    DuplicateFlow(String),
    /// A name that no module has.
    #[error("{context} names unknown module '{name}'")]
    UnknownModule {
        /// The missing module's name.
        name: String,
        /// Where it was named.
        context: String,
    },
    /// An edge leaves from an outgate the module does not have.
    #[error("module '{module}' has no outgate {gate} (it has {count})")]
    NoSuchOutgate {
        /// Module name.
        module: String,
        /// Gate asked for.
        gate: usize,
        /// Outgates it has.
        count: usize,
    },
    /// An edge enters an ingate the module does not have.
    #[error("module '{module}' has no ingate {gate} (it has {count})")]
    NoSuchIngate {
        /// Module name.
        module: String,
        /// Gate asked for.
        gate: usize,
        /// Ingates it has.
        count: usize,
    },
    /// An outgate connected twice.
    #[error("module '{module}' outgate {gate} is connected twice")]
    GateTaken {
        /// Module name.
        module: String,
        /// The gate.
        gate: usize,
    },
    /// An outgate connected to nothing.
    #[error("module '{module}' outgate {gate} is dangling: connect it to a module")]
    DanglingGate {
        /// Module name.
        module: String,
        /// The gate.
        gate: usize,
    },
    /// A module that no edge enters (and that is no source).
    #[error("module '{0}' is unconnected: no edge enters it")]
    Unconnected(String),
    /// A directed cycle, which a run-to-completion task cannot execute.
    #[error("cycle through module '{0}': a run-to-completion task must be acyclic")]
    Cycle(String),
    /// A module reached from tasks on two different workers.
    #[error("module '{module}' is reached from workers {a} and {b}; place it on one of them")]
    SharedAcrossWorkers {
        /// Module name.
        module: String,
        /// One worker.
        a: usize,
        /// The other worker.
        b: usize,
    },
    /// A problem with one flow.
    #[error("flow '{flow}': {reason}")]
    Flow {
        /// Flow name.
        flow: String,
        /// What is wrong.
        reason: String,
    },
    /// A problem with the pipeline as a whole (its size, its workers).
    #[error("pipeline: {0}")]
    Pipeline(String),
    /// A problem with one module's settings.
    #[error("module '{module}': {reason}")]
    Module {
        /// Module name.
        module: String,
        /// What is wrong.
        reason: String,
    },
}

impl Error {
    #[cold]
    pub(crate) fn flow(flow: &str, reason: impl Into<String>) -> Self {
        Error::Flow { flow: flow.to_owned(), reason: reason.into() }
    }

    /// An error about one module's settings.
    #[cold]
    pub fn module(module: &str, reason: impl Into<String>) -> Self {
        Error::Module { module: module.to_owned(), reason: reason.into() }
    }
}

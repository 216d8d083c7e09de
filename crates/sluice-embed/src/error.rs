//! What can be wrong with an instance or a placement.

/// Errors of this crate; each names the module, flow or core at fault.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EmbedError {
    /// The instance has no cores or a capacity of zero.
    #[error("an instance needs at least one core and a capacity above 0 (got {cores} cores of {capacity})")]
    NoCores {
        /// Number of cores given.
        cores: usize,
        /// Capacity per core given.
        capacity: u64,
    },
    /// More cores than an embedding places modules on.
    #[error("{cores} cores is more than the {max} an instance may have")]
    TooManyCores {
        /// Number of cores given.
        cores: usize,
        /// The bound (see `MAX_CORES`).
        max: usize,
    },
    /// A flow or conflict names a module the instance does not have.
    #[error("{what} names module {module}, but the instance has {modules} modules")]
    UnknownModule {
        /// Where the reference was found (for example "flow 3").
        what: String,
        /// The module index.
        module: usize,
        /// Number of modules.
        modules: usize,
    },
    /// A flow with an empty path.
    #[error("flow {flow} has an empty path")]
    EmptyFlow {
        /// The flow index.
        flow: usize,
    },
    /// A module in conflict with itself can never be placed.
    #[error("module {module} is in conflict with itself")]
    SelfConflict {
        /// The module index.
        module: usize,
    },
    /// A module heavier than a whole core.
    #[error("module {module} weighs {weight}, more than a core's capacity {capacity}")]
    TooHeavy {
        /// The module index.
        module: usize,
        /// Its weight.
        weight: u64,
        /// Capacity per core.
        capacity: u64,
    },
    /// A heuristic found no core with room and no conflict for a module.
    #[error("no core can take module {module} (weight {weight}): every core is full or runs a module it conflicts with")]
    NoRoom {
        /// The module index.
        module: usize,
        /// Its weight.
        weight: u64,
    },
    /// A placement whose length is not the number of modules.
    #[error("the placement has {got} entries for {modules} modules")]
    WrongLength {
        /// Entries in the placement.
        got: usize,
        /// Modules in the instance.
        modules: usize,
    },
    /// A placement naming a core the instance does not have.
    #[error("module {module} is placed on core {core}, but there are {cores} cores")]
    UnknownCore {
        /// The module index.
        module: usize,
        /// The core it was placed on.
        core: usize,
        /// Number of cores.
        cores: usize,
    },
    /// A core loaded beyond its capacity.
    #[error("core {core} carries {load}, more than its capacity {capacity}")]
    Overloaded {
        /// The core.
        core: usize,
        /// Sum of the weights placed on it.
        load: u64,
        /// Capacity per core.
        capacity: u64,
    },
    /// Two conflicting modules on one core.
    #[error("modules {a} and {b} are in conflict but share core {core}")]
    ConflictShared {
        /// One module.
        a: usize,
        /// The other.
        b: usize,
        /// The core both are on.
        core: usize,
    },
}

impl EmbedError {
    /// The module of the instance this error is about, if it is about one
    /// (a caller that knows the modules' names can say which).
    pub fn module(&self) -> Option<usize> {
        match *self {
            Self::SelfConflict { module } | Self::TooHeavy { module, .. } | Self::NoRoom { module, .. } | Self::UnknownCore { module, .. } => Some(module),
            Self::ConflictShared { a, .. } => Some(a),
            _ => None,
        }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, EmbedError>;

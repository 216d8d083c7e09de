//! Scheduled egress in the style of PSPAT (Rizzo, Valente, Lettieri,
//! Maffione): clients write packets into private lock-free mailboxes, one
//! arbiter drains them into a scheduling algorithm and releases packets
//! at an emulated link's rate. This crate has the mailbox, the algorithms
//! and the arbiter's scan; its thread, the dispatchers and the pipeline's
//! scheduled egress are not built yet.
#![warn(missing_docs)]

pub mod arbiter;
pub mod mailbox;
pub mod sched;

pub use arbiter::{Arbiter, Client, Entry, Link, Scan};
pub use mailbox::{mailbox, Consumer, Producer};
pub use sched::{Drr, Priority, Scheduler, Wf2qPlus};


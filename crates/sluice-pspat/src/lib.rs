//! Scheduled egress in the style of PSPAT (Rizzo, Valente, Lettieri,
//! Maffione): clients write packets into private lock-free mailboxes, one
//! arbiter drains them into a scheduling algorithm. This crate has the
//! mailbox and the algorithms; the arbiter, the link emulation and the
//! dispatchers are not built yet.
#![warn(missing_docs)]

pub mod mailbox;
pub mod sched;

pub use mailbox::{mailbox, Consumer, Producer};
pub use sched::{Drr, Priority, Scheduler, Wf2qPlus};


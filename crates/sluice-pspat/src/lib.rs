//! Scheduled egress in the style of PSPAT (Rizzo, Valente, Lettieri,
//! Maffione): clients write packets into private lock-free mailboxes, one
//! arbiter drains them into a scheduling algorithm and releases packets
//! at an emulated link's rate. This crate has the mailbox, the algorithms,
//! the arbiter and its thread and the pipeline's scheduled egress
//! (`egress`), whose workers are the arbiter's clients. The paper's
//! measurements and the lock-based scheduler they compare with are the
//! lab's (`sluice-lab`).
#![warn(missing_docs)]

mod active;
pub mod arbiter;
pub mod arbiter_thread;
pub mod aqm;
pub mod egress;
pub mod fq_codel;
pub mod entry;
pub mod full_flag;
pub mod inline_egress;
pub mod link;
pub mod mailbox;
mod retune;
pub mod sched;

pub use active::RETIRE_NS;
pub use arbiter::{Arbiter, Client, Scan};
pub use entry::Entry;
pub use arbiter_thread::{ArbiterStats, ArbiterThread, Dispatch, Pace};
pub use egress::{ClassCounters, EgressConfig, ScheduledEgress, WorkerEgress};
pub use inline_egress::InlineEgress;
pub use link::{Link, LinkClock};
pub use mailbox::{mailbox, Consumer, Producer};
pub use sched::{Drr, Priority, Qfq, Scheduler, Wf2qPlus};


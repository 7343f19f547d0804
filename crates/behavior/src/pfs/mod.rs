//! PFS, the Program Flow Sequence of paper 001 ("The Design, Implementation and Initial
//! Evaluation of an Advanced Knowledge-based Process Scheduler"): remember how long each
//! program runs before it blocks, burst by burst, and when a time slice ends let a
//! process keep the CPU if it is predicted to block within the maximum dispatch delay
//! `T_m`.
//!
//! [`PfsScheduler`] is fed only by the event stream ([`schedlab_model::EventSink`]) and
//! answers one question, [`PfsScheduler::keep_running`], at the end of a time slice; the
//! simulator and the live daemon use it unchanged.

mod controller;
mod scheduler;
mod sequence;
mod store;

pub use controller::{Controller, CurrentInfo, Decision, PfsParams, PfsParamsError};
pub use scheduler::PfsScheduler;
pub use sequence::{Log, LogState, Pfs, PfsEntry, PfsState};
pub use store::{PfsStore, StoreError};

//! schedlab's simulator: a fast, deterministic discrete-event model of a multi-CPU Linux
//! kernel's scheduling classes (stop > RT > fair > idle), with tasks that run programs,
//! block on IPC with POSIX semantics, and emit the same events as the live observer.

mod config;
mod program;
mod report;
pub mod trace;
mod workload;
pub mod workloads;

pub use config::{parse_duration, tunable_scale, FairFlavor, SimConfig, Tunables};
pub use program::{Fd, FlockOp, Op, Program, ProgramId, SignalTarget};
pub use report::{Percentiles, Report, TaskReport};
pub use workload::{End, FdTarget, ObjectId, ObjectSpec, Policy, TaskSpec, Workload};

use schedlab_model::EventSink;

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("invalid workload: {0}")]
    Workload(String),
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// Runs `workload` under `config` until every task has exited (or the workload's
/// duration), sending every event to `sink` when one is given.
pub fn simulate(
    workload: &Workload,
    config: &SimConfig,
    sink: Option<&mut dyn EventSink>,
) -> Result<Report, SimError> {
    let _ = (workload, config, sink);
    todo!("engine")
}

//! schedlab's simulator: a fast, deterministic discrete-event model of a multi-CPU Linux
//! kernel's scheduling classes (stop > RT > fair > idle), with tasks that run programs,
//! block on IPC with POSIX semantics, and emit the same events as the live observer.

mod class;
mod config;
mod engine;
mod program;
mod report;
pub mod trace;
pub mod weights;
mod workload;
pub mod workloads;

/// The most CPUs the simulator models: a task's affinity is a 64-bit mask (issue 14
/// lifts this).
pub const MAX_CPUS: u32 = 64;

pub use config::{
    parse_duration, tunable_scale, DurationError, FairFlavor, SimConfig, TunableError, TunableValue, Tunables,
};
pub use program::{CpuSetId, Fd, FlockOp, Op, Program, ProgramId, SignalTarget, SyncId, TimerId};
pub use report::{Percentiles, Report, TaskReport};
pub use workload::{
    End, FdTarget, InvalidWorkload, ObjectId, ObjectSpec, Policy, SyncSpec, TaskSpec, TimerSpec, Workload,
};

use schedlab_model::{EventSink, Ns, ProviderLayer, SliceLayer};

use class::{Cfs, Eevdf, Timeshare};
use engine::Engine;

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The workload's parts do not fit together.
    #[error("invalid workload: {0}")]
    Workload(#[from] InvalidWorkload),
    /// The simulated clock stopped at `at_ns`: a program loops without using time.
    #[error("invalid workload: no progress at t={at_ns} ns: a program loops without using time")]
    Stalled { at_ns: Ns },
    /// The configuration asks for a CPU count the simulator does not model.
    #[error("invalid configuration: {cpus} CPUs: the simulator supports 1 to {}", MAX_CPUS)]
    Cpus { cpus: u32 },
}

/// What a run reports to and consults besides its result.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Receives every event (a trace writer, a behavior model).
    pub sink: Option<&'a mut dyn EventSink>,
    /// Decides at each slice end whether the running task keeps the CPU.
    pub layer: Option<&'a mut dyn SliceLayer>,
    /// Runs providers in place of the tasks that wait for them.
    pub provider: Option<&'a mut dyn ProviderLayer>,
}

/// Runs `workload` under `config` until every task has exited (or the workload's
/// duration), sending every event to `sink` when one is given.
pub fn simulate<'a>(
    workload: &'a Workload,
    config: &SimConfig,
    sink: Option<&'a mut dyn EventSink>,
) -> Result<Report, SimError> {
    simulate_with(workload, config, Hooks { sink, ..Hooks::default() })
}

/// [`simulate`] with a layer over the fair class as well.
pub fn simulate_with<'a>(
    workload: &'a Workload,
    config: &SimConfig,
    hooks: Hooks<'a>,
) -> Result<Report, SimError> {
    let report = match config.fair {
        FairFlavor::Cfs => Engine::new(workload, config, Cfs::new(&config.tunables), hooks)?.run(),
        FairFlavor::Eevdf => {
            let eevdf = Eevdf::new(&config.tunables, tunable_scale(config.cpus));
            Engine::new(workload, config, eevdf, hooks)?.run()
        }
        FairFlavor::Timeshare => {
            let ts = Timeshare::new(config.tunables.timeshare_quantum_ns);
            Engine::new(workload, config, ts, hooks)?.run()
        }
    }?;
    Ok(Report { fair: config.fair.name(), seed: config.seed, ..report })
}

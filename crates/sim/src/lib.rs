//! schedlab's simulator: a fast, deterministic discrete-event model of a multi-CPU Linux
//! kernel's scheduling classes (stop > deadline fair server > RT > fair > idle), with tasks that run programs,
//! block on IPC with POSIX semantics, and emit the same events as the live observer.

mod class;
mod config;
mod cpuset;
mod engine;
pub mod pelt;
mod program;
mod report;
pub mod topology;
pub mod trace;
pub mod weights;
mod workload;
pub mod workloads;

pub use config::{
    parse_duration, tunable_scale, DurationError, FairFlavor, SimConfig, TunableError, TunableValue, Tunables,
};
pub use program::{CpuSetId, Fd, FlockOp, Op, Program, ProgramId, SignalTarget, SyncId, TimerId};
pub use report::{Percentiles, Report, TaskReport};
pub use topology::{Topology, TopologyError};
pub use workload::{
    End, FdTarget, GroupId, InvalidWorkload, ObjectId, ObjectSpec, Policy, SyncSpec, TaskGroup, TaskSpec,
    TimerSpec, Workload, MAX_SHARES, MIN_SHARES,
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
    /// The configuration's machine has no CPU. There is no upper bound but memory (and
    /// CPU numbers of 32 bits, which [`Topology`] enforces).
    #[error("invalid configuration: 0 CPUs: a machine needs at least one")]
    NoCpus,
    /// The tunables contradict each other (a runtime longer than its period).
    #[error("invalid configuration: {0}")]
    Tunables(#[from] TunableError),
    /// Real-time tasks with `sched_rt_runtime_ns` = 0: the kernel (with
    /// `CONFIG_RT_GROUP_SCHED`) refuses to make a task real-time then.
    #[error(
        "invalid configuration: sched_rt_runtime_ns=0 leaves real-time tasks no CPU time, and the workload has \
         some (the kernel refuses SCHED_FIFO/SCHED_RR with EPERM then); use -1 for no throttling"
    )]
    NoRtRuntime,
    /// The workload has task groups and the fair class is not EEVDF: group scheduling is
    /// simulated as Linux 6.18 does it, whose fair class is EEVDF.
    #[error(
        "invalid configuration: the workload has task groups, which the {fair} fair class does not schedule \
         (group scheduling is Linux 6.18's, with eevdf); use --fair eevdf, or put every task in the root group"
    )]
    GroupsNeedEevdf { fair: &'static str },
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
            let eevdf = Eevdf::new(&config.tunables, tunable_scale(config.cpus()));
            Engine::new(workload, config, eevdf, hooks)?.run()
        }
        FairFlavor::Timeshare => {
            let ts = Timeshare::new(config.tunables.timeshare_quantum_ns);
            Engine::new(workload, config, ts, hooks)?.run()
        }
    }?;
    Ok(Report { fair: config.fair.name(), seed: config.seed, topology: config.topology.describe(), ..report })
}

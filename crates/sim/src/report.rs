//! What a simulation run reports: per-task metrics and run totals.

use schedlab_model::Ns;
use serde::Serialize;

/// Wake-up latency percentiles: from the wake-up to the moment the task runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50: Ns,
    pub p99: Ns,
    pub max: Ns,
}

/// One task's metrics, named as `/proc/PID/sched` and `getrusage` name them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskReport {
    pub name: String,
    pub pid: u32,
    /// The task that forked it, 0 for the workload's own tasks.
    pub ppid: u32,
    pub policy: &'static str,
    pub nice: i8,
    pub rt_priority: u8,
    /// CPU time (including system-call and context-switch time charged to it).
    pub runtime_ns: Ns,
    /// Time runnable but not running.
    pub wait_ns: Ns,
    /// Time blocked (sleeping, waiting for I/O or IPC).
    pub sleep_ns: Ns,
    /// From start to exit (to the end of the run when it did not exit).
    pub turnaround_ns: Ns,
    pub exited: bool,
    /// Voluntary context switches: the task blocked.
    pub nvcsw: u64,
    /// Involuntary context switches: the task was preempted or yielded while runnable.
    pub nivcsw: u64,
    pub migrations: u64,
    pub wakeups: u64,
    pub wakeup_latency_ns: Percentiles,
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub workload: String,
    pub cpus: u32,
    /// The machine: `2 nodes, 2 LLCs, 32 cores, 64 CPUs`.
    pub topology: String,
    pub fair: &'static str,
    pub seed: u64,
    /// Simulated time when the last task exited (or the run was stopped).
    pub makespan_ns: Ns,
    /// Items taken off the simulator's event queue.
    pub events: u64,
    /// Wall-clock time of the run on the host.
    pub wall_ns: Ns,
    pub events_per_sec: f64,
    pub context_switches: u64,
    pub migrations: u64,
    /// Per CPU: simulated time it was busy (not idle).
    pub cpu_busy_ns: Vec<Ns>,
    pub tasks: Vec<TaskReport>,
}

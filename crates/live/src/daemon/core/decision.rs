//! The core's output: [`Decision`]s as plain data, carried out by an [`Enforcer`] that
//! tells what became of each ([`Outcome`]). The daemon's enforcer makes system calls
//! through the journaled actuator (or, in a dry run, only shows them); a sched_ext
//! scheduler can enforce the same decisions in the kernel; the core's tests record them.

use schedlab_model::{Ns, Pid, Policy};
use schedlab_store::{ProcessKey, Setting};

use crate::settings::CpuSet;

/// One thing the core decided to do on the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Give `process` a setting: its class's nice value or policy, CPUs from the plan, a
    /// cpuset cgroup, a requester's rank (a boost), a burst-aware slice.
    Set { process: ProcessKey, change: Change },
    /// Give `process` its class's nice value and policy together: what two `Set`s
    /// would, carried out at once (one journal transaction, one pass over its threads),
    /// since a build's jobs are classed at their exec by the hundred a second.
    SetClass { process: ProcessKey, nice: i32, policy: Policy, priority: u32, slice_ns: Ns },
    /// Raise `process` for a boost, not to be inherited by its children
    /// (`SCHED_FLAG_RESET_ON_FORK`), until [`Decision::EndRaise`] names `id` or, whatever
    /// becomes of the core, until `until` (the monotonic clock, ns) passes: the enforcer
    /// ends it then on a clock of its own.
    Raise { process: ProcessKey, raise: Raise, id: RaiseId, until: Ns },
    /// SWAP names `provider` (a thread) the provider of `requester` (a thread), with
    /// `confidence` (indirect along a chain): said before the raise it comes with, for
    /// an enforcer that acts on the dependency itself (a sched_ext scheduler runs the
    /// provider in its requester's turn) rather than on the provider's rank.
    Provider { requester: Pid, provider: Pid, confidence: u32 },
    /// PFS (paper 001): process `process` (a tgid) has just exec'd `program`, whose flow
    /// sequence predicts `bursts` (CPU time of each burst from the exec, in ns): for an
    /// enforcer that follows the flow itself at each slice's end (a sched_ext scheduler).
    /// The system calls act at each block instead ([`Change::Slice`]).
    Flow { process: Pid, program: String, bursts: Vec<Ns> },
    /// Raise `id` holds until `until` now (its requester blocked again).
    Renew { id: RaiseId, until: Ns },
    /// Raise `id` of `process` ends: what it changed is undone, and nothing else (a
    /// change of the same setting made since, its class's, stays).
    EndRaise { process: ProcessKey, id: RaiseId },
    /// A forked `child` takes over what schedlab changed on its `parent` (the kernel
    /// copied it at the fork), so that undoing it gives the child what it would have had
    /// without schedlab.
    Adopt { child: ProcessKey, parent: ProcessKey },
    /// Someone else changed a setting of `process`: schedlab stops managing it and leaves
    /// it what it has now, even when the daemon stops.
    Release { process: ProcessKey },
    /// `process` exited or is no longer the one named: nothing of it is left to undo.
    Forget { process: ProcessKey },
    /// Make the cpuset cgroup of class `class`, on `cpus`.
    MakeGroup { class: String, cpus: Vec<u32> },
    /// Report thread `tid`'s blocks and wakings at once (`on`), or no longer: a thread
    /// whose providers may need a boost.
    Watch { tid: u32, on: bool },
    /// Report an exec of `program` at once (`on`), or no longer: a program whose
    /// processes are classed at their exec ([`super::learning`]).
    WakeAtExec { program: String, on: bool },
    /// Undo every setting schedlab gave `process` (its class's, found wrong for it):
    /// it gets back what it had, as at the daemon's stop.
    Restore { process: ProcessKey },
    /// Open (`on`) or close a profiling window: every process's system calls are counted
    /// and every switch is seen, for the model.
    Profile { on: bool },
}

impl Decision {
    /// The settings a `Set` or a `SetClass` gives its process, in the order they are
    /// carried out; none for any other decision.
    pub fn changes(&self) -> Vec<Change> {
        match self {
            Decision::Set { change, .. } => vec![change.clone()],
            &Decision::SetClass { nice, policy, priority, slice_ns, .. } => {
                vec![Change::Nice(nice), Change::Policy { policy, priority, slice_ns }]
            }
            _ => Vec::new(),
        }
    }
}

/// What a boost gives a provider: its requester's rank, as far as it may inherit it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raise {
    /// A nice value.
    Nice(i32),
    /// A real-time policy at a priority.
    RealTime { policy: Policy, priority: u32 },
}

impl Raise {
    /// The same as a change of a setting: what the process may hold by itself already.
    pub fn as_change(self) -> Change {
        match self {
            Raise::Nice(n) => Change::Nice(n),
            Raise::RealTime { policy, priority } => Change::Policy { policy, priority, slice_ns: 0 },
        }
    }
}

/// Names one raise, from its decision to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RaiseId(pub u64);

/// A setting the core gives a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    Nice(i32),
    /// A policy and its real-time priority (0 for the fair ones). `slice_ns` is the
    /// burst-aware slice schedlab gave the process (0: the default), which a fair policy
    /// keeps: the kernel sets the policy and the slice together (`sched_setattr`).
    Policy {
        policy: Policy,
        priority: u32,
        slice_ns: u64,
    },
    /// The EEVDF slice, in ns (0: the default), under the policy the process has.
    Slice(u64),
    Cpus(Vec<u32>),
    /// A cgroup path of the cpuset hierarchy.
    Cgroup(String),
}

impl Change {
    /// The setting the journal records it under.
    pub fn setting(&self) -> Setting {
        match self {
            Change::Nice(_) => Setting::Nice,
            Change::Policy { .. } | Change::Slice(_) => Setting::Policy,
            Change::Cpus(_) => Setting::Affinity,
            Change::Cgroup(_) => Setting::Cgroup,
        }
    }

    /// In words, for the log: `set nice 10`, `bind to CPUs 1`.
    pub fn describe(&self) -> String {
        match self {
            Change::Nice(n) => format!("set nice {n}"),
            Change::Policy { policy, priority: 0, .. } => format!("set policy {}", policy.name()),
            Change::Policy { policy, priority, .. } => format!("set policy {} {priority}", policy.name()),
            Change::Slice(0) => "reset the slice".into(),
            Change::Slice(ns) => format!("set the slice to {:.2} ms", *ns as f64 / 1e6),
            Change::Cpus(c) => format!("bind to CPUs {}", cpu_set(c)),
            Change::Cgroup(path) => format!("move into cpuset cgroup {path}"),
        }
    }
}

/// `cpus` as a set (for its `0-1,3` form, and to compare with the kernel's).
pub fn cpu_set(cpus: &[u32]) -> CpuSet {
    CpuSet::new(cpus.iter().map(|&c| c as usize))
}

/// What became of a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Carried out.
    Made,
    /// Shown, not carried out: a dry run.
    Shown,
    /// Not carried out, and nothing to say: the process could not be held (it is
    /// exiting), or a slice was asked for a real-time process, which has none.
    Skipped,
    /// Not carried out: the process is no longer the one named (it exited, or its pid
    /// was reused).
    Gone,
    /// Not carried out, and why.
    Failed(String),
}

/// Whether the settings an enforcer made on a process are still what it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// They are (or it made none).
    Yes,
    /// Someone else changed one: a user's renice, taskset or chrt. The user wins.
    Changed,
    /// The process is gone, or its pid belongs to another process now.
    Gone,
}

/// What carries the core's decisions out.
pub trait Enforcer {
    /// Carries `decision` out (or shows it) and says what became of it.
    fn enforce(&mut self, decision: &Decision) -> Outcome;
    /// Whether what this enforcer set on `process` is still what it has.
    fn kept(&self, process: ProcessKey) -> Kept;
    /// The cgroup path of the cpuset cgroup made for class `class`
    /// ([`Decision::MakeGroup`]), if one was made.
    fn group_path(&self, class: &str) -> Option<String>;
}

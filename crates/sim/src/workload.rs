//! A workload: the programs, the IPC objects and the tasks that start the simulation.

use schedlab_model::{Cpu, Ns};

use crate::program::{CpuSetId, Op, Program, ProgramId, SyncId, TimerId};

pub use schedlab_model::Policy;

/// An index into [`Workload::objects`].
pub type ObjectId = u32;

/// An index into [`Workload::groups`].
pub type GroupId = u32;

/// `MIN_SHARES`: the smallest `shares` a task group may have (and the smallest weight a
/// group's entity on one CPU gets).
pub const MIN_SHARES: u64 = 2;
/// `MAX_SHARES`: the largest `shares` a task group may have (2¹⁸).
pub const MAX_SHARES: u64 = 1 << 18;

/// A task group (the kernel's `struct task_group`): a cgroup with the cpu controller, or
/// an autogroup (the session of a process whose cgroup is the root, when
/// `kernel.sched_autogroup_enabled` is 1). The fair class shares the CPU between groups
/// by their `shares`, then within each group between its tasks and child groups, however
/// many tasks a group has (a group of ten tasks gets what a group of one gets). Tasks
/// not in a group are in the root group, where each counts as one entity of its own
/// weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskGroup {
    /// Its name in reports and errors: a cgroup path (`/tg1/tg11`) or `autogroup-N`.
    pub name: String,
    /// The group it is in (an earlier one); `None`: a child of the root group.
    pub parent: Option<GroupId>,
    /// Its weight against its siblings (`tg->shares`, scaled down as the kernel's
    /// arithmetic uses it): 1024 for `cpu.weight` 100, the default, [`MIN_SHARES`] to
    /// [`MAX_SHARES`].
    pub shares: u64,
}

impl TaskGroup {
    /// A cgroup v2 group of `cpu.weight` `weight` (1–10000, default 100), converted as
    /// `sched_weight_from_cgroup` does: `weight × 1024 / 100`, rounded to the closest.
    pub fn cpu_weight(name: impl Into<String>, parent: Option<GroupId>, weight: u64) -> Self {
        TaskGroup { name: name.into(), parent, shares: (weight * 1024 + 50) / 100 }
    }

    /// A cgroup v1 group of `cpu.shares` `shares` (default 1024); the kernel clamps it
    /// to [`MIN_SHARES`]..=[`MAX_SHARES`].
    pub fn cpu_shares(name: impl Into<String>, parent: Option<GroupId>, shares: u64) -> Self {
        TaskGroup { name: name.into(), parent, shares: shares.clamp(MIN_SHARES, MAX_SHARES) }
    }

    /// An autogroup (a session's group) of nice value `nice` (`/proc/PID/autogroup`,
    /// default 0): its shares are a task's weight at that nice value.
    pub fn autogroup(name: impl Into<String>, nice: i8) -> Self {
        let i = (i32::from(nice) + 20).clamp(0, 39) as usize;
        TaskGroup { name: name.into(), parent: None, shares: crate::weights::PRIO_TO_WEIGHT[i] }
    }
}

/// An IPC object or file that tasks share through their fd tables.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectSpec {
    /// An anonymous pipe with a buffer of `capacity` bytes (`None`: the `pipe_bytes`
    /// tunable, 64 KiB as in Linux).
    Pipe { capacity: Option<u32> },
    /// A named pipe (FIFO); same semantics as a pipe, reported as a FIFO.
    Fifo { capacity: Option<u32> },
    /// A UNIX stream socket pair; each direction buffers `capacity` bytes (`None`: the
    /// `socket_bytes` tunable).
    SocketPair { capacity: Option<u32> },
    /// A System V semaphore set with these initial values.
    SemSet { values: Vec<i32> },
    /// A System V message queue holding at most `max_bytes` (`None`: the `msgmnb`
    /// tunable, 16384 as in Linux).
    MsgQueue { max_bytes: Option<u32> },
    /// A regular file, for `flock`.
    File,
}

/// A synchronization object of the threads of a workload (rt-app's `mutex`, `wait`
/// and `barrier` resources).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncSpec {
    /// A pthread mutex. Without priority inheritance an unlock wakes the longest waiter,
    /// which then tries again and may find the mutex taken (glibc's lock is not handed
    /// over). With `pi` (`PTHREAD_PRIO_INHERIT`, the kernel's rt_mutex) an unlock hands
    /// the mutex to its highest-priority waiter, and while real-time tasks wait, the
    /// owner runs at the highest of their priorities.
    Mutex { pi: bool },
    /// A condition variable: waiters in arrival order.
    Cond,
    /// A barrier for `users` arrivals (rt-app counts one per `barrier` event naming it,
    /// times the instances of its task).
    Barrier { users: u32 },
}

/// An rt-app timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerSpec {
    /// A task that finds the timer's next activation passed restarts the timer from
    /// now (rt-app's default `relative` mode); otherwise it keeps its phase (`absolute`).
    pub relative: bool,
    /// Each task has its own (rt-app's `ref` starting with `unique`); otherwise every
    /// task using the timer advances one shared activation time.
    pub per_task: bool,
}

/// Which end of an object an fd refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// The read end of a pipe or FIFO.
    Read,
    /// The write end of a pipe or FIFO.
    Write,
    /// The first socket of a pair.
    A,
    /// The second socket of a pair.
    B,
    /// Objects without ends (semaphores, queues, files).
    Whole,
}

/// One entry of a file-descriptor table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FdTarget {
    pub object: ObjectId,
    pub end: End,
}

/// A task present at the start (or at `start_ns`).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    /// A name for reports (defaults to the program's comm when empty).
    pub name: String,
    pub program: ProgramId,
    pub policy: Policy,
    /// Nice value −20..19 for the fair policies.
    pub nice: i8,
    /// Real-time priority 1..99 for `SCHED_FIFO`/`SCHED_RR`.
    pub rt_priority: u8,
    /// CPUs the task may run on (`None`: all).
    pub affinity: Option<Vec<Cpu>>,
    /// When the task starts.
    pub start_ns: Ns,
    /// Its file-descriptor table.
    pub fds: Vec<FdTarget>,
    /// `sched_attr.sched_runtime`: a per-task EEVDF slice (clamped to 100 µs–100 ms).
    pub slice_ns: Option<Ns>,
    /// Make this task a thread of the process of the `n`-th task (an earlier index).
    pub thread_of: Option<u32>,
    /// Utilization clamps (`sched_attr.sched_util_min`/`max`, 0..=1024), kept as data:
    /// they steer CPU frequency and capacity-aware placement, which the simulator does
    /// not model, so they change nothing in a simulation.
    pub util_min: Option<u16>,
    pub util_max: Option<u16>,
    /// The task group it starts in (`None`: the root group). Its children start in the
    /// group it is in when it forks them.
    pub group: Option<GroupId>,
}

impl TaskSpec {
    /// A `SCHED_OTHER` nice-0 task running `program` from time 0, with no fds.
    pub fn new(name: impl Into<String>, program: ProgramId) -> Self {
        TaskSpec {
            name: name.into(),
            program,
            policy: Policy::Other,
            nice: 0,
            rt_priority: 0,
            affinity: None,
            start_ns: 0,
            fds: Vec::new(),
            slice_ns: None,
            thread_of: None,
            util_min: None,
            util_max: None,
            group: None,
        }
    }
}

/// Everything a simulation starts from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    /// A short description for reports (`hackbench:groups=10,...`, a file name).
    pub name: String,
    pub programs: Vec<Program>,
    pub objects: Vec<ObjectSpec>,
    pub tasks: Vec<TaskSpec>,
    /// Stop the simulation at this time even if tasks remain (rt-app `global.duration`).
    pub duration_ns: Option<Ns>,
    /// Mutexes, condition variables and barriers, named by [`SyncId`].
    pub sync: Vec<SyncSpec>,
    /// Timers, named by [`TimerId`].
    pub timers: Vec<TimerSpec>,
    /// CPU sets that [`Op::SetAffinity`] names by [`CpuSetId`].
    pub cpu_sets: Vec<Vec<Cpu>>,
    /// Task groups, named by [`GroupId`]; a group's parent comes before it. Without
    /// groups every task is in the root group and the fair class has one level.
    pub groups: Vec<TaskGroup>,
}

impl Workload {
    /// Adds a program and returns its id.
    pub fn add_program(&mut self, p: Program) -> ProgramId {
        self.programs.push(p);
        (self.programs.len() - 1) as ProgramId
    }

    /// Adds an object and returns its id.
    pub fn add_object(&mut self, o: ObjectSpec) -> ObjectId {
        self.objects.push(o);
        (self.objects.len() - 1) as ObjectId
    }

    /// Adds a task group and returns its id.
    pub fn add_group(&mut self, g: TaskGroup) -> GroupId {
        self.groups.push(g);
        (self.groups.len() - 1) as GroupId
    }

    /// Puts every task that is in the root group into one new autogroup of nice value
    /// `nice`, as running the whole workload in a session of its own does on a kernel with
    /// `sched_autogroup_enabled` (each `setsid()` starts an autogroup, and a process in
    /// the root cgroup runs in its session's); returns the group.
    pub fn in_autogroup(&mut self, nice: i8) -> GroupId {
        let g = self.add_group(TaskGroup::autogroup("autogroup", nice));
        for t in self.tasks.iter_mut().filter(|t| t.group.is_none()) {
            t.group = Some(g);
        }
        g
    }

    /// Whether a task may run under a real-time policy: one starts with it, or a program
    /// sets it (children and priority inheritance only pass on what some task has).
    pub fn may_run_rt(&self) -> bool {
        self.tasks.iter().any(|t| t.policy.is_rt())
            || self
                .programs
                .iter()
                .flat_map(|p| &p.ops)
                .any(|op| matches!(op, Op::SetSched { policy, .. } if policy.is_rt()))
    }

    /// Checks the references between tasks, programs, objects and CPUs; the error says
    /// which task or program is wrong and why.
    pub fn validate(&self, cpus: u32) -> Result<(), InvalidWorkload> {
        for p in &self.programs {
            p.validate()?;
            for op in &p.ops {
                self.validate_op(p, op)?;
            }
        }
        for (group, g) in self.groups.iter().enumerate() {
            let group = group as GroupId;
            if g.parent.is_some_and(|p| p >= group) {
                return Err(InvalidWorkload::GroupParent { group, name: g.name.clone() });
            }
            if !(MIN_SHARES..=MAX_SHARES).contains(&g.shares) {
                return Err(InvalidWorkload::GroupShares { group, name: g.name.clone(), shares: g.shares });
            }
        }
        for (set, list) in self.cpu_sets.iter().enumerate() {
            if list.is_empty() {
                return Err(InvalidWorkload::EmptyCpuSet { set: set as CpuSetId });
            }
            if let Some(&cpu) = list.iter().find(|&&c| c >= cpus) {
                return Err(InvalidWorkload::CpuSetCpu { set: set as CpuSetId, cpu, cpus });
            }
        }
        for (task, t) in self.tasks.iter().enumerate() {
            let name = || t.name.clone();
            if t.program as usize >= self.programs.len() {
                return Err(InvalidWorkload::UnknownProgram { task, name: name(), program: t.program });
            }
            if !(-20..=19).contains(&t.nice) {
                return Err(InvalidWorkload::Nice { task, name: name(), nice: t.nice });
            }
            if t.policy.is_rt() && !(1..=99).contains(&t.rt_priority) {
                return Err(InvalidWorkload::RtPriority { task, name: name(), priority: t.rt_priority });
            }
            if let Some(aff) = &t.affinity {
                if aff.is_empty() {
                    return Err(InvalidWorkload::EmptyAffinity { task, name: name() });
                }
                if let Some(&cpu) = aff.iter().find(|&&c| c >= cpus) {
                    return Err(InvalidWorkload::NoSuchCpu { task, name: name(), cpu, cpus });
                }
            }
            for fd in &t.fds {
                if fd.object as usize >= self.objects.len() {
                    return Err(InvalidWorkload::UnknownObject { task, name: name(), object: fd.object });
                }
            }
            if let Some(group) = t.group.filter(|&g| g as usize >= self.groups.len()) {
                return Err(InvalidWorkload::UnknownGroup { task, name: name(), group });
            }
            if let Some(parent) = t.thread_of {
                if parent as usize >= task {
                    return Err(InvalidWorkload::ThreadOfLaterTask { task, name: name(), thread_of: parent });
                }
            }
        }
        Ok(())
    }
}

impl Workload {
    /// Checks that an operation of `p` names programs, synchronization objects, timers
    /// and CPU sets the workload has, of the right kind, and valid scheduling settings.
    fn validate_op(&self, p: &Program, op: &Op) -> Result<(), InvalidWorkload> {
        let comm = || p.comm.clone();
        let sync =
            |id: SyncId, want: fn(&SyncSpec) -> bool, kind: &'static str| match self.sync.get(id as usize) {
                Some(s) if want(s) => Ok(()),
                _ => Err(InvalidWorkload::SyncObject { comm: comm(), id, kind }),
            };
        let mutex = |s: &SyncSpec| matches!(s, SyncSpec::Mutex { .. });
        let cond = |s: &SyncSpec| matches!(s, SyncSpec::Cond);
        match *op {
            Op::Fork { program, .. } if program as usize >= self.programs.len() => {
                Err(InvalidWorkload::ForkOfUnknownProgram { comm: comm(), program })
            }
            Op::Lock { mutex: m } | Op::Unlock { mutex: m } => sync(m, mutex, "mutex"),
            Op::CondWait { cond: c, mutex: m } => {
                sync(c, cond, "condition variable").and(sync(m, mutex, "mutex"))
            }
            Op::CondSignal { cond: c, .. } => sync(c, cond, "condition variable"),
            Op::Barrier { barrier } => sync(barrier, |s| matches!(s, SyncSpec::Barrier { .. }), "barrier"),
            Op::Timer { timer, .. } if timer as usize >= self.timers.len() => {
                Err(InvalidWorkload::UnknownTimer { comm: comm(), timer })
            }
            Op::SetAffinity { cpus: Some(set) } if set as usize >= self.cpu_sets.len() => {
                Err(InvalidWorkload::UnknownCpuSet { comm: comm(), set })
            }
            Op::SetGroup { group: Some(group) } if group as usize >= self.groups.len() => {
                Err(InvalidWorkload::SetUnknownGroup { comm: comm(), group })
            }
            Op::SetSched { policy, nice, rt_priority } => {
                let valid =
                    (-20..=19).contains(&nice) && (!policy.is_rt() || (1..=99).contains(&rt_priority));
                if valid {
                    Ok(())
                } else {
                    Err(InvalidWorkload::SchedSettings { comm: comm(), nice, rt_priority })
                }
            }
            _ => Ok(()),
        }
    }
}

/// Why a workload's parts do not fit together ([`Workload::validate`],
/// [`Program::validate`]). Each variant names the program (by its comm) or the task (by
/// its index and name) at fault and keeps the offending value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidWorkload {
    /// A program's `LoopEnd` at index `op` closes no loop.
    #[error("{comm}: op {op}: LoopEnd without Loop")]
    LoopEndWithoutLoop { comm: String, op: usize },
    /// A program ends with `open` loops not closed.
    #[error("{comm}: {open} loop(s) not closed")]
    UnclosedLoops { comm: String, open: usize },
    /// A program forks a program the workload does not have.
    #[error("{comm}: fork of unknown program {program}")]
    ForkOfUnknownProgram { comm: String, program: ProgramId },
    /// A task runs a program the workload does not have.
    #[error("task {task} ({name}): unknown program {program}")]
    UnknownProgram { task: usize, name: String, program: ProgramId },
    /// A task's nice value is outside -20..19.
    #[error("task {task} ({name}): nice {nice} is outside -20..19")]
    Nice { task: usize, name: String, nice: i8 },
    /// A real-time task's priority is outside 1..99.
    #[error("task {task} ({name}): real-time priority {priority} is outside 1..99")]
    RtPriority { task: usize, name: String, priority: u8 },
    /// A task may run on no CPU.
    #[error("task {task} ({name}): empty CPU affinity")]
    EmptyAffinity { task: usize, name: String },
    /// A task's affinity names a CPU beyond the simulation's `cpus`.
    #[error("task {task} ({name}): CPU {cpu} does not exist (the simulation has {cpus})")]
    NoSuchCpu { task: usize, name: String, cpu: Cpu, cpus: u32 },
    /// A task's fd table refers to an object the workload does not have.
    #[error("task {task} ({name}): fd refers to unknown object {object}")]
    UnknownObject { task: usize, name: String, object: ObjectId },
    /// A task starts in a task group the workload does not have.
    #[error("task {task} ({name}): unknown task group {group}")]
    UnknownGroup { task: usize, name: String, group: GroupId },
    /// An operation moves its task to a task group the workload does not have.
    #[error("{comm}: move to unknown task group {group}")]
    SetUnknownGroup { comm: String, group: GroupId },
    /// A task group's parent is not an earlier group.
    #[error("task group {group} ({name}): its parent must be an earlier group")]
    GroupParent { group: GroupId, name: String },
    /// A task group's shares are outside what the kernel accepts.
    #[error("task group {group} ({name}): shares {shares} are outside 2..=262144")]
    GroupShares { group: GroupId, name: String, shares: u64 },
    /// A task is made a thread of itself or of a later task.
    #[error("task {task} ({name}): thread_of must name an earlier task")]
    ThreadOfLaterTask { task: usize, name: String, thread_of: u32 },
    /// An operation names a synchronization object the workload does not have, or one
    /// of another kind.
    #[error("{comm}: synchronization object {id} is not a {kind}")]
    SyncObject { comm: String, id: SyncId, kind: &'static str },
    /// A timer operation names a timer the workload does not have.
    #[error("{comm}: unknown timer {timer}")]
    UnknownTimer { comm: String, timer: TimerId },
    /// An affinity operation names a CPU set the workload does not have.
    #[error("{comm}: unknown CPU set {set}")]
    UnknownCpuSet { comm: String, set: CpuSetId },
    /// A CPU set is empty.
    #[error("CPU set {set} is empty")]
    EmptyCpuSet { set: CpuSetId },
    /// A CPU set names a CPU beyond the simulation's `cpus`.
    #[error("CPU set {set}: CPU {cpu} does not exist (the simulation has {cpus})")]
    CpuSetCpu { set: CpuSetId, cpu: Cpu, cpus: u32 },
    /// A scheduling change has a nice value outside -20..19 or a real-time priority
    /// outside 1..99.
    #[error("{comm}: scheduling change to nice {nice}, real-time priority {rt_priority} is out of range")]
    SchedSettings { comm: String, nice: i8, rt_priority: u8 },
}

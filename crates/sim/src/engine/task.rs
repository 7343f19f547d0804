//! A simulated task: where it is in its program, what it waits for, and its statistics.

use std::collections::VecDeque;

use hdrhistogram::Histogram;
use schedlab_model::{Ns, Resource};

use crate::cpuset::CpuSet;
use crate::program::ProgramId;
use crate::workload::FdTarget;

/// Run state, as the kernel's `__state` plus "not started yet".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    NotStarted,
    Runnable,
    Running,
    Blocked,
    Dead,
}

/// What a blocked task waits for, so that the right event wakes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A timer inside a system call: nanosleep, rt-app timer.
    Timer,
    /// A device: uninterruptible I/O wait.
    Io,
    /// A signal (pause, sigtimedwait).
    Signal,
    /// A child's exit (wait4).
    Child,
    /// An IPC object's wait queue (pipe, socket, semaphore, queue, flock).
    Object,
}

/// Where the task is within its current operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Start the operation at `pc`.
    Next,
    /// The CPU work of the operation at `pc` is being done; then move on.
    Compute,
    /// The system call's entry cost is being paid; then attempt its effect.
    Syscall,
    /// Woken while waiting inside a system call: attempt the effect again.
    Retry,
    /// The system call was completed by whoever woke the task, with this return value.
    Completed(i64),
    /// Its program ended and its process dies with it: the teardown is being paid
    /// (`exit_ns`); then it is dead.
    Exiting,
}

/// One level of loop nesting: the index of its `Loop` op and iterations left
/// (`u32::MAX` for ever).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopFrame {
    pub start: u32,
    pub left: u32,
}

/// Per-task counters, reported at the end.
#[derive(Clone, Debug)]
pub(crate) struct Stats {
    /// CPU time it used (its own runs, also those in place of another task).
    pub cpu_ns: Ns,
    pub started: Ns,
    pub exited: Option<Ns>,
    pub wait_ns: Ns,
    pub sleep_ns: Ns,
    /// When the task entered its current state (for wait and sleep time).
    pub since: Ns,
    pub nvcsw: u64,
    pub nivcsw: u64,
    pub migrations: u64,
    pub wakeups: u64,
    /// When it was last woken, until it runs.
    pub woken_at: Option<Ns>,
    pub wakeup_latency: Histogram<u64>,
}

impl Stats {
    fn new() -> Self {
        Stats {
            cpu_ns: 0,
            started: 0,
            exited: None,
            wait_ns: 0,
            sleep_ns: 0,
            since: 0,
            nvcsw: 0,
            nivcsw: 0,
            migrations: 0,
            wakeups: 0,
            woken_at: None,
            wakeup_latency: Histogram::new(3).expect("3 significant digits is valid"),
        }
    }
}

/// A task (thread). Its scheduling parameters live in the engine's `Entity` table.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    pub pid: u32,
    pub tgid: u32,
    pub ppid: u32,
    pub name: String,
    pub program: ProgramId,
    pub pc: u32,
    pub loops: Vec<LoopFrame>,
    pub fds: Vec<FdTarget>,
    /// Allowed CPUs.
    pub affinity: CpuSet,
    pub state: State,
    pub wait: Wait,
    /// The resource it blocked on, for the event stream.
    pub blocked_on: Option<Resource>,
    pub cpu: u32,
    pub phase: Phase,
    /// CPU work left in the current step.
    pub work: Ns,
    /// CPU time owed before the step progresses (context switch, cache refill).
    pub overhead: Ns,
    /// When the current stint of the step began on the CPU.
    pub step_started: Ns,
    /// Bumped to invalidate a queued completion or timer event.
    pub gen: u32,
    /// A completion event for the current stint is queued.
    pub step_queued: bool,
    /// Bytes done of the current read or write.
    pub progress: u32,
    /// rt-app `runtime`: when the spin ends.
    pub spin_until: Ns,
    /// rt-app timers: next activation per slot.
    pub timers: Vec<Option<Ns>>,
    pub pending_signals: u32,
    /// The number of the last signal received.
    pub last_signal: u8,
    pub children: u32,
    /// Exited children not yet reaped by `wait4`, oldest first.
    pub zombies: Vec<u32>,
    /// Children it forked and has not reaped, in fork order (for [`crate::Op::WaitOldest`]).
    pub unreaped: VecDeque<u32>,
    /// On a process's first task (`pid == tgid`): how many of its tasks are alive, so
    /// that the last one to exit pays for the process's teardown.
    pub live_threads: u32,
    /// When it last stopped running (cache hotness).
    pub last_ran: Ns,
    /// RT: go to the tail of the list when it next stops running (yield, RR expiry).
    pub requeue_tail: bool,
    pub stats: Stats,
    /// Blocked, but kept on its run queue because a provider can run for it (SWAP).
    pub virtual_runnable: bool,
    /// The CPU it woke on before its last wake-up (`recent_used_cpu`; `u32::MAX` none).
    pub recent_used_cpu: u32,
    /// As a waker: how often it switched between wakees (`wakee_flips`), when that was
    /// last halved, and its last wakee.
    pub wakee_flips: u32,
    pub wakee_flip_decay_ts: Ns,
    pub last_wakee: u32,
    /// Its task group (`None`: the root group).
    pub group: Option<u32>,
}

impl Task {
    pub fn new(pid: u32, name: String, program: ProgramId, fds: Vec<FdTarget>, affinity: CpuSet) -> Self {
        Task {
            pid,
            tgid: pid,
            ppid: 0,
            name,
            program,
            pc: 0,
            loops: Vec::new(),
            fds,
            affinity,
            state: State::NotStarted,
            wait: Wait::Timer,
            blocked_on: None,
            cpu: 0,
            phase: Phase::Next,
            work: 0,
            overhead: 0,
            step_started: 0,
            gen: 0,
            step_queued: false,
            progress: 0,
            spin_until: 0,
            timers: Vec::new(),
            pending_signals: 0,
            last_signal: 0,
            children: 0,
            zombies: Vec::new(),
            unreaped: VecDeque::new(),
            live_threads: 0,
            last_ran: 0,
            requeue_tail: false,
            stats: Stats::new(),
            virtual_runnable: false,
            recent_used_cpu: u32::MAX,
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            last_wakee: 0,
            group: None,
        }
    }

    /// `child` was reaped: it is no longer waited for.
    pub fn reaped(&mut self, child: u32) {
        if let Some(i) = self.unreaped.iter().position(|&c| c == child) {
            self.unreaped.remove(i);
        }
    }

    pub fn allowed(&self, cpu: u32) -> bool {
        self.affinity.contains(cpu)
    }
}

//! What a simulated task does: a flat list of operations with loops, run by the engine.

use schedlab_model::Ns;

use crate::workload::{GroupId, Policy};
use crate::InvalidWorkload;

/// An index into a task's file-descriptor table ([`crate::TaskSpec::fds`]); forked
/// children inherit the table, as after `fork(2)`.
pub type Fd = u16;

/// An index into [`crate::Workload::programs`].
pub type ProgramId = u32;

/// An index into [`crate::Workload::sync`]: a mutex, condition variable or barrier.
pub type SyncId = u32;

/// An index into [`crate::Workload::timers`].
pub type TimerId = u32;

/// An index into [`crate::Workload::cpu_sets`].
pub type CpuSetId = u32;

/// `flock(2)` operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlockOp {
    /// `LOCK_SH`: take a shared lock (blocks while someone holds it exclusively).
    Shared,
    /// `LOCK_EX`: take the exclusive lock (blocks while anyone else holds it).
    Exclusive,
    /// `LOCK_UN`: release what this task holds.
    Unlock,
}

/// Whom a signal goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalTarget {
    /// The `n`-th task of the workload (0-based index into [`crate::Workload::tasks`]).
    Task(u32),
    /// The task that forked this one.
    Parent,
}

/// One operation of a program. Every operation that is a system call costs the
/// configured syscall time on the CPU and emits `SyscallEnter`/`SyscallExit` events.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// Use the CPU for this much CPU time (rt-app `run`).
    Compute(Ns),
    /// Write this many bytes of memory (rt-app `mem`: `memset` of its buffer): CPU time at
    /// the machine's memory rate, the `mem_ns_per_kib` tunable, which `schedlab validate`
    /// measures. Not a fixed time, because that rate is the host's, not the workload's.
    Memset(u64),
    /// Keep running until this much wall time has passed since the operation began,
    /// however long the task waits for the CPU meanwhile (rt-app `runtime`).
    Spin(Ns),
    /// Sleep (`clock_nanosleep`) for this long.
    Sleep(Ns),
    /// rt-app `timer`: advance timer `timer` by `period` and sleep until then. A timer
    /// starts at the start of the task that first uses it (its start time is rt-app's
    /// `t_first`: the use case's start plus the task's `delay`). A late task does not
    /// sleep; a relative timer then restarts from now, an absolute one keeps its phase
    /// ([`crate::TimerSpec`]).
    Timer { timer: TimerId, period: Ns },
    /// Wait for a device: block uninterruptibly for this long.
    Io(Ns),
    /// `sched_yield()`.
    Yield,
    /// Start a loop that runs the operations up to the matching [`Op::LoopEnd`] `count`
    /// times; `count == 0` loops for ever (rt-app `"loop": -1`).
    Loop { count: u32 },
    /// End of the innermost loop.
    LoopEnd,
    /// `fork()`: a child task starts program `program` with a copy of the fd table, the
    /// parent's policy and affinity. `thread` makes it a thread of the same process
    /// (`clone(CLONE_THREAD)`) instead.
    Fork { program: ProgramId, thread: bool },
    /// `wait4(-1)`: block until a child exits (returns at once if one already has, and
    /// fails at once without children).
    Wait,
    /// `waitpid()` (or `pthread_join()`) of the oldest child not yet reaped: block until
    /// that one exits (hackbench reaps its workers in the order it created them); fails
    /// at once without children. Its exit alone wakes the parent, as the kernel's `child_wait_callback`
    /// wakes only a parent waiting for that pid.
    WaitOldest,
    /// `poll()` of one fd for input: returns at once when its buffer holds data or every
    /// writer has gone, else blocks until a write; it reads nothing. Pollers wait
    /// together and a write wakes them all (they are not exclusive waiters like
    /// readers): hackbench's start signal.
    Poll { fd: Fd },
    /// `write()` `bytes` to a pipe, FIFO or socket, blocking while its buffer is full;
    /// repeats the call until all bytes are written.
    Write { fd: Fd, bytes: u32 },
    /// `read()` until `bytes` bytes have arrived (each call returns what is buffered),
    /// blocking while the buffer is empty.
    Read { fd: Fd, bytes: u32 },
    /// `semop()` on semaphore `num` of the set: add `delta`; a negative `delta` blocks
    /// while the value would go below zero, `0` blocks until the value is zero.
    SemOp { fd: Fd, num: u16, delta: i16 },
    /// `msgsnd()` a message of `bytes`; blocks while the queue has no room for it.
    MsgSnd { fd: Fd, bytes: u32 },
    /// `msgrcv()` the oldest message; blocks while the queue is empty.
    MsgRcv { fd: Fd },
    /// `kill(target, sig)`.
    Kill { target: SignalTarget, sig: u8 },
    /// `pause()`: block until a signal arrives.
    Pause,
    /// `sigtimedwait()`: take a pending signal, or block until one arrives or `timeout`
    /// passes.
    SigTimedWait { timeout: Ns },
    /// `flock(fd, op)`.
    Flock { fd: Fd, op: FlockOp },
    /// `pthread_mutex_lock` of mutex `mutex`: takes it if free (in user space, no
    /// system call), else waits in `futex()` ([`crate::SyncSpec::Mutex`] says how the
    /// lock passes on).
    Lock { mutex: SyncId },
    /// `pthread_mutex_unlock`: a `futex()` wake-up only when someone waits.
    Unlock { mutex: SyncId },
    /// `pthread_cond_wait(cond, mutex)` up to the wake-up: releases `mutex` and waits
    /// for a signal. glibc then takes `mutex` again, which is the [`Op::Lock`] that
    /// follows it in a program.
    CondWait { cond: SyncId, mutex: SyncId },
    /// `pthread_cond_signal` (the longest waiter) or, with `all`,
    /// `pthread_cond_broadcast`; a signal nobody waits for is lost.
    CondSignal { cond: SyncId, all: bool },
    /// rt-app's `barrier`: wait until all its users have arrived; the last one to
    /// arrive wakes the others and goes on.
    Barrier { barrier: SyncId },
    /// `sched_setaffinity()` of the task itself to CPU set `cpus` (`None`: every CPU).
    /// A task running on a CPU it may no longer use moves at once.
    SetAffinity { cpus: Option<CpuSetId> },
    /// `sched_setscheduler()` (and `setpriority()` for the nice value) of the task
    /// itself.
    SetSched { policy: Policy, nice: i8, rt_priority: u8 },
    /// Moves the task itself to task group `group` (`None`: the root group), as writing
    /// its thread id to the group's `tasks` (cgroup v1) or `cgroup.threads` (v2) file
    /// does (rt-app's `taskgroup` when a phase starts).
    SetGroup { group: Option<GroupId> },
    /// Any other system call, by x86_64 number: costs syscall time, never blocks.
    Syscall { nr: u32 },
    /// Exit the task (also what happens after the last operation).
    Exit,
}

/// A task's own scheduling settings: what [`Op::SetSched`] sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sched {
    pub policy: Policy,
    pub nice: i8,
    pub rt_priority: u8,
}

impl Sched {
    /// The operation that sets them.
    pub fn op(self) -> Op {
        Op::SetSched { policy: self.policy, nice: self.nice, rt_priority: self.rt_priority }
    }

    /// The class-ordered priority, as the engine ranks tasks: 1 for the fair class,
    /// 1 + the real-time priority for `SCHED_FIFO`/`SCHED_RR`.
    pub fn class_prio(self) -> u32 {
        if self.policy.is_rt() {
            1 + u32::from(self.rt_priority)
        } else {
            1
        }
    }
}

/// A program: what `exec` starts. Tasks that run the same program share it.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The task name (`comm`, at most 15 characters are kept by the kernel).
    pub comm: String,
    /// The executable's path, the key the behavior models remember programs by.
    pub path: String,
    pub ops: Vec<Op>,
}

impl Program {
    /// An empty program named `comm`, at path `/sim/bin/<comm>`.
    pub fn new(comm: impl Into<String>) -> Self {
        let comm = comm.into();
        Program { path: format!("/sim/bin/{comm}"), comm, ops: Vec::new() }
    }

    /// Appends an operation.
    pub fn op(mut self, op: Op) -> Self {
        self.ops.push(op);
        self
    }

    /// Appends a loop of `count` iterations (0 = for ever) whose body `body` builds.
    pub fn repeat(mut self, count: u32, body: impl FnOnce(Program) -> Program) -> Self {
        self.ops.push(Op::Loop { count });
        self = body(self);
        self.ops.push(Op::LoopEnd);
        self
    }

    /// Checks that loops are balanced; returns the position of the first problem.
    pub fn validate(&self) -> Result<(), InvalidWorkload> {
        let mut depth = 0usize;
        for (op, o) in self.ops.iter().enumerate() {
            match o {
                Op::Loop { .. } => depth += 1,
                Op::LoopEnd if depth == 0 => {
                    return Err(InvalidWorkload::LoopEndWithoutLoop { comm: self.comm.clone(), op })
                }
                Op::LoopEnd => depth -= 1,
                _ => {}
            }
        }
        if depth != 0 {
            return Err(InvalidWorkload::UnclosedLoops { comm: self.comm.clone(), open: depth });
        }
        Ok(())
    }
}

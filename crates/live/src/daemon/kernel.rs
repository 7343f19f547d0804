//! What the decision core reads from the machine: [`Kernel`]. The daemon answers from
//! /proc, the scheduling getters and the observer's task table (`Live`); the core's
//! tests answer from memory, with clocks they move by hand. Nothing here changes
//! anything.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use schedlab_model::{Ns, Pid};

use super::boost::Rank;
use super::core::Change;
use crate::observer::TaskInfo;
use crate::process::ProcInfo;
use crate::settings::CpuSet;

/// Every read the core's decisions need.
pub trait Kernel {
    /// Now, on the clock of the core's timers: profiling windows, the wait of new
    /// processes, the times in the log.
    fn now(&self) -> Instant;
    /// `CLOCK_MONOTONIC` now, in ns: the clock of the events' times (a blocked
    /// requester's wait, a boost's age).
    fn monotonic_ns(&self) -> Ns;
    /// Whether thread (or process) `tid` exists.
    fn alive(&self, tid: u32) -> bool;
    /// The start time of process `pid` (clock ticks since boot), `None` if it is gone:
    /// a pid whose start time changed is another process's now.
    fn start_time(&self, pid: u32) -> Option<u64>;
    /// What /proc says of process `pid`; `None` if it is gone.
    fn process(&self, pid: u32) -> Option<ProcInfo>;
    /// How long a process that started at `start_time` (clock ticks since boot, as
    /// [`ProcInfo::start_time`]) has lived.
    fn age(&self, start_time: u64) -> Duration;
    /// The CPU time process `pid` has used (all its threads, in ns) and how many
    /// threads it has (what its CPU set must leave room for), from one read: every
    /// managed process is read at every plan.
    fn usage(&self, pid: u32) -> Option<(Ns, u32)>;
    /// The time the main thread of process `pid` has run and the time it has waited
    /// runnable, in ns (its schedstat: what its exit's life will say, so far).
    fn schedstat(&self, pid: u32) -> Option<(Ns, Ns)>;
    /// Whether process `pid` draws for a person (a display library mapped): a program
    /// its habits never lower.
    fn draws(&self, pid: u32) -> bool;
    /// How thread `tid` ranks for boosting: its policy and nice value.
    fn rank(&self, tid: Pid) -> Option<Rank>;
    /// The highest real-time priority process `pid` may give itself (its
    /// `RLIMIT_RTPRIO` soft limit; 0: none); `None` if it is gone.
    fn rt_priority_limit(&self, pid: u32) -> Option<u32>;
    /// Whether process `pid` (its main thread) has the setting `change` gives already.
    fn holds(&self, pid: u32, change: &Change) -> bool;
    /// The nice value of process `pid` (its main thread).
    fn nice(&self, pid: u32) -> Option<i32>;
    /// The CPUs process `pid` (its main thread) may run on.
    fn affinity(&self, pid: u32) -> Option<CpuSet>;
    /// What the observer knows of thread `tid` (its process, its name): no /proc read.
    fn task(&self, tid: u32) -> Option<&TaskInfo>;
    /// The process of thread `tid`, from /proc.
    fn tgid(&self, tid: u32) -> Option<u32>;
    /// The program (executable path) thread `tid` runs.
    fn program(&self, tid: u32) -> Option<String>;
    /// The system calls counted since the observer started: (process, call number) →
    /// count.
    fn syscall_counts(&self) -> HashMap<(u32, u32), u64>;
}

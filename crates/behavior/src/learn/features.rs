//! Features of one process over one observation window: what the classifier and the
//! clusterer see. The thesis used raw per-syscall counts over a 30 s window; here those
//! become rates (so windows of different length compare), and derived features are
//! added: rates per kind of system call, switch rates, run-burst statistics and the
//! sleep ratio.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a process measured over one window, as the observer collects it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProcessProfile {
    /// The process (program) name.
    pub name: String,
    /// Length of the observation window in seconds (rates divide by it).
    pub window_secs: f64,
    /// System-call counts by call name.
    pub syscalls: BTreeMap<String, u64>,
    /// Voluntary context switches (the process blocked).
    pub voluntary_switches: u64,
    /// Involuntary context switches (the process was preempted).
    pub involuntary_switches: u64,
    /// Lengths of the process's run bursts (on-CPU stretches), in nanoseconds.
    pub run_bursts_ns: Vec<u64>,
    /// Total time on a CPU in the window, in nanoseconds.
    pub runtime_ns: u64,
    /// Total time asleep (blocked) in the window, in nanoseconds.
    pub sleep_ns: u64,
}

/// Named feature values; names make vectors from different sources line up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FeatureVector {
    /// Feature names, parallel to `values`.
    pub names: Vec<String>,
    /// Feature values.
    pub values: Vec<f64>,
}

impl FeatureVector {
    /// The value of feature `name`, if present.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.names.iter().position(|n| n == name).map(|i| self.values[i])
    }

    /// Appends one feature.
    fn push(&mut self, name: impl Into<String>, value: f64) {
        self.names.push(name.into());
        self.values.push(value);
    }
}

/// The kind of work a system call does; the grouped rates are more stable across
/// programs than the individual calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SyscallKind {
    /// Files and file descriptors: open, read, write, stat, ...
    File,
    /// Sockets.
    Network,
    /// Pipes, message queues, semaphores, shared memory, signals.
    Ipc,
    /// Address-space management: mmap, brk, ...
    Memory,
    /// Process and thread lifecycle and scheduling: fork, exec, exit, sched_*.
    Process,
    /// Clocks and timers.
    Time,
    /// Waiting for events: poll, select, epoll, futex, nanosleep, wait*.
    Waiting,
    /// Everything not in the table.
    Other,
}

impl SyscallKind {
    /// All kinds, in feature order.
    pub const ALL: [SyscallKind; 8] = [
        SyscallKind::File,
        SyscallKind::Network,
        SyscallKind::Ipc,
        SyscallKind::Memory,
        SyscallKind::Process,
        SyscallKind::Time,
        SyscallKind::Waiting,
        SyscallKind::Other,
    ];

    /// The lowercase name used in feature names (`kind.<name>.rate`).
    pub fn name(self) -> &'static str {
        match self {
            SyscallKind::File => "file",
            SyscallKind::Network => "network",
            SyscallKind::Ipc => "ipc",
            SyscallKind::Memory => "memory",
            SyscallKind::Process => "process",
            SyscallKind::Time => "time",
            SyscallKind::Waiting => "waiting",
            SyscallKind::Other => "other",
        }
    }

    /// The kind of the system call `name` (Linux names; a `sys_` prefix and a
    /// trailing `64` are ignored, so `sys_pread64` is `pread`).
    pub fn of(name: &str) -> SyscallKind {
        let name = name.strip_prefix("sys_").unwrap_or(name);
        SYSCALL_KINDS
            .iter()
            .find(|(n, _)| *n == name || name.strip_suffix("64") == Some(n))
            .map_or(SyscallKind::Other, |&(_, kind)| kind)
    }
}

/// The name → kind table, the single place that decides which call counts as what.
const SYSCALL_KINDS: &[(&str, SyscallKind)] = {
    use SyscallKind::*;
    &[
        ("open", File),
        ("openat", File),
        ("openat2", File),
        ("creat", File),
        ("close", File),
        ("read", File),
        ("write", File),
        ("pread", File),
        ("pwrite", File),
        ("readv", File),
        ("writev", File),
        ("preadv", File),
        ("pwritev", File),
        ("lseek", File),
        ("stat", File),
        ("fstat", File),
        ("lstat", File),
        ("newfstatat", File),
        ("statx", File),
        ("access", File),
        ("faccessat", File),
        ("getdents", File),
        ("ioctl", File),
        ("fcntl", File),
        ("dup", File),
        ("dup2", File),
        ("dup3", File),
        ("fsync", File),
        ("fdatasync", File),
        ("rename", File),
        ("renameat", File),
        ("unlink", File),
        ("unlinkat", File),
        ("mkdir", File),
        ("readlink", File),
        ("readlinkat", File),
        ("sendfile", File),
        ("socket", Network),
        ("socketpair", Network),
        ("connect", Network),
        ("accept", Network),
        ("accept4", Network),
        ("bind", Network),
        ("listen", Network),
        ("sendto", Network),
        ("recvfrom", Network),
        ("sendmsg", Network),
        ("recvmsg", Network),
        ("sendmmsg", Network),
        ("recvmmsg", Network),
        ("shutdown", Network),
        ("getsockopt", Network),
        ("setsockopt", Network),
        ("getsockname", Network),
        ("getpeername", Network),
        ("pipe", Ipc),
        ("pipe2", Ipc),
        ("msgget", Ipc),
        ("msgsnd", Ipc),
        ("msgrcv", Ipc),
        ("semget", Ipc),
        ("semop", Ipc),
        ("semtimedop", Ipc),
        ("shmget", Ipc),
        ("shmat", Ipc),
        ("shmdt", Ipc),
        ("mq_open", Ipc),
        ("mq_timedsend", Ipc),
        ("mq_timedreceive", Ipc),
        ("eventfd", Ipc),
        ("eventfd2", Ipc),
        ("kill", Ipc),
        ("tgkill", Ipc),
        ("rt_sigaction", Ipc),
        ("rt_sigprocmask", Ipc),
        ("rt_sigreturn", Ipc),
        ("mmap", Memory),
        ("munmap", Memory),
        ("mremap", Memory),
        ("mprotect", Memory),
        ("madvise", Memory),
        ("brk", Memory),
        ("mlock", Memory),
        ("munlock", Memory),
        ("fork", Process),
        ("vfork", Process),
        ("clone", Process),
        ("clone3", Process),
        ("execve", Process),
        ("execveat", Process),
        ("exit", Process),
        ("exit_group", Process),
        ("getpid", Process),
        ("gettid", Process),
        ("sched_yield", Process),
        ("sched_setaffinity", Process),
        ("sched_getaffinity", Process),
        ("setpriority", Process),
        ("prctl", Process),
        ("clock_gettime", Time),
        ("gettimeofday", Time),
        ("time", Time),
        ("clock_getres", Time),
        ("timer_create", Time),
        ("timer_settime", Time),
        ("timerfd_create", Time),
        ("timerfd_settime", Time),
        ("setitimer", Time),
        ("alarm", Time),
        ("poll", Waiting),
        ("ppoll", Waiting),
        ("select", Waiting),
        ("pselect6", Waiting),
        ("epoll_wait", Waiting),
        ("epoll_pwait", Waiting),
        ("epoll_pwait2", Waiting),
        ("epoll_ctl", Waiting),
        ("epoll_create", Waiting),
        ("epoll_create1", Waiting),
        ("futex", Waiting),
        ("futex_waitv", Waiting),
        ("nanosleep", Waiting),
        ("clock_nanosleep", Waiting),
        ("pause", Waiting),
        ("wait4", Waiting),
        ("waitid", Waiting),
        ("rt_sigsuspend", Waiting),
        ("rt_sigtimedwait", Waiting),
        ("io_getevents", Waiting),
        ("io_uring_enter", Waiting),
    ]
};

/// The p-quantile (0..=1) of `sorted` by nearest rank; 0 for an empty slice.
fn quantile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64
}

impl ProcessProfile {
    /// The feature vector of this profile, in this order: `syscall.rate` (all calls per
    /// second), `kind.<kind>.rate` for every `SyscallKind`, `switch.voluntary.rate`,
    /// `switch.involuntary.rate`, `burst.mean_us`, `burst.p90_us`, `burst.rate`
    /// (bursts per second), `sleep.ratio` (sleep / (sleep + runtime)), then
    /// `rate.<call>` for each call seen, sorted by name.
    ///
    /// A non-positive window yields zero rates rather than infinities.
    pub fn features(&self) -> FeatureVector {
        let per_sec = |count: f64| {
            if self.window_secs > 0.0 {
                count / self.window_secs
            } else {
                0.0
            }
        };
        let mut v = FeatureVector::default();
        let total: u64 = self.syscalls.values().sum();
        v.push("syscall.rate", per_sec(total as f64));
        let mut by_kind: BTreeMap<SyscallKind, u64> = BTreeMap::new();
        for (name, &count) in &self.syscalls {
            *by_kind.entry(SyscallKind::of(name)).or_insert(0) += count;
        }
        for kind in SyscallKind::ALL {
            let count = by_kind.get(&kind).copied().unwrap_or(0);
            v.push(format!("kind.{}.rate", kind.name()), per_sec(count as f64));
        }
        v.push("switch.voluntary.rate", per_sec(self.voluntary_switches as f64));
        v.push("switch.involuntary.rate", per_sec(self.involuntary_switches as f64));
        let mut bursts = self.run_bursts_ns.clone();
        bursts.sort_unstable();
        let mean =
            if bursts.is_empty() { 0.0 } else { bursts.iter().sum::<u64>() as f64 / bursts.len() as f64 };
        v.push("burst.mean_us", mean / 1e3);
        v.push("burst.p90_us", quantile(&bursts, 0.9) / 1e3);
        v.push("burst.rate", per_sec(bursts.len() as f64));
        let busy = self.sleep_ns + self.runtime_ns;
        let ratio = if busy == 0 { 0.0 } else { self.sleep_ns as f64 / busy as f64 };
        v.push("sleep.ratio", ratio);
        for (name, &count) in &self.syscalls {
            v.push(format!("rate.{name}"), per_sec(count as f64));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_table() {
        assert_eq!(SyscallKind::of("futex"), SyscallKind::Waiting);
        assert_eq!(SyscallKind::of("epoll_wait"), SyscallKind::Waiting);
        assert_eq!(SyscallKind::of("sys_pread64"), SyscallKind::File);
        assert_eq!(SyscallKind::of("sendto"), SyscallKind::Network);
        assert_eq!(SyscallKind::of("mmap"), SyscallKind::Memory);
        assert_eq!(SyscallKind::of("frobnicate"), SyscallKind::Other);
    }

    #[test]
    fn features_are_rates_and_statistics() {
        let profile = ProcessProfile {
            name: "editor".into(),
            window_secs: 10.0,
            syscalls: [("read", 30), ("poll", 50), ("futex", 20), ("mmap", 5)]
                .into_iter()
                .map(|(n, c)| (n.to_string(), c))
                .collect(),
            voluntary_switches: 40,
            involuntary_switches: 2,
            run_bursts_ns: (1..=10).map(|i| i * 1_000).collect(),
            runtime_ns: 1_000_000_000,
            sleep_ns: 9_000_000_000,
        };
        let f = profile.features();
        assert_eq!(f.names.len(), f.values.len());
        assert_eq!(f.get("syscall.rate"), Some(10.5));
        assert_eq!(f.get("kind.waiting.rate"), Some(7.0));
        assert_eq!(f.get("kind.file.rate"), Some(3.0));
        assert_eq!(f.get("kind.memory.rate"), Some(0.5));
        assert_eq!(f.get("kind.network.rate"), Some(0.0));
        assert_eq!(f.get("switch.voluntary.rate"), Some(4.0));
        assert_eq!(f.get("burst.mean_us"), Some(5.5));
        assert_eq!(f.get("burst.p90_us"), Some(9.0));
        assert_eq!(f.get("burst.rate"), Some(1.0));
        assert_eq!(f.get("sleep.ratio"), Some(0.9));
        assert_eq!(f.get("rate.poll"), Some(5.0));
        let empty = ProcessProfile::default().features();
        assert!(empty.values.iter().all(|&x| x == 0.0));
    }
}

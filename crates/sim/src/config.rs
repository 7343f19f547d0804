//! Simulation settings: the machine's topology, the fair-class flavour, the seed, and
//! every tunable.

use schedlab_model::{Ns, NSEC_PER_MSEC};

use crate::topology::Topology;

/// Which fair class `SCHED_OTHER`/`BATCH`/`IDLE` tasks get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FairFlavor {
    /// The Completely Fair Scheduler of Linux 2.6.23–6.5.
    Cfs,
    /// EEVDF, Linux 6.6 and later (as of 6.12: RUN_TO_PARITY, PREEMPT_SHORT).
    #[default]
    Eevdf,
    /// Classic UNIX time sharing: round robin with a fixed quantum and static priorities.
    Timeshare,
}

impl FairFlavor {
    pub fn name(self) -> &'static str {
        match self {
            FairFlavor::Cfs => "cfs",
            FairFlavor::Eevdf => "eevdf",
            FairFlavor::Timeshare => "timeshare",
        }
    }

    pub fn parse(s: &str) -> Option<FairFlavor> {
        Some(match s {
            "cfs" => FairFlavor::Cfs,
            "eevdf" => FairFlavor::Eevdf,
            "timeshare" => FairFlavor::Timeshare,
            _ => return None,
        })
    }
}

/// The kernel's tunable scaling (`SCHED_TUNABLESCALING_LOG`): `1 + ilog2(min(ncpus, 8))`.
pub fn tunable_scale(cpus: u32) -> u64 {
    1 + u64::from(cpus.clamp(1, 8).ilog2())
}

/// Every knob of the simulated kernel. Durations are nanoseconds; the fair-class
/// defaults are the kernel's normalized values times [`tunable_scale`], i.e. what
/// `/sys/kernel/debug/sched/*` shows on a machine with that many CPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct Tunables {
    /// Timer interrupts per second (CONFIG_HZ).
    pub hz: u64,
    /// Expire slices with a high-resolution timer instead of at the next tick (the
    /// kernel's HRTICK feature; off by default there too).
    pub hrtick: bool,
    /// CPU time a context switch costs the CPU before the next task runs.
    pub context_switch_ns: Ns,
    /// CPU time a task pays for each task it wakes (`try_to_wake_up`). 0 by default, as
    /// the default context switch cost includes the wake-up before it; `schedlab
    /// validate` measures both apart.
    pub wakeup_ns: Ns,
    /// CPU time a waker pays, beyond `wakeup_ns`, for a wake-up onto another CPU than its
    /// own: the inter-processor interrupt that tells that CPU (on a virtual machine, the
    /// exit that sending it takes). 0 by default; `schedlab validate` measures it.
    pub wakeup_remote_ns: Ns,
    /// CPU time a migrated task loses refilling caches on its new CPU.
    pub migration_ns: Ns,
    /// CPU time the parent spends in `fork()` of a new process beyond the system call
    /// itself (copying its page tables). 0 by default; `schedlab validate` measures it
    /// for a small process. Threads (`clone(CLONE_THREAD)`) do not pay it.
    pub fork_ns: Ns,
    /// CPU time a process spends dying once its program ends: its last thread pays it
    /// before it is dead (`exit_mmap` tearing down the address space, the faults of its
    /// short life). 0 by default; `schedlab validate` measures it for a small process.
    pub exit_ns: Ns,
    /// Wall time an idle CPU takes to run work sent to it (a wake-up, a migrated task, a
    /// timer): the interrupt and its exit from the idle state (cpuidle's exit latency; a
    /// virtual CPU's halt). Not CPU time: the CPU stays idle meanwhile. 0 by default;
    /// `schedlab validate` measures it.
    pub idle_exit_ns: Ns,
    /// CPU time of one system call's entry, exit and work (excluding copies).
    pub syscall_ns: Ns,
    /// CPU time to copy one KiB between user and kernel (pipes, sockets, queues).
    pub copy_ns_per_kib: Ns,
    /// CPU time to write one KiB of memory with `memset` ([`crate::Op::Memset`]: rt-app's
    /// `mem`, and the page-cache copy of its `iorun` to a file). The default, 8 ns, is a
    /// labelled input (rt-app 1.0's 4 MiB buffer, which stays in the cache, on the host
    /// this project started on); the rate is the host's, so `schedlab validate` measures it.
    pub mem_ns_per_kib: Ns,
    /// Spread of compute, I/O and system-call durations: each is drawn uniformly within ± this many
    /// percent, from the seeded generator (0: exact durations, the seed does not matter).
    pub jitter_pct: u64,
    /// CFS: the targeted preemption latency (`sched_latency_ns`).
    pub sched_latency_ns: Ns,
    /// CFS: the minimum slice (`sched_min_granularity_ns`).
    pub sched_min_granularity_ns: Ns,
    /// CFS: how far a waking task's vruntime must trail to preempt
    /// (`sched_wakeup_granularity_ns`).
    pub sched_wakeup_granularity_ns: Ns,
    /// EEVDF: the base slice (`base_slice_ns`).
    pub base_slice_ns: Ns,
    /// Load balancing: a task that ran within this time is cache-hot and is not
    /// migrated by the periodic balancer (`migration_cost_ns`).
    pub migration_cost_ns: Ns,
    /// `sched_rr_timeslice_ms` in nanoseconds: the SCHED_RR quantum.
    pub rr_timeslice_ns: Ns,
    /// The quantum of the `timeshare` fair class.
    pub timeshare_quantum_ns: Ns,
    /// `sched_rt_period_us` in nanoseconds: the period over which each CPU's real-time
    /// tasks may use `sched_rt_runtime_ns` of CPU time (RT throttling).
    pub sched_rt_period_ns: Ns,
    /// `sched_rt_runtime_us` in nanoseconds: the CPU time each CPU's real-time tasks may
    /// use per period before they are throttled until the next one; `None` is the
    /// kernel's -1 (`RUNTIME_INF`): no throttling. A runtime equal to the period also
    /// throttles nothing; 0 leaves no real-time task allowed at all (the kernel refuses
    /// `SCHED_FIFO`/`SCHED_RR` with EPERM).
    pub sched_rt_runtime_ns: Option<Ns>,
    /// The fair server's runtime (`/sys/kernel/debug/sched/fair_server/cpuN/runtime`):
    /// fair tasks starved by real-time ones get this much CPU time per
    /// `fair_server_period_ns`, at the end of the period (the server is deferred). 0
    /// disables the server.
    pub fair_server_runtime_ns: Ns,
    /// The fair server's period (`fair_server/cpuN/period`).
    pub fair_server_period_ns: Ns,
    /// Pipe and FIFO buffer size (`/proc/sys/fs/pipe-max-size` default 64 KiB).
    pub pipe_bytes: u32,
    /// UNIX stream socket buffer per direction (`net.core.wmem_default`).
    pub socket_bytes: u32,
    /// System V message queue size (`kernel.msgmnb`).
    pub msgmnb: u32,
    /// CFS feature START_DEBIT: new tasks start one virtual slice behind.
    pub start_debit: bool,
    /// CFS feature GENTLE_FAIR_SLEEPERS: sleepers get half a latency of credit.
    pub gentle_fair_sleepers: bool,
    /// CFS feature WAKEUP_PREEMPTION.
    pub wakeup_preemption: bool,
    /// EEVDF feature PLACE_LAG: keep a task's lag across sleeps.
    pub place_lag: bool,
    /// EEVDF feature PLACE_DEADLINE_INITIAL: new tasks get half a slice for their
    /// first deadline.
    pub place_deadline_initial: bool,
    /// EEVDF feature RUN_TO_PARITY: the current task keeps the CPU until its deadline
    /// once picked.
    pub run_to_parity: bool,
    /// EEVDF feature PREEMPT_SHORT: a waking task with a shorter slice may cut the
    /// current task's protected slice.
    pub preempt_short: bool,
    /// EEVDF feature DELAY_DEQUEUE: a task that sleeps while not eligible stays queued
    /// until it is picked or woken.
    pub delay_dequeue: bool,
    /// EEVDF feature DELAY_ZERO: a delayed task whose lag became positive leaves (or
    /// wakes) with zero lag.
    pub delay_zero: bool,
}

impl Tunables {
    /// The kernel's defaults for a machine with `cpus` CPUs.
    pub fn defaults(cpus: u32) -> Self {
        let f = tunable_scale(cpus);
        Tunables {
            hz: 250,
            hrtick: false,
            context_switch_ns: 1_500,
            wakeup_ns: 0,
            wakeup_remote_ns: 0,
            migration_ns: 5_000,
            fork_ns: 0,
            exit_ns: 0,
            idle_exit_ns: 0,
            syscall_ns: 300,
            copy_ns_per_kib: 100,
            mem_ns_per_kib: 8,
            jitter_pct: 0,
            sched_latency_ns: 6 * NSEC_PER_MSEC * f,
            sched_min_granularity_ns: 750_000 * f,
            sched_wakeup_granularity_ns: NSEC_PER_MSEC * f,
            base_slice_ns: 700_000 * f,
            migration_cost_ns: 500_000,
            rr_timeslice_ns: 100 * NSEC_PER_MSEC,
            timeshare_quantum_ns: 100 * NSEC_PER_MSEC,
            sched_rt_period_ns: 1_000 * NSEC_PER_MSEC,
            sched_rt_runtime_ns: Some(950 * NSEC_PER_MSEC),
            fair_server_runtime_ns: 50 * NSEC_PER_MSEC,
            fair_server_period_ns: 1_000 * NSEC_PER_MSEC,
            pipe_bytes: 65_536,
            socket_bytes: 212_992,
            msgmnb: 16_384,
            start_debit: true,
            gentle_fair_sleepers: true,
            wakeup_preemption: true,
            place_lag: true,
            place_deadline_initial: true,
            run_to_parity: true,
            preempt_short: true,
            delay_dequeue: true,
            delay_zero: true,
        }
    }

    /// The length of one tick.
    pub fn tick_ns(&self) -> Ns {
        1_000_000_000 / self.hz
    }

    /// CFS `sched_nr_latency`: how many tasks fit in one latency period at the
    /// minimum granularity.
    pub fn nr_latency(&self) -> u64 {
        (self.sched_latency_ns / self.sched_min_granularity_ns.max(1)).max(1)
    }

    /// Every tunable's name and meaning, for `--set help` and the docs.
    pub const NAMES: &'static [(&'static str, &'static str)] = &[
        ("hz", "timer interrupts per second (CONFIG_HZ), default 250"),
        ("hrtick", "expire slices with a high-resolution timer (0/1), default 0 as in the kernel"),
        ("context_switch_ns", "CPU time of one context switch"),
        ("wakeup_ns", "CPU time the waker pays per wake-up, default 0 (included in context_switch_ns)"),
        (
            "wakeup_remote_ns",
            "extra CPU time the waker pays for a wake-up onto another CPU (the IPI), default 0",
        ),
        ("migration_ns", "CPU time a migrated task loses refilling caches"),
        ("fork_ns", "CPU time the parent spends forking a process, beyond the system call, default 0"),
        ("exit_ns", "CPU time a process's last thread spends exiting (address-space teardown), default 0"),
        (
            "idle_exit_ns",
            "wall time an idle CPU takes to run work sent to it (interrupt, idle-state exit), default 0",
        ),
        ("syscall_ns", "CPU time of one system call"),
        ("copy_ns_per_kib", "CPU time to copy 1 KiB through a pipe, socket or queue"),
        ("mem_ns_per_kib", "CPU time to memset 1 KiB (rt-app mem and iorun to a file), default 8"),
        (
            "jitter_pct",
            "spread compute, I/O and system-call durations by +/- this many percent (seeded), default 0",
        ),
        ("sched_latency_ns", "cfs: targeted preemption latency (6 ms x scale)"),
        ("sched_min_granularity_ns", "cfs: minimum slice (0.75 ms x scale)"),
        ("sched_wakeup_granularity_ns", "cfs: wake-up preemption granularity (1 ms x scale)"),
        ("base_slice_ns", "eevdf: base slice (0.7 ms x scale)"),
        ("migration_cost_ns", "load balancer: cache-hot time (0.5 ms)"),
        ("rr_timeslice_ns", "SCHED_RR quantum (100 ms)"),
        ("timeshare_quantum_ns", "timeshare class quantum (100 ms)"),
        (
            "sched_rt_runtime_ns",
            "RT throttling: CPU time real-time tasks may use per period on each CPU (950 ms; -1: no limit)",
        ),
        ("sched_rt_period_ns", "RT throttling: the period of sched_rt_runtime_ns (1 s)"),
        (
            "fair_server_runtime_ns",
            "fair server: CPU time starved fair tasks get per period, at its end (50 ms; 0: off)",
        ),
        ("fair_server_period_ns", "fair server: its period (1 s; 100 us..4.194304 s)"),
        ("pipe_bytes", "pipe/FIFO buffer (65536)"),
        ("socket_bytes", "UNIX socket buffer per direction (212992)"),
        ("msgmnb", "System V message queue size (16384)"),
        ("start_debit", "cfs feature START_DEBIT (0/1)"),
        ("gentle_fair_sleepers", "cfs feature GENTLE_FAIR_SLEEPERS (0/1)"),
        ("wakeup_preemption", "cfs feature WAKEUP_PREEMPTION (0/1)"),
        ("place_lag", "eevdf feature PLACE_LAG (0/1)"),
        ("place_deadline_initial", "eevdf feature PLACE_DEADLINE_INITIAL (0/1)"),
        ("run_to_parity", "eevdf feature RUN_TO_PARITY (0/1)"),
        ("preempt_short", "eevdf feature PREEMPT_SHORT (0/1)"),
        ("delay_dequeue", "eevdf feature DELAY_DEQUEUE (0/1)"),
        ("delay_zero", "eevdf feature DELAY_ZERO (0/1)"),
    ];

    /// The field behind tunable `name`, with the values it accepts: the one table that
    /// both [`Tunables::get`] and [`Tunables::set`] read.
    fn field(&mut self, name: &str) -> Option<Field<'_>> {
        use Field::{Duration as D, Flag as F, Number as N, Size as S};
        const ANY: (u64, u64) = (0, u64::MAX);
        const POSITIVE: (u64, u64) = (1, u64::MAX);
        // sched_rt_period_us: 1 us..INT_MAX us.
        const RT_PERIOD: (u64, u64) = (1_000, i32::MAX as u64 * 1_000);
        // kernel/sched/debug.c: fair_server_period_min (100 us) and _max (2^22 us).
        const FAIR_SERVER_PERIOD: (u64, u64) = (100_000, (1 << 22) * 1_000);
        Some(match name {
            "hz" => N(&mut self.hz, (1, 10_000)),
            "hrtick" => F(&mut self.hrtick),
            "context_switch_ns" => D(&mut self.context_switch_ns, ANY),
            "wakeup_ns" => D(&mut self.wakeup_ns, ANY),
            "wakeup_remote_ns" => D(&mut self.wakeup_remote_ns, ANY),
            "migration_ns" => D(&mut self.migration_ns, ANY),
            "fork_ns" => D(&mut self.fork_ns, ANY),
            "exit_ns" => D(&mut self.exit_ns, ANY),
            "idle_exit_ns" => D(&mut self.idle_exit_ns, ANY),
            "syscall_ns" => D(&mut self.syscall_ns, ANY),
            "copy_ns_per_kib" => D(&mut self.copy_ns_per_kib, ANY),
            "mem_ns_per_kib" => D(&mut self.mem_ns_per_kib, ANY),
            "jitter_pct" => N(&mut self.jitter_pct, (0, 100)),
            "sched_latency_ns" => D(&mut self.sched_latency_ns, POSITIVE),
            "sched_min_granularity_ns" => D(&mut self.sched_min_granularity_ns, POSITIVE),
            "sched_wakeup_granularity_ns" => D(&mut self.sched_wakeup_granularity_ns, ANY),
            "base_slice_ns" => D(&mut self.base_slice_ns, POSITIVE),
            "migration_cost_ns" => D(&mut self.migration_cost_ns, ANY),
            "rr_timeslice_ns" => D(&mut self.rr_timeslice_ns, POSITIVE),
            "timeshare_quantum_ns" => D(&mut self.timeshare_quantum_ns, POSITIVE),
            "sched_rt_runtime_ns" => Field::Runtime(&mut self.sched_rt_runtime_ns, RT_PERIOD.1),
            "sched_rt_period_ns" => D(&mut self.sched_rt_period_ns, RT_PERIOD),
            "fair_server_runtime_ns" => D(&mut self.fair_server_runtime_ns, (0, FAIR_SERVER_PERIOD.1)),
            "fair_server_period_ns" => D(&mut self.fair_server_period_ns, FAIR_SERVER_PERIOD),
            "pipe_bytes" => S(&mut self.pipe_bytes),
            "socket_bytes" => S(&mut self.socket_bytes),
            "msgmnb" => S(&mut self.msgmnb),
            "start_debit" => F(&mut self.start_debit),
            "gentle_fair_sleepers" => F(&mut self.gentle_fair_sleepers),
            "wakeup_preemption" => F(&mut self.wakeup_preemption),
            "place_lag" => F(&mut self.place_lag),
            "place_deadline_initial" => F(&mut self.place_deadline_initial),
            "run_to_parity" => F(&mut self.run_to_parity),
            "preempt_short" => F(&mut self.preempt_short),
            "delay_dequeue" => F(&mut self.delay_dequeue),
            "delay_zero" => F(&mut self.delay_zero),
            _ => return None,
        })
    }

    /// The value of tunable `name`, or `None` for an unknown name.
    pub fn get(&self, name: &str) -> Option<TunableValue> {
        let mut copy = self.clone();
        Some(match copy.field(name)? {
            Field::Duration(v, _) => TunableValue::Duration(*v),
            Field::Runtime(v, _) => v.map_or(TunableValue::Unlimited, TunableValue::Duration),
            Field::Number(v, _) => TunableValue::Number(*v),
            Field::Size(v) => TunableValue::Number(u64::from(*v)),
            Field::Flag(v) => TunableValue::Flag(*v),
        })
    }

    /// Sets tunable `name` from text; durations accept a unit suffix (`ns`, `us`, `ms`,
    /// `s`; none means nanoseconds), `sched_rt_runtime_ns` also -1 (no limit), and flags
    /// accept `0/1/true/false/on/off`. A runtime and its period are checked against each
    /// other by [`Tunables::check`], once all are set.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let Some(field) = self.field(name) else {
            return Err(TunableError::Unknown { name: name.to_string() });
        };
        let num = || {
            value
                .parse::<u64>()
                .map_err(|_| TunableError::NotANumber { name: name.to_string(), value: value.to_string() })
        };
        let in_range = |v: u64, (lo, hi): (u64, u64)| {
            if v < lo || v > hi {
                Err(if lo == 1 && hi == u64::MAX {
                    TunableError::NotPositive { name: name.to_string() }
                } else {
                    TunableError::OutOfRange { name: name.to_string(), value: v, min: lo, max: hi }
                })
            } else {
                Ok(v)
            }
        };
        match field {
            Field::Duration(v, range) => {
                let ns = parse_duration(value)
                    .map_err(|source| TunableError::Duration { name: name.to_string(), source })?;
                *v = in_range(ns, range)?
            }
            Field::Runtime(v, _) if value.trim() == "-1" => *v = None,
            Field::Runtime(v, max) => {
                let ns = parse_duration(value)
                    .map_err(|source| TunableError::Duration { name: name.to_string(), source })?;
                *v = Some(in_range(ns, (0, max))?)
            }
            Field::Number(v, range) => *v = in_range(num()?, range)?,
            Field::Size(v) => {
                *v = u32::try_from(in_range(num()?, (1, u64::MAX))?).map_err(|_| TunableError::TooLarge {
                    name: name.to_string(),
                    value: value.to_string(),
                })?
            }
            Field::Flag(v) => {
                *v = parse_flag(value).ok_or_else(|| TunableError::NotAFlag {
                    name: name.to_string(),
                    value: value.to_string(),
                })?
            }
        }
        Ok(())
    }
}

impl Tunables {
    /// Checks what no single setting can: each runtime fits its period (the kernel's
    /// `sched_rt_global_validate` and `sched_fair_server_write` refuse it otherwise).
    /// Settings are applied one at a time, so this runs once they all are.
    pub fn check(&self) -> Result<(), TunableError> {
        let pairs = [
            ("sched_rt_runtime_ns", self.sched_rt_runtime_ns, "sched_rt_period_ns", self.sched_rt_period_ns),
            (
                "fair_server_runtime_ns",
                Some(self.fair_server_runtime_ns),
                "fair_server_period_ns",
                self.fair_server_period_ns,
            ),
        ];
        for (runtime, runtime_ns, period, period_ns) in pairs {
            if let Some(runtime_ns) = runtime_ns.filter(|&r| r > period_ns) {
                return Err(TunableError::RuntimeAbovePeriod { runtime, runtime_ns, period, period_ns });
            }
        }
        Ok(())
    }
}

/// Why [`Tunables::set`] refused a setting. Every variant names the tunable (as given)
/// and keeps the value, so a caller can say what was wrong without parsing text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TunableError {
    /// No tunable has this name; the message lists the known ones.
    #[error("unknown tunable '{name}'; known: {}", known_tunables())]
    Unknown { name: String },
    /// A duration tunable was given something that is not a duration.
    #[error("{name}: {source}")]
    Duration {
        name: String,
        #[source]
        source: DurationError,
    },
    /// A numeric tunable was given something that is not a whole number.
    #[error("{name}: '{value}' is not a whole number")]
    NotANumber { name: String, value: String },
    /// A tunable that must be positive was given 0.
    #[error("{name} must be greater than zero")]
    NotPositive { name: String },
    /// The value is outside the tunable's range `min..max` (inclusive).
    #[error("{name}: {value} is outside {min}..{max}")]
    OutOfRange { name: String, value: u64, min: u64, max: u64 },
    /// A buffer size does not fit the simulator's 32 bits.
    #[error("{name}: '{value}' is too large")]
    TooLarge { name: String, value: String },
    /// A flag was given something other than 0/1/true/false/on/off/yes/no.
    #[error("{name}: '{value}' is not 0/1/on/off")]
    NotAFlag { name: String, value: String },
    /// A runtime is longer than its period (the kernel's writes fail with EINVAL).
    #[error("{runtime} ({runtime_ns} ns) is longer than {period} ({period_ns} ns); set a runtime no longer than its period")]
    RuntimeAbovePeriod { runtime: &'static str, runtime_ns: Ns, period: &'static str, period_ns: Ns },
}

/// The tunables' names, comma-separated, for [`TunableError::Unknown`].
fn known_tunables() -> String {
    Tunables::NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// A tunable's value, typed for display and JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum TunableValue {
    /// A duration in nanoseconds.
    Duration(Ns),
    /// A plain number (hertz, bytes, percent).
    Number(u64),
    /// An on/off feature.
    Flag(bool),
    /// No limit: the kernel's -1 (`RUNTIME_INF`), written -1 in JSON too.
    #[serde(serialize_with = "minus_one")]
    Unlimited,
}

fn minus_one<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_i64(-1)
}

/// A tunable's field and the values it accepts (inclusive ranges).
enum Field<'a> {
    Duration(&'a mut Ns, (u64, u64)),
    /// A duration up to this many nanoseconds, or -1 for no limit (`None`).
    Runtime(&'a mut Option<Ns>, u64),
    Number(&'a mut u64, (u64, u64)),
    /// A buffer size in bytes, more than zero.
    Size(&'a mut u32),
    Flag(&'a mut bool),
}

fn parse_flag(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// Parses `1500`, `1500ns`, `1.5us`, `3ms`, `0.5s`, `2m`, `1h` into nanoseconds.
pub fn parse_duration(s: &str) -> Result<Ns, DurationError> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: f64 = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        u => return Err(DurationError::UnknownUnit { text: s.to_string(), unit: u.to_string() }),
    };
    let v: f64 = num.parse().map_err(|_| DurationError::NotANumber { text: s.to_string() })?;
    Ok((v * mult).round() as Ns)
}

/// Why [`parse_duration`] could not read a duration; the text is kept to be quoted back.
/// Its own type (not a string) so that clap value parsers and [`TunableError`] can carry
/// it as their source.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// The number is followed by something other than ns, us (µs), ms, s, m (min) or h.
    #[error("'{text}': unknown time unit '{unit}' (use ns, us, ms, s, m or h)")]
    UnknownUnit { text: String, unit: String },
    /// What comes before the unit is not a number.
    #[error("'{text}' is not a duration")]
    NotANumber { text: String },
}

/// Everything about a simulation run besides the workload.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// The CPUs and how they share cores, caches and nodes.
    pub topology: Topology,
    pub fair: FairFlavor,
    /// Seeds the random number generator; the same seed gives the same run.
    pub seed: u64,
    pub tunables: Tunables,
}

impl SimConfig {
    /// Kernel defaults for a flat machine of `cpus` CPUs (one node, one LLC, no SMT)
    /// with the given fair class and seed 1.
    pub fn new(cpus: u32, fair: FairFlavor) -> Self {
        SimConfig::with_topology(Topology::flat(cpus), fair)
    }

    /// Kernel defaults for `topology` with the given fair class and seed 1.
    pub fn with_topology(topology: Topology, fair: FairFlavor) -> Self {
        let tunables = Tunables::defaults(topology.cpus());
        SimConfig { topology, fair, seed: 1, tunables }
    }

    /// The number of CPUs.
    pub fn cpus(&self) -> u32 {
        self.topology.cpus()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_follows_the_kernel() {
        assert_eq!(tunable_scale(1), 1);
        assert_eq!(tunable_scale(2), 2);
        assert_eq!(tunable_scale(4), 3);
        assert_eq!(tunable_scale(8), 4);
        assert_eq!(tunable_scale(64), 4);
        let t = Tunables::defaults(2);
        assert_eq!(t.sched_latency_ns, 12_000_000);
        assert_eq!(t.base_slice_ns, 1_400_000);
        assert_eq!(t.nr_latency(), 8);
        assert_eq!(t.tick_ns(), 4_000_000);
    }

    #[test]
    fn durations_read_every_unit_from_ns_to_hours() {
        for (text, ns) in [("1500", 1500), ("2us", 2_000), ("3ms", 3_000_000), ("0.5s", 500_000_000)] {
            assert_eq!(parse_duration(text), Ok(ns), "{text}");
        }
        assert_eq!(parse_duration("2m"), Ok(120_000_000_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000_000));
        assert!(parse_duration("1d").unwrap_err().to_string().contains("use ns, us, ms, s, m or h"));
    }

    #[test]
    fn set_parses_units_and_rejects_nonsense() {
        let mut t = Tunables::defaults(1);
        t.set("base_slice_ns", "3ms").unwrap();
        assert_eq!(t.base_slice_ns, 3_000_000);
        t.set("syscall_ns", "1.5us").unwrap();
        assert_eq!(t.syscall_ns, 1_500);
        t.set("hrtick", "on").unwrap();
        assert!(t.hrtick);
        assert!(t.set("base_slice_ns", "0").is_err());
        assert!(t.set("hz", "abc").is_err());
        assert!(t.set("sched_latency_ns", "5 weeks").is_err());
        assert!(t.set("jitter_pct", "101").is_err());
        assert!(t.set("pipe_bytes", "5000000000").is_err());
        let e = t.set("no_such", "1").unwrap_err().to_string();
        assert!(e.contains("base_slice_ns"), "{e}");
        for (name, _) in Tunables::NAMES {
            let v = match *name {
                n if n.ends_with("_bytes") || n == "msgmnb" || n == "hz" => "100",
                n if n.ends_with("period_ns") => "1000000",
                _ => "1",
            };
            t.set(name, v).unwrap_or_else(|e| panic!("{name}: {e}"));
            let back = match t.get(name) {
                Some(TunableValue::Duration(d)) => d,
                Some(TunableValue::Number(n)) => n,
                Some(TunableValue::Flag(f)) => u64::from(f),
                other => panic!("{name} reads back as {other:?}"),
            };
            assert_eq!(back.to_string(), v, "{name}");
        }
        assert_eq!(Tunables::defaults(4).get("base_slice_ns"), Some(TunableValue::Duration(2_100_000)));
        assert_eq!(t.get("nope"), None);
    }

    #[test]
    fn rt_runtime_takes_minus_one_and_runtimes_must_fit_their_periods() {
        let mut t = Tunables::defaults(2);
        assert_eq!(t.get("sched_rt_runtime_ns"), Some(TunableValue::Duration(950_000_000)));
        assert_eq!(t.check(), Ok(()));
        t.set("sched_rt_runtime_ns", "-1").unwrap();
        assert_eq!(t.sched_rt_runtime_ns, None);
        assert_eq!(t.get("sched_rt_runtime_ns"), Some(TunableValue::Unlimited));
        assert_eq!(serde_json::to_string(&TunableValue::Unlimited).unwrap(), "-1");
        assert!(t.set("sched_rt_runtime_ns", "-2").is_err());
        assert!(t.set("sched_rt_period_ns", "0").is_err());
        assert!(t.set("fair_server_period_ns", "50us").is_err());
        assert!(t.set("fair_server_period_ns", "5s").is_err());
        t.set("sched_rt_runtime_ns", "2s").unwrap();
        let e = t.check().unwrap_err();
        assert!(matches!(e, TunableError::RuntimeAbovePeriod { runtime: "sched_rt_runtime_ns", .. }), "{e}");
        t.set("sched_rt_period_ns", "2s").unwrap();
        t.set("fair_server_runtime_ns", "2s").unwrap();
        assert!(e.to_string().contains("sched_rt_period_ns"), "{e}");
        assert!(matches!(
            t.check(),
            Err(TunableError::RuntimeAbovePeriod { period: "fair_server_period_ns", .. })
        ));
    }
}

//! The scheduling settings of a thread that the actuator changes, as values: read from a
//! thread, written to a thread, and written as the text the journal keeps.
//!
//! | setting  | kernel calls                      | journal text                        |
//! |----------|-----------------------------------|-------------------------------------|
//! | affinity | `sched_getaffinity` / `sched_setaffinity` | CPU list, `"0-1"`, `"1,3"`  |
//! | nice     | `getpriority` / `setpriority`     | `"10"`                              |
//! | policy   | `sched_getattr` / `sched_setattr` | `"SCHED_OTHER/0/0"`: policy / real-time priority / `sched_runtime` ns |
//! | cgroup   | `/proc/PID/cgroup` / `cgroup.procs` of the cpuset hierarchy ([`crate::cgroup`]) | cgroup path from the hierarchy's root, `"/"`, `"/schedlab.slice/batch"` |
//!
//! For `SCHED_OTHER` (and BATCH, IDLE) `sched_runtime` is the EEVDF per-task slice; the
//! kernel clamps it to 100 µs–100 ms and 0 means the default. `sched_getattr` reports the
//! default as the base slice itself, so a slice equal to the default (read from
//! `kthreadd`, a kernel thread nobody gives a slice) is written as 0.
//!
//! The cgroup is per process, not per thread: applying it to a thread moves its whole
//! thread group (its tgid is written to `cgroup.procs`), and does nothing when the thread
//! is in that cgroup already, so applying it to every thread of a process is harmless.

use std::fmt;
use std::io;

use schedlab_model::Pid;
use schedlab_store::Setting;

/// The smallest per-task slice the kernel accepts, in ns (it clamps below).
pub const MIN_SLICE_NS: u64 = 100_000;
/// The largest per-task slice the kernel accepts, in ns (it clamps above).
pub const MAX_SLICE_NS: u64 = 100_000_000;

/// How many CPUs an affinity mask holds (`CPU_SETSIZE`): CPU numbers are below it.
pub const CPU_LIMIT: usize = libc::CPU_SETSIZE as usize;

/// A CPU list ([`CpuSet::parse_list`]) that names no CPU set: which part, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct CpuListError {
    /// The part at fault (`4-2`).
    pub part: String,
    /// The whole list.
    pub list: String,
    pub problem: CpuListProblem,
}

/// What is wrong with a part of a CPU list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuListProblem {
    /// Neither a CPU number nor a range.
    NotACpu,
    /// A range that runs backwards.
    Backwards,
    /// A CPU at or beyond [`CPU_LIMIT`].
    BeyondLimit(usize),
    /// Nothing at all, where a CPU set is required.
    Empty,
}

impl CpuListError {
    fn describe(&self) -> String {
        let (part, list) = (&self.part, &self.list);
        match self.problem {
            CpuListProblem::NotACpu => {
                format!("'{part}' in CPU list '{list}' is not a CPU number or range like 0-3")
            }
            CpuListProblem::Empty => "an empty CPU list names no CPU".to_string(),
            CpuListProblem::Backwards => format!("range '{part}' in CPU list '{list}' runs backwards"),
            CpuListProblem::BeyondLimit(cpu) => {
                format!(
                    "CPU {cpu} in CPU list '{list}' is beyond the {CPU_LIMIT} CPUs an affinity mask holds"
                )
            }
        }
    }
}

/// A set of CPUs, as `sched_setaffinity` takes it (up to [`CPU_LIMIT`] CPUs).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CpuSet(Vec<usize>);

impl CpuSet {
    /// The set of the CPUs given (duplicates ignored).
    pub fn new(cpus: impl IntoIterator<Item = usize>) -> CpuSet {
        let mut v: Vec<usize> = cpus.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        CpuSet(v)
    }

    /// The CPUs, in increasing order.
    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// Parses a CPU list as `/proc/PID/status` (`Cpus_allowed_list`) and this type's
    /// `Display` write it: `"0-3,6,8-9"`. The empty string is the empty set. `None`
    /// for anything [`CpuSet::parse_list`] refuses.
    pub fn parse(list: &str) -> Option<CpuSet> {
        CpuSet::parse_list(list).ok()
    }

    /// [`CpuSet::parse`], saying what is wrong: a part that is neither a CPU number nor
    /// a range, a range that runs backwards, or a CPU at or beyond [`CPU_LIMIT`] (so that
    /// `0-18446744073709551615`, from a configuration or a tampered journal, is an error
    /// and not an allocation of the whole range).
    pub fn parse_list(list: &str) -> Result<CpuSet, CpuListError> {
        let mut cpus = Vec::new();
        for part in list.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = |problem| CpuListError { part: part.to_string(), list: list.to_string(), problem };
            let number = |n: &str| n.trim().parse::<usize>().map_err(|_| bad(CpuListProblem::NotACpu));
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => {
                    let n = number(part)?;
                    (n, n)
                }
            };
            if lo > hi {
                return Err(bad(CpuListProblem::Backwards));
            }
            if hi >= CPU_LIMIT {
                return Err(bad(CpuListProblem::BeyondLimit(hi)));
            }
            cpus.extend(lo..=hi);
        }
        Ok(CpuSet::new(cpus))
    }

    fn to_raw(&self) -> io::Result<libc::cpu_set_t> {
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        for &cpu in &self.0 {
            if cpu >= max {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("CPU {cpu} is beyond the {max} CPUs an affinity mask holds"),
                ));
            }
            // SAFETY: `cpu` is within the set, checked above.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        Ok(set)
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        let mut first = true;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

pub use schedlab_model::Policy;

/// The journal text's word for `SCHED_FLAG_RESET_ON_FORK`.
const RESET_ON_FORK: &str = "reset_on_fork";

/// A policy with its parameters: what `set_policy` sets and the journal records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyValue {
    /// The policy.
    pub policy: Policy,
    /// The real-time priority (1–99 for FIFO/RR, 0 otherwise).
    pub rt_priority: u32,
    /// For the fair policies, the EEVDF per-task slice in ns, 0 for the default;
    /// 0 for the real-time ones.
    pub sched_runtime_ns: u64,
    /// `SCHED_FLAG_RESET_ON_FORK`: a child forked by the thread starts at `SCHED_OTHER`
    /// and at nice 0 if the thread's nice is negative, not with what the thread has.
    /// Every raise schedlab makes carries it, so a boost is never inherited.
    pub reset_on_fork: bool,
}

impl PolicyValue {
    /// A policy value checked and brought to the form the kernel keeps: the priority must
    /// be 1–99 for FIFO/RR and 0 otherwise; a non-zero slice is clamped to 100 µs–100 ms
    /// as the kernel does; a real-time policy has no slice.
    pub fn new(policy: Policy, rt_priority: u32, sched_runtime_ns: u64) -> io::Result<PolicyValue> {
        let ok = if policy.is_rt() { (1..=99).contains(&rt_priority) } else { rt_priority == 0 };
        if !ok {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} takes priority {}, not {rt_priority}",
                    policy.name(),
                    if policy.is_rt() { "1-99" } else { "0" }
                ),
            ));
        }
        let sched_runtime_ns = match (policy.is_rt(), sched_runtime_ns) {
            (true, _) | (false, 0) => 0,
            (false, ns) => ns.clamp(MIN_SLICE_NS, MAX_SLICE_NS),
        };
        Ok(PolicyValue { policy, rt_priority, sched_runtime_ns, reset_on_fork: false })
    }

    /// The same value with the reset-on-fork flag `on` or off.
    pub fn with_reset_on_fork(self, on: bool) -> PolicyValue {
        PolicyValue { reset_on_fork: on, ..self }
    }

    /// Parses the journal text, `"SCHED_OTHER/0/3000000"`, with `/reset_on_fork` after
    /// it when the flag is on.
    pub fn parse(text: &str) -> Option<PolicyValue> {
        let mut parts = text.trim().split('/');
        let name = parts.next()?;
        let policy = Policy::ALL.into_iter().find(|p| p.name() == name)?;
        let rt_priority = parts.next()?.parse().ok()?;
        let runtime = parts.next()?.parse().ok()?;
        let reset_on_fork = match parts.next() {
            None => false,
            Some(RESET_ON_FORK) => true,
            Some(_) => return None,
        };
        if parts.next().is_some() {
            return None;
        }
        PolicyValue::new(policy, rt_priority, runtime).ok().map(|p| p.with_reset_on_fork(reset_on_fork))
    }
}

impl fmt::Display for PolicyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.policy.name(), self.rt_priority, self.sched_runtime_ns)?;
        if self.reset_on_fork {
            write!(f, "/{RESET_ON_FORK}")?;
        }
        Ok(())
    }
}

/// The value of one setting of a thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// The CPU affinity mask.
    Affinity(CpuSet),
    /// The nice value, -20–19.
    Nice(i32),
    /// The scheduling policy and its parameters.
    Policy(PolicyValue),
    /// The cgroup of the process in the cpuset hierarchy ([`crate::cgroup::Hierarchy::detect`]),
    /// as a path from the hierarchy's root: `"/"`, `"/schedlab.slice/batch"`.
    Cgroup(String),
    /// The process's `RLIMIT_RTTIME`.
    RtTime(RtTime),
}

/// `RLIMIT_RTTIME`: how long (µs of CPU) a real-time thread of the process may run
/// without blocking; the kernel sends `SIGXCPU` at the soft limit and `SIGKILL` at the
/// hard one. `None`: unlimited. Journal text: `"soft/hard"`, `"unlimited/unlimited"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtTime {
    pub soft_us: Option<u64>,
    pub hard_us: Option<u64>,
}

/// The `RLIMIT_RTTIME` soft limit a real-time policy from schedlab comes with, in µs: a
/// thread that runs 2 s of CPU without ever blocking gets `SIGXCPU` from the kernel —
/// which kills a process that does not handle it (a runaway one) and tells one that
/// does (an audio server) to give up real time — whether the daemon (which bounds a
/// real-time class to `rt_max_ms` per second, and a boost to `boost_max_ms`) still runs
/// or not. The rule is rtkit's, which grants real time only with `RLIMIT_RTTIME` set,
/// with a bound ten times rtkit's 200 ms: schedlab's classes are programs an
/// administrator named, not requests from any client. Only the soft limit is lowered:
/// putting it back needs no privilege (raising a hard limit needs `CAP_SYS_RESOURCE`,
/// which a sandboxed root may lack).
pub const RTTIME_BOUND_US: u64 = 2_000_000;

impl RtTime {
    /// Whether the kernel signals a runaway thread by [`RTTIME_BOUND_US`] at the latest.
    pub fn is_bounded(&self) -> bool {
        self.soft_us.is_some_and(|s| s <= RTTIME_BOUND_US)
    }

    /// This limit with its soft limit lowered to [`RTTIME_BOUND_US`] (or to the hard
    /// limit, if that is lower), the hard limit kept.
    pub fn bounded(self) -> RtTime {
        let soft = self.hard_us.map_or(RTTIME_BOUND_US, |h| h.min(RTTIME_BOUND_US));
        RtTime { soft_us: Some(self.soft_us.map_or(soft, |s| s.min(soft))), hard_us: self.hard_us }
    }

    fn parse(text: &str) -> Option<RtTime> {
        let one = |t: &str| match t {
            "unlimited" => Some(None),
            n => n.parse::<u64>().ok().filter(|&n| n < libc::RLIM_INFINITY).map(Some),
        };
        let (soft, hard) = text.trim().split_once('/')?;
        let (soft_us, hard_us) = (one(soft)?, one(hard)?);
        let soft_ok = match (soft_us, hard_us) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(s), Some(h)) => s <= h,
        };
        soft_ok.then_some(RtTime { soft_us, hard_us })
    }
}

impl fmt::Display for RtTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one = |v: Option<u64>| v.map_or("unlimited".to_string(), |n| n.to_string());
        write!(f, "{}/{}", one(self.soft_us), one(self.hard_us))
    }
}

/// The `RLIMIT_RTTIME` of the process of thread `tid`.
pub fn get_rttime(tid: Pid) -> io::Result<RtTime> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: no new limit is given (null); `limit` is valid to write.
    let rc =
        unsafe { libc::prlimit(tid.0 as libc::pid_t, libc::RLIMIT_RTTIME, std::ptr::null(), &mut limit) };
    check(rc as libc::c_long)?;
    let one = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v);
    Ok(RtTime { soft_us: one(limit.rlim_cur), hard_us: one(limit.rlim_max) })
}

/// Sets the `RLIMIT_RTTIME` of the process of thread `tid`.
pub fn set_rttime(tid: Pid, value: &RtTime) -> io::Result<()> {
    let one = |v: Option<u64>| v.unwrap_or(libc::RLIM_INFINITY);
    let limit = libc::rlimit { rlim_cur: one(value.soft_us), rlim_max: one(value.hard_us) };
    // SAFETY: `limit` is a valid rlimit; the old one is not asked for.
    let rc =
        unsafe { libc::prlimit(tid.0 as libc::pid_t, libc::RLIMIT_RTTIME, &limit, std::ptr::null_mut()) };
    check(rc as libc::c_long)
}

impl Value {
    /// The journal setting this value belongs to.
    pub fn setting(&self) -> Setting {
        match self {
            Value::Affinity(_) => Setting::Affinity,
            Value::Nice(_) => Setting::Nice,
            Value::Policy(_) => Setting::Policy,
            Value::Cgroup(_) => Setting::Cgroup,
            Value::RtTime(_) => Setting::RtTime,
        }
    }

    /// Whether the setting is the process's rather than each thread's (a cgroup, a
    /// resource limit): read and written once, through the main thread.
    pub fn per_process(&self) -> bool {
        matches!(self, Value::Cgroup(_) | Value::RtTime(_))
    }

    /// Whether this is a policy with the reset-on-fork flag.
    pub fn reset_on_fork(&self) -> bool {
        matches!(self, Value::Policy(p) if p.reset_on_fork)
    }

    /// Reads setting `what` of thread `tid`. Slice is not a setting this module handles
    /// (`Unsupported`; it is part of the policy).
    pub fn read(what: Setting, tid: Pid) -> io::Result<Value> {
        match what {
            Setting::Affinity => get_affinity(tid).map(Value::Affinity),
            Setting::Nice => get_nice(tid).map(Value::Nice),
            Setting::Policy => get_policy(tid).map(Value::Policy),
            Setting::Cgroup => crate::cgroup::current_cpuset_cgroup(tid).map(Value::Cgroup),
            Setting::RtTime => get_rttime(tid).map(Value::RtTime),
            Setting::Slice => Err(unsupported(what)),
        }
    }

    /// Parses the journal text of setting `what`.
    pub fn parse(what: Setting, text: &str) -> io::Result<Value> {
        let v = match what {
            Setting::Affinity => CpuSet::parse(text).map(Value::Affinity),
            Setting::Nice => text.trim().parse().ok().filter(|n| (-20..=19).contains(n)).map(Value::Nice),
            Setting::Policy => PolicyValue::parse(text).map(Value::Policy),
            Setting::Cgroup => Some(text.trim())
                .filter(|p| crate::cgroup::check_cgroup_path(p).is_ok())
                .map(|p| Value::Cgroup(p.to_string())),
            Setting::RtTime => RtTime::parse(text).map(Value::RtTime),
            Setting::Slice => return Err(unsupported(what)),
        };
        v.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("bad {} value {text:?}", what.as_str()))
        })
    }

    /// Writes the value to thread `tid`. A cgroup is written to the whole process of
    /// `tid`, unless `tid` is in it already (see the module documentation).
    pub fn apply(&self, tid: Pid) -> io::Result<()> {
        match self {
            Value::Affinity(cpus) => set_affinity(tid, cpus),
            Value::Nice(n) => set_nice(tid, *n),
            Value::Policy(p) => set_policy(tid, p),
            Value::Cgroup(path) => set_cgroup(tid, path),
            Value::RtTime(limit) => set_rttime(tid, limit),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Affinity(c) => c.fmt(f),
            Value::Nice(n) => n.fmt(f),
            Value::Policy(p) => p.fmt(f),
            Value::Cgroup(path) => f.write_str(path),
            Value::RtTime(limit) => limit.fmt(f),
        }
    }
}

fn unsupported(what: Setting) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("setting {} is not handled by the actuator", what.as_str()),
    )
}

fn check(rc: libc::c_long) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The affinity mask of thread `tid`.
pub fn get_affinity(tid: Pid) -> io::Result<CpuSet> {
    // SAFETY: all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the mask and its size are valid.
    let rc = unsafe {
        libc::sched_getaffinity(tid.0 as libc::pid_t, std::mem::size_of::<libc::cpu_set_t>(), &mut set)
    };
    check(rc as libc::c_long)?;
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    Ok(CpuSet::new((0..max).filter(|&c| {
        // SAFETY: `c` is within the set.
        unsafe { libc::CPU_ISSET(c, &set) }
    })))
}

/// Sets the affinity mask of thread `tid`.
pub fn set_affinity(tid: Pid, cpus: &CpuSet) -> io::Result<()> {
    let set = cpus.to_raw()?;
    // SAFETY: the mask and its size are valid.
    let rc = unsafe {
        libc::sched_setaffinity(tid.0 as libc::pid_t, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    check(rc as libc::c_long)
}

/// The nice value of thread `tid` (`getpriority(PRIO_PROCESS, tid)`, which on Linux is
/// per thread).
pub fn get_nice(tid: Pid) -> io::Result<i32> {
    // getpriority may legitimately return -1: errno tells an error apart.
    // SAFETY: errno is thread-local; getpriority has no memory arguments.
    let n = unsafe {
        *libc::__errno_location() = 0;
        libc::getpriority(libc::PRIO_PROCESS, tid.0 as libc::id_t)
    };
    let err = io::Error::last_os_error();
    if n == -1 && err.raw_os_error().is_some_and(|e| e != 0) {
        return Err(err);
    }
    Ok(n)
}

/// Sets the nice value of thread `tid`.
pub fn set_nice(tid: Pid, nice: i32) -> io::Result<()> {
    // SAFETY: no memory arguments.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid.0 as libc::id_t, nice) };
    check(rc as libc::c_long)
}

/// The `RLIMIT_RTPRIO` soft limit of process `pid`: the highest real-time priority it
/// may give itself without `CAP_SYS_NICE`.
pub fn rt_priority_limit(pid: Pid) -> io::Result<u32> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: no new limit is given (null); `limit` is valid to write.
    let rc =
        unsafe { libc::prlimit(pid.0 as libc::pid_t, libc::RLIMIT_RTPRIO, std::ptr::null(), &mut limit) };
    check(rc as libc::c_long)?;
    Ok(limit.rlim_cur.min(99) as u32)
}

/// `struct sched_attr` as of `SCHED_ATTR_SIZE_VER1` (56 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAttr {
    /// Size of the structure.
    pub size: u32,
    /// Policy number.
    pub sched_policy: u32,
    /// `SCHED_FLAG_*`.
    pub sched_flags: u64,
    /// Nice value (fair policies).
    pub sched_nice: i32,
    /// Real-time priority.
    pub sched_priority: u32,
    /// Runtime (deadline) or slice (fair), ns.
    pub sched_runtime: u64,
    /// Deadline, ns.
    pub sched_deadline: u64,
    /// Period, ns.
    pub sched_period: u64,
    /// Utilization clamp minimum.
    pub sched_util_min: u32,
    /// Utilization clamp maximum.
    pub sched_util_max: u32,
}

/// `SCHED_FLAG_RESET_ON_FORK`.
pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

/// `sched_getattr(tid)`.
pub fn sched_getattr(tid: Pid) -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: the kernel writes at most `size` bytes into `attr`.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid.0 as libc::pid_t,
            &mut attr as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as u32,
            0u32,
        )
    };
    check(rc)?;
    Ok(attr)
}

/// `sched_setattr(tid, attr, 0)`.
pub fn sched_setattr(tid: Pid, attr: &SchedAttr) -> io::Result<()> {
    let mut attr = *attr;
    attr.size = std::mem::size_of::<SchedAttr>() as u32;
    // SAFETY: the kernel reads `attr.size` bytes from `attr`.
    let rc = unsafe {
        libc::syscall(libc::SYS_sched_setattr, tid.0 as libc::pid_t, &attr as *const SchedAttr, 0u32)
    };
    check(rc)
}

/// The slice `sched_getattr` reports for a fair task with the default slice: that of
/// `kthreadd` (pid 2), a kernel thread nobody gives a slice of its own. `None` if it
/// cannot be read (no such thread, e.g. in a pid namespace). Read once per process:
/// every policy read needs it (a boost reads several), and the base slice is a
/// debugfs knob set at boot if at all.
pub fn default_slice_ns() -> Option<u64> {
    static DEFAULT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(read_default_slice_ns)
}

fn read_default_slice_ns() -> Option<u64> {
    let attr = sched_getattr(Pid(2)).ok()?;
    let comm = std::fs::read_to_string("/proc/2/comm").ok()?;
    (comm.trim() == "kthreadd" && Policy::from_number(attr.sched_policy).is_some_and(|p| !p.is_rt()))
        .then_some(attr.sched_runtime)
}

/// The policy of thread `tid`, with its reset-on-fork flag; a fair thread's slice equal
/// to [`default_slice_ns`] reads as 0, the default. A policy the actuator does not know (`SCHED_DEADLINE`, or
/// sched_ext's) is `Unsupported`.
pub fn get_policy(tid: Pid) -> io::Result<PolicyValue> {
    let attr = sched_getattr(tid)?;
    let policy = Policy::from_number(attr.sched_policy).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::Unsupported,
            format!("thread {} has policy {}", tid.0, attr.sched_policy),
        )
    })?;
    let (rt_priority, runtime) = if policy.is_rt() {
        (attr.sched_priority, 0)
    } else if Some(attr.sched_runtime) == default_slice_ns() {
        (0, 0)
    } else {
        (0, attr.sched_runtime)
    };
    Ok(PolicyValue::new(policy, rt_priority, runtime)?
        .with_reset_on_fork(attr.sched_flags & SCHED_FLAG_RESET_ON_FORK != 0))
}

/// Sets the policy of thread `tid`, with the value's reset-on-fork flag, keeping its nice
/// value (read with `getpriority`, since `sched_getattr` reports 0 for a real-time
/// thread).
pub fn set_policy(tid: Pid, p: &PolicyValue) -> io::Result<()> {
    let attr = SchedAttr {
        size: 0,
        sched_policy: p.policy.number(),
        sched_flags: if p.reset_on_fork { SCHED_FLAG_RESET_ON_FORK } else { 0 },
        sched_nice: get_nice(tid)?,
        sched_priority: p.rt_priority,
        sched_runtime: p.sched_runtime_ns,
        ..SchedAttr::default()
    };
    sched_setattr(tid, &attr)
}

/// Moves the process of thread `tid` to cgroup `path` of the cpuset hierarchy, unless
/// `tid` is there already: the process's tgid is written to `cgroup.procs`, which moves
/// all its threads (v1 and v2 alike).
pub fn set_cgroup(tid: Pid, path: &str) -> io::Result<()> {
    let hierarchy = crate::cgroup::Hierarchy::detect()?;
    if hierarchy.current_cgroup(tid)? == path {
        return Ok(());
    }
    let tgid = crate::process::tgid_of(tid.0).ok_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("no thread {} (reading its Tgid)", tid.0))
    })?;
    hierarchy.move_to(Pid(tgid), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_round_trip() {
        for text in ["", "0", "1", "0-1", "0-3,6,8-9", "5,7"] {
            assert_eq!(CpuSet::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(CpuSet::parse("3,1,2").unwrap().to_string(), "1-3");
        assert_eq!(CpuSet::parse("2-1"), None);
        assert_eq!(CpuSet::parse("x"), None);
        // A range to the end of usize (a tampered journal row) is refused, not allocated.
        let err = CpuSet::parse_list("0-18446744073709551615").unwrap_err().to_string();
        assert!(err.contains("1024"), "{err}");
        assert!(Value::parse(Setting::Affinity, "0-18446744073709551615").is_err());
        assert_eq!(CpuSet::parse("1023").map(|c| c.to_string()).as_deref(), Some("1023"));
        assert_eq!(CpuSet::parse("1024"), None);
    }

    #[test]
    fn policy_text_round_trips_and_clamps() {
        let p = PolicyValue::parse("SCHED_OTHER/0/3000000").unwrap();
        assert_eq!(
            p,
            PolicyValue {
                policy: Policy::Other,
                rt_priority: 0,
                sched_runtime_ns: 3_000_000,
                reset_on_fork: false
            }
        );
        assert_eq!(p.to_string(), "SCHED_OTHER/0/3000000");
        let raised = PolicyValue::parse("SCHED_FIFO/10/0/reset_on_fork").unwrap();
        assert_eq!(raised, PolicyValue::new(Policy::Fifo, 10, 0).unwrap().with_reset_on_fork(true));
        assert_eq!(raised.to_string(), "SCHED_FIFO/10/0/reset_on_fork");
        assert_eq!(PolicyValue::parse("SCHED_FIFO/10/0/x"), None);
        assert_eq!(PolicyValue::parse("SCHED_FIFO/10/0/reset_on_fork/"), None);
        assert_eq!(PolicyValue::new(Policy::Other, 0, 1).unwrap().sched_runtime_ns, MIN_SLICE_NS);
        assert_eq!(PolicyValue::new(Policy::Batch, 0, u64::MAX).unwrap().sched_runtime_ns, MAX_SLICE_NS);
        assert_eq!(PolicyValue::new(Policy::Fifo, 10, 5).unwrap().to_string(), "SCHED_FIFO/10/0");
        assert!(PolicyValue::new(Policy::Fifo, 0, 0).is_err());
        assert!(PolicyValue::new(Policy::Other, 1, 0).is_err());
        assert_eq!(PolicyValue::parse("SCHED_DEADLINE/0/0"), None);
        assert_eq!(std::mem::size_of::<SchedAttr>(), 56);
    }

    #[test]
    fn rttime_text_round_trips_and_is_checked() {
        for text in ["200000/1000000", "unlimited/unlimited", "5/unlimited", "2000000/2000000"] {
            assert_eq!(Value::parse(Setting::RtTime, text).unwrap().to_string(), text);
        }
        for bad in ["", "5", "unlimited/5", "6/5", "x/y", "18446744073709551615/unlimited"] {
            assert!(Value::parse(Setting::RtTime, bad).is_err(), "{bad:?}");
        }
        let unlimited = RtTime { soft_us: None, hard_us: None };
        assert!(!unlimited.is_bounded());
        assert_eq!(unlimited.bounded(), RtTime { soft_us: Some(RTTIME_BOUND_US), hard_us: None });
        assert!(unlimited.bounded().is_bounded());
        let tight = RtTime { soft_us: Some(1000), hard_us: Some(5000) };
        assert_eq!(tight.bounded(), tight, "a tighter limit is kept");
        assert_eq!(RtTime { soft_us: None, hard_us: Some(5000) }.bounded().soft_us, Some(5000));
    }

    #[test]
    fn cgroup_text_round_trips() {
        for text in ["/", "/schedlab.slice/batch", "/schedlab/batch"] {
            let v = Value::parse(Setting::Cgroup, text).unwrap();
            assert_eq!(v, Value::Cgroup(text.to_string()));
            assert_eq!(v.to_string(), text);
            assert_eq!(v.setting(), Setting::Cgroup);
        }
        for bad in ["", "batch", "/a/", "/../x"] {
            assert!(Value::parse(Setting::Cgroup, bad).is_err(), "{bad:?}");
        }
    }
}

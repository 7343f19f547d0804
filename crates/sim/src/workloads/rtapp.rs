//! Reads [rt-app](https://github.com/scheduler-tools/rt-app) JSON workload files, so that
//! one file runs both on a real machine (`rt-app file.json`) and in the simulator, and
//! means the same in both.
//!
//! The reference is the rt-app this project runs on its machines, Debian's `rt-app` 1.0;
//! its behaviour was checked against its source and measured (the tests in
//! `crates/lab/tests/rtapp_semantics.rs` run it). Keys that rt-app 1.0 does not know and
//! silently ignores, but later rt-app versions define (`fork`, `policy` and `priority`
//! in a phase, `util_min`/`util_max`, `taskgroup`), get those versions' meaning here.
//! The README's "rt-app support" table lists every key and event, what it means in the
//! simulator or why it is refused; this comment says how.
//!
//! # Syntax
//!
//! JSON plus C (`/* */`) and C++ (`//`) comments, as rt-app's json-c parser accepts.
//! Members are used in file order: events run in the order they are written. Keys must be
//! unique within an object; repeated events are numbered (`"run0"`, `"run1"`), which is
//! what rt-app's `workgen` does for you. Events are recognised by prefix, in rt-app's
//! order (`"run3"` is a `run`, `runtime` is tried before `run`). rt-app ignores keys it
//! does not know; here any such key, anywhere, is an error naming it and its
//! `line:column`, as is every key the simulator cannot give rt-app's meaning. Times are
//! in microseconds.
//!
//! # Tasks, phases and loops (rt-app 1.0)
//!
//! - A task with `phases` runs them in order, each `loop` times (default 1), and runs
//!   the whole sequence `loop` times (the task's `loop`, default -1: for ever).
//! - A task without `phases` is one phase of its events, repeated `loop` times (default
//!   1); rt-app 1.0 then repeats the task **for ever**: `{"loop": 3, "run": 1000,
//!   "sleep": 100000}` runs until the use case ends (`global.duration`), not 3 times
//!   (later rt-app versions run it once).
//! - A file where some thread runs for ever and `global.duration` is -1 (or missing) is
//!   refused: rt-app would run until killed and the simulation would not end.
//! - `instance` threads run each task (0: none; such a task can still be forked).
//!   Threads are named `<key>-<n>`, `n` counting the threads of the file in order, as
//!   rt-app numbers them. They are threads of one process.
//! - rt-app's threads wait at a start barrier; here all start at time 0, plus `delay`.
//!
//! # Timers
//!
//! A timer's first activation is `period` after its task's start (rt-app's `t_first`:
//! the use case's start plus `delay`), not after its first use; each use advances it by
//! its `period` and sleeps until then. All threads whose `ref` is the same share one
//! timer (so two threads using a 40 ms timer each run every 80 ms), unless the `ref`
//! starts with `unique`: then each thread has its own. A thread that finds the
//! activation passed does not sleep; in `relative` mode (the default) the timer restarts
//! from now, in `absolute` mode (if any event of the timer says so) it keeps its phase.
//!
//! # Synchronization ([`crate::SyncSpec`])
//!
//! Resources are named by events and created on first use, as rt-app does; a
//! `"resources"` section is checked (rt-app 1.0's types) and changes nothing.
//! - `lock`/`unlock`: a pthread mutex ([`Op::Lock`], [`Op::Unlock`]); with
//!   `global.pi_enabled`, a priority-inheritance mutex.
//! - `wait {ref, mutex}`: `pthread_cond_wait` (the caller holds `mutex`, as in rt-app
//!   files: `lock`, `wait`, `unlock`); `signal`, `broad`: `pthread_cond_signal`,
//!   `pthread_cond_broadcast`; `sync {ref, mutex}`: signal then wait.
//! - `suspend X`: lock mutex X, wait on condition X, unlock; `resume X`: lock mutex X,
//!   broadcast condition X, unlock. A resume with nobody suspended is lost.
//! - `barrier X`: all its users (one per `barrier` event naming X, times its task's
//!   instances) wait until the last arrives.
//!
//! # Other events
//!
//! - `run`: that much CPU time (rt-app's calibrated busy loop, exact here). `runtime`:
//!   run until that much wall time has passed. `sleep`: sleep. `yield`: `sched_yield()`.
//! - `mem N`: `N` bytes of `memset` ([`Op::Memset`]: CPU time at the machine's rate,
//!   the `mem_ns_per_kib` tunable).
//! - `iorun N`: `write()`s of `mem_buffer_size` bytes to `io_device`: a system call
//!   each for `/dev/null` (the default), plus the copy at the `mem` rate for any other
//!   file. No I/O wait: buffered writes return at once.
//! - `fork T` (rt-app ≥ 1.1): a new thread of template task `T` that sets `T`'s policy,
//!   priority and affinity and runs `T`'s phases; it starts at once (rt-app waits for
//!   `T`'s `delay` counted from the use case's start, which has usually passed), and its
//!   timers count from its start. rt-app stops after 1024 forks of one event; the
//!   simulator does not (the duration bounds it).
//!
//! # Scheduling settings
//!
//! - `policy`: `SCHED_OTHER`, `SCHED_IDLE`, `SCHED_FIFO`, `SCHED_RR`, and `SCHED_BATCH`
//!   (a schedlab extension). `SCHED_DEADLINE` and its keys are refused: not simulated.
//! - `priority`: the nice value (-20..19, default 0) of a fair policy, the real-time
//!   priority (1..99, default 10) of `SCHED_FIFO`/`RR`.
//! - `cpus`: the affinity. In a phase (rt-app 1.0 too), the phase's CPUs, or the task's
//!   when the phase has none, are set when the phase starts ([`Op::SetAffinity`]).
//! - `policy`/`priority` in a phase (rt-app ≥ 1.1): set when the phase starts
//!   ([`Op::SetSched`]) and kept by the phases that follow; a `priority` alone keeps the
//!   policy in force.
//! - `util_min`/`util_max` (0..1024, on the task): carried as data
//!   ([`TaskSpec::util_min`]); they change nothing in a simulation, which has no CPU
//!   frequencies or capacities.
//! - `taskgroup` (rt-app ≥ 1.1): a cgroup path, whose cgroup (and each parent,
//!   `/tg1/tg11` is inside `/tg1`) is a task group with the default weight (rt-app sets
//!   none: `cpu.weight` 100, `cpu.shares` 1024; [`crate::TaskGroup`]). A task's threads
//!   start in it; a phase's moves the thread there when the phase starts
//!   ([`Op::SetGroup`], after the affinity and the policy, as rt-app does), and the
//!   phases after it keep it; a thread forked from a template with one moves there first,
//!   else it stays in its parent's. Threads without a taskgroup, and those moved to `/`
//!   (the root cgroup), run in rt-app's own session's autogroup (nice 0), a sibling of
//!   the top-level cgroups: rt-app runs in a session of its own on a machine with
//!   autogroups enabled, as on this project's. A file where no running thread names a
//!   cgroup other than `/` has no groups at all. As rt-app, a real-time task with a
//!   taskgroup and more than 32 taskgroups are refused.
//!
//! # Global
//!
//! `duration` (seconds; -1 or 0: until every thread has exited), `default_policy`,
//! `pi_enabled`, `io_device` and `mem_buffer_size` (for `iorun`) are used; `calibration`
//! (simulated `run` time is exact), `logdir`, `log_basename`, `log_size`, `ftrace`,
//! `gnuplot`, `lock_pages` and `cumulative_slack` steer rt-app's own logging and memory
//! and are checked and ignored.

use std::collections::HashMap;
use std::ops::RangeInclusive;

use schedlab_model::{Cpu, Ns, Syscall, NSEC_PER_SEC, NSEC_PER_USEC};

use super::json::{self, Member, Node, Value};
use super::WorkloadError;
use crate::program::{CpuSetId, Sched, SyncId, TimerId};
use crate::{GroupId, Op, Policy, Program, SyncSpec, TaskGroup, TaskSpec, TimerSpec, Workload};

/// Reads the rt-app JSON document `text`; `file` names it in errors and becomes the
/// workload's name.
pub fn parse(text: &str, file: &str) -> Result<Workload, WorkloadError> {
    let root = json::parse(text).map_err(|e| {
        let (line, column) = json::line_column(text, e.at);
        WorkloadError::Json { file: file.to_string(), line, column, message: e.message }
    })?;
    workload(&root, file).map_err(|e| {
        let (line, column) = json::line_column(text, e.at);
        WorkloadError::RtApp { file: file.to_string(), line, column, message: e.message }
    })
}

/// What is wrong, at a byte offset of the file.
struct Error {
    at: usize,
    message: String,
}

/// A value read from the file, or where and why it is wrong.
type Parsed<T> = Result<T, Error>;

fn fail<T>(at: usize, message: impl Into<String>) -> Parsed<T> {
    Err(Error { at, message: message.into() })
}

/// rt-app's event names in the order rt-app tries them: a key is an event when it starts
/// with one of them.
const EVENTS: &[&str] = &[
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend",
    "resume", "mem", "iorun", "yield", "barrier", "fork",
];

const GLOBAL_KEYS: &str = "duration, default_policy, calibration, logdir, log_basename, log_size, ftrace, \
                           gnuplot, lock_pages, pi_enabled, io_device, mem_buffer_size, cumulative_slack";
const TASK_KEYS: &str = "instance, loop, policy, priority, cpus, delay, util_min, util_max, taskgroup, \
                         phases, and events";
const PHASE_KEYS: &str = "loop, cpus, policy, priority, taskgroup, and events";
const POLICIES: &str = "SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO or SCHED_RR";
/// The resource types rt-app 1.0 accepts in `"resources"`.
const RESOURCE_TYPES: &[&str] = &["mutex", "wait", "signal", "broadcast", "sync", "sleep", "run", "timer"];

/// The event a key names, if any.
fn event_kind(key: &str) -> Option<&'static str> {
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

/// The error for a key that is not accepted in a `place` object.
fn unknown<T>(m: &Member, place: &str, accepted: &str) -> Parsed<T> {
    fail(m.key_at, format!("unknown {place} key \"{}\"; accepted: {accepted}", m.key))
}

/// The error for a key of a task or phase that is not accepted: rt-app's keys for things
/// the simulator does not model say so, other keys are unknown.
fn refuse<T>(m: &Member, place: &str, accepted: &str) -> Parsed<T> {
    let why = match m.key.as_str() {
        "dl-runtime" | "dl-period" | "dl-deadline" | "period" | "deadline" => {
            "SCHED_DEADLINE is not simulated"
        }
        "nodes_membind" => "NUMA memory binding is not simulated",
        "util_min" | "util_max" => {
            "utilization clamps are task data in the simulator and cannot change per phase; set it on the task"
        }
        _ => return unknown(m, place, accepted),
    };
    fail(m.key_at, format!("\"{}\": {why}", m.key))
}

fn object<'a>(node: &'a Node, what: &str) -> Parsed<&'a [Member]> {
    match &node.value {
        Value::Object(members) => Ok(members),
        v => fail(node.at, format!("{what} must be an object, found {}", v.kind())),
    }
}

fn int(node: &Node, what: &str) -> Parsed<i64> {
    match node.value {
        Value::Int(n) => Ok(n),
        ref v => fail(node.at, format!("{what} must be an integer, found {}", v.kind())),
    }
}

fn int_in(node: &Node, what: &str, range: RangeInclusive<i64>) -> Parsed<i64> {
    match int(node, what)? {
        n if range.contains(&n) => Ok(n),
        n => fail(node.at, format!("{what} must be in {}..={}, not {n}", range.start(), range.end())),
    }
}

fn string<'a>(node: &'a Node, what: &str) -> Parsed<&'a str> {
    match &node.value {
        Value::Str(s) => Ok(s),
        v => fail(node.at, format!("{what} must be a string, found {}", v.kind())),
    }
}

fn boolean(node: &Node, what: &str) -> Parsed<bool> {
    match node.value {
        Value::Bool(b) => Ok(b),
        ref v => fail(node.at, format!("{what} must be true or false, found {}", v.kind())),
    }
}

/// A time in microseconds (rt-app reads it as a C `int`), in nanoseconds.
fn usec(node: &Node, what: &str) -> Parsed<Ns> {
    match node.value {
        Value::Int(n @ 0..=0x7fff_ffff) => Ok(n as Ns * NSEC_PER_USEC),
        Value::Int(n) => fail(node.at, format!("{what} must be 0..=2147483647 microseconds, not {n}")),
        ref v => {
            fail(node.at, format!("{what} must be an integer number of microseconds, found {}", v.kind()))
        }
    }
}

/// A `loop` value as an [`Op::Loop`] count: `-1` (for ever) is 0.
fn loop_count(node: &Node) -> Parsed<u32> {
    match int(node, "\"loop\"")? {
        -1 => Ok(0),
        n => match u32::try_from(n) {
            Ok(n) if n > 0 => Ok(n),
            _ => fail(node.at, format!("\"loop\" must be -1 (for ever) or a count from 1, not {n}")),
        },
    }
}

fn policy(node: &Node, what: &str) -> Parsed<Policy> {
    let name = string(node, what)?;
    if name.eq_ignore_ascii_case("SCHED_DEADLINE") {
        return fail(node.at, format!("SCHED_DEADLINE is not simulated; use {POLICIES}"));
    }
    Policy::parse(name)
        .map_or_else(|| fail(node.at, format!("unknown policy \"{name}\"; use {POLICIES}")), Ok)
}

/// The settings `policy` and rt-app's `priority` give: the nice value (-20..19, default
/// 0) of a fair policy, the real-time priority (1..99, default 10) of `SCHED_FIFO`/`RR`.
fn sched(policy: Policy, priority: Option<&Node>) -> Parsed<Sched> {
    let mut s = Sched { policy, nice: 0, rt_priority: 0 };
    match (priority, policy.is_rt()) {
        (None, true) => s.rt_priority = 10,
        (None, false) => {}
        (Some(v), true) => {
            s.rt_priority = int_in(v, &format!("\"priority\" of a {} task", policy.name()), 1..=99)? as u8
        }
        (Some(v), false) => {
            let what = format!("\"priority\" of a {} task (its nice value)", policy.name());
            s.nice = int_in(v, &what, -20..=19)? as i8;
        }
    }
    Ok(s)
}

/// Appends `body` to `ops`, in a loop unless it runs once (`count` 0: for ever).
fn push_repeated(ops: &mut Vec<Op>, count: u32, body: Vec<Op>) {
    if count == 1 {
        ops.extend(body);
    } else {
        ops.push(Op::Loop { count });
        ops.extend(body);
        ops.push(Op::LoopEnd);
    }
}

/// The settings of `"global"` that matter to the simulation.
struct Global {
    duration_ns: Option<Ns>,
    policy: Policy,
    pi_enabled: bool,
    /// `io_device` is `/dev/null`, rt-app's default: a write to it copies nothing.
    io_null: bool,
    mem_buffer_size: u64,
}

fn global(node: Option<&Node>) -> Parsed<Global> {
    let mut g = Global {
        duration_ns: None,
        policy: Policy::Other,
        pi_enabled: false,
        io_null: true,
        mem_buffer_size: 4 << 20,
    };
    let Some(node) = node else { return Ok(g) };
    for m in object(node, "\"global\"")? {
        let (what, v) = (format!("\"{}\"", m.key), &m.node);
        match m.key.as_str() {
            "duration" => {
                let secs = int_in(v, &what, i64::from(i32::MIN)..=i64::from(i32::MAX))?;
                g.duration_ns = (secs > 0).then(|| secs as Ns * NSEC_PER_SEC);
            }
            "default_policy" => g.policy = policy(v, &what)?,
            "pi_enabled" => g.pi_enabled = boolean(v, &what)?,
            "io_device" => g.io_null = string(v, &what)? == "/dev/null",
            "mem_buffer_size" => g.mem_buffer_size = int_in(v, &what, 1..=i64::from(i32::MAX))? as u64,
            "calibration" | "log_size" if matches!(v.value, Value::Int(_) | Value::Str(_)) => {}
            "calibration" | "log_size" => {
                return fail(v.at, format!("{what} must be an integer or a string, found {}", v.value.kind()))
            }
            "ftrace" if matches!(v.value, Value::Bool(_) | Value::Str(_)) => {}
            "ftrace" => {
                return fail(v.at, format!("{what} must be a string or a boolean, found {}", v.value.kind()))
            }
            "lock_pages" | "gnuplot" | "cumulative_slack" => {
                boolean(v, &what)?;
            }
            "logdir" | "log_basename" => {
                string(v, &what)?;
            }
            _ => return unknown(m, "global", GLOBAL_KEYS),
        }
    }
    Ok(g)
}

/// Checks `"resources"`: each member a `{"type": T}` with one of rt-app 1.0's types.
/// Declaring a resource changes nothing: rt-app creates every resource an event names
/// that is not declared, the same as a declared one.
fn resources(node: &Node) -> Parsed<()> {
    for r in object(node, "\"resources\"")? {
        let mut kind = None;
        for m in object(&r.node, &format!("resource \"{}\"", r.key))? {
            match m.key.as_str() {
                "type" => kind = Some(string(&m.node, "\"type\"").map(|t| (t, m.node.at))?),
                _ => return unknown(m, "resource", "type"),
            }
        }
        match kind {
            Some((t, _)) if RESOURCE_TYPES.contains(&t) => {}
            Some((t, at)) => {
                return fail(
                    at,
                    format!("unknown resource type \"{t}\"; rt-app accepts {}", RESOURCE_TYPES.join(", ")),
                )
            }
            None => return fail(r.key_at, format!("resource \"{}\" has no \"type\"", r.key)),
        }
    }
    Ok(())
}

/// The kinds of named synchronization objects; rt-app keys its resources by name and
/// type, so a mutex and a condition variable may share a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Mutex,
    Cond,
    Barrier,
}

/// What the tasks of a file share: synchronization objects, timers and CPU sets, each
/// created when an event first names it, as rt-app does.
struct Shared<'g> {
    g: &'g Global,
    /// Every task key, in file order, with its instance count (fork looks them up).
    names: Vec<(String, u32)>,
    sync: Vec<SyncSpec>,
    sync_ids: HashMap<(String, Kind), SyncId>,
    timers: Vec<TimerSpec>,
    shared_timers: HashMap<String, TimerId>,
    cpu_sets: Vec<Vec<Cpu>>,
    /// Templates forked, in the order first forked: their fork programs come after the
    /// programs of the tasks that start with the use case.
    forked: Vec<usize>,
    /// Every `taskgroup` value, as written, in the order first named: [`Op::SetGroup`]
    /// names them by their index here until [`make_groups`] makes them groups.
    taskgroups: Vec<String>,
}

impl Shared<'_> {
    fn sync_id(&mut self, name: &str, kind: Kind) -> SyncId {
        let next = self.sync.len() as SyncId;
        let id = *self.sync_ids.entry((name.to_string(), kind)).or_insert(next);
        if id == next {
            self.sync.push(match kind {
                Kind::Mutex => SyncSpec::Mutex { pi: self.g.pi_enabled },
                Kind::Cond => SyncSpec::Cond,
                Kind::Barrier => SyncSpec::Barrier { users: 0 },
            });
        }
        id
    }

    fn new_timer(&mut self, per_task: bool) -> TimerId {
        self.timers.push(TimerSpec { relative: true, per_task });
        (self.timers.len() - 1) as TimerId
    }

    /// The index of the `taskgroup` value `name`.
    fn taskgroup(&mut self, name: &str) -> GroupId {
        match self.taskgroups.iter().position(|g| g == name) {
            Some(i) => i as GroupId,
            None => {
                self.taskgroups.push(name.to_string());
                (self.taskgroups.len() - 1) as GroupId
            }
        }
    }

    fn cpu_set(&mut self, cpus: &[Cpu]) -> CpuSetId {
        match self.cpu_sets.iter().position(|s| s == cpus) {
            Some(i) => i as CpuSetId,
            None => {
                self.cpu_sets.push(cpus.to_vec());
                (self.cpu_sets.len() - 1) as CpuSetId
            }
        }
    }
}

/// The events of one task template being read: its instances and its `unique` timers.
struct EventCtx<'a, 'g> {
    shared: &'a mut Shared<'g>,
    instances: u32,
    unique_timers: &'a mut HashMap<String, TimerId>,
    /// The number of the tasks that start with the use case (fork programs follow).
    live_programs: u32,
}

/// The operations of one event.
fn event(m: &Member, kind: &str, cx: &mut EventCtx) -> Parsed<Vec<Op>> {
    let what = format!("\"{}\"", m.key);
    let name = |cx: &mut EventCtx, k| -> Parsed<SyncId> { Ok(cx.shared.sync_id(string(&m.node, &what)?, k)) };
    Ok(match kind {
        "run" => vec![Op::Compute(usec(&m.node, &what)?)],
        "runtime" => vec![Op::Spin(usec(&m.node, &what)?)],
        "sleep" => vec![Op::Sleep(usec(&m.node, &what)?)],
        "yield" => vec![Op::Yield],
        "timer" => vec![timer(&m.node, &what, cx)?],
        "lock" => vec![Op::Lock { mutex: name(cx, Kind::Mutex)? }],
        "unlock" => vec![Op::Unlock { mutex: name(cx, Kind::Mutex)? }],
        "signal" => vec![Op::CondSignal { cond: name(cx, Kind::Cond)?, all: false }],
        "broad" => vec![Op::CondSignal { cond: name(cx, Kind::Cond)?, all: true }],
        "wait" | "sync" => {
            let (cond, mutex) = cond_and_mutex(&m.node, &what, cx)?;
            let wait = [Op::CondWait { cond, mutex }, Op::Lock { mutex }];
            if kind == "sync" {
                [&[Op::CondSignal { cond, all: false }][..], &wait].concat()
            } else {
                wait.to_vec()
            }
        }
        // rt-app's suspend and resume use the condition variable and the mutex named
        // by their string (by convention a thread's name).
        "suspend" => {
            let (cond, mutex) = (name(cx, Kind::Cond)?, name(cx, Kind::Mutex)?);
            vec![Op::Lock { mutex }, Op::CondWait { cond, mutex }, Op::Lock { mutex }, Op::Unlock { mutex }]
        }
        "resume" => {
            let (cond, mutex) = (name(cx, Kind::Cond)?, name(cx, Kind::Mutex)?);
            vec![Op::Lock { mutex }, Op::CondSignal { cond, all: true }, Op::Unlock { mutex }]
        }
        "barrier" => {
            let id = name(cx, Kind::Barrier)?;
            if let SyncSpec::Barrier { users } = &mut cx.shared.sync[id as usize] {
                *users += cx.instances;
            }
            vec![Op::Barrier { barrier: id }]
        }
        "mem" => vec![Op::Memset(bytes(&m.node, &what)?)],
        "iorun" => iorun(bytes(&m.node, &what)?, cx.shared.g),
        "fork" => {
            let target = string(&m.node, &what)?;
            let Some(t) = cx.shared.names.iter().position(|(k, _)| k == target) else {
                return fail(m.node.at, format!("{what}: no task is named \"{target}\""));
            };
            let k = cx.shared.forked.iter().position(|&f| f == t).unwrap_or_else(|| {
                cx.shared.forked.push(t);
                cx.shared.forked.len() - 1
            });
            vec![Op::Fork { program: cx.live_programs + k as u32, thread: true }]
        }
        other => unreachable!("{other} is one of EVENTS"),
    })
}

/// A byte count of `mem` or `iorun` (a C `int` in rt-app).
fn bytes(node: &Node, what: &str) -> Parsed<Ns> {
    Ok(int_in(node, &format!("{what} (bytes)"), 0..=i64::from(i32::MAX))? as Ns)
}

/// rt-app's `iorun`: `write()`s of at most `mem_buffer_size` bytes to `io_device`
/// until `bytes` are written. Writing to `/dev/null` copies nothing, so each write costs
/// a system call; any other device also costs the copy into the page cache, at the
/// `mem` rate (buffered writes do not wait for the disk; dirty-page throttling is not
/// modelled).
fn iorun(bytes: Ns, g: &Global) -> Vec<Op> {
    let writes = bytes.div_ceil(g.mem_buffer_size) as u32;
    let mut ops = Vec::new();
    push_repeated(&mut ops, writes, vec![Op::Syscall { nr: Syscall::Write.nr() }]);
    if writes == 0 {
        ops.clear();
    }
    if !g.io_null && bytes > 0 {
        ops.push(Op::Memset(bytes));
    }
    ops
}

/// The `ref` (condition variable) and `mutex` of a `wait` or `sync` event; rt-app names
/// a missing one `"unknown"`.
fn cond_and_mutex(node: &Node, what: &str, cx: &mut EventCtx) -> Parsed<(SyncId, SyncId)> {
    let (mut cond, mut mutex) = ("unknown", "unknown");
    for m in object(node, what)? {
        match m.key.as_str() {
            "ref" => cond = string(&m.node, "\"ref\"")?,
            "mutex" => mutex = string(&m.node, "\"mutex\"")?,
            _ => return unknown(m, what, "ref, mutex"),
        }
    }
    Ok((cx.shared.sync_id(cond, Kind::Cond), cx.shared.sync_id(mutex, Kind::Mutex)))
}

/// A `timer` event: one timer per `ref` for all tasks, one per task when the `ref`
/// starts with `unique`; any `"mode": "absolute"` makes the timer absolute.
fn timer(node: &Node, what: &str, cx: &mut EventCtx) -> Parsed<Op> {
    // rt-app's defaults for a timer without ref or period.
    let (mut name, mut period, mut absolute) = ("unknown", 0, false);
    for m in object(node, what)? {
        match m.key.as_str() {
            "ref" => name = string(&m.node, "\"ref\"")?,
            "period" => period = usec(&m.node, "\"period\"")?,
            "mode" => match string(&m.node, "\"mode\"")? {
                "relative" => {}
                "absolute" => absolute = true,
                mode => {
                    return fail(
                        m.node.at,
                        format!("\"mode\" must be \"relative\" or \"absolute\", not \"{mode}\""),
                    )
                }
            },
            _ => return unknown(m, "timer", "ref, period, mode"),
        }
    }
    let id = if name.starts_with("unique") {
        match cx.unique_timers.get(name) {
            Some(&id) => id,
            None => {
                let id = cx.shared.new_timer(true);
                cx.unique_timers.insert(name.to_string(), id);
                id
            }
        }
    } else {
        match cx.shared.shared_timers.get(name) {
            Some(&id) => id,
            None => {
                let id = cx.shared.new_timer(false);
                cx.shared.shared_timers.insert(name.to_string(), id);
                id
            }
        }
    };
    if absolute {
        cx.shared.timers[id as usize].relative = false;
    }
    Ok(Op::Timer { timer: id, period })
}

/// A phase as read: its loop count, events, and the settings it changes.
struct Phase<'a> {
    key: &'a Member,
    count: u32,
    ops: Vec<Op>,
    cpus: Option<Vec<Cpu>>,
    policy: Option<Policy>,
    priority: Option<&'a Node>,
    taskgroup: Option<(&'a str, usize)>,
}

fn phase<'a>(p: &'a Member, cx: &mut EventCtx) -> Parsed<Phase<'a>> {
    let mut ph = Phase {
        key: p,
        count: 1,
        ops: Vec::new(),
        cpus: None,
        policy: None,
        priority: None,
        taskgroup: None,
    };
    for m in object(&p.node, &format!("phase \"{}\"", p.key))? {
        match (m.key.as_str(), event_kind(&m.key)) {
            ("loop", _) => ph.count = loop_count(&m.node)?,
            (_, Some(kind)) => ph.ops.extend(event(m, kind, cx)?),
            ("cpus", _) => ph.cpus = Some(cpus(&m.node)?),
            ("policy", _) => ph.policy = Some(policy(&m.node, "\"policy\"")?),
            ("priority", _) => ph.priority = Some(&m.node),
            ("taskgroup", _) => ph.taskgroup = Some(taskgroup(&m.node)?),
            _ => return refuse(m, "phase", PHASE_KEYS),
        }
    }
    if ph.ops.is_empty() {
        return fail(p.key_at, format!("phase \"{}\" has no events", p.key));
    }
    Ok(ph)
}

/// A `taskgroup` value (a cgroup path, which rt-app requires to start with `/`) and
/// where it is.
fn taskgroup(node: &Node) -> Parsed<(&str, usize)> {
    match string(node, "\"taskgroup\"")? {
        g if g.starts_with('/') => Ok((g, node.at)),
        g => fail(node.at, format!("\"taskgroup\" must be a cgroup path starting with '/', not \"{g}\"")),
    }
}

/// A member of `"tasks"` as read.
struct Task {
    instances: u32,
    sched: Sched,
    cpus: Option<Vec<Cpu>>,
    delay_ns: Ns,
    util: (Option<u16>, Option<u16>),
    /// The taskgroups it uses (`""`: none named), with where each is named.
    groups: Vec<(String, usize)>,
    /// Its own `taskgroup` (the index of the value), where its threads start.
    group: Option<GroupId>,
    /// Its operations after its start.
    ops: Vec<Op>,
    /// Whether it repeats for ever, and why.
    forever: Option<&'static str>,
}

fn task(t: &Member, g: &Global, shared: &mut Shared, live_programs: u32) -> Parsed<Task> {
    let members = object(&t.node, &format!("task \"{}\"", t.key))?;
    let mut task = Task {
        instances: 1,
        sched: Sched { policy: g.policy, nice: 0, rt_priority: 0 },
        cpus: None,
        delay_ns: 0,
        util: (None, None),
        groups: Vec::new(),
        group: None,
        ops: Vec::new(),
        forever: None,
    };
    let (mut count, mut priority, mut phases, mut events, mut group) = (None, None, None, Vec::new(), None);
    for m in members {
        let (what, v) = (format!("\"{}\"", m.key), &m.node);
        match (m.key.as_str(), event_kind(&m.key)) {
            ("instance", _) => task.instances = int_in(v, &what, 0..=100_000)? as u32,
            ("loop", _) => count = Some(loop_count(v)?),
            ("policy", _) => task.sched.policy = policy(v, &what)?,
            ("priority", _) => priority = Some(v),
            ("cpus", _) => task.cpus = Some(cpus(v)?),
            ("delay", _) => task.delay_ns = usec(v, &what)?,
            ("util_min", _) => task.util.0 = Some(int_in(v, &what, 0..=1024)? as u16),
            ("util_max", _) => task.util.1 = Some(int_in(v, &what, 0..=1024)? as u16),
            ("taskgroup", _) => group = Some(taskgroup(v)?),
            ("phases", _) => phases = Some(v),
            (_, Some(kind)) => events.push((m, kind)),
            _ => return refuse(m, "task", TASK_KEYS),
        }
    }
    task.sched = sched(task.sched.policy, priority)?;
    task.group = group.map(|(g, _)| shared.taskgroup(g));
    let mut unique_timers = HashMap::new();
    let mut cx =
        EventCtx { shared, instances: task.instances, unique_timers: &mut unique_timers, live_programs };
    let Some(phases) = phases else {
        if events.is_empty() {
            return fail(t.key_at, format!("task \"{}\" has no events and no \"phases\"", t.key));
        }
        // rt-app 1.0 makes the events one phase that repeats "loop" times, and repeats
        // the task for ever: a task without phases runs until the use case ends.
        let mut body = Vec::new();
        for (m, kind) in events {
            body.extend(event(m, kind, &mut cx)?);
        }
        push_repeated(&mut task.ops, 0, body);
        task.forever = Some(
            "rt-app 1.0 repeats a task without \"phases\" until the use case ends, whatever its \"loop\"",
        );
        task.groups.push(group.map_or_else(|| (String::new(), t.key_at), |(g, at)| (g.to_string(), at)));
        return Ok(task);
    };
    if let Some((m, _)) = events.first() {
        return fail(
            m.key_at,
            format!("\"{}\": rt-app ignores events at task level when the task has \"phases\"; move it into a phase", m.key),
        );
    }
    let list = object(phases, "\"phases\"")?;
    if list.is_empty() {
        return fail(phases.at, "\"phases\" has no phase");
    }
    let read = list.iter().map(|p| phase(p, &mut cx)).collect::<Parsed<Vec<_>>>()?;
    // rt-app loops for ever when the task sets no "loop".
    let count = count.unwrap_or(0);
    if count == 0 {
        task.forever = Some("its \"loop\" is -1 (for ever), rt-app's default for a task with \"phases\"");
    } else if read.iter().any(|p| p.count == 0) {
        task.forever = Some("one of its phases has \"loop\": -1 (for ever)");
    }
    let mut group = group.map_or_else(|| (String::new(), t.key_at), |(g, at)| (g.to_string(), at));
    task.groups.push(group.clone());
    for p in &read {
        if let Some((g, at)) = p.taskgroup {
            group = (g.to_string(), at);
            task.groups.push(group.clone());
        }
    }
    let settings = phase_settings(&task, &read, count != 1)?;
    let mut body = Vec::new();
    for (p, before) in read.into_iter().zip(settings) {
        body.extend(before.into_iter().map(|b| match b {
            Before::Sched(s) => s.op(),
            Before::Cpus(None) => Op::SetAffinity { cpus: None },
            Before::Cpus(Some(list)) => Op::SetAffinity { cpus: Some(cx.shared.cpu_set(&list)) },
            Before::Group(g) => Op::SetGroup { group: Some(cx.shared.taskgroup(g)) },
        }));
        push_repeated(&mut body, p.count, p.ops);
    }
    push_repeated(&mut task.ops, count, body);
    Ok(task)
}

/// A setting a phase makes when it starts.
enum Before<'a> {
    Sched(Sched),
    Cpus(Option<Vec<Cpu>>),
    /// Its `taskgroup`.
    Group(&'a str),
}

/// What each phase sets when it starts, as rt-app ≥ 1.1 does: its `cpus`, or else the
/// task's, whenever they differ from the previous phase's (rt-app 1.0 too); its `policy`
/// and `priority` when it has them (a phase without them keeps what the one before set);
/// its `taskgroup` when it has one that differs from the group the thread is in (a phase
/// without one keeps it). A `priority` without `policy` is read in the policy in force
/// when the phase starts; `repeats` says the task runs its phases more than once, and a
/// file where that policy differs between the first time and the next is refused.
fn phase_settings<'a>(task: &Task, phases: &[Phase<'a>], repeats: bool) -> Parsed<Vec<Vec<Before<'a>>>> {
    let mut out: Vec<Vec<Before>> = phases.iter().map(|_| Vec::new()).collect();
    let resolve = |start: Policy| -> Parsed<(Vec<Option<Sched>>, Policy)> {
        let mut current = start;
        let mut got = Vec::new();
        for p in phases {
            let s = match (p.policy, p.priority) {
                (None, None) => None,
                (policy, priority) => Some(sched(policy.unwrap_or(current), priority)?),
            };
            if let Some(s) = s {
                current = s.policy;
            }
            got.push(s);
        }
        Ok((got, current))
    };
    let (first, end) = resolve(task.sched.policy)?;
    if repeats {
        let (again, _) = resolve(end)?;
        if let Some(i) = (0..phases.len()).find(|&i| first[i].map(|s| s.policy) != again[i].map(|s| s.policy))
        {
            let at = phases[i].priority.map_or(phases[i].key.key_at, |n| n.at);
            return fail(
                at,
                format!(
                    "phase \"{}\" sets \"priority\" without \"policy\": that is {} the first time and {} when \
                     the task loops; give \"policy\" too",
                    phases[i].key.key,
                    task.sched.policy.name(),
                    end.name()
                ),
            );
        }
    }
    if phases.iter().any(|p| p.cpus.is_some()) {
        let eff: Vec<Option<Vec<Cpu>>> =
            phases.iter().map(|p| p.cpus.clone().or_else(|| task.cpus.clone())).collect();
        for i in 0..phases.len() {
            let changed = if i == 0 {
                eff[0] != task.cpus || (repeats && eff[0] != eff[phases.len() - 1])
            } else {
                eff[i] != eff[i - 1]
            };
            if changed {
                out[i].push(Before::Cpus(eff[i].clone()));
            }
        }
    }
    // rt-app sets the affinity first, then the policy, then the taskgroup.
    for (o, s) in out.iter_mut().zip(&first) {
        if let Some(s) = s {
            o.push(Before::Sched(*s));
        }
    }
    // The group each phase runs in (by name), from the task's own.
    let own = task.groups.first().map(|g| g.0.as_str()).filter(|g| !g.is_empty());
    let mut eff: Vec<Option<&str>> = Vec::with_capacity(phases.len());
    for p in phases {
        let previous = eff.last().copied().unwrap_or(own);
        eff.push(p.taskgroup.map(|(g, _)| g).or(previous));
    }
    for (i, p) in phases.iter().enumerate() {
        let Some((g, _)) = p.taskgroup else { continue };
        let before = if i == 0 { own } else { eff[i - 1] };
        let again = repeats && i == 0 && eff[phases.len() - 1] != Some(g);
        if before != Some(g) || again {
            out[i].push(Before::Group(g));
        }
    }
    Ok(out)
}

fn cpus(node: &Node) -> Parsed<Vec<Cpu>> {
    let Value::Array(items) = &node.value else {
        return fail(
            node.at,
            format!("\"cpus\" must be an array of CPU numbers, found {}", node.value.kind()),
        );
    };
    if items.is_empty() {
        return fail(node.at, "\"cpus\" is empty: give at least one CPU number");
    }
    let mut cpus = items
        .iter()
        .map(|c| Ok(int_in(c, "a CPU number in \"cpus\"", 0..=i64::from(Cpu::MAX))? as Cpu))
        .collect::<Parsed<Vec<_>>>()?;
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// rt-app refuses a taskgroup for a real-time task, and more than 32 taskgroups.
fn check_groups(
    tasks: &[(&Member, Task)],
    taskgroups: &[String],
    runs: impl Fn(usize) -> bool,
) -> Parsed<()> {
    for (_, (t, task)) in tasks.iter().enumerate().filter(|(i, _)| runs(*i)) {
        for g in &task.groups {
            if !g.0.is_empty() && task.sched.policy.is_rt() {
                return fail(g.1, format!("\"taskgroup\" of task \"{}\": rt-app puts only SCHED_OTHER and SCHED_IDLE tasks in groups", t.key));
            }
        }
    }
    if taskgroups.len() > MAX_TASKGROUPS {
        let at = tasks.iter().flat_map(|(_, t)| &t.groups).find(|g| g.0 == taskgroups[MAX_TASKGROUPS]);
        return fail(
            at.map_or(0, |g| g.1),
            format!("{} taskgroups: rt-app allows at most {MAX_TASKGROUPS}", taskgroups.len()),
        );
    }
    Ok(())
}

/// rt-app's `max_nbr_tgs`: distinct `taskgroup` values a file may name.
const MAX_TASKGROUPS: usize = 32;

/// Whether a `taskgroup` value names the root cgroup (`"/"`).
fn is_root_cgroup(name: &str) -> bool {
    name.split('/').all(str::is_empty)
}

/// The task groups of a file that puts threads in cgroups (`taskgroups`, by value), as
/// rt-app ≥ 1.1 makes them on a machine whose rt-app runs in a session of its own with
/// autogroups enabled (this project's): each value's cgroup path, its parents created as
/// needed (`/tg1/tg11` is inside `/tg1`), all with the default shares (rt-app writes
/// none: `cpu.weight` 100, `cpu.shares` 1024), and rt-app's own session's autogroup
/// (nice 0), where threads without a taskgroup and those moved to `/` (the root cgroup,
/// where autogroups apply) run. Returns the session's group and each value's.
fn make_groups(w: &mut Workload, taskgroups: &[String]) -> (GroupId, Vec<GroupId>) {
    let session = w.add_group(TaskGroup::autogroup("autogroup (rt-app's session)", 0));
    let mut paths: HashMap<String, GroupId> = HashMap::new();
    let groups = taskgroups
        .iter()
        .map(|name| {
            let mut parent = None;
            let mut path = String::new();
            for part in name.split('/').filter(|p| !p.is_empty()) {
                path = format!("{path}/{part}");
                let g = *paths
                    .entry(path.clone())
                    .or_insert_with(|| w.add_group(TaskGroup::cpu_weight(path.clone(), parent, 100)));
                parent = Some(g);
            }
            parent.unwrap_or(session)
        })
        .collect();
    (session, groups)
}

fn workload(root: &Node, file: &str) -> Parsed<Workload> {
    let (mut tasks, mut global_node) = (None, None);
    for m in object(root, "the document")? {
        match m.key.as_str() {
            "tasks" => tasks = Some(&m.node),
            "global" => global_node = Some(&m.node),
            "resources" => resources(&m.node)?,
            _ => return unknown(m, "top-level", "tasks, global, resources"),
        }
    }
    let g = global(global_node)?;
    let Some(tasks) = tasks else {
        return fail(
            root.at,
            "missing \"tasks\": an rt-app file describes its threads in a \"tasks\" object",
        );
    };
    let members = object(tasks, "\"tasks\"")?;
    // A first look at every task's instances: the programs of forked templates follow
    // those of the tasks that start with the use case.
    let names: Vec<(String, u32)> = members
        .iter()
        .map(|t| {
            let instances = match &t.node.value {
                Value::Object(ms) => {
                    ms.iter().find(|m| m.key == "instance").map_or(1, |m| match m.node.value {
                        Value::Int(n) => n.clamp(0, i64::from(u32::MAX)) as u32,
                        _ => 1,
                    })
                }
                _ => 1,
            };
            (t.key.clone(), instances)
        })
        .collect();
    let live_programs = names.iter().filter(|(_, n)| *n > 0).count() as u32;
    let mut shared = Shared {
        g: &g,
        names,
        sync: Vec::new(),
        sync_ids: HashMap::new(),
        timers: Vec::new(),
        shared_timers: HashMap::new(),
        cpu_sets: Vec::new(),
        forked: Vec::new(),
        taskgroups: Vec::new(),
    };
    let read = members
        .iter()
        .map(|t| Ok((t, task(t, &g, &mut shared, live_programs)?)))
        .collect::<Parsed<Vec<_>>>()?;
    // The templates whose threads run: those with instances, and those forked.
    let runs = |i: usize| read[i].1.instances > 0 || shared.forked.contains(&i);
    check_groups(&read, &shared.taskgroups, runs)?;
    // Groups only when a running thread goes into a cgroup other than the root.
    let grouped = (0..read.len())
        .filter(|&i| runs(i))
        .flat_map(|i| &read[i].1.groups)
        .any(|g| !g.0.is_empty() && !is_root_cgroup(&g.0));
    if g.duration_ns.is_none() {
        if let Some((t, task)) =
            (0..read.len()).filter(|&i| runs(i)).map(|i| &read[i]).find(|(_, task)| task.forever.is_some())
        {
            return fail(
                t.key_at,
                format!(
                    "task \"{}\" runs for ever ({}) and \"global\" has no \"duration\": rt-app would run until \
                     killed and the simulation would never end; set \"duration\" in \"global\"",
                    t.key,
                    task.forever.unwrap_or_default()
                ),
            );
        }
    }
    let mut w = Workload { name: file.to_string(), duration_ns: g.duration_ns, ..Workload::default() };
    let (session, groups) = if grouped {
        let (session, groups) = make_groups(&mut w, &shared.taskgroups);
        (Some(session), groups)
    } else {
        (None, Vec::new())
    };
    let group_of = |tg: Option<GroupId>| tg.map_or(session, |tg| groups.get(tg as usize).copied());
    for (t, task) in read.iter().filter(|(_, task)| task.instances > 0) {
        if w.tasks.len() as u64 + u64::from(task.instances) > super::MAX_TASKS {
            return fail(
                t.node.at,
                format!(
                    "{} threads in all with \"{}\"'s {} instances: a workload has at most {}",
                    w.tasks.len() as u64 + u64::from(task.instances),
                    t.key,
                    task.instances,
                    super::MAX_TASKS
                ),
            );
        }
        let program = w.add_program(Program { ops: task.ops.clone(), ..Program::new(t.key.as_str()) });
        for _ in 0..task.instances {
            let mut spec = TaskSpec::new(format!("{}-{}", t.key, w.tasks.len()), program);
            spec.policy = task.sched.policy;
            spec.nice = task.sched.nice;
            spec.rt_priority = task.sched.rt_priority;
            spec.affinity = task.cpus.clone();
            spec.start_ns = task.delay_ns;
            spec.thread_of = (!w.tasks.is_empty()).then_some(0);
            (spec.util_min, spec.util_max) = task.util;
            spec.group = group_of(task.group);
            w.tasks.push(spec);
        }
    }
    // A forked thread sets its template's policy, priority and affinity, and its
    // taskgroup if it has one (else it stays in its parent's), then runs its template's
    // events (rt-app ≥ 1.1's fork event).
    for i in shared.forked.clone() {
        let (t, task) = &read[i];
        let cpus = task.cpus.as_ref().map(|c| shared.cpu_set(c));
        let mut ops = vec![task.sched.op(), Op::SetAffinity { cpus }];
        ops.extend(task.group.map(|g| Op::SetGroup { group: Some(g) }));
        ops.extend(task.ops.iter().copied());
        w.add_program(Program { ops, ..Program::new(t.key.as_str()) });
    }
    // Each SetGroup names its taskgroup value until now: its group (the root without
    // groups, where only the root cgroup can have been named).
    for op in w.programs.iter_mut().flat_map(|p| &mut p.ops) {
        if let Op::SetGroup { group: Some(tg) } = op {
            *op = Op::SetGroup { group: groups.get(*tg as usize).copied() };
        }
    }
    if w.tasks.is_empty() {
        return fail(tasks.at, "no thread to run: \"tasks\" is empty or every task has \"instance\": 0");
    }
    (w.sync, w.timers, w.cpu_sets) = (shared.sync, shared.timers, shared.cpu_sets);
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Workload {
        parse(text, "t.json").unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(text: &str) -> String {
        parse(text, "t.json").unwrap_err().to_string()
    }

    fn ops(w: &Workload, task: usize) -> &[Op] {
        &w.programs[w.tasks[task].program as usize].ops
    }

    /// A file with `global.duration` 1 s and these tasks.
    fn tasks(tasks: &str) -> String {
        format!(r#"{{"global": {{"duration": 1}}, "tasks": {{{tasks}}}}}"#)
    }

    const MS: Ns = 1_000_000;
    const US: Ns = 1_000;

    #[test]
    fn events_run_in_file_order_and_match_by_prefix() {
        let w = load(&tasks(
            r#""t": {"loop": 3, "run0": 100, "sleep": 200, "runtime": 50, "run_b": 10, "yield": ""}"#,
        ));
        assert_eq!(w.name, "t.json");
        assert_eq!(w.duration_ns, Some(NSEC_PER_SEC));
        assert_eq!(w.programs.len(), 1);
        assert_eq!(w.programs[0].comm, "t");
        // rt-app 1.0: a task without phases repeats for ever, whatever its loop.
        assert_eq!(
            ops(&w, 0),
            [
                Op::Loop { count: 0 },
                Op::Compute(100 * US),
                Op::Sleep(200 * US),
                Op::Spin(50 * US),
                Op::Compute(10 * US),
                Op::Yield,
                Op::LoopEnd
            ]
        );
        let t = &w.tasks[0];
        assert_eq!((t.name.as_str(), t.policy, t.nice, t.rt_priority), ("t-0", Policy::Other, 0, 0));
        assert_eq!((t.affinity.as_ref(), t.start_ns, t.thread_of), (None, 0, None));
        w.validate(1).unwrap();
    }

    #[test]
    fn a_task_without_phases_runs_for_ever_whatever_its_loop() {
        // The case of issue 14: 3 times in the simulator before, until killed in rt-app 1.0.
        for body in
            [r#""loop": 3, "run": 1000, "sleep": 100000"#, r#""run": 1000"#, r#""loop": -1, "run": 1"#]
        {
            let w = load(&tasks(&format!(r#""t": {{{body}}}"#)));
            assert_eq!(ops(&w, 0)[0], Op::Loop { count: 0 }, "{body}");
            assert_eq!(ops(&w, 0).last(), Some(&Op::LoopEnd));
        }
    }

    #[test]
    fn phases_loop_once_by_default_inside_the_task_loop() {
        let w = load(&tasks(
            r#""t": {"loop": 2, "phases": {"p1": {"loop": 4, "run": 10}, "p2": {"sleep": 5}, "p3": {"loop": -1, "run": 1}}}"#,
        ));
        assert_eq!(
            ops(&w, 0),
            [
                Op::Loop { count: 2 },
                Op::Loop { count: 4 },
                Op::Compute(10 * US),
                Op::LoopEnd,
                Op::Sleep(5 * US),
                Op::Loop { count: 0 },
                Op::Compute(US),
                Op::LoopEnd,
                Op::LoopEnd
            ]
        );
        let w = load(&tasks(r#""t": {"phases": {"p": {"run": 1}}}"#));
        assert_eq!(ops(&w, 0), [Op::Loop { count: 0 }, Op::Compute(US), Op::LoopEnd]);
        let w = load(r#"{"tasks": {"t": {"loop": 1, "phases": {"p": {"loop": 3, "run": 1}}}}}"#);
        assert_eq!(w.duration_ns, None);
        assert_eq!(ops(&w, 0), [Op::Loop { count: 3 }, Op::Compute(US), Op::LoopEnd]);
    }

    #[test]
    fn a_thread_that_runs_for_ever_needs_a_duration() {
        let e = err(r#"{"tasks": {"t": {"loop": 3, "run": 1000, "sleep": 100000}}}"#);
        assert!(
            e.starts_with("t.json:1:12: task \"t\" runs for ever (rt-app 1.0 repeats a task without"),
            "{e}"
        );
        assert!(e.ends_with("set \"duration\" in \"global\""), "{e}");
        let e = err(r#"{"global": {"duration": -1}, "tasks": {"a": {"loop": 1, "phases": {"p": {"run": 1}}},
            "b": {"phases": {"p": {"run": 1}}}}}"#);
        assert!(e.contains("task \"b\" runs for ever (its \"loop\" is -1 (for ever)"), "{e}");
        let e = err(r#"{"tasks": {"t": {"loop": 2, "phases": {"p": {"loop": -1, "run": 1}}}}}"#);
        assert!(e.contains("one of its phases has \"loop\": -1"), "{e}");
        // A template nobody runs may loop for ever.
        load(r#"{"tasks": {"t": {"loop": 1, "phases": {"p": {"run": 1}}}, "u": {"instance": 0, "run": 1}}}"#);
    }

    #[test]
    fn instances_are_threads_of_one_process_named_like_rt_app() {
        let w = load(&tasks(
            r#""a": {"instance": 2, "run": 1}, "none": {"instance": 0, "run": 1}, "b": {"run": 2}"#,
        ));
        let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a-0", "a-1", "b-2"]);
        assert_eq!(w.programs.len(), 2);
        let programs: Vec<u32> = w.tasks.iter().map(|t| t.program).collect();
        assert_eq!(programs, [0, 0, 1]);
        assert_eq!(w.programs[1].comm, "b");
        let thread_of: Vec<Option<u32>> = w.tasks.iter().map(|t| t.thread_of).collect();
        assert_eq!(thread_of, [None, Some(0), Some(0)]);
    }

    #[test]
    fn priority_is_nice_for_fair_policies_and_rt_priority_for_rt() {
        let w = load(
            r#"{"global": {"default_policy": "SCHED_FIFO", "duration": 1}, "tasks": {
                "rt_default": {"run": 1},
                "rt": {"policy": "SCHED_RR", "priority": 42, "run": 1},
                "fair": {"priority": -5, "policy": "SCHED_OTHER", "run": 1},
                "batch": {"policy": "SCHED_BATCH", "run": 1},
                "idle": {"policy": "SCHED_IDLE", "priority": 3, "run": 1}}}"#,
        );
        let got: Vec<(Policy, i8, u8)> = w.tasks.iter().map(|t| (t.policy, t.nice, t.rt_priority)).collect();
        assert_eq!(
            got,
            [
                (Policy::Fifo, 0, 10),
                (Policy::Rr, 0, 42),
                (Policy::Other, -5, 0),
                (Policy::Batch, 0, 0),
                (Policy::Idle, 3, 0)
            ]
        );
        w.validate(1).unwrap();
    }

    #[test]
    fn cpus_delay_and_utilization_clamps() {
        let w = load(&tasks(
            r#""t": {"cpus": [3, 1, 3], "delay": 1500, "util_min": 128, "util_max": 1024, "run": 1}"#,
        ));
        let t = &w.tasks[0];
        assert_eq!((t.affinity.clone(), t.start_ns), (Some(vec![1, 3]), 1_500 * US));
        assert_eq!((t.util_min, t.util_max), (Some(128), Some(1024)));
        w.validate(4).unwrap();
        assert!(w.validate(2).unwrap_err().to_string().contains("CPU 3 does not exist"));
    }

    #[test]
    fn timers_are_shared_by_ref_unless_unique_and_absolute_if_any_use_says_so() {
        let w = load(&tasks(
            r#""t": {"instance": 2, "run": 10, "timer0": {"ref": "a", "period": 1000}, "run1": 5,
                   "timer1": {"ref": "unique", "period": 500, "mode": "absolute"}, "timer2": {"period": 1000, "ref": "a"}},
               "u": {"run": 10, "timer": {"ref": "a", "period": 20000}, "timer1": {"ref": "unique"}, "timer2": {}}"#,
        ));
        assert_eq!(
            ops(&w, 0)[1..6],
            [
                Op::Compute(10 * US),
                Op::Timer { timer: 0, period: MS },
                Op::Compute(5 * US),
                Op::Timer { timer: 1, period: 500 * US },
                Op::Timer { timer: 0, period: MS }
            ]
        );
        // "a" is shared with "u"; u's "unique" is its own; rt-app's defaults are ref
        // "unknown", period 0.
        assert_eq!(
            ops(&w, 2)[2..5],
            [
                Op::Timer { timer: 0, period: 20 * MS },
                Op::Timer { timer: 2, period: 0 },
                Op::Timer { timer: 3, period: 0 }
            ]
        );
        let spec = |relative, per_task| TimerSpec { relative, per_task };
        assert_eq!(w.timers, [spec(true, false), spec(false, true), spec(true, true), spec(true, false)]);
        w.validate(1).unwrap();
    }

    #[test]
    fn synchronization_events_become_pthread_operations() {
        let w = load(
            r#"{"global": {"duration": 1, "pi_enabled": true}, "resources": {"m": {"type": "mutex"}, "c": {"type": "wait"}},
              "tasks": {
                "a": {"instance": 2, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "barrier": "B"},
                "b": {"lock": "m", "signal": "c", "broad0": "c", "sync": {"ref": "c", "mutex": "m"}, "unlock": "m",
                      "barrier": "B", "suspend": "b", "resume": "a", "wait1": {}}}}"#,
        );
        let (m, c, b) = (0, 1, 2);
        assert_eq!(
            ops(&w, 0)[1..7],
            [
                Op::Lock { mutex: m },
                Op::CondWait { cond: c, mutex: m },
                Op::Lock { mutex: m },
                Op::Unlock { mutex: m },
                Op::Barrier { barrier: b },
                Op::LoopEnd
            ]
        );
        let (sb, mb, sa, ma, unknown_c, unknown_m) = (3, 4, 5, 6, 7, 8);
        assert_eq!(
            ops(&w, 2)[1..],
            [
                Op::Lock { mutex: m },
                Op::CondSignal { cond: c, all: false },
                Op::CondSignal { cond: c, all: true },
                Op::CondSignal { cond: c, all: false },
                Op::CondWait { cond: c, mutex: m },
                Op::Lock { mutex: m },
                Op::Unlock { mutex: m },
                Op::Barrier { barrier: b },
                Op::Lock { mutex: mb },
                Op::CondWait { cond: sb, mutex: mb },
                Op::Lock { mutex: mb },
                Op::Unlock { mutex: mb },
                Op::Lock { mutex: ma },
                Op::CondSignal { cond: sa, all: true },
                Op::Unlock { mutex: ma },
                Op::CondWait { cond: unknown_c, mutex: unknown_m },
                Op::Lock { mutex: unknown_m },
                Op::LoopEnd,
            ]
        );
        use SyncSpec::*;
        assert_eq!(
            w.sync,
            [
                Mutex { pi: true },
                Cond,
                Barrier { users: 3 },
                Cond,
                Mutex { pi: true },
                Cond,
                Mutex { pi: true },
                Cond,
                Mutex { pi: true }
            ]
        );
        w.validate(1).unwrap();
    }

    #[test]
    fn mem_and_iorun_are_memsets_and_write_calls() {
        let w = load(&tasks(r#""t": {"mem": 1048576, "iorun": 10000000, "iorun1": 0, "mem1": 0}"#));
        let write = Op::Syscall { nr: Syscall::Write.nr() };
        assert_eq!(
            ops(&w, 0)[1..6],
            [Op::Memset(1_048_576), Op::Loop { count: 3 }, write, Op::LoopEnd, Op::Memset(0)]
        );
        let w = load(
            r#"{"global": {"duration": 1, "io_device": "/tmp/f", "mem_buffer_size": 1000}, "tasks": {"t": {"iorun": 1000}}}"#,
        );
        assert_eq!(ops(&w, 0)[1..3], [write, Op::Memset(1000)]);
    }

    #[test]
    fn fork_starts_a_thread_of_a_template_with_its_settings() {
        let w = load(&tasks(
            r#""main": {"loop": 1, "phases": {"p": {"loop": 2, "fork": "worker", "sleep": 1000}}},
               "worker": {"instance": 0, "policy": "SCHED_FIFO", "priority": 20, "cpus": [1], "loop": 1,
                          "phases": {"p": {"run": 500}}}"#,
        ));
        assert_eq!(w.tasks.len(), 1);
        assert_eq!(w.programs.len(), 2);
        assert_eq!(
            ops(&w, 0),
            [Op::Loop { count: 2 }, Op::Fork { program: 1, thread: true }, Op::Sleep(MS), Op::LoopEnd]
        );
        assert_eq!(w.programs[1].comm, "worker");
        assert_eq!(
            w.programs[1].ops,
            [
                Op::SetSched { policy: Policy::Fifo, nice: 0, rt_priority: 20 },
                Op::SetAffinity { cpus: Some(0) },
                Op::Compute(500 * US)
            ]
        );
        assert_eq!(w.cpu_sets, [vec![1]]);
        w.validate(2).unwrap();
    }

    #[test]
    fn phases_set_cpus_policy_and_priority_when_they_start() {
        let w = load(&tasks(
            r#""t": {"cpus": [0], "priority": 5, "loop": 2, "phases": {
                "a": {"cpus": [1], "run": 1},
                "b": {"policy": "SCHED_FIFO", "run": 2},
                "c": {"priority": 30, "run": 3},
                "d": {"cpus": [1], "policy": "SCHED_OTHER", "run": 4}}}"#,
        ));
        let t = &w.tasks[0];
        assert_eq!((t.policy, t.nice, t.affinity.clone()), (Policy::Other, 5, Some(vec![0])));
        let set = |s: u32| Op::SetAffinity { cpus: Some(s) };
        let sched = |policy, nice, rt_priority| Op::SetSched { policy, nice, rt_priority };
        assert_eq!(
            ops(&w, 0),
            [
                Op::Loop { count: 2 },
                set(0),
                Op::Compute(US),
                set(1),
                sched(Policy::Fifo, 0, 10),
                Op::Compute(2 * US),
                sched(Policy::Fifo, 0, 30),
                Op::Compute(3 * US),
                set(0),
                sched(Policy::Other, 0, 0),
                Op::Compute(4 * US),
                Op::LoopEnd
            ]
        );
        assert_eq!(w.cpu_sets, [vec![1], vec![0]]);
        // Phase a's CPUs differ from the task's: set on the first pass; a phase as the
        // previous one sets nothing.
        let w = load(&tasks(
            r#""t": {"loop": 1, "phases": {"a": {"cpus": [1], "run": 1}, "b": {"cpus": [1], "run": 2}}}"#,
        ));
        assert_eq!(ops(&w, 0), [Op::SetAffinity { cpus: Some(0) }, Op::Compute(US), Op::Compute(2 * US)]);
        let e = err(&tasks(
            r#""t": {"loop": 2, "phases": {"a": {"priority": 5, "run": 1}, "b": {"policy": "SCHED_RR", "run": 1}}}"#,
        ));
        assert!(e.contains("phase \"a\" sets \"priority\" without \"policy\": that is SCHED_OTHER the first time and SCHED_RR"), "{e}");
    }

    #[test]
    fn taskgroups_are_cgroup_paths_in_rt_apps_session() {
        let w = load(&tasks(
            r#""a": {"taskgroup": "/tg1/tg11", "run": 1},
               "b": {"loop": 2, "phases": {"p": {"run": 1}, "q": {"taskgroup": "/tg1", "run": 1}, "r": {"run": 1}, "s": {"taskgroup": "/", "run": 1}}},
               "c": {"instance": 0, "taskgroup": "/tg2", "run": 1},
               "d": {"loop": 1, "phases": {"p": {"fork": "c", "run": 1}}}"#,
        ));
        // rt-app's session (autogroup), then each path with its parents, by first use.
        let names: Vec<(&str, Option<GroupId>, u64)> =
            w.groups.iter().map(|g| (g.name.as_str(), g.parent, g.shares)).collect();
        assert_eq!(
            names,
            [
                ("autogroup (rt-app's session)", None, 1024),
                ("/tg1", None, 1024),
                ("/tg1/tg11", Some(1), 1024),
                ("/tg2", None, 1024)
            ]
        );
        // a starts in its group, the others in the session's.
        let groups: Vec<Option<GroupId>> = w.tasks.iter().map(|t| t.group).collect();
        assert_eq!(groups, [Some(2), Some(0), Some(0)]);
        // b moves to /tg1 when q starts, back to the root cgroup (the session) when s
        // starts: each time, as the phases loop.
        let set = |g| Op::SetGroup { group: Some(g) };
        assert_eq!(
            ops(&w, 1),
            [
                Op::Loop { count: 2 },
                Op::Compute(US),
                set(1),
                Op::Compute(US),
                Op::Compute(US),
                set(0),
                Op::Compute(US),
                Op::LoopEnd
            ]
        );
        // A forked c moves to its template's group first.
        let fork = w.programs.iter().find(|p| p.comm == "c").unwrap();
        assert_eq!(fork.ops[2], set(3));
    }

    #[test]
    fn without_cgroups_there_are_no_groups() {
        // No taskgroup, or only the root cgroup: every thread in the root group (a move
        // to "/" stays a system call).
        let w = load(&tasks(
            r#""a": {"loop": 1, "phases": {"p": {"taskgroup": "/", "run": 1}}}, "b": {"run": 1}"#,
        ));
        assert!(w.groups.is_empty());
        assert!(w.tasks.iter().all(|t| t.group.is_none()));
        assert_eq!(ops(&w, 0)[0], Op::SetGroup { group: None });
    }

    #[test]
    fn real_time_tasks_and_too_many_groups_are_refused() {
        let e = err(&tasks(r#""a": {"taskgroup": "/g", "policy": "SCHED_FIFO", "run": 1}"#));
        assert!(e.contains("rt-app puts only SCHED_OTHER and SCHED_IDLE tasks in groups"), "{e}");
        let many: Vec<String> =
            (0..33).map(|i| format!(r#""t{i}": {{"taskgroup": "/g{i}", "run": 1}}"#)).collect();
        let e = err(&tasks(&many.join(", ")));
        assert!(e.ends_with("33 taskgroups: rt-app allows at most 32"), "{e}");
    }

    #[test]
    fn an_rt_app_style_file_loads() {
        let w = load(
            r#"{
    /*
     * Two periodic threads, a background hog and a late starter,
     * in the style of rt-app's doc/examples.
     */
    "resources" : { "m" : { "type" : "mutex" }, "t" : { "type" : "timer" } },
    "tasks" : {
        "audio" : {
            "instance" : 2,
            "policy" : "SCHED_FIFO",
            "priority" : 80,
            "cpus" : [0, 1],
            "phases" : {
                "decode" : { "loop" : 10, "run" : 2000, "timer" : { "ref" : "unique", "period" : 10000 } },
                "burst"  : { "runtime" : 5000, "sleep" : 1000 }
            }
        },
        "hog" : { "priority" : 10, "run" : 50000, "yield" : 0 },   // nice 10, loops for ever
        "late" : { "delay" : 100000, "loop" : 5, "run" : 1000, "sleep" : 9000 }
    },
    "global" : {
        "duration" : 3,
        "calibration" : "CPU0",
        "default_policy" : "SCHED_OTHER",
        "pi_enabled" : false,
        "lock_pages" : false,
        "logdir" : "./",
        "log_basename" : "rt-app",
        "log_size" : "file",
        "ftrace" : "main,task,loop",
        "gnuplot" : false,
        "io_device" : "/dev/null",
        "mem_buffer_size" : 4194304,
        "cumulative_slack" : false
    }
}"#,
        );
        assert_eq!(w.duration_ns, Some(3 * NSEC_PER_SEC));
        let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["audio-0", "audio-1", "hog-2", "late-3"]);
        assert_eq!((w.tasks[1].policy, w.tasks[1].rt_priority), (Policy::Fifo, 80));
        assert_eq!((w.tasks[2].policy, w.tasks[2].nice), (Policy::Other, 10));
        assert_eq!(w.tasks[3].start_ns, 100 * MS);
        assert_eq!(ops(&w, 3).len(), 4);
        w.validate(2).unwrap();
        // The other value types rt-app accepts for these global keys.
        load(
            r#"{"global": {"calibration": 150, "log_size": 2, "ftrace": true, "duration": 1}, "tasks": {"t": {"run": 1}}}"#,
        );
    }

    #[test]
    fn errors_point_at_the_offending_key_or_value() {
        // Each text puts the culprit at line 2, column 3.
        let cases = [
            (r#"{"tasks": {"t": {"run": 1,
  "foo": 2}}}"#, format!("unknown task key \"foo\"; accepted: {TASK_KEYS}")),
            (r#"{"tasks": {"t": {"run": 1}}, "global": {
  "spacing": 1}}"#, format!("unknown global key \"spacing\"; accepted: {GLOBAL_KEYS}")),
            (r#"{"tasks": {"t": {"run": 1}}, "global": {"gnuplot":
  "yes"}}"#, "\"gnuplot\" must be true or false, found a string".into()),
            (r#"{"tasks": {"t": {"run": 1}}, "global": {"duration":
  1.5}}"#, "\"duration\" must be an integer, found a fractional number".into()),
            (r#"{"tasks": {"t": {"run": 1, "policy":
  "SCHED_DEADLINE"}}}"#, format!("SCHED_DEADLINE is not simulated; use {POLICIES}")),
            (r#"{"tasks": {"t": {"run": 1}}, "global": {"default_policy":
  "SCHED_FAIR"}}"#, format!("unknown policy \"SCHED_FAIR\"; use {POLICIES}")),
            (r#"{"tasks": {"t": {"run": 1,
  "dl-runtime": 100}}}"#, "\"dl-runtime\": SCHED_DEADLINE is not simulated".into()),
            (r#"{"tasks": {"t": {"phases": {"p": {"run": 1,
  "util_min": 100}}}}}"#, "\"util_min\": utilization clamps are task data in the simulator and cannot change per \
                            phase; set it on the task".into()),
            (r#"{"tasks": {"t": {"run": 1, "util_max":
  2000}}}"#, "\"util_max\" must be in 0..=1024, not 2000".into()),
            (r#"{"tasks": {"t": {"run": 1, "taskgroup":
  "g"}}}"#, "\"taskgroup\" must be a cgroup path starting with '/', not \"g\"".into()),
            (r#"{"tasks": {"t": {"run": 1,
  "nodes_membind": [0]}}}"#, "\"nodes_membind\": NUMA memory binding is not simulated".into()),
            (r#"{"tasks": {"t": {"run": 1, "lock0":
  5}}}"#, "\"lock0\" must be a string, found an integer".into()),
            (r#"{"tasks": {"t": {"run": 1, "fork":
  "nobody"}}}"#, "\"fork\": no task is named \"nobody\"".into()),
            (r#"{"tasks": {"t": {"run": 1, "wait": {"ref": "c",
  "mutexes": "m"}}}}"#, "unknown \"wait\" key \"mutexes\"; accepted: ref, mutex".into()),
            (r#"{"tasks": {"t": {"run": 1, "mem":
  -1}}}"#, "\"mem\" (bytes) must be in 0..=2147483647, not -1".into()),
            (r#"{"tasks": {"t": {"phases": {"p": {"run": 1,
  "delay": 5}}}}}"#, format!("unknown phase key \"delay\"; accepted: {PHASE_KEYS}")),
            (r#"{"tasks": {"t": {"run":
  1.5}}}"#, "\"run\" must be an integer number of microseconds, found a fractional number".into()),
            (r#"{"tasks": {"t": {"sleep":
  -5}}}"#, "\"sleep\" must be 0..=2147483647 microseconds, not -5".into()),
            (r#"{"tasks": {"t": {"run": 1, "policy": "SCHED_FIFO", "priority":
  0}}}"#, "\"priority\" of a SCHED_FIFO task must be in 1..=99, not 0".into()),
            (r#"{"tasks": {"t": {"run": 1, "priority":
  20}}}"#, "\"priority\" of a SCHED_OTHER task (its nice value) must be in -20..=19, not 20".into()),
            (r#"{"tasks": {"t": {"timer": {"ref": "a",
  "refs": 1}}}}"#, "unknown timer key \"refs\"; accepted: ref, period, mode".into()),
            (r#"{"tasks": {"t": {"timer": {"ref": "a", "mode":
  "periodic"}}}}"#, "\"mode\" must be \"relative\" or \"absolute\", not \"periodic\"".into()),
            (r#"{"tasks": {"t": {"timer":
  100}}}"#, "\"timer\" must be an object, found an integer".into()),
            (r#"{"tasks": {"t": {"phases": {"p": {"run": 1}},
  "run": 1}}}"#, "\"run\": rt-app ignores events at task level when the task has \"phases\"; move it into a phase".into()),
            (r#"{"tasks": {"t": {"phases": {
  "p": {"loop": 2}}}}}"#, "phase \"p\" has no events".into()),
            (r#"{"tasks": {"t": {"phases":
  {}}}}"#, "\"phases\" has no phase".into()),
            (r#"{"tasks": {
  "t": {"loop": 1}}}"#, "task \"t\" has no events and no \"phases\"".into()),
            (r#"{"tasks": {"t":
  5}}"#, "task \"t\" must be an object, found an integer".into()),
            (r#"{"tasks":
  {}}"#, "no thread to run: \"tasks\" is empty or every task has \"instance\": 0".into()),
            (r#"{"tasks": {"t": {"run": 1, "loop":
  0}}}"#, "\"loop\" must be -1 (for ever) or a count from 1, not 0".into()),
            (r#"{"tasks": {"t": {"run": 1, "instance":
  -1}}}"#, "\"instance\" must be in 0..=100000, not -1".into()),
            (r#"{"global": {"duration": 1}, "tasks": {"a": {"run": 1, "instance": 60000}, "b":
  {"run": 1, "instance": 60000}}}"#, "120000 threads in all with \"b\"'s 60000 instances: a workload has at most 100000".into()),
            (r#"{"tasks": {"t": {"run": 1, "cpus":
  []}}}"#, "\"cpus\" is empty: give at least one CPU number".into()),
            (r#"{"tasks": {"t": {"run": 1, "cpus": [1,
  "0"]}}}"#, "a CPU number in \"cpus\" must be an integer, found a string".into()),
            (r#"{"tasks": {"t": {"run": 1}}, "resources": {
  "m": {}}}"#, "resource \"m\" has no \"type\"".into()),
            (r#"{"tasks": {"t": {"run": 1}}, "resources": {"m": {"type":
  "barrier"}}}"#, format!("unknown resource type \"barrier\"; rt-app accepts {}", RESOURCE_TYPES.join(", "))),
            (r#"{"tasks": {"t": {"run": 1}}, "resources":
  5}"#, "\"resources\" must be an object, found an integer".into()),
        ];
        for (text, message) in cases {
            assert_eq!(err(text), format!("t.json:2:3: {message}"), "{text}");
        }
    }

    #[test]
    fn json_errors_have_positions_too() {
        assert_eq!(
            err("{\"tasks\": {\"t\": {\"run\": 1\n  \"sleep\": 2}}}"),
            "t.json:2:3: invalid JSON: expected ',' or '}' after an object member"
        );
        let e = err("{\"tasks\": {\"t\": {\"run\": 1,\n  \"run\": 2}}}");
        assert!(e.starts_with("t.json:2:3: invalid JSON: duplicate key \"run\" (first at 1:18)"), "{e}");
        assert!(matches!(parse("[", "t.json"), Err(WorkloadError::Json { line: 1, column: 2, .. })));
    }

    #[test]
    fn the_document_must_be_an_object_with_tasks() {
        assert_eq!(err("[1]"), "t.json:1:1: the document must be an object, found an array");
        assert_eq!(
            err("{\"global\": {}}"),
            "t.json:1:1: missing \"tasks\": an rt-app file describes its threads in a \"tasks\" object"
        );
        assert!(matches!(parse("{}", "x.json"), Err(WorkloadError::RtApp { line: 1, column: 1, .. })));
    }
}

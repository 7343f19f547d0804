//! Reads [rt-app](https://github.com/scheduler-tools/rt-app) JSON workload files, so that
//! one file runs both on a real machine (`rt-app file.json`) and in the simulator.
//!
//! # Supported subset
//!
//! **Syntax.** JSON plus C (`/* */`) and C++ (`//`) comments, as rt-app's json-c parser
//! accepts. Members are used in file order: events run in the order they are written.
//! Keys must be unique within an object; repeated events are numbered (`"run0"`,
//! `"run1"`), which is what rt-app's `workgen` script does for you. Any key the simulator
//! does not understand, anywhere, is an error naming the key and its `line:column`; no
//! key is silently ignored. Times are in microseconds, as in rt-app.
//!
//! **Top level.** `"tasks"` (required), `"global"` (optional), `"resources"` (optional
//! and must be empty, `{}`: declared resources only serve events that are not simulated).
//!
//! **`"global"`.**
//! - `duration`: seconds; the simulation stops then. `-1` (the default) or `0`: it runs
//!   until every task has exited.
//! - `default_policy`: the policy of tasks that do not set `policy` (default `SCHED_OTHER`).
//! - `calibration`: accepted and ignored: simulated `run` time is exact, so there is no
//!   ns-per-loop to calibrate.
//! - `logdir`, `log_basename`, `log_size`, `ftrace`, `gnuplot`, `lock_pages`,
//!   `pi_enabled`, `io_device`, `mem_buffer_size`, `cumulative_slack`: accepted (their
//!   type is checked) and ignored: they steer rt-app's logs, memory locking, and the
//!   mutex, `iorun` and `mem` events, none of which affects the simulated scheduling.
//!
//! **`"tasks"`.** Each member describes a thread, named by its key:
//! - `instance` (default 1): how many threads run it. Threads are named `<key>-<n>`, `n`
//!   counting all threads of the file in order, as rt-app names them; `0` creates none.
//! - `policy`: `SCHED_OTHER`, `SCHED_IDLE`, `SCHED_FIFO`, `SCHED_RR`, and `SCHED_BATCH`
//!   (a schedlab extension: rt-app itself does not accept it). `SCHED_DEADLINE` is not
//!   simulated: it and the `dl-runtime`, `dl-period`, `dl-deadline` keys (and the legacy
//!   `period`, `deadline`) are errors.
//! - `priority`: as rt-app uses it, the nice value (-20..19, default 0) for
//!   `SCHED_OTHER`/`BATCH`/`IDLE`, the real-time priority (1..99, default 10) for
//!   `SCHED_FIFO`/`RR`.
//! - `cpus`: array of CPU numbers, the thread's affinity.
//! - `delay`: microseconds before the thread starts.
//! - `phases`: object of phases, run in file order. Each phase has `loop` (default 1,
//!   `-1` for ever) and events.
//! - `loop`: how many times the phases run in sequence; `-1`, the default, for ever.
//!   Without `phases`, the task's own events form its only phase and `loop` repeats it.
//!
//! **Events**, recognised by prefix as rt-app does (`"run3"` and `"run_long"` are `run`
//! events; `runtime` is tried before `run`):
//! - `run`: that much CPU time (rt-app's calibrated busy loop, exact here).
//! - `runtime`: run until that much wall time has passed, however long the thread waits
//!   for the CPU meanwhile.
//! - `sleep`: sleep that long.
//! - `timer`: `{"ref": name, "period": µs, "mode": "relative" | "absolute"}`: sleep until
//!   the next period of the timer `ref`.
//! - `yield`: `sched_yield()`; its value is not used.
//!
//! rt-app's other events (`lock`, `unlock`, `wait`, `signal`, `broad`, `sync`, `suspend`,
//! `resume`, `barrier`, `mem`, `iorun`, `fork`) are errors, as are `util_min`/`util_max`
//! (uclamp), `taskgroup` (cgroups), `nodes_membind` (NUMA) and `cpus`, `policy` or
//! `priority` inside a phase (the simulator cannot change them while a task runs).
//!
//! **Differences from rt-app.** The threads are tasks of one process, as rt-app's
//! pthreads are, each thread running a program named after its task key; rt-app's main
//! thread and its start barrier are not modeled: all threads start at time 0, plus their
//! `delay`. Timers belong to one thread: rt-app shares a timer between all threads whose
//! `ref` is the same and does not start with `unique`, here each thread has its own.
//! Timers follow [`Op::Timer`]: a late thread does not sleep and the timer keeps its
//! phase, which is rt-app's `absolute` mode; in the default `relative` mode rt-app
//! instead restarts the period from the late wake-up.

use std::ops::RangeInclusive;

use schedlab_model::{Cpu, Ns, NSEC_PER_SEC, NSEC_PER_USEC};

use super::json::{self, Member, Node, Value};
use super::WorkloadError;
use crate::{Op, Policy, Program, TaskSpec, Workload};

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

const SUPPORTED_EVENTS: &str = "run, runtime, sleep, timer, yield";
const GLOBAL_KEYS: &str = "duration, default_policy, calibration, logdir, log_basename, log_size, ftrace, \
                           gnuplot, lock_pages, pi_enabled, io_device, mem_buffer_size, cumulative_slack";
const TASK_KEYS: &str =
    "instance, loop, policy, priority, cpus, delay, phases, and the events run, runtime, sleep, timer, yield";
const PHASE_KEYS: &str = "loop, and the events run, runtime, sleep, timer, yield";
const POLICIES: &str = "SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO or SCHED_RR";

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
        "util_min" | "util_max" => "utilization clamping (uclamp) is not simulated",
        "taskgroup" => "task groups (cgroups) are not simulated",
        "nodes_membind" => "NUMA memory binding is not simulated",
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
}

fn global(node: Option<&Node>) -> Parsed<Global> {
    let mut g = Global { duration_ns: None, policy: Policy::Other };
    let Some(node) = node else { return Ok(g) };
    for m in object(node, "\"global\"")? {
        let (what, v) = (format!("\"{}\"", m.key), &m.node);
        match m.key.as_str() {
            "duration" => {
                let secs = int_in(v, &what, i64::from(i32::MIN)..=i64::from(i32::MAX))?;
                g.duration_ns = (secs > 0).then(|| secs as Ns * NSEC_PER_SEC);
            }
            "default_policy" => g.policy = policy(v, &what)?,
            "calibration" | "log_size" if matches!(v.value, Value::Int(_) | Value::Str(_)) => {}
            "calibration" | "log_size" => {
                return fail(v.at, format!("{what} must be an integer or a string, found {}", v.value.kind()))
            }
            "ftrace" if matches!(v.value, Value::Bool(_) | Value::Str(_)) => {}
            "ftrace" => {
                return fail(v.at, format!("{what} must be a string or a boolean, found {}", v.value.kind()))
            }
            "lock_pages" | "pi_enabled" | "gnuplot" | "cumulative_slack" => {
                boolean(v, &what)?;
            }
            "logdir" | "log_basename" | "io_device" => {
                string(v, &what)?;
            }
            "mem_buffer_size" => {
                int_in(v, &what, 0..=i64::from(i32::MAX))?;
            }
            _ => return unknown(m, "global", GLOBAL_KEYS),
        }
    }
    Ok(g)
}

/// One event as an operation; `timers` maps the task's timer refs to slots.
fn event(m: &Member, kind: &str, timers: &mut Vec<String>) -> Parsed<Op> {
    let what = format!("\"{}\"", m.key);
    Ok(match kind {
        "run" => Op::Compute(usec(&m.node, &what)?),
        "runtime" => Op::Spin(usec(&m.node, &what)?),
        "sleep" => Op::Sleep(usec(&m.node, &what)?),
        "yield" => Op::Yield,
        "timer" => timer(&m.node, &what, timers)?,
        other => {
            return fail(
                m.key_at,
                format!(
                "{what}: the rt-app event \"{other}\" is not simulated; supported events: {SUPPORTED_EVENTS}"
            ),
            )
        }
    })
}

fn timer(node: &Node, what: &str, timers: &mut Vec<String>) -> Parsed<Op> {
    // rt-app's defaults for a timer without ref or period.
    let (mut name, mut period) = ("unknown", 0);
    for m in object(node, what)? {
        match m.key.as_str() {
            "ref" => name = string(&m.node, "\"ref\"")?,
            "period" => period = usec(&m.node, "\"period\"")?,
            "mode" => match string(&m.node, "\"mode\"")? {
                "relative" | "absolute" => {}
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
    let slot = match timers.iter().position(|t| t == name) {
        Some(slot) => slot,
        None => {
            timers.push(name.to_string());
            timers.len() - 1
        }
    };
    let slot =
        u16::try_from(slot).map_or_else(|_| fail(node.at, "more than 65536 timers in one task"), Ok)?;
    Ok(Op::Timer { slot, period })
}

/// A phase: its loop count and its events' operations.
fn phase(p: &Member, timers: &mut Vec<String>) -> Parsed<(u32, Vec<Op>)> {
    let (mut count, mut ops) = (1, Vec::new());
    for m in object(&p.node, &format!("phase \"{}\"", p.key))? {
        match (m.key.as_str(), event_kind(&m.key)) {
            ("loop", _) => count = loop_count(&m.node)?,
            (_, Some(kind)) => ops.push(event(m, kind, timers)?),
            ("cpus" | "policy" | "priority", _) => {
                return fail(
                    m.key_at,
                    format!(
                        "\"{}\" in a phase is not simulated: a task's affinity, policy and priority cannot \
                         change while it runs; set \"{}\" on the task",
                        m.key, m.key
                    ),
                )
            }
            _ => return refuse(m, "phase", PHASE_KEYS),
        }
    }
    if ops.is_empty() {
        return fail(p.key_at, format!("phase \"{}\" has no events ({SUPPORTED_EVENTS})", p.key));
    }
    Ok((count, ops))
}

/// A member of `"tasks"`: its program and the settings of its threads.
struct Task {
    program: Program,
    instances: u32,
    policy: Policy,
    nice: i8,
    rt_priority: u8,
    affinity: Option<Vec<Cpu>>,
    delay_ns: Ns,
}

fn task(t: &Member, g: &Global) -> Parsed<Task> {
    let mut task = Task {
        program: Program::new(t.key.as_str()),
        instances: 1,
        policy: g.policy,
        nice: 0,
        rt_priority: 0,
        affinity: None,
        delay_ns: 0,
    };
    let (mut count, mut priority, mut phases, mut events) = (None, None, None, Vec::new());
    for m in object(&t.node, &format!("task \"{}\"", t.key))? {
        let (what, v) = (format!("\"{}\"", m.key), &m.node);
        match (m.key.as_str(), event_kind(&m.key)) {
            ("instance", _) => task.instances = int_in(v, &what, 0..=100_000)? as u32,
            ("loop", _) => count = Some(loop_count(v)?),
            ("policy", _) => task.policy = policy(v, &what)?,
            ("priority", _) => priority = Some(v),
            ("cpus", _) => task.affinity = Some(cpus(v)?),
            ("delay", _) => task.delay_ns = usec(v, &what)?,
            ("phases", _) => phases = Some(v),
            (_, Some(kind)) => events.push((m, kind)),
            _ => return refuse(m, "task", TASK_KEYS),
        }
    }
    match (priority, task.policy.is_rt()) {
        (None, true) => task.rt_priority = 10,
        (None, false) => {}
        (Some(v), true) => {
            task.rt_priority =
                int_in(v, &format!("\"priority\" of a {} task", task.policy.name()), 1..=99)? as u8
        }
        (Some(v), false) => {
            let what = format!("\"priority\" of a {} task (its nice value)", task.policy.name());
            task.nice = int_in(v, &what, -20..=19)? as i8;
        }
    }
    let mut timers = Vec::new();
    let mut body = Vec::new();
    if let Some(phases) = phases {
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
        for p in list {
            let (n, ops) = phase(p, &mut timers)?;
            push_repeated(&mut body, n, ops);
        }
    } else {
        if events.is_empty() {
            return fail(
                t.key_at,
                format!("task \"{}\" has no events ({SUPPORTED_EVENTS}) and no \"phases\"", t.key),
            );
        }
        for (m, kind) in events {
            body.push(event(m, kind, &mut timers)?);
        }
    }
    // rt-app loops for ever when the task sets no "loop".
    push_repeated(&mut task.program.ops, count.unwrap_or(0), body);
    Ok(task)
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

fn workload(root: &Node, file: &str) -> Parsed<Workload> {
    let (mut tasks, mut global_node) = (None, None);
    for m in object(root, "the document")? {
        match m.key.as_str() {
            "tasks" => tasks = Some(&m.node),
            "global" => global_node = Some(&m.node),
            "resources" => {
                if let Some(r) = object(&m.node, "\"resources\"")?.first() {
                    return fail(
                        r.key_at,
                        "resource declarations are not simulated: they serve rt-app's lock, wait, signal and \
                         barrier events, which the simulator does not run; write \"resources\": {} or leave it out",
                    );
                }
            }
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
    let mut w = Workload { name: file.to_string(), duration_ns: g.duration_ns, ..Workload::default() };
    for t in object(tasks, "\"tasks\"")? {
        let task = task(t, &g)?;
        if task.instances == 0 {
            continue;
        }
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
        let program = w.add_program(task.program);
        for _ in 0..task.instances {
            let mut spec = TaskSpec::new(format!("{}-{}", t.key, w.tasks.len()), program);
            spec.policy = task.policy;
            spec.nice = task.nice;
            spec.rt_priority = task.rt_priority;
            spec.affinity = task.affinity.clone();
            spec.start_ns = task.delay_ns;
            spec.thread_of = (!w.tasks.is_empty()).then_some(0);
            w.tasks.push(spec);
        }
    }
    if w.tasks.is_empty() {
        return fail(tasks.at, "no thread to run: \"tasks\" is empty or every task has \"instance\": 0");
    }
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

    const MS: Ns = 1_000_000;
    const US: Ns = 1_000;

    #[test]
    fn events_run_in_file_order_and_match_by_prefix() {
        let w = load(
            r#"{"tasks": {"t": {"loop": 3, "run0": 100, "sleep": 200, "runtime": 50, "run_b": 10, "yield": ""}}}"#,
        );
        assert_eq!(w.name, "t.json");
        assert_eq!(w.duration_ns, None);
        assert_eq!(w.programs.len(), 1);
        assert_eq!(w.programs[0].comm, "t");
        assert_eq!(
            ops(&w, 0),
            [
                Op::Loop { count: 3 },
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
    fn loops_default_to_for_ever() {
        let w =
            load(r#"{"tasks": {"a": {"run": 1}, "b": {"loop": 1, "run": 1}, "c": {"loop": -1, "run": 1}}}"#);
        assert_eq!(ops(&w, 0), [Op::Loop { count: 0 }, Op::Compute(US), Op::LoopEnd]);
        assert_eq!(ops(&w, 1), [Op::Compute(US)]);
        assert_eq!(ops(&w, 2), ops(&w, 0));
    }

    #[test]
    fn phases_run_in_order_inside_the_task_loop() {
        let w = load(
            r#"{"global": {"duration": 2}, "tasks": {"t": {"loop": 2, "phases": {
                "p1": {"loop": 4, "run": 10}, "p2": {"sleep": 5}, "p3": {"loop": -1, "run": 1}}}}}"#,
        );
        assert_eq!(w.duration_ns, Some(2_000_000_000));
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
        let w = load(r#"{"tasks": {"t": {"phases": {"p": {"run": 1}}}}}"#);
        assert_eq!(ops(&w, 0), [Op::Loop { count: 0 }, Op::Compute(US), Op::LoopEnd]);
    }

    #[test]
    fn instances_are_threads_of_one_process_named_like_rt_app() {
        let w = load(
            r#"{"tasks": {"a": {"instance": 2, "loop": 1, "run": 1}, "none": {"instance": 0, "loop": 1, "run": 1},
                "b": {"loop": 1, "run": 2}}}"#,
        );
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
            r#"{"global": {"default_policy": "SCHED_FIFO"}, "tasks": {
                "rt_default": {"loop": 1, "run": 1},
                "rt": {"policy": "SCHED_RR", "priority": 42, "loop": 1, "run": 1},
                "fair": {"priority": -5, "policy": "SCHED_OTHER", "loop": 1, "run": 1},
                "batch": {"policy": "SCHED_BATCH", "loop": 1, "run": 1},
                "idle": {"policy": "SCHED_IDLE", "priority": 3, "loop": 1, "run": 1}}}"#,
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
    fn cpus_and_delay() {
        let w = load(r#"{"tasks": {"t": {"cpus": [3, 1, 3], "delay": 1500, "loop": 1, "run": 1}}}"#);
        assert_eq!(w.tasks[0].affinity, Some(vec![1, 3]));
        assert_eq!(w.tasks[0].start_ns, 1_500 * US);
        w.validate(4).unwrap();
        assert!(w.validate(2).unwrap_err().to_string().contains("CPU 3 does not exist"));
    }

    #[test]
    fn timers_get_one_slot_per_ref_within_a_task() {
        let w = load(
            r#"{"global": {"duration": 1}, "tasks": {
                "t": {"run": 10, "timer0": {"ref": "a", "period": 1000}, "run1": 5,
                      "timer1": {"ref": "b", "period": 500, "mode": "absolute"}, "timer2": {"period": 1000, "ref": "a"}},
                "u": {"run": 10, "timer": {"ref": "b", "period": 20000, "mode": "relative"}, "timer1": {}}}}"#,
        );
        assert_eq!(
            ops(&w, 0)[1..6],
            [
                Op::Compute(10 * US),
                Op::Timer { slot: 0, period: MS },
                Op::Compute(5 * US),
                Op::Timer { slot: 1, period: 500 * US },
                Op::Timer { slot: 0, period: MS }
            ]
        );
        // rt-app's defaults: ref "unknown", period 0.
        assert_eq!(
            ops(&w, 1)[2..4],
            [Op::Timer { slot: 0, period: 20 * MS }, Op::Timer { slot: 1, period: 0 }]
        );
    }

    #[test]
    fn an_rt_app_style_file_loads() {
        let w = load(
            r#"{
    /*
     * Two periodic threads, a background hog and a late starter,
     * in the style of rt-app's doc/examples.
     */
    "resources" : {},
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
            r#"{"global": {"calibration": 150, "log_size": 2, "ftrace": true}, "tasks": {"t": {"run": 1}}}"#,
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
            (r#"{"tasks": {"t": {"run": 1,
  "util_min": 100}}}"#, "\"util_min\": utilization clamping (uclamp) is not simulated".into()),
            (r#"{"tasks": {"t": {"run": 1,
  "taskgroup": "/a"}}}"#, "\"taskgroup\": task groups (cgroups) are not simulated".into()),
            (r#"{"tasks": {"t": {"run": 1,
  "nodes_membind": [0]}}}"#, "\"nodes_membind\": NUMA memory binding is not simulated".into()),
            (r#"{"tasks": {"t": {"run": 1,
  "lock0": "m"}}}"#, format!("\"lock0\": the rt-app event \"lock\" is not simulated; supported events: {SUPPORTED_EVENTS}")),
            (r#"{"tasks": {"t": {"phases": {"p": {"run": 1,
  "iorun": 10}}}}}"#, format!("\"iorun\": the rt-app event \"iorun\" is not simulated; supported events: {SUPPORTED_EVENTS}")),
            (r#"{"tasks": {"t": {"phases": {"p": {"run": 1,
  "cpus": [0]}}}}}"#, "\"cpus\" in a phase is not simulated: a task's affinity, policy and priority cannot change \
                           while it runs; set \"cpus\" on the task".into()),
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
  "p": {"loop": 2}}}}}"#, "phase \"p\" has no events (run, runtime, sleep, timer, yield)".into()),
            (r#"{"tasks": {"t": {"phases":
  {}}}}"#, "\"phases\" has no phase".into()),
            (r#"{"tasks": {
  "t": {"loop": 1}}}"#, "task \"t\" has no events (run, runtime, sleep, timer, yield) and no \"phases\"".into()),
            (r#"{"tasks": {"t":
  5}}"#, "task \"t\" must be an object, found an integer".into()),
            (r#"{"tasks":
  {}}"#, "no thread to run: \"tasks\" is empty or every task has \"instance\": 0".into()),
            (r#"{"tasks": {"t": {"run": 1, "loop":
  0}}}"#, "\"loop\" must be -1 (for ever) or a count from 1, not 0".into()),
            (r#"{"tasks": {"t": {"run": 1, "instance":
  -1}}}"#, "\"instance\" must be in 0..=100000, not -1".into()),
            (r#"{"tasks": {"a": {"run": 1, "instance": 60000}, "b":
  {"run": 1, "instance": 60000}}}"#, "120000 threads in all with \"b\"'s 60000 instances: a workload has at most 100000".into()),
            (r#"{"tasks": {"t": {"run": 1, "cpus":
  []}}}"#, "\"cpus\" is empty: give at least one CPU number".into()),
            (r#"{"tasks": {"t": {"run": 1, "cpus": [1,
  "0"]}}}"#, "a CPU number in \"cpus\" must be an integer, found a string".into()),
            (r#"{"tasks": {"t": {"run": 1}}, "resources": {
  "m": {"type": "mutex"}}}"#, "resource declarations are not simulated: they serve rt-app's lock, wait, signal and \
                                barrier events, which the simulator does not run; write \"resources\": {} or leave it out".into()),
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

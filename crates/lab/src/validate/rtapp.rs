//! rt-app (the Debian package, 1.0) on this machine.
//!
//! A workload file is copied to a temporary directory, its members in their order (rt-app
//! runs a phase's events in file order), with its `global` section's
//! `calibration` set to a measured ns-per-loop (rt-app's own calibration takes seconds
//! and drifts under load) and its logs sent there. rt-app takes a whole number of ns per
//! loop, so the copy's `run` events are scaled by the rounding (16.4 ns per loop run as
//! 16 with every `run` 16/16.4 as long), to keep their CPU time exact. While rt-app runs, each thread's CPU
//! time and context switches are sampled from `/proc/PID/task/TID` every few
//! milliseconds (the last sample before the thread exits is kept); the makespan comes
//! from rt-app's per-thread logs (first event start to last event end), the process's
//! totals from `wait4`.
//!
//! rt-app names each thread after its task key (the kernel keeps 15 bytes of it); the
//! threads of one key are told apart by creation order (ascending thread ids), their
//! `instance` here; match threads by key and instance, not by their overall position.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use crate::bench::{ChildProblem, Invalid, OutputProblem};
pub use crate::child::Placement;
use crate::child::{ChildGroup, Exit};

use super::hackbench::tempfile;
use super::{Result, ValidateError};

/// One rt-app thread as sampled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RtAppTask {
    /// The thread's name: its task key, at most 15 bytes of it.
    pub key: String,
    /// Which thread of that key, in creation order from 0.
    pub instance: usize,
    pub tid: i32,
    /// CPU time (`/proc/.../schedstat`).
    pub runtime_ns: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
}

/// One rt-app run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RtAppRun {
    /// From the first thread's first event to the last event's end (rt-app's logs);
    /// the whole process's time when the logs have no events.
    pub makespan_ns: u64,
    /// The whole rt-app process, start-up included.
    pub wall_ns: u64,
    /// CPU time of the whole process.
    pub cpu_ns: u64,
    /// Context switches of the whole process (main thread included).
    pub nvcsw: u64,
    pub nivcsw: u64,
    /// Busy-loop iterations the `run` events made (the logs' `perf` column).
    pub loops: u64,
    /// The worker threads, in creation order.
    pub tasks: Vec<RtAppTask>,
}

impl RtAppRun {
    /// How much slower than `ns_per_loop` (calibrated) the busy loop ran in this run:
    /// the process's CPU time per iteration over it. The machine's speed drifts, and a
    /// loop shares its core's caches (on a virtual machine, maybe its core) with whatever
    /// else runs; `None` without iterations.
    pub fn slowdown(&self, ns_per_loop: f64) -> Option<f64> {
        (self.loops > 0 && ns_per_loop > 0.0).then(|| self.cpu_ns as f64 / self.loops as f64 / ns_per_loop)
    }
}

/// The rt-app document `text` for the simulator, its `run` events `factor` times as
/// long (the work the real runs did: see [`RtAppRun::slowdown`]).
pub fn scaled(text: &str, factor: f64) -> String {
    rewrite(text, "", factor)
}

/// The loop count guess the calibration run starts from; any value works.
const GUESS_NS_PER_LOOP: u64 = 20;
/// CPU time of one calibration run, in microseconds at the guessed rate.
const CALIBRATION_RUN_US: u64 = 150_000;

/// Measures rt-app's busy loop: runs one thread's 150 ms `run` event `reps` times at a
/// guessed ns-per-loop and divides the process's CPU time by the loops it made (from
/// the log's `perf` column). The fastest run's rate: other load on the machine only
/// slows the loop down (shared caches, a busy SMT sibling), never speeds it up.
pub fn calibrate_loop(reps: u32, limit: Duration) -> Result<f64> {
    let doc = json!({
        "global": { "duration": -1, "calibration": GUESS_NS_PER_LOOP },
        "tasks": { "cal": { "loop": 1, "phases": { "p": { "loop": 1, "run": CALIBRATION_RUN_US } } } }
    });
    let mut rates = Vec::new();
    for _ in 0..reps.max(1) {
        let dir = crate::bench::scratch_dir("validate-rtapp-cal")?;
        let (exit, _) = launch(
            &doc.to_string(),
            GUESS_NS_PER_LOOP as f64,
            &dir,
            "calibration",
            limit,
            Placement::Inherited,
            &mut |_| {},
        )?;
        let loops: u64 = log_rows(dir.path())?.iter().map(|r| r.perf).sum();
        if loops == 0 {
            return Err(ValidateError::output("rt-app's calibration run", OutputProblem::NoLoops));
        }
        rates.push(exit.cpu_ns() as f64 / loops as f64);
    }
    rates.iter().copied().reduce(f64::min).filter(|r| r.is_finite() && *r > 0.0).ok_or_else(|| {
        ValidateError::output("rt-app's calibration", OutputProblem::NoRate { rates: rates.clone() })
    })
}

/// The plain-JSON rt-app document `text` as written for rt-app, its members kept in
/// their order (rt-app runs the events of a phase in file order): `global` ends with the
/// members `extra`, if any (rt-app's parser keeps the last of repeated keys; a `global`
/// is added if there is none), and every integer `run` event (a key starting with `run` but not
/// `runtime`) is scaled by `factor`, rounded to whole microseconds.
fn rewrite(text: &str, extra: &str, factor: f64) -> String {
    /// An open object or array: whether it is an object, `global`, and has members.
    struct Open {
        object: bool,
        global: bool,
        members: bool,
    }
    let mut out = String::with_capacity(text.len() + extra.len() + 16);
    let mut open: Vec<Open> = Vec::new();
    let (mut key, mut value_of): (Option<&str>, Option<&str>) = (None, None);
    let mut has_global = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                let mut end = i + 1;
                let mut escaped = false;
                for (j, d) in chars.by_ref() {
                    end = j + d.len_utf8();
                    match d {
                        _ if escaped => escaped = false,
                        '\\' => escaped = true,
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str(&text[i..end]);
                if open.last().is_some_and(|o| o.object) && value_of.is_none() && key.is_none() {
                    key = Some(&text[i + 1..end - 1]);
                    if let Some(o) = open.last_mut() {
                        o.members = true;
                    }
                } else {
                    value_of = None;
                }
            }
            ':' => {
                value_of = key.take();
                out.push(c);
            }
            '{' | '[' => {
                let global = c == '{' && open.len() == 1 && value_of == Some("global");
                has_global |= global;
                open.push(Open { object: c == '{', global, members: false });
                value_of = None;
                out.push(c);
            }
            '}' | ']' => {
                if let Some(o) = open.pop() {
                    if o.global && !extra.is_empty() {
                        out.push_str(if o.members { ", " } else { "" });
                        out.push_str(extra);
                    }
                }
                value_of = None;
                out.push(c);
            }
            ',' => {
                value_of = None;
                out.push(c);
            }
            '-' | '0'..='9' => {
                let mut end = i + 1;
                while let Some(&(j, d)) = chars.peek() {
                    if !(d.is_ascii_digit() || matches!(d, '.' | 'e' | 'E' | '+' | '-')) {
                        break;
                    }
                    end = j + 1;
                    chars.next();
                }
                let number = &text[i..end];
                let run = value_of.is_some_and(|k| k.starts_with("run") && !k.starts_with("runtime"));
                match number.parse::<u64>() {
                    Ok(us) if run => out.push_str(&((us as f64 * factor).round() as u64).to_string()),
                    _ => out.push_str(number),
                }
                value_of = None;
            }
            _ => out.push(c),
        }
    }
    if !has_global {
        if let Some(at) = out.find('{') {
            let empty = out[at + 1..].trim_start().starts_with('}');
            out.insert_str(at + 1, &format!("\"global\": {{{extra}}}{}", if empty { "" } else { ", " }));
        }
    }
    out
}

/// Runs the rt-app file `file` with `ns_per_loop` (from [`calibrate_loop`]), killed past
/// `limit`.
pub fn run(file: &Path, ns_per_loop: f64, limit: Duration) -> Result<RtAppRun> {
    run_placed(file, ns_per_loop, limit, Placement::Inherited)
}

/// [`run`] with rt-app placed as `placement` says from its exec on (in a cgroup, or a
/// session of its own): every thread it makes starts there.
pub fn run_placed(file: &Path, ns_per_loop: f64, limit: Duration, placement: Placement) -> Result<RtAppRun> {
    let text = fs::read_to_string(file)
        .map_err(|e| ValidateError::io(format!("cannot read {}", file.display()), e))?;
    let dir = crate::bench::scratch_dir("validate-rtapp")?;
    let mut samples: BTreeMap<i32, (String, Sample)> = BTreeMap::new();
    let what = file.display().to_string();
    let (exit, pid) = launch(&text, ns_per_loop, &dir, &what, limit, placement, &mut |pid| {
        for (tid, comm, s) in sample_threads(pid) {
            samples.insert(tid, (comm, s));
        }
    })?;
    let rows = log_rows(dir.path())?;
    let start = rows.iter().map(|r| r.start_us).min();
    let end = rows.iter().map(|r| r.end_us).max();
    let makespan_ns = match (start, end) {
        (Some(s), Some(e)) if e > s => (e - s) * 1_000,
        _ => exit.wall_ns,
    };
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let tasks = samples
        .into_iter()
        .filter(|&(tid, _)| tid != pid)
        .map(|(tid, (key, s))| {
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            RtAppTask {
                key,
                instance: *n - 1,
                tid,
                runtime_ns: s.runtime_ns,
                nvcsw: s.nvcsw,
                nivcsw: s.nivcsw,
            }
        })
        .collect();
    Ok(RtAppRun {
        makespan_ns,
        wall_ns: exit.wall_ns,
        cpu_ns: exit.cpu_ns(),
        nvcsw: exit.nvcsw,
        nivcsw: exit.nivcsw,
        loops: rows.iter().map(|r| r.perf).sum(),
        tasks,
    })
}

/// One rt-app thread's log: rt-app's name and index of the thread, and a row per phase
/// iteration it completed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadLog {
    /// The thread's task key.
    pub key: String,
    /// rt-app's index of the thread, counting the threads of the file in order.
    pub index: usize,
    pub rows: Vec<LogRow>,
}

impl ThreadLog {
    /// The name the simulator gives the same thread: `<key>-<index>`.
    pub fn name(&self) -> String {
        format!("{}-{}", self.key, self.index)
    }
}

/// Runs the rt-app document `doc` with `ns_per_loop` (from [`calibrate_loop`]), killed
/// past `limit`, and returns every thread's log, by index. rt-app writes a row when a
/// phase iteration ends, with its start and end on the monotonic clock; a thread stopped
/// by `global.duration` does not log the iteration it was in.
pub fn run_logs(doc: &str, ns_per_loop: f64, limit: Duration) -> Result<Vec<ThreadLog>> {
    let dir = crate::bench::scratch_dir("rtapp-logs")?;
    launch(doc, ns_per_loop, &dir, "rt-app document", limit, Placement::Inherited, &mut |_| {})?;
    let entries = fs::read_dir(dir.path())
        .map_err(|e| ValidateError::io(format!("cannot list {}", dir.path().display()), e))?;
    let mut logs = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        // rtapp-<key>-<index>.log
        let Some(stem) = name.strip_prefix("rtapp-").and_then(|n| n.strip_suffix(".log")) else { continue };
        let Some((key, index)) = stem.rsplit_once('-').and_then(|(k, i)| Some((k, i.parse().ok()?))) else {
            continue;
        };
        let text = fs::read_to_string(e.path())
            .map_err(|err| ValidateError::io(format!("cannot read {}", e.path().display()), err))?;
        logs.push(ThreadLog { key: key.to_string(), index, rows: parse_log(&text) });
    }
    logs.sort_by_key(|l| l.index);
    Ok(logs)
}

/// Writes `doc` with its calibration and log directory set into `dir`, runs rt-app on
/// it (placed as `placement` says) calling `each(pid)` every 5 ms, and checks that it
/// succeeded.
fn launch(
    text: &str,
    ns_per_loop: f64,
    dir: &tempfile::TempDir,
    what: &str,
    limit: Duration,
    placement: Placement,
    each: &mut dyn FnMut(i32),
) -> Result<(Exit, i32)> {
    let doc: Value =
        serde_json::from_str(text).map_err(|source| Invalid::RtAppJson { file: what.into(), source })?;
    let shape = |part| Invalid::RtAppShape { file: what.to_string(), part };
    let root = doc.as_object().ok_or_else(|| shape("the top level"))?;
    if root.get("global").is_some_and(|g| !g.is_object()) {
        return Err(shape("\"global\"").into());
    }
    let whole = ns_per_loop.round().max(1.0);
    let extra = json!({ "calibration": whole as u64, "logdir": dir.path().display().to_string(), "log_basename": "rtapp" });
    let extra = extra.to_string();
    let path = dir.path().join("workload.json");
    fs::write(&path, rewrite(text, &extra[1..extra.len() - 1], whole / ns_per_loop))
        .map_err(|e| ValidateError::io(format!("cannot write {}", path.display()), e))?;
    let mut out = tempfile("rtapp")?;
    let file = out.try_clone().map_err(|e| ValidateError::io("cannot duplicate a file", e))?;
    let mut child = ChildGroup::spawn("rt-app", &[path.display().to_string()], Some(file), placement)?;
    let pid = child.pid();
    let running = format!("rt-app {what}");
    let exit = child.wait_within(limit, Duration::from_millis(5), &running, || each(pid))?;
    if !exit.success() {
        let mut text = String::new();
        let _ = out.seek(SeekFrom::Start(0)).and_then(|_| out.read_to_string(&mut text));
        let tail: Vec<&str> = text.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(child.error(&running, ChildProblem::ExitedSaying { exit, output: tail.join(" | ") }));
    }
    Ok((exit, pid))
}

/// The version of the rt-app installed here, as its Debian package names it (rt-app
/// prints none): `(1, 0)` for `1.0-1`. `None` without dpkg or the package.
pub fn installed_version() -> Option<(u32, u32)> {
    let out =
        std::process::Command::new("dpkg-query").args(["-W", "-f=${Version}", "rt-app"]).output().ok()?;
    out.status.success().then(|| debian_version(&String::from_utf8_lossy(&out.stdout))).flatten()
}

/// The upstream major and minor of a Debian version (`[epoch:]upstream[-revision]`).
fn debian_version(v: &str) -> Option<(u32, u32)> {
    let upstream = v.trim().rsplit_once(':').map_or(v.trim(), |(_, u)| u);
    let mut parts = upstream.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// One thread's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    runtime_ns: u64,
    nvcsw: u64,
    nivcsw: u64,
}

/// Every thread of `pid` now: id, name, counters. Threads that vanish meanwhile are
/// left out.
fn sample_threads(pid: i32) -> Vec<(i32, String, Sample)> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        let base = entry.path();
        let read = |f: &str| fs::read_to_string(base.join(f)).ok();
        let (Some(comm), Some(schedstat), Some(status)) = (read("comm"), read("schedstat"), read("status"))
        else {
            continue;
        };
        let Some(s) = parse_counters(&schedstat, &status) else { continue };
        out.push((tid, comm.trim().to_string(), s));
    }
    out
}

/// A thread's counters from its `schedstat` (runtime ns first) and `status`.
fn parse_counters(schedstat: &str, status: &str) -> Option<Sample> {
    let runtime_ns = schedstat.split_whitespace().next()?.parse().ok()?;
    let field =
        |key: &str| -> Option<u64> { status.lines().find_map(|l| l.strip_prefix(key)?.trim().parse().ok()) };
    Some(Sample {
        runtime_ns,
        nvcsw: field("voluntary_ctxt_switches:")?,
        nivcsw: field("nonvoluntary_ctxt_switches:")?,
    })
}

/// One data line of an rt-app thread log (rt-app 1.0's columns `idx perf run period
/// start end rel_st slack c_duration c_period wu_lat`): the loops its `run` events made,
/// when the phase iteration started and ended (µs, monotonic clock), and for a phase
/// with a timer its slack (µs left before the next activation when the phase's work
/// was done; below zero the period was missed) and its wake-up latency (µs from the
/// timer's activation to the thread running; below zero when the thread did not sleep,
/// the activation having passed, which rt-app 1.0 prints as a 64-bit unsigned number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LogRow {
    pub perf: u64,
    pub start_us: u64,
    pub end_us: u64,
    pub slack_us: i64,
    pub wu_lat_us: i64,
}

/// The data lines of every `rtapp-*.log` in `dir`: columns `idx perf run period start
/// end ...`.
fn log_rows(dir: &Path) -> Result<Vec<LogRow>> {
    let entries =
        fs::read_dir(dir).map_err(|e| ValidateError::io(format!("cannot list {}", dir.display()), e))?;
    let mut rows = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("rtapp-") && name.ends_with(".log")) {
            continue;
        }
        let text = fs::read_to_string(e.path())
            .map_err(|err| ValidateError::io(format!("cannot read {}", e.path().display()), err))?;
        rows.extend(parse_log(&text));
    }
    Ok(rows)
}

fn parse_log(text: &str) -> Vec<LogRow> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let c: Vec<i128> =
                l.split_whitespace().take(11).map(|w| w.parse().ok()).collect::<Option<_>>()?;
            let unsigned = |i: usize| u64::try_from(c[i]).ok();
            (c.len() == 11).then_some(())?;
            Some(LogRow {
                perf: unsigned(1)?,
                start_us: unsigned(4)?,
                end_us: unsigned(5)?,
                slack_us: i64::try_from(c[7]).ok()?,
                // A negative latency printed unsigned: its 64 bits, read back as signed.
                wu_lat_us: unsigned(10)? as i64,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_versions_give_the_upstream_release() {
        assert_eq!(debian_version("1.0-1"), Some((1, 0)));
        assert_eq!(debian_version("1:1.1.2-3\n"), Some((1, 1)));
        assert_eq!(debian_version(""), None);
    }

    #[test]
    fn log_lines_are_read() {
        let log = "# Policy : SCHED_OTHER priority : 0\n\
#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat\n\
   2   588235    35627    35659     12502261305     12502296964             465      -5731      10000      30000          0\n\
   2   588235    40634    40638     12502296978     12502337616           36138     -10651      10000      30000          0\n";
        let rows = parse_log(log);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            LogRow {
                perf: 588_235,
                start_us: 12_502_261_305,
                end_us: 12_502_296_964,
                slack_us: -5731,
                wu_lat_us: 0
            }
        );
        assert_eq!((rows[1].end_us, rows[1].slack_us), (12_502_337_616, -10_651));
        assert!(
            parse_log("   2   588235    35627    35659     12502261305     12502296964\n").is_empty(),
            "a line cut short"
        );
        // A shared timer's thread that found its activation passed: rt-app 1.0 prints
        // the negative latency unsigned.
        let late = "   0   127980     2023    80025     10733078123     10733158147             225      77928       2000      40000 18446744073709511687\n";
        assert_eq!(parse_log(late)[0].wu_lat_us, -39_929);
    }

    #[test]
    fn run_events_are_scaled_global_extended_and_the_order_kept() {
        let text = r#"{"tasks": {"a": {"run": 1000, "runtime": 1000, "sleep": 1000, "lock": "m",
            "phases": {"p": {"unlock": "m", "run0": 500, "run_long": 2000, "timer": {"period": 30000}, "wait": {"ref": "r"}}}}},
            "global": {"duration": -1, "calibration": 3}}"#;
        let got = rewrite(text, r#""calibration":7,"logdir":"/d""#, 0.5);
        assert_eq!(
            got,
            r#"{"tasks": {"a": {"run": 500, "runtime": 1000, "sleep": 1000, "lock": "m",
            "phases": {"p": {"unlock": "m", "run0": 250, "run_long": 1000, "timer": {"period": 30000}, "wait": {"ref": "r"}}}}},
            "global": {"duration": -1, "calibration": 3, "calibration":7,"logdir":"/d"}}"#
        );
        assert_eq!(
            scaled(r#"{"global": {"duration": 2}, "tasks": {"t": {"run": 300}}}"#, 1.1),
            r#"{"global": {"duration": 2}, "tasks": {"t": {"run": 330}}}"#
        );
        assert_eq!(
            rewrite(r#"{"tasks": {"t": {"run": 3}}}"#, r#""x":1"#, 1.0),
            r#"{"global": {"x":1}, "tasks": {"t": {"run": 3}}}"#
        );
        assert_eq!(
            rewrite(r#"{"global": {}, "tasks": {}}"#, r#""x":1"#, 1.0),
            r#"{"global": {"x":1}, "tasks": {}}"#
        );
        assert_eq!(
            rewrite(r#"{"tasks": {"t\"run": {"run": "10"}}}"#, r#""x":1"#, 2.0),
            r#"{"global": {"x":1}, "tasks": {"t\"run": {"run": "10"}}}"#
        );
    }

    #[test]
    fn thread_counters_are_read() {
        let status = "Name:\thog\nvoluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t12\n";
        assert_eq!(
            parse_counters("48087827 458200880 15\n", status),
            Some(Sample { runtime_ns: 48_087_827, nvcsw: 3, nivcsw: 12 })
        );
        assert_eq!(parse_counters("", status), None);
    }
}

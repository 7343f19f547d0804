//! rt-app (the Debian package, 1.0) on this machine.
//!
//! A workload file is copied to a temporary directory with its `global` section's
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
//! `instance` here. The copy handed to rt-app may order the task keys differently from
//! the file (JSON objects are unordered here), so match threads by key and instance, not
//! by their overall position.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use crate::bench::{ChildProblem, Invalid, OutputProblem};
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
    /// The worker threads, in creation order.
    pub tasks: Vec<RtAppTask>,
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
        let (exit, _) = launch(&doc, GUESS_NS_PER_LOOP as f64, &dir, "calibration", limit, &mut |_| {})?;
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

/// Scales every integer `run` event (keys starting with `run` but not `runtime`) of the
/// tasks and their phases by `factor`, rounded to whole microseconds.
fn scale_runs(tasks: &mut Value, factor: f64) {
    let Some(members) = tasks.as_object_mut() else { return };
    for (key, value) in members.iter_mut() {
        match value {
            Value::Number(n) if key.starts_with("run") && !key.starts_with("runtime") => {
                if let Some(us) = n.as_u64() {
                    *value = json!((us as f64 * factor).round() as u64);
                }
            }
            Value::Object(_) => scale_runs(value, factor),
            _ => {}
        }
    }
}

/// Runs the rt-app file `file` with `ns_per_loop` (from [`calibrate_loop`]), killed past
/// `limit`.
pub fn run(file: &Path, ns_per_loop: f64, limit: Duration) -> Result<RtAppRun> {
    let text = fs::read_to_string(file)
        .map_err(|e| ValidateError::io(format!("cannot read {}", file.display()), e))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|source| Invalid::RtAppJson { file: file.to_path_buf(), source })?;
    let dir = crate::bench::scratch_dir("validate-rtapp")?;
    let mut samples: BTreeMap<i32, (String, Sample)> = BTreeMap::new();
    let (exit, pid) = launch(&doc, ns_per_loop, &dir, &file.display().to_string(), limit, &mut |pid| {
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
        tasks,
    })
}

/// Writes `doc` with its calibration and log directory set into `dir`, runs rt-app on
/// it calling `each(pid)` every 5 ms, and checks that it succeeded.
fn launch(
    doc: &Value,
    ns_per_loop: f64,
    dir: &tempfile::TempDir,
    what: &str,
    limit: Duration,
    each: &mut dyn FnMut(i32),
) -> Result<(Exit, i32)> {
    let mut doc = doc.clone();
    let shape = |part| Invalid::RtAppShape { file: what.to_string(), part };
    let root = doc.as_object_mut().ok_or_else(|| shape("the top level"))?;
    let global = root.entry("global").or_insert_with(|| json!({}));
    let global = global.as_object_mut().ok_or_else(|| shape("\"global\""))?;
    let whole = ns_per_loop.round().max(1.0);
    global.insert("calibration".into(), json!(whole as u64));
    global.insert("logdir".into(), json!(dir.path().display().to_string()));
    global.insert("log_basename".into(), json!("rtapp"));
    if let Some(tasks) = root.get_mut("tasks") {
        scale_runs(tasks, whole / ns_per_loop);
    }
    let path = dir.path().join("workload.json");
    fs::write(&path, serde_json::to_vec_pretty(&doc).expect("JSON values serialize"))
        .map_err(|e| ValidateError::io(format!("cannot write {}", path.display()), e))?;
    let mut out = tempfile("rtapp")?;
    let file = out.try_clone().map_err(|e| ValidateError::io("cannot duplicate a file", e))?;
    let mut child = ChildGroup::spawn("rt-app", &[path.display().to_string()], Some(file))?;
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

/// One data line of an rt-app thread log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LogRow {
    perf: u64,
    start_us: u64,
    end_us: u64,
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
            let c: Vec<u64> = l.split_whitespace().take(6).map(|w| w.parse().ok()).collect::<Option<_>>()?;
            (c.len() == 6).then(|| LogRow { perf: c[1], start_us: c[4], end_us: c[5] })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_are_read() {
        let log = "# Policy : SCHED_OTHER priority : 0\n\
#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat\n\
   2   588235    35627    35659     12502261305     12502296964             465      -5731      10000      30000          0\n\
   2   588235    40634    40638     12502296978     12502337616           36138     -10651      10000      30000          0\n";
        let rows = parse_log(log);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], LogRow { perf: 588_235, start_us: 12_502_261_305, end_us: 12_502_296_964 });
        assert_eq!(rows[1].end_us, 12_502_337_616);
    }

    #[test]
    fn run_events_are_scaled_and_nothing_else() {
        let mut tasks = json!({
            "a": { "run": 1000, "runtime": 1000, "sleep": 1000,
                   "phases": { "p": { "run0": 500, "run_long": 2000, "timer": { "period": 30000 } } } }
        });
        scale_runs(&mut tasks, 0.5);
        assert_eq!(
            tasks,
            json!({
                "a": { "run": 500, "runtime": 1000, "sleep": 1000,
                       "phases": { "p": { "run0": 250, "run_long": 1000, "timer": { "period": 30000 } } } }
            })
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

//! PFS's processing-time experiment (paper 001, section 5), against `schedlab run`'s
//! burst-aware slices: how long a program takes, start to exit, beside a CPU hog on its
//! CPU, without and with the daemon.
//!
//! The programs:
//! - the test program ([`Role::PfsTest`]): `loops` times, work A (count until the thread
//!   has used W ms of CPU) then work B (sleep), once per W. Each W runs from its own
//!   path (a hard link to a copy of this binary in the scratch directory), since the
//!   daemon keys a PFS by the executable's path;
//! - `gzip -2 -c` of 200,000 random integers, one per line;
//! - `sort file2 file3 -o out` of 100,000 random integers each.
//!
//! Each program runs in two series of `runs` runs, pinned with one hog to the same
//! CPU: without the daemon, then with `schedlab run` (slices only, on the system calls)
//! running across the whole series, so run 1 teaches its PFS (a PFS is made when the
//! program's first process exits) and runs 2.. use it. One store serves the whole
//! benchmark.
//!
//! Under schedlab's sched_ext scheduler ([`SlicesConfig::sched_ext`]: paper 001's
//! Figure 6 live) both series run under the daemon on the scheduler, with its slice
//! (`ext_slice_ms`): without slices (the scheduler's time sharing, the figure's
//! reference), then with them (the scheduler follows each flow from the exec and keeps
//! a task on at its slice's end when the burst ends within `T_m`).
//!
//! Every child leads its own process group, dies with the runner's thread and is killed
//! and reaped when its guard drops; the daemon is stopped with SIGINT; the scratch
//! directory is removed; the whole run has a wall-time limit.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use schedlab_live::daemon::Enforcer;

use super::deps::Daemon;
use super::named::named;
use super::workers::{self, Role, WorkerSpec};
use super::{BenchError, Context, Invalid, OutputProblem, Result};
use crate::child::{guard_command, ChildGroup};

/// How long a worker may take to say it is ready.
const READY_LIMIT: Duration = Duration::from_secs(10);

/// The programs the paper measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Program {
    /// The test program, once per burst length.
    Test,
    /// `gzip -2`.
    Gzip,
    /// `sort`.
    Sort,
}

impl Program {
    /// Every program, in the report's order.
    pub const ALL: [Program; 3] = [Program::Test, Program::Gzip, Program::Sort];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Program::Test => "test",
            Program::Gzip => "gzip",
            Program::Sort => "sort",
        }
    }
}

named!(Program, "program", Program::ALL, Program::name);

/// The benchmark's settings.
#[derive(Clone, Debug)]
pub struct SlicesConfig {
    /// The test program's burst lengths (work A), in ns; empty: [`default_work_ns`].
    pub work_ns: Vec<u64>,
    /// The test program's loops.
    pub loops: u32,
    /// The test program's sleep per loop (work B), in ns.
    pub sleep_ns: u64,
    /// Runs per series.
    pub runs: u32,
    /// The programs, in order.
    pub programs: Vec<Program>,
    /// The daemon's `T_m` (`slice_tm_ms`).
    pub tm_ms: u64,
    /// Both series under schedlab's sched_ext scheduler (the daemon with slices off,
    /// then on); else the kernel's own scheduler without the daemon, then the daemon on
    /// the system calls.
    pub sched_ext: bool,
    /// The sched_ext scheduler's slice (`ext_slice_ms`); `None`: its default.
    pub ext_slice_ms: Option<u64>,
    /// The sched_ext scheduler runs round robin (`ext_timeshare`): paper 001's setting.
    pub ext_timeshare: bool,
    /// The CPU the program and the hog share; `None`: CPU 1 if allowed, else the last
    /// allowed one.
    pub cpu: Option<usize>,
    /// The limit on the whole run's wall time.
    pub time_limit: Duration,
    /// How long the hog (and the daemon) run before a series' first run, and the pause
    /// between runs (for the daemon to take in an exit).
    pub settle: Duration,
    /// The `schedlab` binary: re-executed for the hog and the daemon, copied for the test
    /// program.
    pub exe: PathBuf,
}

impl Default for SlicesConfig {
    fn default() -> Self {
        SlicesConfig {
            work_ns: Vec::new(),
            loops: 20,
            sleep_ns: 100_000_000,
            runs: 5,
            programs: Program::ALL.to_vec(),
            tm_ms: 20,
            sched_ext: false,
            ext_slice_ms: None,
            ext_timeshare: false,
            cpu: None,
            time_limit: Duration::from_secs(900),
            settle: Duration::from_millis(200),
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("schedlab")),
        }
    }
}

/// The default burst lengths around the default slice: slice/2 (the default slice
/// suffices), slice + 1, + 5 and + 15 ms (within slice + `T_m` with the default 20 ms:
/// where the paper expects a gain) and slice + 40 ms (past it), rounded to 0.1 ms.
pub fn default_work_ns(slice_ns: u64) -> Vec<u64> {
    const MS: u64 = 1_000_000;
    let round = |ns: u64| (ns + 50_000) / 100_000 * 100_000;
    vec![
        round(slice_ns / 2).max(100_000),
        round(slice_ns + MS),
        round(slice_ns + 5 * MS),
        round(slice_ns + 15 * MS),
        round(slice_ns + 40 * MS),
    ]
}

/// Where the benchmark is, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    /// The series (from 0) and how many there are.
    pub series: usize,
    pub total_series: usize,
    /// The measured program, as in the report.
    pub label: String,
    /// With the daemon.
    pub daemon: bool,
    /// Runs done in the series, and how many it has.
    pub done: u32,
    pub runs: u32,
}

/// The daemon's slice counters for a series (the daemon runs for exactly one series).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DaemonCounts {
    /// Slices set (`slices_set`) and reset to the default (`slices_reset`) over the
    /// series.
    pub slices_set: u64,
    pub slices_reset: u64,
    /// Programs with a PFS at the end (`programs_with_pfs`).
    pub programs_with_pfs: u64,
    /// Slices set during each run.
    pub slices_set_per_run: Vec<u64>,
    /// Flows handed to the sched_ext scheduler over the series (`flows`).
    pub flows: u64,
    /// The sched_ext scheduler's slice extensions (its `extensions` counter) during
    /// each run; empty on the system calls.
    pub extensions_per_run: Vec<u64>,
    /// Why counters are missing, if a stats query failed.
    pub stats_error: Option<String>,
    /// It did not exit within the limit after SIGINT and was killed.
    pub killed: bool,
    /// How it exited.
    pub exit: String,
}

/// One series of runs.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Each run's processing time (spawn to exit), in ms.
    pub runs_ms: Vec<f64>,
    /// The test program's involuntary switches in each run (`nonvoluntary_ctxt_switches`
    /// as it finished): the switches a slice's end forced on it, which PFS delays away.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub involuntary_per_run: Vec<u64>,
    /// Mean and standard deviation of runs 2.. (all runs if there is only one), in ms.
    pub mean_ms: f64,
    pub stdev_ms: f64,
    /// The daemon's side (the series with the daemon).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daemon: Option<DaemonCounts>,
}

impl Series {
    fn of(runs_ms: Vec<f64>, involuntary_per_run: Vec<u64>, daemon: Option<DaemonCounts>) -> Series {
        let counted = if runs_ms.len() > 1 { &runs_ms[1..] } else { &runs_ms[..] };
        let n = counted.len().max(1) as f64;
        let mean_ms = counted.iter().sum::<f64>() / n;
        let var = counted.iter().map(|x| (x - mean_ms).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        Series { mean_ms, stdev_ms: var.sqrt(), runs_ms, involuntary_per_run, daemon }
    }
}

/// Where a test program's burst lies, against the default slice and `T_m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Zone {
    /// Within the default slice: nothing to gain.
    WithinSlice,
    /// Past the default slice, within slice + `T_m`: the daemon gives it a slice.
    SlicePlusTm,
    /// Past slice + `T_m`: the default slice stays.
    Beyond,
}

/// One program, without and with the daemon (or its slices).
#[derive(Clone, Debug, Serialize)]
pub struct ProgramResult {
    /// Which.
    pub program: Program,
    /// Its name in the report (`test 3.8ms`, `gzip`).
    pub label: String,
    /// The executable run.
    pub exe: String,
    /// The test program's burst (work A), in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_ms: Option<f64>,
    /// Where that burst lies (the test program).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<Zone>,
    /// Without the daemon.
    pub without: Series,
    /// With it.
    pub with_daemon: Series,
    /// The mean with the daemon over the mean without (runs 2..).
    pub ratio: f64,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct SlicesReport {
    /// The CPU the programs and the hog shared.
    pub cpu: usize,
    /// What enforced: `sched-ext` or `syscalls`.
    pub enforcer: &'static str,
    /// The slice the bursts are measured against: the kernel's default slice (`None`:
    /// unreadable; 3 ms assumed), or the sched_ext scheduler's.
    pub default_slice_ms: Option<f64>,
    /// The daemon's `T_m`.
    pub tm_ms: u64,
    /// The test program's loops and sleep.
    pub loops: u32,
    pub sleep_ms: f64,
    /// Runs per series.
    pub runs: u32,
    /// Per program (and burst length).
    pub programs: Vec<ProgramResult>,
    /// Programs not measured, and why.
    pub skipped: Vec<String>,
    /// Wall time of the run, in seconds.
    pub wall_s: f64,
}

/// How to start one measured program.
struct Target {
    program: Program,
    label: String,
    exe: PathBuf,
    args: Vec<String>,
    stdout: Option<PathBuf>,
    work_ns: Option<u64>,
}

/// Runs the benchmark; `progress` hears of every run.
pub fn run_slices(cfg: &SlicesConfig, progress: &mut dyn FnMut(&Progress)) -> Result<SlicesReport> {
    if cfg.programs.is_empty() || cfg.runs == 0 {
        return Err(Invalid::NothingToMeasure { lacking: "no programs or no runs" }.into());
    }
    if cfg.programs.contains(&Program::Test) && cfg.loops == 0 {
        return Err(Invalid::Zero { what: "the test program's loops" }.into());
    }
    let start = Instant::now();
    let deadline = start + cfg.time_limit;
    let allowed = workers::allowed_cpus().ctx(|| "cannot read this process's CPU affinity".into())?;
    let cpu = match cfg.cpu {
        Some(c) if allowed.contains(&c) => c,
        Some(cpu) => return Err(Invalid::CpuNotAllowed { cpu, allowed }.into()),
        None if allowed.contains(&1) => 1,
        None => *allowed.last().ok_or(Invalid::NoCpu)?,
    };
    let slice_ns = match cfg.sched_ext {
        true => Some(
            cfg.ext_slice_ms.map_or(schedlab_ext::plan::Tunables::default().slice_ns, |ms| ms * 1_000_000),
        ),
        false => schedlab_live::settings::default_slice_ns(),
    };
    let assumed_slice = slice_ns.unwrap_or(3_000_000);
    let work_ns = if cfg.work_ns.is_empty() { default_work_ns(assumed_slice) } else { cfg.work_ns.clone() };
    let dir = super::scratch_dir("slices")?;
    let (targets, skipped) = targets(cfg, &work_ns, dir.path())?;
    let enforcer = if cfg.sched_ext { Enforcer::SchedExt } else { Enforcer::Syscalls };
    let mut ext = cfg.ext_slice_ms.map_or(String::new(), |ms| format!("ext_slice_ms = {ms}\n"));
    if cfg.ext_timeshare {
        ext.push_str("ext_timeshare = true\n");
    }
    let config = |slices: bool| {
        format!(
            "[daemon]\nmodel = false\nboost = false\nslices = {slices}\nslice_tm_ms = {}\n{ext}",
            cfg.tm_ms
        )
    };
    // One series with the daemon running across it, slices on or off.
    let with_daemon = |slices: bool, t: &Target, at: &mut Progress, progress: &mut dyn FnMut(&Progress)| {
        let mut daemon = Daemon::start(&cfg.exe, &config(slices), enforcer, dir.path(), deadline)?;
        let series = series(cfg, t, cpu, Some(&mut daemon), deadline, at, progress);
        let stopped = daemon.stop();
        let mut series = series?;
        if let Some(d) = series.daemon.as_mut() {
            (d.killed, d.exit) = stopped?;
        }
        Ok::<Series, BenchError>(series)
    };
    let total_series = targets.len() * 2;
    let mut programs = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let mut at = Progress {
            series: 2 * i,
            total_series,
            label: t.label.clone(),
            daemon: false,
            done: 0,
            runs: cfg.runs,
        };
        let without = match cfg.sched_ext {
            true => with_daemon(false, t, &mut at, progress)?,
            false => series(cfg, t, cpu, None, deadline, &mut at, progress)?,
        };
        at.series += 1;
        at.daemon = true;
        let with_daemon = with_daemon(true, t, &mut at, progress)?;
        let zone = t.work_ns.map(|w| {
            if w <= assumed_slice {
                Zone::WithinSlice
            } else if w <= assumed_slice + cfg.tm_ms * 1_000_000 {
                Zone::SlicePlusTm
            } else {
                Zone::Beyond
            }
        });
        programs.push(ProgramResult {
            program: t.program,
            label: t.label.clone(),
            exe: t.exe.display().to_string(),
            work_ms: t.work_ns.map(|w| w as f64 / 1e6),
            zone,
            ratio: if without.mean_ms > 0.0 { with_daemon.mean_ms / without.mean_ms } else { 0.0 },
            without,
            with_daemon,
        });
    }
    Ok(SlicesReport {
        cpu,
        enforcer: enforcer.name(),
        default_slice_ms: slice_ns.map(|n| n as f64 / 1e6),
        tm_ms: cfg.tm_ms,
        loops: cfg.loops,
        sleep_ms: cfg.sleep_ns as f64 / 1e6,
        runs: cfg.runs,
        programs,
        skipped,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The measured programs, their executables and inputs prepared in `dir`; and the
/// programs skipped, with why.
fn targets(cfg: &SlicesConfig, work_ns: &[u64], dir: &Path) -> Result<(Vec<Target>, Vec<String>)> {
    let mut targets = Vec::new();
    let mut skipped = Vec::new();
    for &program in &cfg.programs {
        match program {
            Program::Test => {
                let copy = dir.join(Role::PfsTest.comm());
                std::fs::copy(&cfg.exe, &copy)
                    .ctx(|| format!("cannot copy {} to {}", cfg.exe.display(), copy.display()))?;
                for &w in work_ns {
                    let mut spec = WorkerSpec::new(Role::PfsTest);
                    (spec.work_ns, spec.loops, spec.sleep_ns) = (w, cfg.loops, cfg.sleep_ns);
                    let ms = w as f64 / 1e6;
                    // A path of its own per burst length: one PFS each.
                    let exe = dir.join(format!("{}-{ms}ms", Role::PfsTest.comm()));
                    std::fs::hard_link(&copy, &exe).ctx(|| format!("cannot link {}", exe.display()))?;
                    let mut args: Vec<String> = workers::WORKER_COMMAND.map(String::from).to_vec();
                    args.extend(spec.to_args());
                    targets.push(Target {
                        program,
                        label: format!("test {ms}ms"),
                        exe,
                        args,
                        stdout: None,
                        work_ns: Some(w),
                    });
                }
            }
            Program::Gzip | Program::Sort => {
                let Some(exe) = find_in_path(program.name()) else {
                    skipped.push(format!("{}: no '{}' in PATH", program.name(), program.name()));
                    continue;
                };
                let path = |name: &str| dir.join(name).display().to_string();
                let (args, stdout) = if program == Program::Gzip {
                    write_ints(&dir.join("file1"), 200_000, 1)?;
                    (vec!["-2".into(), "-c".into(), path("file1")], Some(dir.join("file1.gz")))
                } else {
                    write_ints(&dir.join("file2"), 100_000, 2)?;
                    write_ints(&dir.join("file3"), 100_000, 3)?;
                    (vec![path("file2"), path("file3"), "-o".into(), path("sorted")], None)
                };
                targets.push(Target {
                    program,
                    label: program.name().into(),
                    exe,
                    args,
                    stdout,
                    work_ns: None,
                });
            }
        }
    }
    Ok((targets, skipped))
}

/// `name` in a directory of `PATH`.
pub(crate) fn find_in_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let paths = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&paths)
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// `n` non-negative pseudo-random integers (as C's `rand()` gives), one per line.
fn write_ints(path: &Path, n: usize, seed: u64) -> Result<()> {
    let write = || -> std::io::Result<()> {
        let mut out = BufWriter::new(File::create(path)?);
        for x in workers::random_ints(n, seed) {
            writeln!(out, "{}", x as u32 >> 1)?;
        }
        out.flush()
    };
    write().ctx(|| format!("cannot write {}", path.display()))
}

/// One series: a hog pinned to `cpu`, then `runs` runs of `t` pinned there too; with
/// `daemon`, its counters after each run and at the end.
fn series(
    cfg: &SlicesConfig,
    t: &Target,
    cpu: usize,
    mut daemon: Option<&mut Daemon>,
    deadline: Instant,
    at: &mut Progress,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Series> {
    let what = format!("{} ({})", t.label, if at.daemon { "daemon" } else { "without" });
    at.done = 0;
    progress(at);
    let mut spec = WorkerSpec::new(Role::Hog);
    spec.cpu = Some(cpu);
    let mut hog = spec.spawn(&cfg.exe, &[])?;
    hog.expect_line("ready", deadline.min(Instant::now() + READY_LIMIT), &what)?;
    std::thread::sleep(cfg.settle);
    let mut counts = daemon.as_ref().map(|_| DaemonCounts::default());
    let mut before = Counts::default();
    if let Some(d) = daemon.as_deref_mut() {
        // The scheduler's counters run from its load, before this series' first run.
        before = d.stats_line().and_then(|l| parse_counts(&l)).unwrap_or_default();
    }
    let (mut runs_ms, mut involuntary) = (Vec::new(), Vec::new());
    for run in 0..cfg.runs {
        let what = format!("{what}, run {}", run + 1);
        let (ms, switches) = measure(t, cpu, deadline, &what)?;
        runs_ms.push(ms);
        involuntary.extend(switches);
        std::thread::sleep(cfg.settle);
        if let (Some(d), Some(c)) = (daemon.as_deref_mut(), counts.as_mut()) {
            match d.stats_line().and_then(|l| parse_counts(&l)) {
                Ok(now) => {
                    c.slices_set_per_run.push(now.slices_set.saturating_sub(before.slices_set));
                    if let (Some(n), Some(b)) = (now.extensions, before.extensions) {
                        c.extensions_per_run.push(n.saturating_sub(b));
                    }
                    (c.slices_set, c.slices_reset, c.programs_with_pfs, c.flows) =
                        (now.slices_set, now.slices_reset, now.programs_with_pfs, now.flows);
                    before = now;
                }
                Err(e) => c.stats_error = Some(e.to_string()),
            }
        }
        at.done = run + 1;
        progress(at);
    }
    drop(hog);
    Ok(Series::of(runs_ms, involuntary, counts))
}

/// One run of `t` pinned to `cpu`: its processing time (spawn to exit) in ms, and the
/// test program's involuntary switches.
fn measure(t: &Target, cpu: usize, deadline: Instant, what: &str) -> Result<(f64, Option<u64>)> {
    let mut cmd = Command::new(&t.exe);
    cmd.args(&t.args).stdin(Stdio::null()).stderr(Stdio::inherit());
    match &t.stdout {
        Some(p) => cmd.stdout(File::create(p).ctx(|| format!("cannot create {}", p.display()))?),
        None if t.program == Program::Test => cmd.stdout(Stdio::piped()),
        None => cmd.stdout(Stdio::null()),
    };
    guard_command(&mut cmd, Vec::new(), libc::SIGKILL, None);
    // SAFETY: pin_to only makes a system call (sched_setaffinity) on the stack.
    unsafe { cmd.pre_exec(move || workers::pin_to(cpu)) };
    let name = if t.program == Program::Test { Role::PfsTest.comm() } else { t.program.name() };
    let mut child = ChildGroup::start(&mut cmd, name)?;
    let mut involuntary = None;
    if t.program == Program::Test {
        child.expect_line("ready", deadline.min(Instant::now() + READY_LIMIT), what)?;
        child.expect_line("done", deadline, what)?;
        involuntary = schedlab_live::process::status_number(child.pid() as u32, "nonvoluntary_ctxt_switches");
    }
    let exit = child.wait(deadline, what)?;
    Ok((exit.wall_ns as f64 / 1e6, involuntary))
}

/// The counters of a stats answer the benchmark reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    slices_set: u64,
    slices_reset: u64,
    programs_with_pfs: u64,
    flows: u64,
    /// The sched_ext scheduler's, while it enforces.
    extensions: Option<u64>,
}

/// The counters of a stats answer.
fn parse_counts(line: &str) -> Result<Counts> {
    let text = || line.trim().to_string();
    let stats = |problem: OutputProblem| BenchError::output("the daemon's stats", problem);
    let v: serde_json::Value = serde_json::from_str(line.trim())
        .map_err(|source| stats(OutputProblem::NotJson { text: text(), source }))?;
    let num = |key: &'static str| {
        v.get(key)
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| stats(OutputProblem::NoKey { key, text: text() }))
    };
    Ok(Counts {
        slices_set: num("slices_set")?,
        slices_reset: num("slices_reset")?,
        programs_with_pfs: num("programs_with_pfs")?,
        flows: v.get("flows").and_then(serde_json::Value::as_u64).unwrap_or(0),
        extensions: v.pointer("/sched_ext/extensions").and_then(serde_json::Value::as_u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_bursts_straddle_the_slice() {
        assert_eq!(default_work_ns(2_800_000), [1_400_000, 3_800_000, 7_800_000, 17_800_000, 42_800_000]);
        assert_eq!(default_work_ns(3_140_000)[0], 1_600_000);
        assert_eq!("gzip".parse::<Program>(), Ok(Program::Gzip));
        assert!("cat".parse::<Program>().is_err());
    }

    #[test]
    fn series_statistics_leave_the_learning_run_out() {
        let s = Series::of(vec![100.0, 10.0, 12.0, 14.0], Vec::new(), None);
        assert_eq!((s.mean_ms, s.stdev_ms), (12.0, 2.0));
        assert_eq!(Series::of(vec![5.0], Vec::new(), None).mean_ms, 5.0);
        let line = r#"{"slices_set":4,"slices_reset":1,"programs_with_pfs":2,"x":[]}"#;
        let counts = Counts { slices_set: 4, slices_reset: 1, programs_with_pfs: 2, ..Counts::default() };
        assert_eq!(parse_counts(line).unwrap(), counts);
        let line = r#"{"slices_set":0,"slices_reset":0,"programs_with_pfs":1,"flows":3,"sched_ext":{"extensions":9}}"#;
        let counts = Counts { programs_with_pfs: 1, flows: 3, extensions: Some(9), ..Counts::default() };
        assert_eq!(parse_counts(line).unwrap(), counts);
        assert!(parse_counts("{}").is_err());
    }
}

//! The observer's overhead: a system-call and context-switch heavy workload, rt-tests'
//! `hackbench -g G -l L -p`, bare, under schedlab's observer, under bpftrace counting
//! system calls the way the thesis's DTrace script did (`@[pid, comm, args->id] =
//! count()`), and under the floor: a bpftrace program on the same tracepoint that does
//! nothing, which measures what attaching anything to every system call costs; and
//! what the daemon costs in its steady state: the observer as `schedlab run` keeps it
//! (watched mode, no system-call hook, nothing marked), and `schedlab run` itself.
//! Rounds are interleaved (bare, floor, observer, watched, daemon, bpftrace, bare, …)
//! so that drifts of the machine hit every mode alike; each mode's median is compared
//! with bare's.
//!
//! The observer runs in this process, on its own thread, with the sinks `schedlab
//! observe` uses (per-thread activity and SWAP's dependency recorder), so its cost is
//! the observer's and not a command's start-up; it is attached before hackbench starts
//! (`Observer::start` returns once the programs are attached). bpftrace is ready when it
//! prints `Attaching 1 probe...`. The daemon is started for each of its rounds (its own
//! store and socket in a temporary directory) and measured from its steady state on:
//! its start-up profiling window closed, then a second (as in `bench suite`).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use schedlab_live::daemon::Enforcer;

use super::deps;
use super::{BenchError, Context, OutputProblem, Result, Tool};
use crate::child::{guard_command, ChildGroup};
use schedlab_live::activity::Activity;
use schedlab_live::dependencies::DependencyRecorder;
use schedlab_live::observer::{Observer, ObserverOptions, SchedEvents};

/// bpftrace's program: the thesis's DTrace aggregation.
pub const BPFTRACE_PROGRAM: &str = "tracepoint:raw_syscalls:sys_enter { @[pid, comm, args->id] = count(); }";

/// A program on the same tracepoint that does nothing (its filter never holds): what
/// attaching anything to every system call costs, the floor under both tracers.
pub const FLOOR_PROGRAM: &str = "tracepoint:raw_syscalls:sys_enter /pid == 0/ { @ = count(); }";

/// What runs beside hackbench.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Nothing.
    Bare,
    /// schedlab's observer.
    Observer,
    /// bpftrace with [`BPFTRACE_PROGRAM`].
    Bpftrace,
    /// bpftrace with [`FLOOR_PROGRAM`].
    Floor,
    /// schedlab's observer as the daemon keeps it: watched mode, no system-call hook,
    /// nothing marked.
    Watched,
    /// `schedlab run` in its steady state.
    Daemon,
}

impl Mode {
    /// Every mode, in the order rounds run them.
    pub const ALL: [Mode; 6] =
        [Mode::Bare, Mode::Floor, Mode::Observer, Mode::Watched, Mode::Daemon, Mode::Bpftrace];

    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Bare => "bare",
            Mode::Observer => "observer",
            Mode::Bpftrace => "bpftrace",
            Mode::Floor => "floor",
            Mode::Watched => "watched",
            Mode::Daemon => "daemon",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Mode::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
            format!("'{s}' is not a mode: use one of {}", names.join(", "))
        })
    }
}

/// The benchmark's parameters.
#[derive(Clone, Debug)]
pub struct OverheadConfig {
    /// hackbench's groups (`-g`).
    pub groups: u32,
    /// hackbench's loops (`-l`).
    pub loops: u32,
    /// Runs per mode.
    pub rounds: usize,
    /// The modes to compare (bare is always measured: the others are relative to it).
    pub modes: Vec<Mode>,
    /// The longest the whole benchmark may take.
    pub time_limit: Duration,
    /// The `schedlab` binary and the configuration (TOML text) of [`Mode::Daemon`].
    pub exe: PathBuf,
    pub daemon_config: String,
}

impl Default for OverheadConfig {
    /// Every mode; the daemon with the built-in configuration, started from this
    /// process's own executable.
    fn default() -> Self {
        OverheadConfig {
            groups: 10,
            loops: 100,
            rounds: 7,
            modes: Mode::ALL.to_vec(),
            time_limit: Duration::from_secs(900),
            exe: std::env::current_exe().unwrap_or_default(),
            daemon_config: schedlab_live::config::DEFAULT.to_string(),
        }
    }
}

/// One mode's times.
#[derive(Clone, Debug, Serialize)]
pub struct ModeResult {
    pub mode: Mode,
    /// hackbench's own `Time:` of every round, in seconds.
    pub times_s: Vec<f64>,
    pub median_s: f64,
    /// The median's difference from bare's, in percent.
    pub vs_bare_pct: f64,
    /// Records the observer lost (the observer's and the daemon's modes only).
    pub lost_events: Option<u64>,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct OverheadReport {
    /// The workload's command line.
    pub command: String,
    pub rounds: usize,
    pub modes: Vec<ModeResult>,
    /// What went wrong without spoiling the figures (a daemon that had to be killed).
    pub notes: Vec<String>,
}

/// The observer on its own thread, draining into `schedlab observe`'s sinks until
/// stopped.
struct ObserverThread {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<u64>>,
}

impl ObserverThread {
    /// Starts the observer with `options` and returns once its programs are attached.
    fn start(options: ObserverOptions) -> Result<ObserverThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || -> Result<u64> {
            let started = Observer::start(options);
            let mut observer = match started {
                Ok(o) => {
                    let _ = ready_tx.send(Ok(()));
                    o
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return Ok(0);
                }
            };
            // `schedlab observe`'s sinks.
            let mut sinks = (Activity::default(), DependencyRecorder::new());
            while !flag.load(Ordering::Relaxed) {
                observer.poll(&mut sinks, Duration::from_millis(100))?;
            }
            Ok(observer.lost_events()?)
        });
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(ObserverThread { stop, thread }),
            Ok(Err(e)) => Err(BenchError::ObserverStart(e)),
            // The thread sends before it returns: it panicked.
            Err(_) => Err(BenchError::Panicked { thread: "observer's" }.during("starting the observer")),
        }
    }

    /// Stops it; the records it lost.
    fn stop(self) -> Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().map_err(|_| BenchError::Panicked { thread: "observer's" })?
    }
}

/// A tracer running beside one hackbench.
enum Tracer {
    None,
    Observer(ObserverThread),
    Bpftrace(ChildGroup),
    Daemon(deps::Daemon),
}

impl Tracer {
    fn start(mode: Mode, cfg: &OverheadConfig, dir: &tempfile::TempDir, deadline: Instant) -> Result<Tracer> {
        Ok(match mode {
            Mode::Bare => Tracer::None,
            // `schedlab observe`'s view: every switch and waking, the system-call hook on.
            Mode::Observer => Tracer::Observer(ObserverThread::start(ObserverOptions {
                syscalls: true,
                sched_events: SchedEvents::All,
                ..ObserverOptions::default()
            })?),
            Mode::Watched => Tracer::Observer(ObserverThread::start(ObserverOptions::watched())?),
            Mode::Daemon => {
                let mut daemon =
                    deps::Daemon::start(&cfg.exe, &cfg.daemon_config, Enforcer::Auto, dir.path(), deadline)?;
                daemon.wait_steady(&mut |d| {
                    if Instant::now() + d > deadline {
                        let limit = BenchError::TimeLimit { what: "the benchmark", limit: cfg.time_limit };
                        return Err(limit.during("starting the daemon"));
                    }
                    std::thread::sleep(d);
                    Ok(())
                })?;
                Tracer::Daemon(daemon)
            }
            Mode::Bpftrace | Mode::Floor => {
                let program = if mode == Mode::Floor { FLOOR_PROGRAM } else { BPFTRACE_PROGRAM };
                let mut cmd = Command::new("bpftrace");
                cmd.args(["-e", program]).stdin(Stdio::null()).stdout(Stdio::piped());
                cmd.stderr(Stdio::null());
                guard_command(&mut cmd, Vec::new(), libc::SIGKILL, None);
                let mut w = ChildGroup::start(&mut cmd, "bpftrace")?;
                while !w.line(deadline, "starting bpftrace")?.starts_with("Attaching") {}
                Tracer::Bpftrace(w)
            }
        })
    }

    /// Stops the tracer: the records the observer (or the daemon's) lost, if it was
    /// one; a note when the daemon had to be killed.
    fn stop(self, deadline: Instant, notes: &mut Vec<String>) -> Result<Option<u64>> {
        match self {
            Tracer::None => Ok(None),
            Tracer::Observer(o) => o.stop().map(Some),
            Tracer::Daemon(mut d) => {
                let lost = d.stats_line().and_then(|l| deps::parse_stats(&l)).map(|s| s.lost_events);
                notes.extend(d.stop_and_restore()?);
                lost.map(Some)
            }
            Tracer::Bpftrace(mut w) => {
                w.signal(libc::SIGINT)?;
                drain_and_wait(&mut w, deadline, "stopping bpftrace")?;
                Ok(None)
            }
        }
    }
}

/// Runs hackbench once; its `Time:` in seconds.
fn hackbench(cfg: &OverheadConfig, deadline: Instant) -> Result<f64> {
    let mut cmd = Command::new("hackbench");
    cmd.args(["-g", &cfg.groups.to_string(), "-l", &cfg.loops.to_string(), "-p"]);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    guard_command(&mut cmd, Vec::new(), libc::SIGKILL, None);
    let mut w = ChildGroup::start(&mut cmd, "hackbench")?;
    loop {
        let line = w.line(deadline, "running hackbench")?;
        if let Some(t) = line.strip_prefix("Time:") {
            let secs = t.trim().parse::<f64>().map_err(|source| {
                BenchError::output("hackbench", OutputProblem::NotTime { line: line.clone(), source })
            })?;
            w.wait(deadline, "running hackbench")?;
            return Ok(secs);
        }
    }
}

/// The median of `v` (the lower middle for an even count).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len().saturating_sub(1) / 2).copied().unwrap_or(0.0)
}

/// Checks that hackbench (and bpftrace, if asked for) can run.
fn check_tools(cfg: &OverheadConfig) -> Result<()> {
    let found = |tool: &str| {
        Command::new("sh").args(["-c", &format!("command -v {tool}")]).stdout(Stdio::null()).status()
    };
    if !found("hackbench").ctx(|| "looking for hackbench".into())?.success() {
        let tools = vec![Tool { program: "hackbench", package: "rt-tests" }];
        return Err(BenchError::Missing { needed_by: "the benchmark", tools });
    }
    // The floor is a bpftrace program too: the least any bpftrace costs.
    if cfg.modes.iter().any(|m| matches!(m, Mode::Bpftrace | Mode::Floor))
        && !found("bpftrace").ctx(|| "looking for bpftrace".into())?.success()
    {
        let tools = vec![Tool { program: "bpftrace", package: "bpftrace" }];
        return Err(BenchError::Missing {
            needed_by: "the bpftrace and floor modes (leave them out with --modes)",
            tools,
        });
    }
    Ok(())
}

/// Runs the benchmark; `progress(round, mode, seconds)` after every run.
pub fn run_overhead(
    cfg: &OverheadConfig,
    progress: &mut dyn FnMut(usize, Mode, f64),
) -> Result<OverheadReport> {
    check_tools(cfg)?;
    let deadline = Instant::now() + cfg.time_limit;
    let mut modes: Vec<Mode> = vec![Mode::Bare];
    modes.extend(cfg.modes.iter().copied().filter(|&m| m != Mode::Bare));
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut lost: Vec<Option<u64>> = vec![None; modes.len()];
    let mut notes = Vec::new();
    let dir = super::scratch_dir("overhead")?;
    for round in 0..cfg.rounds {
        for (i, &mode) in modes.iter().enumerate() {
            let tracer = Tracer::start(mode, cfg, &dir, deadline)?;
            let t = hackbench(cfg, deadline);
            let stopped = tracer.stop(deadline, &mut notes)?;
            let t = t?;
            if let Some(n) = stopped {
                *lost[i].get_or_insert(0) += n;
            }
            times[i].push(t);
            progress(round, mode, t);
        }
    }
    let bare = median(&times[0]);
    let results = modes
        .iter()
        .zip(times)
        .zip(lost)
        .map(|((&mode, times_s), lost_events)| {
            let median_s = median(&times_s);
            ModeResult { mode, vs_bare_pct: (median_s / bare - 1.0) * 100.0, median_s, times_s, lost_events }
        })
        .collect();
    Ok(OverheadReport {
        command: format!("hackbench -g {} -l {} -p", cfg.groups, cfg.loops),
        rounds: cfg.rounds,
        modes: results,
        notes,
    })
}

/// Reads what is left of `w`'s output (bpftrace prints its map at exit), so that it
/// never blocks on a full pipe, then waits for it to exit.
fn drain_and_wait(w: &mut ChildGroup, deadline: Instant, what: &str) -> Result<()> {
    while w.line(deadline, what).is_ok() {}
    w.wait(deadline, what).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_modes() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.0);
        assert_eq!(median(&[]), 0.0);
        assert_eq!("bpftrace".parse::<Mode>().unwrap(), Mode::Bpftrace);
        assert!("dtrace"
            .parse::<Mode>()
            .unwrap_err()
            .contains("bare, floor, observer, watched, daemon, bpftrace"));
    }

    #[test]
    fn bpftrace_counts_what_the_thesis_counted() {
        assert!(BPFTRACE_PROGRAM.contains("raw_syscalls:sys_enter") && BPFTRACE_PROGRAM.contains("count()"));
    }
}

//! The do-no-harm suite (`schedlab bench suite`): real workloads run on bare Linux and
//! under `schedlab run`, side by side, so that every live change is judged by what it
//! does to programs people run.
//!
//! A *round* runs every workload on both sides: the short ones (hackbench, the
//! fork/exec loop: a fraction of a second each) [`Sizes::short_runs`] times, the others
//! once, in an order shuffled per round. The order is cut in two halves and run
//! A-B-B-A: the first half bare, then `schedlab run` is started and both halves run
//! under it, then it is stopped and the second half runs bare. So each workload's bare
//! and schedlab runs are half a round apart, not a whole side's length: this host has
//! slow and fast spells of seconds (hackbench ±15 %, every workload run then alike),
//! and a pair taken further apart sees different ones (measured with a bare block then
//! a schedlab block of every workload, 25 s apart: whole rounds' ratios at 0.73–0.84).
//! The first half's workloads run bare first and the second's schedlab first, so a
//! drift within the round cancels over rounds, and the shuffle puts a workload in
//! either half, at a different place after the daemon's start, with its runs apart
//! (runs back to back share a spell). A workload's value on a side is the median of
//! its runs in the round (wake-ups: pooled).
//!
//! `schedlab run` gets its own store and socket in a temporary directory; the suite
//! waits for its steady state (its start-up profiling window closed, then a second:
//! restoring, loading BPF and profiling the processes running at its start are a
//! one-time cost of a daemon that runs for months, not what the workloads should
//! measure; its later windows fall where they fall), reads the daemon's CPU time and
//! peak memory at the end, and stops it (which restores everything it changed; a
//! daemon that must be killed is followed by `schedlab restore`). The bare half first
//! rests as long as the last daemon start took, so that both sides' workloads begin
//! after the same pause.
//!
//! Each workload's metric is compared per round (schedlab's value over the same round's
//! bare value: half a round apart, so the ratio is paired); the reported ratio is the
//! median of the per-round ratios, with a 95 % bootstrap interval of that median.
//! Wake-up latency quantiles are the exception: the tail of one run is a handful of
//! its samples, and the machine's own hiccups (a neighbour, the host) put whole runs
//! of either side into a slow mode, so the median of per-round p99 ratios swings with
//! them. There the ratio is that of the quantiles of all the rounds' wake-ups pooled
//! per side, and its interval comes from resampling whole rounds (both sides of a
//! round together, keeping the pairing). Lower is better for every metric. The verdict follows the rule of the live world:
//!
//! - **loss**: the ratio is above [`LOSS_RATIO`] or the interval reaches above
//!   [`LOSS_UPPER`] (not shown to be harmless);
//! - **win**: the whole interval is below 1;
//! - **neutral**: otherwise.
//!
//! Every child runs in its own process group and is killed with it on a time limit, on
//! an error and on Ctrl-C (the `stop` flag), so nothing outlives the suite.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::Rng;
use rand::SeedableRng;
use serde::Serialize;

use schedlab_live::daemon::Enforcer;
use schedlab_store::EnforcerTrial;

use super::deps::{self, BoostReaction, DepsConfig, Scenario};
use super::ipc::IpcKind;
use super::named::named;
use super::stats::{median, quantile};
use super::workers::{self, Role, WorkerSpec, RESPONSES};
use super::{BenchError, ChildProblem, Context, Invalid, OutputProblem, Result, Tool};
use crate::child::{guard_command, ChildGroup};

/// A per-round ratio above this median is a loss.
pub const LOSS_RATIO: f64 = 1.03;
/// An interval reaching above this is a loss (the harm is not excluded).
pub const LOSS_UPPER: f64 = 1.05;
/// Resamples of the bootstrap interval.
const BOOTSTRAP_RESAMPLES: usize = 4000;
/// Resamples of a pooled latency quantile's interval (each merges every round picked).
const POOLED_RESAMPLES: usize = 2000;

/// What a workload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Workload {
    /// rt-tests' hackbench: groups of senders and receivers over pipes or sockets, as
    /// processes or threads. Metric: its own `Time:`.
    Hackbench { pipe: bool, threads: bool },
    /// `xz -T<cpus> -3` of generated text, in two blocks per thread. Metric: wall time.
    Compress,
    /// A shell loop running `/bin/true` many times. Metric: wall time.
    ForkExec,
    /// `make -j<cpus>` of generated small C files with the system's cc. Metric: wall time.
    Make,
    /// cyclictest as SCHED_OTHER (every [`WAKEUP_PERIOD_US`]) beside CPU hogs. Metrics: the wake-up
    /// latency's median and 99th percentile.
    Wakeup,
    /// SWAP's client-server round trip (a nice −20 client, a nice 0 server sorting per
    /// request) over one IPC kind with CPU hogs. Metric: the median round trip.
    Deps(IpcKind),
    /// A person's interactive program beside a build: a render-like thread (rt-app,
    /// SCHED_OTHER at nice 0, [`FRAME_WORK_PCT`] of each period of CPU work, `hz` periods
    /// a second) beside `load` compressor loops per CPU (`xz -6` of a small text,
    /// restarted as each ends: fresh, unpinned processes, as a `make -j` starts
    /// compilers). `reniced`: the load runs at nice 19, what a person does by hand (the
    /// row to hold schedlab against). Metrics: the frames missed (rt-app's slack below
    /// zero), the render thread's wake-up latency's 99th percentile (rt-app's `wu_lat`),
    /// and the load's own pace (wall time per compression per loop, the harm guard).
    /// `load_kind` says what the load is and where it runs ([`LoadKind`]).
    Frames { hz: u32, load: u32, reniced: bool, load_kind: LoadKind },
    /// Keystroke-like programs beside a build: [`KEYSTROKES`] of schedlab's
    /// `keystroke` workers (each sleeps a random 50–500 ms, wakes, works a random 1–5 ms
    /// of CPU time) beside the frames workload's load at `load` loops per CPU (none: the
    /// unloaded reference), at nice 19 if `reniced`. Metrics: the response time's 99th
    /// and 99.9th percentiles over all presses pooled (from the wake-up asked for to the
    /// work done), and, under load, the load's pace.
    Response { load: u32, reniced: bool },
    /// A request server beside a build: schedlab's schbench-like `requests` worker (two
    /// message threads each handing a request to four worker threads every 4 ms, each
    /// answered after 200 µs of CPU time, a batch not answered within its period
    /// skipping the next) beside the same load as a response workload. Metrics: the
    /// requests' latency's 99th percentile over all requests pooled (from the period's
    /// start to the answer), the pace (µs of the run per request answered: a server
    /// that falls behind answers fewer), and, under load, the load's pace.
    Requests { load: u32, reniced: bool },
}

/// What the load beside a frames workload is, and where it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadKind {
    /// Compressor loops (`xz -6` restarted as each job ends) in the suite's session, as
    /// a build and an editor started from one shell.
    Build,
    /// The same loops in a session of their own, as a build started from its own
    /// terminal: on a kernel with autogroups, all of them weigh together as one nice-0
    /// task against the render thread's session, whatever their own nice values.
    Session,
    /// Hot loops of an interpreter under a random name (`perl -e 'while (1) {}'`, perl
    /// copied to a name of its own, started once and never ending): a program no rule
    /// names and none of whose runs ever ended, which only what the daemon sees it do
    /// can find; its pace is the wall time per second of CPU time each loop got.
    Spin,
}

impl LoadKind {
    /// The suffix of a frames workload's name.
    fn suffix(self) -> &'static str {
        match self {
            LoadKind::Build => "",
            LoadKind::Session => "-session",
            LoadKind::Spin => "-spin",
        }
    }
}

/// How many keystroke-like programs a response workload runs at once: enough presses
/// in a few seconds (about 3.6 a second each) for a 99.9th percentile over the rounds.
pub const KEYSTROKES: u32 = 12;

impl Workload {
    /// The suite's workloads.
    pub fn all() -> Vec<Workload> {
        let mut all = vec![
            Workload::Hackbench { pipe: true, threads: false },
            Workload::Hackbench { pipe: false, threads: false },
            Workload::Hackbench { pipe: true, threads: true },
            Workload::Hackbench { pipe: false, threads: true },
            Workload::Compress,
            Workload::ForkExec,
            Workload::Make,
            Workload::Wakeup,
        ];
        all.extend(IpcKind::ALL.into_iter().map(Workload::Deps));
        all.extend([
            Workload::Frames { hz: 60, load: 4, reniced: false, load_kind: LoadKind::Build },
            Workload::Frames { hz: 60, load: 4, reniced: true, load_kind: LoadKind::Build },
            Workload::Frames { hz: 144, load: 2, reniced: false, load_kind: LoadKind::Build },
            Workload::Frames { hz: 60, load: 2, reniced: false, load_kind: LoadKind::Spin },
            Workload::Frames { hz: 60, load: 4, reniced: false, load_kind: LoadKind::Session },
            Workload::Frames { hz: 60, load: 4, reniced: true, load_kind: LoadKind::Session },
            Workload::Response { load: 0, reniced: false },
            Workload::Response { load: 2, reniced: false },
            Workload::Response { load: 2, reniced: true },
            Workload::Requests { load: 0, reniced: false },
            Workload::Requests { load: 2, reniced: false },
            Workload::Requests { load: 2, reniced: true },
        ]);
        all
    }

    /// Its name in reports and in `--only`.
    pub fn name(self) -> String {
        match self {
            Workload::Hackbench { pipe, threads } => format!(
                "hackbench-{}-{}",
                if pipe { "pipe" } else { "socket" },
                if threads { "thread" } else { "process" }
            ),
            Workload::Compress => "xz".into(),
            Workload::ForkExec => "fork-exec".into(),
            Workload::Make => "make".into(),
            Workload::Wakeup => "wakeup".into(),
            Workload::Deps(kind) => format!("deps-{kind}"),
            Workload::Frames { hz, load, reniced, load_kind: kind } => {
                format!("frames-{hz}hz-{load}x{}{}", kind.suffix(), if reniced { "-reniced" } else { "" })
            }
            Workload::Response { load, reniced } => {
                format!("response-{load}x{}", if reniced { "-reniced" } else { "" })
            }
            Workload::Requests { load, reniced } => {
                format!("requests-{load}x{}", if reniced { "-reniced" } else { "" })
            }
        }
    }

    /// The same workload with no load, whose bare latencies a loaded one's are held to:
    /// for a loaded response or requests workload.
    fn unloaded(self) -> Option<Workload> {
        match self {
            Workload::Response { load, .. } if load > 0 => {
                Some(Workload::Response { load: 0, reniced: false })
            }
            Workload::Requests { load, .. } if load > 0 => {
                Some(Workload::Requests { load: 0, reniced: false })
            }
            _ => None,
        }
    }

    /// The quantile of the pooled latencies its metric `m` is, for a latency metric.
    fn quantile(self, m: usize) -> Option<f64> {
        match (self, m) {
            (Workload::Wakeup, 0) => Some(0.5),
            (Workload::Wakeup, 1)
            | (Workload::Frames { .. }, 1)
            | (Workload::Response { .. } | Workload::Requests { .. }, 0) => Some(0.99),
            (Workload::Response { .. }, 1) => Some(0.999),
            _ => None,
        }
    }

    /// Where its metric `m` becomes a loss: (the ratio's bound, the interval's). A
    /// frames workload's load gives the render thread the CPU time it was denied bare
    /// (at 60 Hz, 24 % of a CPU: on two CPUs up to 6 % of the load's time when bare
    /// Linux gave the thread half of it), so its pace is held to issue 28's bound,
    /// 0.95 × bare's throughput (a ratio of 1/0.95), not to the 3 % of the others;
    /// the load reniced by hand pays the same.
    fn loss_bounds(self, m: usize) -> (f64, f64) {
        match (self, m) {
            (Workload::Frames { .. } | Workload::Response { .. } | Workload::Requests { .. }, 2) => {
                (1.0 / 0.95, 1.08)
            }
            _ => (LOSS_RATIO, LOSS_UPPER),
        }
    }

    /// The least difference of its metric `m`'s medians that can mean anything, in the
    /// metric's unit: the frames missed count whole frames, and one frame of a run (at
    /// 60 Hz for 4 s, 0.42 %) either way, which a ratio over a bare zero would call an
    /// infinite harm or a total win, is neither.
    fn noise_floor(self, m: usize, sizes: &Sizes) -> f64 {
        match (self, m) {
            (Workload::Frames { hz, .. }, 0) => {
                100.0 / (f64::from(hz) * f64::from(sizes.frames_secs)).max(1.0)
            }
            _ => 0.0,
        }
    }

    /// Its metrics: name and unit.
    fn metrics(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Workload::Wakeup => &[("p50", "µs"), ("p99", "µs")],
            Workload::Deps(_) => &[("round trip", "ms")],
            Workload::Frames { .. } => &[("missed", "%"), ("wake-up p99", "µs"), ("load", "ms/job")],
            Workload::Response { load: 0, .. } => &[("p99", "µs"), ("p99.9", "µs")],
            Workload::Response { .. } => &[("p99", "µs"), ("p99.9", "µs"), ("load", "ms/job")],
            Workload::Requests { load: 0, .. } => &[("p99", "µs"), ("pace", "µs/request")],
            Workload::Requests { .. } => &[("p99", "µs"), ("pace", "µs/request"), ("load", "ms/job")],
            _ => &[("time", "s")],
        }
    }
}

/// The render thread's work in each period of a frames workload, in percent: 4 ms of
/// every 16.7 at 60 Hz, as a game's or a browser's main thread might take.
pub const FRAME_WORK_PCT: u32 = 24;

named!(Workload, "workload of the suite", Workload::all(), Workload::name);

/// How big each workload is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sizes {
    /// How many times the short workloads (hackbench, fork-exec) run per side in a round. One
    /// run of a fraction of a second is at the mercy of a hiccup of the host (on this
    /// machine, hackbench back to back: 0.19–0.27 s); the median of a few, spread over
    /// the round, is not, for little time.
    pub short_runs: u32,
    /// hackbench's `-g` and `-l`.
    pub hackbench_groups: u32,
    pub hackbench_loops: u32,
    /// The compressor's input, in MiB.
    pub compress_mib: u32,
    /// `/bin/true` runs of the fork/exec loop.
    pub fork_execs: u32,
    /// C files of the make project.
    pub make_files: u32,
    /// cyclictest's loops (one per [`WAKEUP_PERIOD_US`]) and the CPU hogs per CPU beside it.
    pub wakeup_loops: u32,
    pub wakeup_hogs: u32,
    /// Client-server: hogs per CPU, measured round trips, discarded ones before them.
    pub deps_load: u32,
    pub deps_iterations: u32,
    pub deps_warmup: u32,
    /// How long the render thread of a frames workload runs, and how long its load runs
    /// before it (a build is under way when the program is used).
    pub frames_secs: u32,
    pub frames_load_lead_ms: u32,
    /// How long the keystroke-like programs of a response workload run.
    pub response_secs: u32,
}

impl Sizes {
    /// The default suite's sizes (about nine minutes on two CPUs with ten rounds).
    pub fn full() -> Sizes {
        Sizes {
            short_runs: 4,
            hackbench_groups: 10,
            hackbench_loops: 100,
            compress_mib: 8,
            fork_execs: 600,
            make_files: 24,
            wakeup_loops: 2000,
            wakeup_hogs: 2,
            deps_load: 8,
            deps_iterations: 3,
            deps_warmup: 2,
            frames_secs: 4,
            frames_load_lead_ms: 1000,
            response_secs: 5,
        }
    }

    /// `--quick`'s sizes (under two minutes with three rounds). The client-server's three
    /// warm-up round trips are what it takes the daemon to learn the provider of both of
    /// `flock`'s alternating lock files (with two, `--quick` measured flock at 0.55 of
    /// bare, 5.5 × unloaded, against 0.13 in the full suite).
    pub fn quick() -> Sizes {
        Sizes {
            short_runs: 1,
            hackbench_groups: 5,
            hackbench_loops: 100,
            compress_mib: 6,
            fork_execs: 300,
            make_files: 12,
            wakeup_loops: 1000,
            wakeup_hogs: 2,
            deps_load: 8,
            deps_iterations: 2,
            deps_warmup: 3,
            frames_secs: 3,
            frames_load_lead_ms: 1000,
            response_secs: 3,
        }
    }
}

impl Sizes {
    /// How many times workload `w` runs per side in a round.
    pub fn runs(&self, w: Workload) -> usize {
        match w {
            Workload::Hackbench { .. } | Workload::ForkExec => self.short_runs.max(1) as usize,
            Workload::Compress
            | Workload::Make
            | Workload::Wakeup
            | Workload::Deps(_)
            | Workload::Frames { .. }
            | Workload::Response { .. }
            | Workload::Requests { .. } => 1,
        }
    }
}

/// The suite's settings.
#[derive(Clone, Debug)]
pub struct SuiteConfig {
    /// The `schedlab` binary: the daemon and the benchmark workers.
    pub exe: PathBuf,
    /// The daemon's configuration (TOML text) and what to call it in the report.
    pub daemon_config: String,
    pub config_name: String,
    /// What carries the daemon's decisions out.
    pub enforcer: Enforcer,
    /// The workloads, in order.
    pub workloads: Vec<Workload>,
    pub sizes: Sizes,
    /// Each daemon starts with a new store, knowing nothing (cold); otherwise each finds
    /// what the ones of the earlier rounds learned (warm from the second round).
    pub cold: bool,
    /// Rounds (each runs every workload on both sides).
    pub rounds: usize,
    /// How long the daemon runs on the idle machine to measure its own CPU share
    /// (zero: not measured).
    pub idle: Duration,
    /// The longest the whole suite may take.
    pub time_limit: Duration,
}

/// Which side of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Bare,
    Schedlab,
}

/// Where the suite is, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Steps done and to do (a step is one workload run, a daemon start or stop, the idle
    /// measurement).
    pub done: usize,
    pub total: usize,
    /// The round (from 0), the side and what runs now.
    pub round: usize,
    pub side: Side,
    pub what: String,
}

/// Whether schedlab harmed, helped or did neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Win,
    Neutral,
    Loss,
}

impl Verdict {
    /// The verdict on a ratio and its interval (see the module's documentation).
    pub fn of(ratio: f64, upper: f64) -> Verdict {
        Verdict::within(ratio, upper, (LOSS_RATIO, LOSS_UPPER))
    }

    /// [`Verdict::of`] with other bounds for a loss: (the ratio's, the interval's).
    pub fn within(ratio: f64, upper: f64, (loss_ratio, loss_upper): (f64, f64)) -> Verdict {
        if ratio > loss_ratio || upper > loss_upper {
            Verdict::Loss
        } else if upper < 1.0 {
            Verdict::Win
        } else {
            Verdict::Neutral
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Win => "win",
            Verdict::Neutral => "neutral",
            Verdict::Loss => "loss",
        }
    }
}

/// One metric of one workload, both sides.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    /// Each round's value, bare and under schedlab (lower is better).
    pub bare: Vec<f64>,
    pub schedlab: Vec<f64>,
    /// Each side's median over the rounds (for a latency quantile: the quantile of
    /// all the rounds' samples pooled).
    pub bare_median: f64,
    pub schedlab_median: f64,
    /// The median of the per-round ratios schedlab / bare (for a latency quantile: the
    /// ratio of the pooled quantiles), and its 95 % interval.
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub verdict: Verdict,
    /// Client-server only: the median of each side's rounds over the unloaded round
    /// trip's median (the paper's measure: 1 is as fast as on an idle machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bare_vs_unloaded: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedlab_vs_unloaded: Option<f64>,
}

/// What the daemon itself cost.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DaemonCost {
    /// CPU time (user + system) while it ran, and how long it ran (its idle run aside).
    pub cpu_s: f64,
    pub wall_s: f64,
    /// `cpu_s / wall_s`, in percent of one CPU.
    pub busy_pct: f64,
    /// The largest resident set of any of its runs, in KiB.
    pub peak_rss_kib: u64,
    /// On the idle machine: its CPU share over `idle_s`, in percent of one CPU.
    pub idle_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_cpu_pct: Option<f64>,
    /// Its boost reaction time per round (from its stats).
    pub boost_reaction_us: Vec<BoostReaction>,
    /// Events its observer lost, over all rounds.
    pub lost_events: u64,
    /// What carried its decisions out (schedlab's sched_ext scheduler, or the system
    /// calls and why), each one seen.
    pub enforcers: Vec<String>,
}

/// The whole suite.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteReport {
    /// The daemon's configuration: "built-in" or the file's path.
    pub config: String,
    pub cpus: usize,
    pub rounds: usize,
    /// Each round's daemon started knowing nothing (`--cold`).
    pub cold: bool,
    pub sizes: Sizes,
    pub rows: Vec<Row>,
    pub daemon: DaemonCost,
    /// Losses, wins and neutral rows.
    pub losses: usize,
    pub wins: usize,
    pub wall_s: f64,
    /// The machine's own noise: how far a timed workload's bare value strays from
    /// round to round, in percent of its median (its median absolute deviation; the
    /// median over the timed workloads). Nothing schedlab does moves it; an interval
    /// within ±5 % is hard to get from fewer rounds where it is larger than that.
    pub machine_noise_pct: Option<f64>,
    /// Anything the reader should know (a daemon that had to be killed, …).
    pub notes: Vec<String>,
}

/// Runs the suite; `progress` hears of every step; `stop` (set by a signal handler)
/// ends it early with an error, after every child has been killed.
pub fn run_suite(
    cfg: &SuiteConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<SuiteReport> {
    if cfg.workloads.is_empty() || cfg.rounds == 0 {
        return Err(Invalid::NothingToMeasure { lacking: "no workloads or no rounds" }.into());
    }
    check_tools(&cfg.workloads)?;
    let started = Instant::now();
    let deadline = started + cfg.time_limit;
    let dir = super::scratch_dir("suite")?;
    let inputs = Inputs::prepare(cfg, dir.path())?;
    let cpus = workers::allowed_cpus().ctx(|| "cannot read this process's CPU affinity".into())?;
    let runner = Runner { cfg, inputs: &inputs, cpus: &cpus, deadline, stop, dir: dir.path() };

    let deps_kinds: Vec<IpcKind> = cfg
        .workloads
        .iter()
        .filter_map(|w| if let Workload::Deps(k) = w { Some(*k) } else { None })
        .collect();
    let runs: Vec<usize> = cfg.workloads.iter().map(|&w| cfg.sizes.runs(w)).collect();
    // Per round: a pause, the runs on both sides, the daemon's start and stop, the
    // unloaded client-server cells.
    let per_round = 2 * runs.iter().sum::<usize>() + 3 + deps_kinds.len();
    let total = cfg.rounds * per_round + usize::from(!cfg.idle.is_zero());
    let mut at = Progress { done: 0, total, round: 0, side: Side::Bare, what: String::new() };

    // values[side][workload] = one Vec of metric values per round; latencies likewise,
    // for the workloads that measure them.
    let mut values: [Vec<Vec<Vec<f64>>>; 2] =
        [vec![Vec::new(); cfg.workloads.len()], vec![Vec::new(); cfg.workloads.len()]];
    let mut latencies: [Vec<Vec<Latencies>>; 2] =
        [vec![Vec::new(); cfg.workloads.len()], vec![Vec::new(); cfg.workloads.len()]];
    let mut unloaded: Vec<Vec<f64>> = vec![Vec::new(); deps_kinds.len()];
    let mut cost = DaemonCost::default();
    let mut notes = Vec::new();
    let mut pause = deps::DAEMON_SETTLE;
    for round in 0..cfg.rounds {
        at.round = round;
        let order = block_order(&runs, round);
        let (first, second) = order.split_at(order.len() / 2);
        let [mut bare, mut schedlab] =
            [RoundRuns::new(cfg.workloads.len()), RoundRuns::new(cfg.workloads.len())];

        // The same pause before the bare side's workloads as the daemon's start gives
        // the schedlab side: a machine's first seconds of load after a rest are not
        // like the others, and only one side would have had the rest.
        at.side = Side::Bare;
        at.what = "pausing as long as the daemon takes to start".into();
        progress(&at);
        runner.sleep(pause)?;
        at.done += 1;
        runner.run_all(first, &mut bare, &mut at, progress)?;

        at.side = Side::Schedlab;
        at.what = "starting schedlab run".into();
        progress(&at);
        let t = Instant::now();
        let daemon = DaemonRun::start(&runner)?;
        pause = t.elapsed();
        at.done += 1;
        runner.run_all(first, &mut schedlab, &mut at, progress)?;
        runner.run_all(second, &mut schedlab, &mut at, progress)?;
        at.what = "stopping schedlab run".into();
        progress(&at);
        daemon.finish(&mut cost, &mut notes)?;
        at.done += 1;

        at.side = Side::Bare;
        runner.run_all(second, &mut bare, &mut at, progress)?;
        for (i, &kind) in deps_kinds.iter().enumerate() {
            runner.check()?;
            at.what = format!("deps-{kind} unloaded");
            progress(&at);
            unloaded[i].push(runner.deps(kind, Scenario::Unloaded)?);
            at.done += 1;
        }
        for (side, runs) in [(Side::Bare, bare), (Side::Schedlab, schedlab)] {
            runs.fold_into(&mut values[side as usize], &mut latencies[side as usize]);
        }
    }
    if !cfg.idle.is_zero() {
        at.side = Side::Schedlab;
        at.what = format!("schedlab run on the idle machine for {:.0} s", cfg.idle.as_secs_f64());
        progress(&at);
        let d = DaemonRun::start(&runner)?;
        runner.sleep(cfg.idle)?;
        let used = d.cpu_s() - d.cpu_at_start;
        cost.idle_s = cfg.idle.as_secs_f64();
        cost.idle_cpu_pct = Some(used / cost.idle_s * 100.0);
        let mut idle_cost = DaemonCost::default();
        d.finish(&mut idle_cost, &mut notes)?;
        cost.peak_rss_kib = cost.peak_rss_kib.max(idle_cost.peak_rss_kib);
        at.done += 1;
        progress(&at);
    }
    cost.busy_pct = if cost.wall_s > 0.0 { cost.cpu_s / cost.wall_s * 100.0 } else { 0.0 };

    let mut rows = Vec::new();
    for (i, &w) in cfg.workloads.iter().enumerate() {
        for (m, &(metric, unit)) in w.metrics().iter().enumerate() {
            let bare: Vec<f64> = values[0][i].iter().map(|v| v[m]).collect();
            let schedlab: Vec<f64> = values[1][i].iter().map(|v| v[m]).collect();
            let mut row = match w.quantile(m) {
                Some(q) => compare_pooled(&w.name(), metric, unit, q, &latencies[0][i], &latencies[1][i]),
                None => compare(&w.name(), metric, unit, bare, schedlab),
            };
            let within_noise = (row.schedlab_median - row.bare_median).abs() <= w.noise_floor(m, &cfg.sizes);
            row.verdict = if within_noise {
                Verdict::Neutral
            } else {
                Verdict::within(row.ratio, row.ci_high, w.loss_bounds(m))
            };
            let base = match w {
                Workload::Deps(kind) => {
                    let k = deps_kinds.iter().position(|&d| d == kind).expect("listed");
                    median(&unloaded[k])
                }
                // The unloaded row's bare median, when it ran.
                _ => match w.unloaded().filter(|_| m < 2) {
                    Some(unloaded) => rows
                        .iter()
                        .find(|r: &&Row| r.workload == unloaded.name() && r.metric == metric)
                        .map_or(0.0, |r| r.bare_median),
                    None => 0.0,
                },
            };
            if base > 0.0 {
                row.bare_vs_unloaded = Some(row.bare_median / base);
                row.schedlab_vs_unloaded = Some(row.schedlab_median / base);
            }
            rows.push(row);
        }
    }
    Ok(SuiteReport {
        config: cfg.config_name.clone(),
        cpus: cpus.len(),
        rounds: cfg.rounds,
        cold: cfg.cold,
        sizes: cfg.sizes.clone(),
        losses: rows.iter().filter(|r| r.verdict == Verdict::Loss).count(),
        wins: rows.iter().filter(|r| r.verdict == Verdict::Win).count(),
        machine_noise_pct: machine_noise_pct(&rows),
        rows,
        daemon: cost,
        wall_s: started.elapsed().as_secs_f64(),
        notes,
    })
}

/// [`SuiteReport::machine_noise_pct`] of `rows`: `None` without a timed workload.
fn machine_noise_pct(rows: &[Row]) -> Option<f64> {
    let spreads: Vec<f64> = rows
        .iter()
        .filter(|r| r.metric == "time" && r.bare_median > 0.0)
        .map(|r| {
            let deviations: Vec<f64> = r.bare.iter().map(|v| (v - r.bare_median).abs()).collect();
            median(&deviations) / r.bare_median * 100.0
        })
        .collect();
    (!spreads.is_empty()).then(|| median(&spreads))
}

/// One side's runs in a round, per workload.
struct RoundRuns {
    values: Vec<Vec<Vec<f64>>>,
    latencies: Vec<Vec<Latencies>>,
}

impl RoundRuns {
    fn new(workloads: usize) -> RoundRuns {
        RoundRuns { values: vec![Vec::new(); workloads], latencies: vec![Vec::new(); workloads] }
    }

    /// Adds the round's value of each workload to `values` (per metric, the median of
    /// its runs) and `latencies` (all its runs' pooled).
    fn fold_into(self, values: &mut [Vec<Vec<f64>>], latencies: &mut [Vec<Latencies>]) {
        for (i, runs) in self.values.iter().enumerate() {
            let metrics = runs.first().map_or(0, Vec::len);
            let medians = (0..metrics).map(|m| median(&runs.iter().map(|v| v[m]).collect::<Vec<_>>()));
            values[i].push(medians.collect());
        }
        for (i, parts) in self.latencies.iter().enumerate() {
            if !parts.is_empty() {
                latencies[i].push(Latencies::merged(&parts.iter().collect::<Vec<_>>()));
            }
        }
    }
}

/// The order of the runs in round `round`: workload `i` (an index) `runs[i]` times,
/// shuffled with the round as the seed, so that no workload always runs first after
/// the daemon's start or always meets the daemon's next profiling window, a workload's
/// runs fall apart, and a report can be rerun in the same order.
fn block_order(runs: &[usize], round: usize) -> Vec<usize> {
    let mut order: Vec<usize> =
        runs.iter().enumerate().flat_map(|(i, &n)| std::iter::repeat_n(i, n)).collect();
    order.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(round as u64));
    order
}

impl Row {
    /// A row from its parts; the verdict follows from the ratio and the interval.
    fn new(
        names: [&str; 3],
        (bare, schedlab): (Vec<f64>, Vec<f64>),
        (bare_median, schedlab_median): (f64, f64),
        ratio: f64,
        (ci_low, ci_high): (f64, f64),
    ) -> Row {
        let [workload, metric, unit] = names.map(str::to_string);
        Row {
            workload,
            metric,
            unit,
            bare,
            schedlab,
            bare_median,
            schedlab_median,
            ratio,
            ci_low,
            ci_high,
            verdict: Verdict::of(ratio, ci_high),
            bare_vs_unloaded: None,
            schedlab_vs_unloaded: None,
        }
    }
}

/// A row from both sides' per-round values (paired by round). A round where bare is 0
/// (no frame missed) has the ratio 1 if schedlab's is 0 too, and an infinite one if
/// not: schedlab made something happen that bare Linux did not.
pub fn compare(workload: &str, metric: &str, unit: &str, bare: Vec<f64>, schedlab: Vec<f64>) -> Row {
    let ratio_of = |b: f64, s: f64| match (b > 0.0, s > 0.0) {
        (true, _) => s / b,
        (false, false) => 1.0,
        (false, true) => f64::INFINITY,
    };
    let ratios: Vec<f64> = bare.iter().zip(&schedlab).map(|(&b, &s)| ratio_of(b, s)).collect();
    let ratio = median(&ratios);
    let ci = bootstrap_median_ci(&ratios, 0.95);
    let medians = (median(&bare), median(&schedlab));
    Row::new([workload, metric, unit], (bare, schedlab), medians, ratio, ci)
}

/// A row of a latency quantile `q` from each side's per-round latencies (paired by
/// round): the ratio of the quantiles of all rounds pooled, its interval from
/// resampling rounds (see the module's documentation).
pub fn compare_pooled(
    workload: &str,
    metric: &str,
    unit: &str,
    q: f64,
    bare: &[Latencies],
    schedlab: &[Latencies],
) -> Row {
    let rounds = bare.len().min(schedlab.len());
    let pooled = |side: &[Latencies], picks: &[usize]| {
        Latencies::pooled_quantile(&picks.iter().map(|&r| &side[r]).collect::<Vec<_>>(), q)
    };
    let all: Vec<usize> = (0..rounds).collect();
    let medians = (pooled(bare, &all), pooled(schedlab, &all));
    let ratio = medians.1 / medians.0;
    let ci =
        bootstrap_ci(rounds, POOLED_RESAMPLES, 0.95, |picks| pooled(schedlab, picks) / pooled(bare, picks))
            .unwrap_or((ratio, ratio));
    let per_round = |side: &[Latencies]| side.iter().map(|l| l.quantile(q)).collect();
    Row::new([workload, metric, unit], (per_round(bare), per_round(schedlab)), medians, ratio, ci)
}

/// The percentile bootstrap interval (`level`, e.g. 0.95) of the median of `v`, with a
/// fixed seed so that a report can be recomputed from its values.
pub fn bootstrap_median_ci(v: &[f64], level: f64) -> (f64, f64) {
    match v.len() {
        0 => (f64::NAN, f64::NAN),
        1 => (v[0], v[0]),
        n => {
            let mut sample = vec![0.0; n];
            let statistic = |picks: &[usize]| {
                for (s, &i) in sample.iter_mut().zip(picks) {
                    *s = v[i];
                }
                median(&sample)
            };
            bootstrap_ci(n, BOOTSTRAP_RESAMPLES, level, statistic).unwrap_or((f64::NAN, f64::NAN))
        }
    }
}

/// The percentile bootstrap interval (`level`) of `statistic` over `resamples` draws of
/// `n` indices with replacement (fixed seed: a report can be recomputed from its
/// values); `None` when every draw gave NaN. Infinite values are kept: an infinite
/// ratio is a harm (something bare Linux never showed) the interval must show.
fn bootstrap_ci(
    n: usize,
    resamples: usize,
    level: f64,
    mut statistic: impl FnMut(&[usize]) -> f64,
) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let mut rng = rand_pcg::Pcg64::seed_from_u64(0x005e_edab);
    let mut picks = vec![0; n];
    let mut values: Vec<f64> = (0..resamples)
        .map(|_| {
            for p in picks.iter_mut() {
                *p = rng.random_range(0..n);
            }
            statistic(&picks)
        })
        .filter(|v| !v.is_nan())
        .collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some((quantile(&values, tail), quantile(&values, 1.0 - tail)))
}

/// Fails with the package to install for each tool the workloads need and lack.
fn check_tools(workloads: &[Workload]) -> Result<()> {
    let tool = |program, package| Tool { program, package };
    let mut need: Vec<Tool> = Vec::new();
    for w in workloads {
        match w {
            Workload::Hackbench { .. } => need.push(tool("hackbench", "rt-tests")),
            Workload::Compress => need.push(tool("xz", "xz-utils")),
            Workload::Make => need.extend([tool("make", "make"), tool("cc", "gcc")]),
            Workload::Wakeup => need.push(tool("cyclictest", "rt-tests")),
            Workload::ForkExec | Workload::Deps(_) => need.push(tool("sh", "dash")),
            Workload::Frames { load_kind: LoadKind::Spin, .. } => {
                need.extend([tool("rt-app", "rt-app"), tool("perl", "perl-base")])
            }
            Workload::Frames { .. } => need.extend([tool("rt-app", "rt-app"), tool("xz", "xz-utils")]),
            Workload::Response { load, .. } | Workload::Requests { load, .. } if *load > 0 => {
                need.push(tool("xz", "xz-utils"))
            }
            Workload::Response { .. } | Workload::Requests { .. } => {}
        }
    }
    need.sort();
    need.dedup();
    need.retain(|t| {
        !Command::new("sh")
            .args(["-c", &format!("command -v {}", t.program)])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if need.is_empty() {
        Ok(())
    } else {
        Err(BenchError::Missing { needed_by: "the suite", tools: need })
    }
}

/// The generated inputs: the compressor's text, the make project, the build-like load's
/// small text, and for the frames workloads rt-app's busy loop, calibrated here.
struct Inputs {
    text: PathBuf,
    project: PathBuf,
    frames_text: PathBuf,
    rtapp_ns_per_loop: f64,
}

/// The text each job of a frames or response workload's load compresses: 128 KiB, about 35 ms of
/// `xz -6` here, so that a loop restarts many fresh processes in a run.
const FRAMES_TEXT_BYTES: u64 = 128 << 10;

impl Inputs {
    fn prepare(cfg: &SuiteConfig, dir: &Path) -> Result<Inputs> {
        let text = dir.join("text");
        if cfg.workloads.contains(&Workload::Compress) {
            write_text(&text, u64::from(cfg.sizes.compress_mib) << 20)
                .ctx(|| format!("cannot write {}", text.display()))?;
        }
        let project = dir.join("project");
        if cfg.workloads.contains(&Workload::Make) {
            write_project(&project, cfg.sizes.make_files)
                .ctx(|| format!("cannot write the make project in {}", project.display()))?;
        }
        let frames_text = dir.join("frames-text");
        let mut rtapp_ns_per_loop = 0.0;
        let loaded = |w: &Workload| match w {
            Workload::Frames { load, .. }
            | Workload::Response { load, .. }
            | Workload::Requests { load, .. } => *load > 0,
            _ => false,
        };
        if cfg.workloads.iter().any(loaded) {
            write_text(&frames_text, FRAMES_TEXT_BYTES)
                .ctx(|| format!("cannot write {}", frames_text.display()))?;
        }
        if cfg.workloads.iter().any(|w| matches!(w, Workload::Frames { .. })) {
            // On the quiet machine, before any load: calibrating under load makes every
            // `run` too short.
            rtapp_ns_per_loop = crate::validate::rtapp::calibrate_loop(2, Duration::from_secs(30))?;
        }
        Ok(Inputs { text, project, frames_text, rtapp_ns_per_loop })
    }
}

/// Writes `bytes` of text of pseudo-random words: compressible like prose (xz -3
/// shrinks it to about a third), the same every time.
fn write_text(path: &Path, bytes: u64) -> io::Result<()> {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ber", "dan", "fel", "gor", "hul", "jin", "kor",
        "lem",
    ];
    let mut out = BufWriter::new(File::create(path)?);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    let mut written = 0u64;
    while written < bytes {
        let syllables = rng.random_range(1..4);
        let mut word = String::new();
        for _ in 0..syllables {
            word.push_str(SYLLABLES[rng.random_range(0..SYLLABLES.len())]);
        }
        word.push(if rng.random_range(0..12) == 0 { '\n' } else { ' ' });
        out.write_all(word.as_bytes())?;
        written += word.len() as u64;
    }
    out.flush()
}

/// Writes `files` small C files, a main and a Makefile: a parallel build of many short
/// compiler runs (each file's functions are different, so no two outputs are equal).
fn write_project(dir: &Path, files: u32) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut main = String::from("#include <stdio.h>\n");
    let mut calls = String::new();
    for f in 0..files {
        let mut src = String::new();
        for g in 0..8 {
            src.push_str(&format!(
                "static unsigned f{g}(unsigned x) {{ unsigned s = {f}u; for (unsigned i = 0; i < x; i++) \
                 {{ s = s * {m}u + (i ^ (s >> {r})); if (s % {p}u == 0) s += i * {g}u; }} return s; }}\n",
                m = 2 * (f * 8 + g) + 3,
                r = 1 + (f + g) % 13,
                p = 7 + g,
            ));
        }
        src.push_str(&format!(
            "unsigned unit{f}(unsigned x) {{ return f0(x) ^ f1(x + 1) ^ f2(x + 2) ^ f3(x + 3) ^ f4(x) ^ f5(x) ^ f6(x) ^ f7(x); }}\n"
        ));
        std::fs::write(dir.join(format!("unit{f}.c")), src)?;
        main.push_str(&format!("unsigned unit{f}(unsigned);\n"));
        calls.push_str(&format!("    s ^= unit{f}(argc + {f});\n"));
    }
    main.push_str(&format!(
        "int main(int argc, char **argv) {{\n    (void)argv;\n    unsigned s = 0;\n{calls}    printf(\"%u\\n\", s);\n    return 0;\n}}\n"
    ));
    std::fs::write(dir.join("main.c"), main)?;
    let objects: Vec<String> = (0..files).map(|f| format!("unit{f}.o")).collect();
    std::fs::write(
        dir.join("Makefile"),
        format!(
            "CFLAGS = -O2\nOBJS = main.o {}\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%.o: %.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\nclean:\n\trm -f prog $(OBJS)\n",
            objects.join(" ")
        ),
    )
}

/// Runs the workloads of a round.
struct Runner<'a> {
    cfg: &'a SuiteConfig,
    inputs: &'a Inputs,
    cpus: &'a [usize],
    deadline: Instant,
    stop: &'a AtomicBool,
    dir: &'a Path,
}

impl Runner<'_> {
    /// Fails if the suite was interrupted or is past its time limit.
    fn check(&self) -> Result<()> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(BenchError::Interrupted);
        }
        if Instant::now() >= self.deadline {
            return Err(BenchError::TimeLimit { what: "the suite", limit: self.cfg.time_limit });
        }
        Ok(())
    }

    /// Sleeps for `d`, waking early to fail on a stop.
    fn sleep(&self, d: Duration) -> Result<()> {
        let until = Instant::now() + d;
        while Instant::now() < until {
            self.check()?;
            std::thread::sleep(
                until.saturating_duration_since(Instant::now()).min(Duration::from_millis(50)),
            );
        }
        Ok(())
    }

    /// Runs the workloads `order` (indices, in that order) into `out`.
    fn run_all(
        &self,
        order: &[usize],
        out: &mut RoundRuns,
        at: &mut Progress,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<()> {
        for &i in order {
            let w = self.cfg.workloads[i];
            self.check()?;
            at.what = w.name();
            progress(at);
            let (v, l) = self.run(w)?;
            out.values[i].push(v);
            out.latencies[i].extend(l);
            at.done += 1;
        }
        Ok(())
    }

    /// Runs one workload once: its metrics, and its latencies if it measures them.
    fn run(&self, w: Workload) -> Result<(Vec<f64>, Option<Latencies>)> {
        let s = &self.cfg.sizes;
        let ncpus = self.cpus.len().to_string();
        Ok((
            match w {
                Workload::Hackbench { pipe, threads } => {
                    let mut args = vec!["-g".to_string(), s.hackbench_groups.to_string()];
                    args.extend(["-l".to_string(), s.hackbench_loops.to_string()]);
                    if pipe {
                        args.push("-p".into());
                    }
                    if threads {
                        args.push("-T".into());
                    }
                    let (_, out) = self.timed("hackbench", &args, true)?;
                    vec![hackbench_time(&out)?]
                }
                Workload::Compress => {
                    // Two blocks per thread: xz -3's own blocks are 12 MiB, so a
                    // smaller input would keep all but one thread idle.
                    let block = (u64::from(s.compress_mib) << 20) / (2 * self.cpus.len() as u64);
                    let args = [
                        format!("-T{ncpus}"),
                        "-3".into(),
                        format!("--block-size={}", block.max(1 << 20)),
                        "-c".into(),
                        self.inputs.text.display().to_string(),
                    ];
                    vec![self.timed("xz", &args, false)?.0]
                }
                Workload::ForkExec => {
                    let script =
                        format!("i=0; while [ $i -lt {} ]; do /bin/true; i=$((i+1)); done", s.fork_execs);
                    vec![self.timed("sh", &["-c".into(), script], false)?.0]
                }
                Workload::Make => {
                    let project = self.inputs.project.display().to_string();
                    self.timed("make", &["-s".into(), "-C".into(), project.clone(), "clean".into()], false)?;
                    let args = [format!("-j{ncpus}"), "-s".into(), "-C".into(), project];
                    vec![self.timed("make", &args, false)?.0]
                }
                Workload::Wakeup => {
                    let _hogs = self.hogs(s.wakeup_hogs)?;
                    let args: Vec<String> = [
                        // -p before --policy: the other order makes the measuring thread
                        // SCHED_FIFO 2 ("defaulting realtime priority to 2").
                        "-p",
                        "0",
                        "--policy=other",
                        "--default-system",
                        "-q",
                        "-t",
                        "1",
                        "-i",
                        &WAKEUP_PERIOD_US.to_string(),
                        "-h",
                        &HISTOGRAM_US.to_string(),
                        "-l",
                        &s.wakeup_loops.to_string(),
                    ]
                    .iter()
                    .map(|a| a.to_string())
                    .collect();
                    let (_, out) = self.timed("cyclictest", &args, true)?;
                    let latencies = cyclictest_latencies(&out)?;
                    let q = |m| latencies.quantile(w.quantile(m).expect("a latency metric"));
                    return Ok((vec![q(0), q(1)], Some(latencies)));
                }
                Workload::Deps(kind) => vec![self.deps(kind, Scenario::Loaded)?],
                Workload::Frames { hz, load, reniced, load_kind: kind } => {
                    let (frames, ms_per_job) = self.beside_build(load, reniced, kind, || self.frames(hz))?;
                    let p99 = frames.wake_ups.quantile(w.quantile(1).expect("a latency metric"));
                    return Ok((vec![frames.missed_pct, p99, ms_per_job], Some(frames.wake_ups)));
                }
                Workload::Response { load, reniced } => {
                    let keystrokes = || self.responses(Role::Keystroke, KEYSTROKES);
                    let (responses, ms_per_job) =
                        self.beside_build(load, reniced, LoadKind::Build, keystrokes)?;
                    let q = |m| responses.quantile(w.quantile(m).expect("a latency metric"));
                    let mut values = vec![q(0), q(1)];
                    if load > 0 {
                        values.push(ms_per_job);
                    }
                    return Ok((values, Some(responses)));
                }
                Workload::Requests { load, reniced } => {
                    let (latencies, ms_per_job) =
                        self.beside_build(load, reniced, LoadKind::Build, || {
                            self.responses(Role::Requests, 1)
                        })?;
                    let p99 = latencies.quantile(w.quantile(0).expect("a latency metric"));
                    let secs = f64::from(self.cfg.sizes.response_secs);
                    let pace = secs * 1e6 / latencies.count().max(1) as f64;
                    let mut values = vec![p99, pace];
                    if load > 0 {
                        values.push(ms_per_job);
                    }
                    return Ok((values, Some(latencies)));
                }
            },
            None,
        ))
    }

    /// One client-server cell: the median round trip, in ms.
    fn deps(&self, kind: IpcKind, scenario: Scenario) -> Result<f64> {
        let s = &self.cfg.sizes;
        let cfg = DepsConfig {
            kinds: vec![kind],
            load: s.deps_load,
            iterations: s.deps_iterations,
            warmup: s.deps_warmup,
            exe: self.cfg.exe.clone(),
            ..DepsConfig::default()
        };
        let samples = deps::run_cell(&cfg, kind, scenario, self.cpus, self.dir, self.deadline, &mut |_| {})?;
        Ok(median(&samples))
    }

    /// `load` loops per CPU of `kind` ([`LoadKind`]: compressor loops, `xz -6` of a
    /// small text restarted as each job ends, here or in a session of their own; or
    /// interpreter hot loops), at nice 19 if `reniced`, started
    /// [`Sizes::frames_load_lead_ms`] before `measure` and stopped after it: what it
    /// measured, and the load's pace (wall time per job per loop in ms; for hot loops,
    /// wall ms per CPU second each loop got; 0 with no load).
    fn beside_build<T>(
        &self,
        load: u32,
        reniced: bool,
        kind: LoadKind,
        measure: impl FnOnce() -> Result<T>,
    ) -> Result<(T, f64)> {
        let loops = load as usize * self.cpus.len();
        if loops == 0 {
            return Ok((measure()?, 0.0));
        }
        let jobs_dir = self.dir.join("build-jobs");
        let _ = std::fs::remove_dir_all(&jobs_dir);
        std::fs::create_dir_all(&jobs_dir).ctx(|| format!("cannot create {}", jobs_dir.display()))?;
        // The interpreter under a name no rule or habit knows, new in every run.
        let spinner = jobs_dir.join(format!("s{:08x}", rand::random::<u32>()));
        if kind == LoadKind::Spin {
            let perl = super::slices::find_in_path("perl").ok_or_else(|| BenchError::Missing {
                needed_by: "the spin load",
                tools: vec![Tool { program: "perl", package: "perl-base" }],
            })?;
            std::fs::copy(&perl, &spinner).ctx(|| format!("cannot copy {}", perl.display()))?;
        }
        let started = Instant::now();
        let mut running = Vec::with_capacity(loops);
        // One line per job done, in a file of the loop's own (`$2/$i`).
        let job_loop = "while :; do xz -6 -T1 -c \"$1\" > /dev/null && echo >> \"$2/$i\" || exit 1; done";
        let spawns = match kind {
            LoadKind::Session => 1,
            _ => loops,
        };
        for i in 0..spawns {
            let mut cmd = match kind {
                LoadKind::Spin => {
                    let mut cmd = Command::new(&spinner);
                    cmd.args(["-e", "while (1) {}"]);
                    cmd
                }
                LoadKind::Build => {
                    let mut cmd = Command::new("sh");
                    cmd.args(["-c", &format!("i={i}; {job_loop}"), "sh"])
                        .arg(&self.inputs.frames_text)
                        .arg(&jobs_dir);
                    cmd
                }
                // The whole build in one session: one shell leads it and runs every loop.
                LoadKind::Session => {
                    let script =
                        format!("i=0; while [ $i -lt {loops} ]; do ({job_loop}) & i=$((i+1)); done; wait");
                    let mut cmd = Command::new("sh");
                    cmd.args(["-c", &script, "sh"]).arg(&self.inputs.frames_text).arg(&jobs_dir);
                    cmd
                }
            };
            cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            guard_command(&mut cmd, Vec::new(), libc::SIGKILL, reniced.then_some(19));
            running.push(match kind {
                LoadKind::Session => ChildGroup::start_in_new_session(&mut cmd, "the build-like load", 0)?,
                _ => ChildGroup::start(&mut cmd, "the build-like load")?,
            });
        }
        self.sleep(Duration::from_millis(u64::from(self.cfg.sizes.frames_load_lead_ms)))?;
        let measured = measure()?;
        let window = started.elapsed();
        let wall_ms = window.as_secs_f64() * 1e3 * loops as f64;
        let pace = match kind {
            LoadKind::Spin => {
                let cpu_ns: u64 = running
                    .iter()
                    .filter_map(|c| schedlab_live::process::schedstat(c.pid() as u32).ok())
                    .map(|(ran, _)| ran)
                    .sum();
                wall_ms / (cpu_ns as f64 / 1e9).max(1e-3)
            }
            LoadKind::Build | LoadKind::Session => {
                let jobs: usize = (0..loops)
                    .map(|i| {
                        std::fs::read_to_string(jobs_dir.join(i.to_string())).map_or(0, |t| t.lines().count())
                    })
                    .sum();
                wall_ms / jobs.max(1) as f64
            }
        };
        drop(running);
        Ok((measured, pace))
    }

    /// The render thread of a frames workload, for [`Sizes::frames_secs`].
    fn frames(&self, hz: u32) -> Result<Frames> {
        let s = &self.cfg.sizes;
        let period_us = 1_000_000 / hz.max(1);
        let doc = serde_json::json!({
            "global": { "duration": s.frames_secs, "lock_pages": false },
            "tasks": { "render": { "loop": -1, "run": period_us * FRAME_WORK_PCT / 100,
                                   "timer": { "ref": "unique", "period": period_us } } }
        });
        let limit = Duration::from_secs(u64::from(s.frames_secs) + 30)
            .min(self.deadline.saturating_duration_since(Instant::now()));
        let logs = crate::validate::rtapp::run_logs(&doc.to_string(), self.inputs.rtapp_ns_per_loop, limit)?;
        let rows: Vec<_> = logs.iter().flat_map(|l| &l.rows).collect();
        if rows.is_empty() {
            return Err(BenchError::output(
                "rt-app",
                OutputProblem::Lacks {
                    thing: "log rows",
                    output: "the render thread logged no frame".into(),
                },
            ));
        }
        let missed = rows.iter().filter(|r| r.slack_us < 0).count();
        let mut wake_ups: BTreeMap<u32, u64> = BTreeMap::new();
        for r in &rows {
            // A frame that began late, its activation passed, had no wake-up to wait for.
            let us = u32::try_from(r.wu_lat_us.max(0)).unwrap_or(u32::MAX);
            *wake_ups.entry(us).or_default() += 1;
        }
        Ok(Frames {
            missed_pct: missed as f64 / rows.len() as f64 * 100.0,
            wake_ups: Latencies(wake_ups.into_iter().collect()),
        })
    }

    /// `count` workers of `role` (keystroke-like programs, a request server) for
    /// [`Sizes::response_secs`]: the response times they said, pooled.
    fn responses(&self, role: Role, count: u32) -> Result<Latencies> {
        let mut spec = WorkerSpec::new(role);
        spec.duration_ns = u64::from(self.cfg.sizes.response_secs) * 1_000_000_000;
        let mut programs = (0..count).map(|_| spec.spawn(&self.cfg.exe, &[])).collect::<Result<Vec<_>>>()?;
        let deadline = self
            .deadline
            .min(Instant::now() + Duration::from_secs(u64::from(self.cfg.sizes.response_secs) + 30));
        let mut times: BTreeMap<u32, u64> = BTreeMap::new();
        for p in &mut programs {
            p.expect_line("ready", deadline, "starting them")?;
        }
        for p in &mut programs {
            let line = p.line(deadline, "their response times")?;
            let said = || ChildProblem::Said { line: line.clone(), want: format!("{RESPONSES} <µs> …") };
            let list = line.strip_prefix(RESPONSES).ok_or_else(|| p.error("its response times", said()))?;
            for us in list.split_whitespace() {
                let us: u32 = us.parse().map_err(|_| p.error("its response times", said()))?;
                *times.entry(us).or_default() += 1;
            }
        }
        Ok(Latencies(times.into_iter().collect()))
    }

    /// `hogs` CPU-bound workers per CPU, pinned, ready; killed when dropped.
    fn hogs(&self, hogs: u32) -> Result<Vec<ChildGroup>> {
        let mut started = Vec::new();
        for &cpu in self.cpus {
            for _ in 0..hogs {
                let mut spec = WorkerSpec::new(Role::Hog);
                spec.cpu = Some(cpu);
                started.push(spec.spawn(&self.cfg.exe, &[])?);
            }
        }
        for h in &mut started {
            h.expect_line("ready", self.deadline, "starting the hogs")?;
        }
        Ok(started)
    }

    /// Runs `program args` to completion in its own process group: the wall time from
    /// spawn to exit in seconds, and its output if `capture` (else it goes nowhere). Fails unless it
    /// exits with status 0; killed on a stop or the time limit.
    fn timed(&self, program: &str, args: &[String], capture: bool) -> Result<(f64, String)> {
        let out_path = self.dir.join("out");
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(Stdio::null()).stderr(Stdio::null()).stdout(Stdio::null());
        if capture {
            let out = File::create(&out_path).ctx(|| format!("cannot create {}", out_path.display()))?;
            cmd.stdout(out);
        }
        guard_command(&mut cmd, Vec::new(), libc::SIGKILL, None);
        let what = format!("{program} {}", args.join(" "));
        let mut w = ChildGroup::start(&mut cmd, program)?;
        let wall = w.wait_or_stop(self.deadline, self.stop, &what)?.wall_ns as f64 / 1e9;
        let text = match capture {
            true => {
                std::fs::read_to_string(&out_path).ctx(|| format!("cannot read {}", out_path.display()))?
            }
            false => String::new(),
        };
        Ok((wall, text))
    }
}

/// cyclictest's period, in µs: about a millisecond, but prime, so that its wake-ups
/// sweep every phase of the scheduler tick. With exactly 1000 µs on a HZ=250 kernel the
/// wake-ups lock to one phase of the 4 ms tick for a whole run, and whether that phase
/// lands them behind a hog's slice decides the run's p99 (measured here: 70 µs in one
/// run, 1.5 ms in the next, nothing else changed); with 1013 µs each run sees all phases.
pub const WAKEUP_PERIOD_US: u32 = 1013;

/// cyclictest's histogram range, in µs (latencies beyond are counted as overflows).
const HISTOGRAM_US: u32 = 100_000;

/// hackbench's `Time:` line, in seconds.
fn hackbench_time(out: &str) -> Result<f64> {
    crate::validate::hackbench::parse_time(out).map(|ns| ns as f64 / 1e9).ok_or_else(|| {
        BenchError::output(
            "hackbench",
            OutputProblem::Lacks { thing: "time", output: out.trim().to_string() },
        )
    })
}

/// One run of a frames workload, measured.
struct Frames {
    /// Frames whose work ended past their period, in percent of the frames.
    missed_pct: f64,
    /// The render thread's wake-up latency at each frame.
    wake_ups: Latencies,
}

/// Latencies in µs as a sparse histogram: (µs, how many), ascending.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latencies(Vec<(u32, u64)>);

impl Latencies {
    /// All the latencies of `parts` in one histogram.
    pub fn merged(parts: &[&Latencies]) -> Latencies {
        let mut all: BTreeMap<u32, u64> = BTreeMap::new();
        for (us, n) in parts.iter().flat_map(|l| l.0.iter()) {
            *all.entry(*us).or_default() += n;
        }
        Latencies(all.into_iter().collect())
    }

    /// The `q` quantile, in µs, of all the latencies of `parts` together (NaN for none).
    pub fn pooled_quantile(parts: &[&Latencies], q: f64) -> f64 {
        let all = Latencies::merged(parts).0;
        let total: u64 = all.iter().map(|&(_, n)| n).sum();
        let want = (q * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (us, n) in all {
            seen += n;
            if seen >= want {
                return f64::from(us);
            }
        }
        f64::NAN
    }

    /// How many latencies it holds.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|&(_, n)| n).sum()
    }

    /// The `q` quantile, in µs.
    pub fn quantile(&self, q: f64) -> f64 {
        Latencies::pooled_quantile(&[self], q)
    }
}

/// Parses `cyclictest -h N -q -t 1`'s output: lines `USEC COUNT`, and `# Histogram
/// Overflows: N` (counted one past the histogram's last line).
fn cyclictest_latencies(out: &str) -> Result<Latencies> {
    let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
    let mut overflows = 0;
    for line in out.lines() {
        if let Some(n) = line.strip_prefix("# Histogram Overflows:") {
            overflows = n.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
            continue;
        }
        let mut f = line.split_whitespace();
        if let (Some(Ok(us)), Some(Ok(n))) =
            (f.next().map(str::parse::<u32>), f.next().map(str::parse::<u64>))
        {
            *counts.entry(us).or_default() += n;
        }
    }
    let end = counts.keys().next_back().map_or(0, |&us| us + 1);
    if overflows > 0 {
        *counts.entry(end).or_default() += overflows;
    }
    counts.retain(|_, n| *n > 0);
    if counts.is_empty() {
        let output = out.lines().take(5).collect::<Vec<_>>().join(" / ");
        return Err(BenchError::output("cyclictest", OutputProblem::Lacks { thing: "histogram", output }));
    }
    Ok(Latencies(counts.into_iter().collect()))
}

/// `schedlab run` during one round.
struct DaemonRun {
    daemon: deps::Daemon,
    pid: u32,
    /// When its steady state began, and its CPU time then.
    started: Instant,
    cpu_at_start: f64,
}

impl DaemonRun {
    /// Starts the daemon and waits for its steady state ([`deps::Daemon::wait_steady`]).
    fn start(r: &Runner) -> Result<DaemonRun> {
        if r.cfg.cold {
            deps::Daemon::forget_knowledge(r.dir);
        }
        let mut daemon =
            deps::Daemon::start(&r.cfg.exe, &r.cfg.daemon_config, r.cfg.enforcer, r.dir, r.deadline)?;
        let pid = daemon.pid();
        daemon.wait_steady(&mut |d| r.sleep(d))?;
        let mut run = DaemonRun { daemon, pid, started: Instant::now(), cpu_at_start: 0.0 };
        run.cpu_at_start = run.cpu_s();
        Ok(run)
    }

    /// Its CPU time so far (user + system of all its threads), in seconds.
    fn cpu_s(&self) -> f64 {
        schedlab_live::process::cpu_time_ns(schedlab_model::Pid(self.pid)).unwrap_or(0) as f64 / 1e9
    }

    /// Its peak resident set (VmHWM), in KiB.
    fn peak_rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// Reads what it cost and said, stops it, and makes sure nothing is left changed.
    fn finish(mut self, cost: &mut DaemonCost, notes: &mut Vec<String>) -> Result<()> {
        cost.cpu_s += self.cpu_s() - self.cpu_at_start;
        cost.wall_s += self.started.elapsed().as_secs_f64();
        cost.peak_rss_kib = cost.peak_rss_kib.max(self.peak_rss_kib());
        match self.daemon.stats_line().and_then(|l| deps::parse_stats(&l)) {
            Ok(s) => {
                cost.boost_reaction_us.extend(s.boost);
                cost.lost_events += s.lost_events;
                if !s.enforcer.is_empty() && !cost.enforcers.contains(&s.enforcer) {
                    cost.enforcers.push(s.enforcer);
                }
            }
            Err(e) => notes.push(format!("the daemon's stats could not be read: {e}")),
        }
        notes.extend(self.daemon.stop_and_restore()?);
        Ok(())
    }
}

impl SuiteReport {
    /// This suite as the trial of the enforcer its daemon used throughout, on kernel
    /// `kernel` at `at_unix_s`; `complete` when every workload ran, `quick` for the
    /// summary. `None` where the daemon did not keep to one enforcer (the kernel ended
    /// the sched_ext scheduler mid-suite): such a suite judged a mix.
    pub fn trial(&self, kernel: &str, complete: bool, quick: bool, at_unix_s: i64) -> Option<EnforcerTrial> {
        Some(EnforcerTrial {
            kernel: kernel.to_string(),
            enforcer: trial_enforcer(&self.daemon.enforcers)?.to_string(),
            at_unix_s,
            complete,
            losses: self.losses as u32,
            summary: self.trial_summary(quick),
        })
    }

    /// A trial's summary: the configuration, the rounds, and each loss with its ratio.
    fn trial_summary(&self, quick: bool) -> String {
        let losses: Vec<String> = self
            .rows
            .iter()
            .filter(|row| row.verdict == Verdict::Loss)
            .map(|row| {
                format!(
                    "{} {} {:.2} ({:.2}-{:.2})",
                    row.workload, row.metric, row.ratio, row.ci_low, row.ci_high
                )
            })
            .collect();
        format!(
            "{} configuration, {} rounds{}: {}",
            self.config,
            self.rounds,
            if quick { " (--quick)" } else { "" },
            if losses.is_empty() { "no loss".to_string() } else { losses.join(", ") }
        )
    }
}

/// The enforcer a suite judged, by what each of its daemon runs said it used: one
/// enforcer throughout, or none.
fn trial_enforcer(used: &[String]) -> Option<&'static str> {
    use schedlab_live::daemon::{SCHED_EXT_ENFORCER, SCHED_EXT_TRIAL, SYSCALLS_ENFORCER};
    match used {
        [one] if one == SCHED_EXT_ENFORCER => Some(SCHED_EXT_TRIAL),
        [] => None,
        all if all.iter().all(|e| e.starts_with(SYSCALLS_ENFORCER)) => Some("syscalls"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_rule() {
        assert_eq!(Verdict::of(1.00, 1.02), Verdict::Neutral);
        assert_eq!(Verdict::of(1.04, 1.045), Verdict::Loss, "the median is past 1.03");
        assert_eq!(Verdict::of(1.01, 1.08), Verdict::Loss, "the interval reaches past 1.05");
        assert_eq!(Verdict::of(0.90, 0.97), Verdict::Win);
        assert_eq!(Verdict::of(0.90, 1.00), Verdict::Neutral, "1 is inside the interval");
        let frames_load =
            Workload::Frames { hz: 60, load: 4, reniced: false, load_kind: LoadKind::Build }.loss_bounds(2);
        assert_eq!(Verdict::within(1.045, 1.07, frames_load), Verdict::Neutral, "within 0.95 x bare");
        assert_eq!(Verdict::within(1.06, 1.07, frames_load), Verdict::Loss);
        assert_eq!(
            Workload::Frames { hz: 60, load: 4, reniced: false, load_kind: LoadKind::Build }.loss_bounds(0),
            (LOSS_RATIO, LOSS_UPPER)
        );
    }

    #[test]
    fn rows_pair_rounds() {
        // schedlab is twice as slow in every round, whatever the drift between rounds.
        let row = compare("w", "time", "s", vec![1.0, 2.0, 4.0, 8.0], vec![2.0, 4.0, 8.0, 16.0]);
        assert_eq!((row.ratio, row.ci_low, row.ci_high), (2.0, 2.0, 2.0));
        assert_eq!(row.verdict, Verdict::Loss);
        assert_eq!((row.bare_median, row.schedlab_median), (3.0, 6.0));
    }

    #[test]
    fn the_machine_noise_is_the_bare_side_s_spread_over_timed_workloads() {
        // Deviations from the median 1.0: 0.1, 0, 0.2, 0.1, 0 → their median 0.1: 10 %.
        let a = compare("a", "time", "s", vec![0.9, 1.0, 1.2, 1.1, 1.0], vec![1.0; 5]);
        // 2 %, whatever schedlab's values.
        let b = compare("b", "time", "s", vec![2.0, 2.04, 1.96, 2.0, 2.04], vec![9.0; 5]);
        // Not timed: left out.
        let c = compare("c", "p99", "µs", vec![10.0, 90.0, 50.0, 10.0, 90.0], vec![1.0; 5]);
        let noise = machine_noise_pct(&[a, b, c.clone()]).unwrap();
        assert!((noise - 6.0).abs() < 1e-9, "the median of 10 % and 2 %: {noise}");
        assert_eq!(machine_noise_pct(&[c]), None);
    }

    #[test]
    fn the_interval_holds_the_median_and_widens_with_spread() {
        let tight = bootstrap_median_ci(&[1.0, 1.01, 0.99, 1.0, 1.0, 1.02], 0.95);
        let wide = bootstrap_median_ci(&[0.8, 1.2, 0.9, 1.1, 1.0, 1.3], 0.95);
        assert!(tight.0 <= 1.0 && 1.0 <= tight.1, "{tight:?}");
        assert!(wide.1 - wide.0 > tight.1 - tight.0, "{wide:?} vs {tight:?}");
        assert_eq!(bootstrap_median_ci(&[1.5], 0.95), (1.5, 1.5));
        assert_eq!(bootstrap_median_ci(&[1.0, 2.0, 3.0], 0.95), bootstrap_median_ci(&[1.0, 2.0, 3.0], 0.95));
    }

    #[test]
    fn cyclictest_output_is_read() {
        let out = "# Histogram\n000000 000000\n000010 000004\n000011 000090\n000250 000005\n\
                   # Total: 000000100\n# Min Latencies: 00010\n# Histogram Overflows: 00001\n";
        let h = cyclictest_latencies(out).unwrap();
        assert_eq!(h, Latencies(vec![(10, 4), (11, 90), (250, 5), (251, 1)]));
        assert_eq!(h.quantile(0.5), 11.0);
        assert_eq!(h.quantile(0.99), 250.0);
        assert_eq!(h.quantile(1.0), 251.0, "an overflow is past the end");
        assert!(cyclictest_latencies("nothing").is_err());
    }

    #[test]
    fn pooled_latencies_are_one_histogram_and_resampled_by_round() {
        // Four rounds: bare's third round and schedlab's second in a slow mode.
        let fast = Latencies(vec![(50, 990), (80, 10)]);
        let slow = Latencies(vec![(50, 970), (900, 30)]);
        let bare = [fast.clone(), fast.clone(), slow.clone(), fast.clone()];
        let schedlab = [fast.clone(), slow.clone(), fast.clone(), fast.clone()];
        // Pooled, each side has 4000 samples, 30 of them slow: both p99s are 80 µs.
        assert_eq!(Latencies::pooled_quantile(&bare.iter().collect::<Vec<_>>(), 0.99), 80.0);
        let row = compare_pooled("wakeup", "p99", "µs", 0.99, &bare, &schedlab);
        assert_eq!((row.bare_median, row.schedlab_median, row.ratio), (80.0, 80.0, 1.0));
        assert_eq!(row.bare, [50.0, 50.0, 900.0, 50.0], "each round's own p99");
        assert!(row.ci_low < 1.0 && row.ci_high > 1.0, "{row:?}");
        // A side slower in every round loses whatever the resampling.
        let worse: Vec<Latencies> = (0..4).map(|_| Latencies(vec![(75, 1000)])).collect();
        let all_fast: Vec<Latencies> = (0..4).map(|_| fast.clone()).collect();
        let row = compare_pooled("wakeup", "p99", "µs", 0.99, &all_fast, &worse);
        assert_eq!((row.ratio, row.ci_low, row.verdict), (1.5, 1.5, Verdict::Loss));
    }

    #[test]
    fn blocks_run_each_workload_its_runs_in_an_order_that_changes_by_round() {
        let runs = [4, 1, 4, 1, 1, 4, 1, 1];
        let orders: Vec<Vec<usize>> = (0..8).map(|r| block_order(&runs, r)).collect();
        for o in &orders {
            let mut sorted = o.clone();
            sorted.sort();
            let want: Vec<usize> = runs.iter().enumerate().flat_map(|(i, &n)| vec![i; n]).collect();
            assert_eq!(sorted, want);
        }
        assert_eq!(block_order(&runs, 3), orders[3], "a round's order is the same every time");
        let firsts: std::collections::HashSet<usize> = orders.iter().map(|o| o[0]).collect();
        assert!(firsts.len() > 2, "the first workload changes: {orders:?}");
        let back_to_back = |o: &Vec<usize>| o.windows(2).filter(|w| w[0] == w[1]).count();
        assert!(orders.iter().map(back_to_back).sum::<usize>() < 8 * 4, "runs are spread: {orders:?}");
    }

    #[test]
    fn short_workloads_run_several_times_per_round() {
        let s = Sizes::full();
        assert_eq!(s.runs(Workload::Hackbench { pipe: false, threads: false }), 4);
        assert_eq!(s.runs(Workload::ForkExec), 4);
        assert_eq!(s.runs(Workload::Wakeup), 1);
        assert_eq!(s.runs(Workload::Deps(IpcKind::Pipe)), 1);
        assert_eq!(Sizes::quick().runs(Workload::ForkExec), 1);
    }

    #[test]
    fn latencies_merge_into_one_histogram() {
        let a = Latencies(vec![(10, 2), (50, 1)]);
        let b = Latencies(vec![(10, 1), (20, 3)]);
        assert_eq!(Latencies::merged(&[&a, &b]), Latencies(vec![(10, 3), (20, 3), (50, 1)]));
        assert_eq!(Latencies::merged(&[]), Latencies::default());
    }

    #[test]
    fn a_ratio_over_a_bare_zero_is_one_or_a_harm() {
        // Frames missed: none on either side is no change; some where bare Linux missed
        // none is a harm, whatever the other rounds say.
        let same = compare("frames", "missed", "%", vec![0.0, 0.0, 2.0], vec![0.0, 0.0, 1.0]);
        assert_eq!(same.ratio, 1.0);
        let worse = compare("frames", "missed", "%", vec![0.0, 0.0, 0.0], vec![0.5, 0.0, 0.5]);
        assert_eq!(
            (worse.ratio, worse.ci_high, worse.verdict),
            (f64::INFINITY, f64::INFINITY, Verdict::Loss)
        );
    }

    #[test]
    fn one_frame_either_way_is_no_verdict() {
        let sizes = Sizes::full();
        let frames = Workload::Frames { hz: 60, load: 4, reniced: false, load_kind: LoadKind::Build };
        // 240 frames a run: one is 0.42 %.
        assert!((frames.noise_floor(0, &sizes) - 100.0 / 240.0).abs() < 1e-12);
        assert_eq!(frames.noise_floor(1, &sizes), 0.0, "latencies have none");
        assert_eq!(Workload::Wakeup.noise_floor(0, &sizes), 0.0);
    }

    #[test]
    fn hackbench_time_is_read() {
        assert_eq!(hackbench_time("Running in process mode\nTime: 0.321\n").unwrap(), 0.321);
        assert!(hackbench_time("oops").is_err());
    }

    #[test]
    fn workloads_have_names_that_parse() {
        for w in Workload::all() {
            assert_eq!(w.name().parse::<Workload>().unwrap(), w);
        }
        assert_eq!(Workload::all().len(), 26);
        assert_eq!(
            "frames-60hz-2x-spin".parse::<Workload>().unwrap(),
            Workload::Frames { hz: 60, load: 2, reniced: false, load_kind: LoadKind::Spin }
        );
        assert_eq!(
            "frames-60hz-4x-session-reniced".parse::<Workload>().unwrap(),
            Workload::Frames { hz: 60, load: 4, reniced: true, load_kind: LoadKind::Session }
        );
        assert_eq!(
            "frames-60hz-4x-reniced".parse::<Workload>().unwrap(),
            Workload::Frames { hz: 60, load: 4, reniced: true, load_kind: LoadKind::Build }
        );
        assert_eq!(
            "response-2x-reniced".parse::<Workload>().unwrap(),
            Workload::Response { load: 2, reniced: true }
        );
        assert_eq!(Workload::Response { load: 0, reniced: false }.metrics().len(), 2, "no load, no pace");
        assert_eq!(
            "requests-0x".parse::<Workload>().unwrap(),
            Workload::Requests { load: 0, reniced: false }
        );
        let loaded = Workload::Requests { load: 2, reniced: false };
        assert_eq!(loaded.metrics()[2].0, "load");
        assert_eq!((loaded.quantile(0), loaded.quantile(1)), (Some(0.99), None), "the pace is no quantile");
        let reniced = Workload::Response { load: 2, reniced: true };
        assert_eq!(reniced.unloaded(), Some(Workload::Response { load: 0, reniced: false }));
        assert_eq!(loaded.unloaded(), Some(Workload::Requests { load: 0, reniced: false }));
        assert_eq!(Workload::Requests { load: 0, reniced: false }.unloaded(), None);
        assert!("fio".parse::<Workload>().unwrap_err().to_string().contains("hackbench-pipe-process"));
    }

    #[test]
    fn generated_inputs_are_what_they_say() {
        let dir = crate::bench::scratch_dir("suite").unwrap();
        let text = dir.path().join("t");
        write_text(&text, 100_000).unwrap();
        let len = std::fs::metadata(&text).unwrap().len();
        assert!((100_000..100_020).contains(&len), "{len}");
        let project = dir.path().join("p");
        write_project(&project, 3).unwrap();
        let status = Command::new("make")
            .args(["-s", "-j2", "-C"])
            .arg(&project)
            .stdout(Stdio::null())
            .status()
            .expect("make runs");
        assert!(status.success());
        assert!(project.join("prog").exists() && project.join("unit2.o").exists());
    }

    #[test]
    fn a_trial_judges_the_one_enforcer_the_daemon_kept_to() {
        let ext = schedlab_live::daemon::SCHED_EXT_ENFORCER.to_string();
        let calls = |why: &str| format!("system calls ({why})");
        assert_eq!(trial_enforcer(std::slice::from_ref(&ext)), Some("sched-ext"));
        assert_eq!(trial_enforcer(&[calls("chosen")]), Some("syscalls"));
        assert_eq!(
            trial_enforcer(&[calls("chosen"), calls("this kernel has no sched_ext")]),
            Some("syscalls")
        );
        // The kernel ended the scheduler in one round: the suite judged a mix.
        assert_eq!(trial_enforcer(&[ext, calls("chosen")]), None);
        assert_eq!(trial_enforcer(&[]), None);
    }
}

//! SWAP's client-server microbenchmark (paper 004, §6.1): how long a client at nice
//! −20 waits for a server at nice 0 that bubble-sorts per request, per IPC kind, in
//! four scenarios:
//!
//! - `unloaded`: nothing else runs;
//! - `loaded`: `load` CPU hogs per CPU, each pinned to its CPU;
//! - `reniced`: loaded, the server reniced to −20 by hand (what the user would do);
//! - `daemon`: loaded, with `schedlab run` boosting providers.
//!
//! Every child runs in its own process group, gets SIGKILL if the runner's thread dies
//! (`PR_SET_PDEATHSIG`), and is killed and reaped when its guard drops (end of a cell,
//! error, panic); the whole run has a wall-time limit.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schedlab_live::actuator::restore_left_behind;
use schedlab_live::daemon::launch::Launch;
use schedlab_live::daemon::Enforcer;
use schedlab_store::Store;
use serde::Serialize;

use super::ipc::{Channel, IpcKind, Peer};
use super::stats::quantile;
use super::workers::{self, Role, WorkerSpec, DEFAULT_SORT_LEN};
use super::{BenchError, ChildProblem, Context, Invalid, OutputProblem, Result};
use crate::child::{guard_command, ChildGroup};

/// How long the daemon may take to accept connections on its socket.
pub const DAEMON_START_LIMIT: Duration = Duration::from_secs(15);
/// How long the daemon may take to exit after SIGINT before it gets SIGKILL.
pub const DAEMON_STOP_LIMIT: Duration = Duration::from_secs(10);
/// The configuration the daemon runs with: no classification changes, only provider
/// boosting.
pub const DAEMON_CONFIG: &str = "[daemon]\nmodel = false\n";
/// How long a worker may take to say it is ready.
const READY_LIMIT: Duration = Duration::from_secs(10);

/// One measured situation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scenario {
    /// Nothing else runs.
    Unloaded,
    /// CPU hogs on every CPU.
    Loaded,
    /// Loaded, the server reniced to −20 by hand.
    Reniced,
    /// Loaded, with `schedlab run`.
    Daemon,
}

impl Scenario {
    /// The scenario's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Unloaded => "unloaded",
            Scenario::Loaded => "loaded",
            Scenario::Reniced => "reniced",
            Scenario::Daemon => "daemon",
        }
    }
}

/// The benchmark's settings.
#[derive(Clone, Debug)]
pub struct DepsConfig {
    /// The IPC kinds, in order.
    pub kinds: Vec<IpcKind>,
    /// CPU hogs per CPU in the loaded scenarios.
    pub load: u32,
    /// Measured round trips per cell.
    pub iterations: u32,
    /// Round trips before those, discarded.
    pub warmup: u32,
    /// Integers the server sorts per request.
    pub sort_len: usize,
    /// Also measure with `schedlab run`.
    pub with_daemon: bool,
    /// Also measure with the server reniced by hand.
    pub reference: bool,
    /// The limit on the whole run's wall time.
    pub time_limit: Duration,
    /// How long the hogs run before the server starts.
    pub settle: Duration,
    /// The `schedlab` binary to re-execute for workers and the daemon.
    pub exe: PathBuf,
    /// The client's nice value.
    pub client_nice: i32,
    /// The configuration the daemon runs with in the `daemon` scenario.
    pub daemon_config: String,
    /// What carries the daemon's decisions out.
    pub daemon_enforcer: Enforcer,
    /// Measure only the `daemon` scenario (a tuner's objective: nothing to compare).
    pub daemon_only: bool,
    /// Paper 004's multi-server variant instead of one server: five servers post a
    /// semaphore after 2, 5, 5, 10 and 10 sorts, and the client takes it once per
    /// iteration, from whichever server posts first (the kinds must be `sem`).
    pub multi_server: bool,
}

/// The sorts per post of the multi-server variant's servers (paper 004, section 6).
pub const MULTI_SERVER_SORTS: [u32; 5] = [2, 5, 5, 10, 10];

impl Default for DepsConfig {
    fn default() -> Self {
        DepsConfig {
            kinds: IpcKind::ALL.to_vec(),
            load: 8,
            iterations: 30,
            warmup: 3,
            sort_len: DEFAULT_SORT_LEN,
            with_daemon: false,
            reference: true,
            time_limit: Duration::from_secs(600),
            settle: Duration::from_millis(200),
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("schedlab")),
            client_nice: -20,
            daemon_config: DAEMON_CONFIG.to_string(),
            daemon_enforcer: Enforcer::Auto,
            daemon_only: false,
            multi_server: false,
        }
    }
}

/// Where the run is, for a progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// The cell being measured (from 0).
    pub cell: usize,
    /// How many cells there are.
    pub cells: usize,
    /// Its IPC kind.
    pub kind: IpcKind,
    /// Its scenario.
    pub scenario: Scenario,
    /// Round trips done in it (warm-up included).
    pub done: u32,
    /// Round trips it makes.
    pub total: u32,
}

/// Completion-time statistics of a cell, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompletionStats {
    /// Measured round trips.
    pub count: usize,
    /// The median.
    pub median_ms: f64,
    /// The mean.
    pub mean_ms: f64,
    /// The 90th percentile.
    pub p90_ms: f64,
    /// The fastest.
    pub min_ms: f64,
    /// The slowest.
    pub max_ms: f64,
}

impl CompletionStats {
    /// The statistics of `samples_ms` (not empty).
    pub fn of(samples_ms: &[f64]) -> Self {
        let mut s = samples_ms.to_vec();
        s.sort_by(f64::total_cmp);
        CompletionStats {
            count: s.len(),
            median_ms: quantile(&s, 0.5),
            mean_ms: s.iter().sum::<f64>() / s.len().max(1) as f64,
            p90_ms: quantile(&s, 0.9),
            min_ms: s.first().copied().unwrap_or(0.0),
            max_ms: s.last().copied().unwrap_or(0.0),
        }
    }
}

/// The daemon's boost reaction time (from a requester blocking to its provider's
/// boost), in microseconds, from its `stats` answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoostReaction {
    /// The median.
    pub p50: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// How many boosts.
    pub count: u64,
    /// How many of them took longer than 1 ms.
    pub over_1ms: u64,
}

/// What the daemon said and how it ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DaemonOutcome {
    /// `boost_reaction_us` of its stats, if it had them.
    pub boost_reaction_us: Option<BoostReaction>,
    /// The counters of schedlab's sched_ext scheduler, where it enforced (`lends_used`:
    /// how often a provider ran in its requester's turn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sched_ext: Option<schedlab_ext::stats::Stats>,
    /// Why there are no stats, if the query failed.
    pub stats_error: Option<String>,
    /// It did not exit within [`DAEMON_STOP_LIMIT`] of SIGINT and was killed.
    pub killed: bool,
    /// How it exited (`exit status: 0`, `signal: 9 (SIGKILL)`).
    pub exit: String,
}

/// One kind in one scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// The situation.
    pub scenario: Scenario,
    /// Completion times of the measured round trips.
    pub stats: CompletionStats,
    /// The median over the unloaded median of the same kind.
    pub ratio_to_unloaded: f64,
    /// Every measured completion time, in order, in milliseconds.
    pub samples_ms: Vec<f64>,
    /// The daemon's side (`daemon` scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daemon: Option<DaemonOutcome>,
}

/// The cells of one IPC kind.
#[derive(Clone, Debug, Serialize)]
pub struct KindResult {
    /// The kind.
    pub kind: IpcKind,
    /// Its cells, in scenario order.
    pub cells: Vec<Cell>,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct DepsReport {
    /// CPUs the hogs loaded.
    pub cpus: Vec<usize>,
    /// Hogs per CPU.
    pub load: u32,
    /// Measured round trips per cell.
    pub iterations: u32,
    /// Discarded round trips per cell.
    pub warmup: u32,
    /// Integers sorted per request.
    pub sort_len: usize,
    /// The client's nice value.
    pub client_nice: i32,
    /// Per kind.
    pub kinds: Vec<KindResult>,
    /// Wall time of the run, in seconds.
    pub wall_s: f64,
}

/// Runs the benchmark; `progress` hears of every cell and round trip.
pub fn run_deps(cfg: &DepsConfig, progress: &mut dyn FnMut(&Progress)) -> Result<DepsReport> {
    if cfg.kinds.is_empty() || cfg.iterations == 0 {
        return Err(Invalid::NothingToMeasure { lacking: "no IPC kinds or no iterations" }.into());
    }
    if cfg.multi_server && cfg.kinds != [IpcKind::Sem] {
        return Err(Invalid::MultiServer.into());
    }
    let start = Instant::now();
    let deadline = start + cfg.time_limit;
    let cpus = workers::allowed_cpus().ctx(|| "cannot read this process's CPU affinity".into())?;
    let mut scenarios = vec![Scenario::Unloaded];
    if cfg.daemon_only {
        scenarios = vec![Scenario::Daemon];
    } else if cfg.load > 0 {
        scenarios.push(Scenario::Loaded);
        if cfg.reference {
            scenarios.push(Scenario::Reniced);
        }
        if cfg.with_daemon {
            scenarios.push(Scenario::Daemon);
        }
    } else if cfg.with_daemon {
        scenarios.push(Scenario::Daemon);
    }
    let cells = cfg.kinds.len() * scenarios.len();
    let dir = super::scratch_dir("deps")?;
    let mut kinds = Vec::new();
    let mut cell = 0;
    for &kind in &cfg.kinds {
        let mut done: Vec<Cell> = Vec::new();
        for &scenario in &scenarios {
            let mut at =
                Progress { cell, cells, kind, scenario, done: 0, total: cfg.warmup + cfg.iterations };
            progress(&at);
            let mut tick = |done| {
                at.done = done;
                progress(&at);
            };
            let (samples_ms, daemon) = if scenario == Scenario::Daemon {
                let mut daemon =
                    Daemon::start(&cfg.exe, &cfg.daemon_config, cfg.daemon_enforcer, dir.path(), deadline)?;
                let samples = run_cell(cfg, kind, scenario, &cpus, dir.path(), deadline, &mut tick)?;
                let mut outcome = DaemonOutcome::default();
                match daemon.stats_line().and_then(|l| parse_stats(&l)) {
                    Ok(s) => (outcome.boost_reaction_us, outcome.sched_ext) = (s.boost, s.sched_ext),
                    Err(e) => outcome.stats_error = Some(e.to_string()),
                }
                (outcome.killed, outcome.exit) = daemon.stop()?;
                (samples, Some(outcome))
            } else {
                (run_cell(cfg, kind, scenario, &cpus, dir.path(), deadline, &mut tick)?, None)
            };
            let stats = CompletionStats::of(&samples_ms);
            let base = done.first().map_or(stats.median_ms, |c| c.stats.median_ms);
            done.push(Cell {
                scenario,
                ratio_to_unloaded: if base > 0.0 { stats.median_ms / base } else { 0.0 },
                stats,
                samples_ms,
                daemon,
            });
            cell += 1;
        }
        kinds.push(KindResult { kind, cells: done });
    }
    Ok(DepsReport {
        cpus,
        load: cfg.load,
        iterations: cfg.iterations,
        warmup: cfg.warmup,
        sort_len: cfg.sort_len,
        client_nice: cfg.client_nice,
        kinds,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// Measures one cell: hogs (if loaded), server, client; the measured completion times
/// in milliseconds.
pub(crate) fn run_cell(
    cfg: &DepsConfig,
    kind: IpcKind,
    scenario: Scenario,
    cpus: &[usize],
    dir: &Path,
    deadline: Instant,
    tick: &mut dyn FnMut(u32),
) -> Result<Vec<f64>> {
    let what = format!("{kind}/{}", scenario.name());
    let mut hogs = Vec::new();
    if scenario != Scenario::Unloaded {
        for &cpu in cpus {
            for _ in 0..cfg.load {
                let mut spec = WorkerSpec::new(Role::Hog);
                spec.cpu = Some(cpu);
                hogs.push(spec.spawn(&cfg.exe, &[])?);
            }
        }
        for h in &mut hogs {
            h.expect_line("ready", deadline.min(Instant::now() + READY_LIMIT), &what)?;
        }
        std::thread::sleep(cfg.settle);
    }
    let mut channel = Channel::new(kind, dir)?;
    let rounds = cfg.warmup + cfg.iterations;
    let sorts: &[u32] = if cfg.multi_server { &MULTI_SERVER_SORTS } else { &[1] };
    let mut servers = Vec::new();
    // Multi-server: the servers start posting together once the client is ready.
    let (go_read, go_write) = super::ipc::pipe().ctx(|| "cannot make the start pipe".into())?;
    for &n in sorts {
        let mut spec = WorkerSpec::new(Role::Server);
        spec.sort_len = cfg.sort_len;
        (spec.sorts, spec.unprompted, spec.rounds) = (n, cfg.multi_server, rounds);
        let server_end = channel.server_spec(None);
        spec.endpoint = Some(server_end.clone());
        let mut cmd = spec.command(&cfg.exe, &server_end.fds);
        if cfg.multi_server {
            cmd.stdin(Stdio::from(go_read.try_clone().ctx(|| "cannot share the start pipe".into())?));
        }
        let mut server = ChildGroup::start(&mut cmd, spec.role.comm())?;
        server.expect_line("ready", deadline.min(Instant::now() + READY_LIMIT), &what)?;
        if scenario == Scenario::Reniced {
            workers::set_nice(server.pid(), -20).ctx(|| "cannot renice the server to -20".into())?;
        }
        servers.push(server);
    }
    let mut spec = WorkerSpec::new(Role::Client);
    (spec.rounds, spec.unprompted) = (rounds, cfg.multi_server);
    spec.nice = Some(cfg.client_nice);
    let client_end = channel.client_spec(Some(Peer::process(servers[0].pid())));
    spec.endpoint = Some(client_end.clone());
    let mut client = spec.spawn(&cfg.exe, &client_end.fds)?;
    channel.close_fds();
    client.expect_line("ready", deadline.min(Instant::now() + READY_LIMIT), &what)?;
    drop((go_read, go_write));
    let mut samples = Vec::new();
    for i in 0..spec.rounds {
        let line = client.line(deadline, &format!("{what}: round trip {i} of {}", spec.rounds))?;
        let Some(ns) = line.strip_prefix("t ").and_then(|n| n.parse::<u64>().ok()) else {
            return Err(client.error(&what, ChildProblem::Said { line, want: "t <ns>".into() }));
        };
        if i >= cfg.warmup {
            samples.push(ns as f64 / 1e6);
        }
        tick(i + 1);
    }
    client.expect_line("done", deadline, &what)?;
    client.wait(deadline, &what)?;
    drop(servers);
    drop(hogs);
    drop(channel);
    Ok(samples)
}

/// How long a daemon runs after its start-up window before a workload is measured.
pub(crate) const DAEMON_SETTLE: Duration = Duration::from_secs(1);
/// The longest [`Daemon::wait_steady`] waits for the start-up profiling window to close.
const PROFILING_LIMIT: Duration = Duration::from_secs(15);

/// The hidden subcommand of the current executable that runs a daemon from a
/// [`Launch`] (given as `--launch JSON`), as `schedlab run` would run it.
pub const DAEMON_COMMAND: [&str; 2] = ["bench", "daemon"];

/// A daemon process, stopped (SIGINT, then SIGKILL) when dropped.
pub(crate) struct Daemon {
    child: ChildGroup,
    socket: PathBuf,
    store: PathBuf,
    log: PathBuf,
}

/// The store's file name in a benchmark daemon's directory.
const STORE_FILE: &str = "schedlab.db";

impl Daemon {
    /// Starts a daemon (`exe`'s hidden `bench daemon`, which runs what `schedlab run`
    /// runs) with the configuration `config_text`, `enforcer`, and its files (the
    /// configuration, store, socket and log) in `dir`, and waits until its socket accepts
    /// connections. A daemon started again in the same `dir` finds what the last one
    /// learned in the store.
    pub(crate) fn start(
        exe: &Path,
        config_text: &str,
        enforcer: Enforcer,
        dir: &Path,
        deadline: Instant,
    ) -> Result<Daemon> {
        let config = dir.join("daemon.toml");
        std::fs::write(&config, config_text).ctx(|| format!("cannot write {}", config.display()))?;
        let socket = dir.join("schedlab.sock");
        let store = dir.join(STORE_FILE);
        let log = dir.join("daemon.log");
        let _ = std::fs::remove_file(&socket);
        let log_file = File::create(&log).ctx(|| format!("cannot create {}", log.display()))?;
        let launch = Launch { config: Some(config), store: store.clone(), socket: socket.clone(), enforcer };
        let mut cmd = Command::new(exe);
        cmd.args(DAEMON_COMMAND).arg("--launch").arg(launch.to_json());
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log_file);
        guard_command(&mut cmd, Vec::new(), libc::SIGINT, None);
        let child = ChildGroup::start(&mut cmd, "daemon")?;
        let mut daemon = Daemon { child, socket, store, log };
        let waiting = Instant::now();
        let limit = deadline.min(waiting + DAEMON_START_LIMIT);
        loop {
            if UnixStream::connect(&daemon.socket).is_ok() {
                return Ok(daemon);
            }
            if let Some(exit) = daemon.child.try_wait()? {
                return Err(BenchError::DaemonExited { status: exit.status, log: daemon.last_words() });
            }
            if Instant::now() >= limit {
                return Err(BenchError::DaemonNotListening {
                    socket: daemon.socket.clone(),
                    limit: limit - waiting,
                    log: daemon.last_words(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Removes the store a daemon started in `dir` would find: the next one starts cold.
    pub(crate) fn forget_knowledge(dir: &Path) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(dir.join(format!("{STORE_FILE}{suffix}")));
        }
    }

    /// Waits for its steady state: its start-up profiling window (the processes running
    /// at its start) closed, then [`DAEMON_SETTLE`]. Restoring, loading BPF and
    /// profiling what runs at its start are a one-time cost of a daemon that runs for
    /// months, not what a workload should measure. `sleep` waits (and may fail: a stop
    /// flag, a deadline).
    pub(crate) fn wait_steady(&mut self, sleep: &mut dyn FnMut(Duration) -> Result<()>) -> Result<()> {
        let waiting = Instant::now();
        while waiting.elapsed() < PROFILING_LIMIT {
            if !parse_stats(&self.stats_line()?)?.profiling {
                break;
            }
            sleep(Duration::from_millis(100))?;
        }
        sleep(DAEMON_SETTLE)
    }

    /// Stops it ([`Daemon::stop`]); one that had to be killed has what its journal holds
    /// undone here, as `schedlab restore` would, so that nothing is left changed: then
    /// the note saying so.
    pub(crate) fn stop_and_restore(&mut self) -> Result<Option<String>> {
        let (killed, status) = self.stop()?;
        if !killed {
            return Ok(None);
        }
        let (report, _) = restore_left_behind(&Store::open(&self.store)?)?;
        if !report.failed.is_empty() {
            return Err(BenchError::Unrestored { store: self.store.clone(), failed: report.failed.len() });
        }
        Ok(Some(format!("the daemon ignored SIGINT and was killed ({status}); its journal was restored")))
    }

    /// Its pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.pid() as u32
    }

    /// The last 10 lines of its log.
    fn last_words(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(10)..].iter().map(|l| l.to_string()).collect()
    }

    /// The daemon's answer to `{"cmd":"stats"}`: one JSON line.
    pub(crate) fn stats_line(&mut self) -> Result<String> {
        let mut s = UnixStream::connect(&self.socket)
            .ctx(|| format!("cannot connect to {}", self.socket.display()))?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ctx(|| "cannot set a timeout".into())?;
        s.set_write_timeout(Some(Duration::from_secs(5))).ctx(|| "cannot set a timeout".into())?;
        s.write_all(b"{\"cmd\":\"stats\"}\n").ctx(|| "cannot ask the daemon for its stats".into())?;
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).ctx(|| "cannot read the daemon's stats".into())?;
        Ok(line)
    }

    /// Sends SIGINT and waits up to [`DAEMON_STOP_LIMIT`], then kills its group; whether
    /// it had to be killed, and its exit status. Once it has exited, only says how.
    pub(crate) fn stop(&mut self) -> Result<(bool, String)> {
        self.child.signal(libc::SIGINT)?;
        if let Some(exit) = self.child.wait_by(Instant::now() + DAEMON_STOP_LIMIT)? {
            return Ok((false, exit.status.to_string()));
        }
        let exit = self.child.kill();
        Ok((true, exit.map(|e| e.status.to_string()).unwrap_or_default()))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// What the benchmarks read of the daemon's answer to `{"cmd":"stats"}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct StatsAnswer {
    /// `boost_reaction_us`, if present.
    pub boost: Option<BoostReaction>,
    /// `lost_events` (0 if absent).
    pub lost_events: u64,
    /// `enforcer` (empty if absent).
    pub enforcer: String,
    /// `profiling`: its start-up profiling window is open (false if absent).
    pub profiling: bool,
    /// `sched_ext`: the scheduler's counters, while it enforces.
    pub sched_ext: Option<schedlab_ext::stats::Stats>,
}

/// Reads a stats answer; fails only if it is not JSON.
pub(crate) fn parse_stats(line: &str) -> Result<StatsAnswer> {
    let v: serde_json::Value = serde_json::from_str(line.trim()).map_err(|source| {
        BenchError::output(
            "the daemon's stats",
            OutputProblem::NotJson { text: line.trim().to_string(), source },
        )
    })?;
    let boost = v.get("boost_reaction_us").filter(|b| b.is_object()).map(|b| {
        let num = |k: &str| b.get(k).and_then(serde_json::Value::as_f64).unwrap_or(f64::NAN);
        BoostReaction {
            p50: num("p50"),
            p99: num("p99"),
            count: b.get("count").and_then(serde_json::Value::as_u64).unwrap_or(0),
            over_1ms: b.get("over_1ms").and_then(serde_json::Value::as_u64).unwrap_or(0),
        }
    });
    Ok(StatsAnswer {
        boost,
        lost_events: v.get("lost_events").and_then(serde_json::Value::as_u64).unwrap_or(0),
        enforcer: v.get("enforcer").and_then(serde_json::Value::as_str).unwrap_or_default().to_string(),
        profiling: v.get("profiling").and_then(serde_json::Value::as_bool).unwrap_or(false),
        sched_ext: v.get("sched_ext").and_then(|x| serde_json::from_value(x.clone()).ok()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_interpolate() {
        let s = CompletionStats::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.count, s.median_ms, s.mean_ms, s.min_ms, s.max_ms), (4, 2.5, 2.5, 1.0, 4.0));
        assert!((s.p90_ms - 3.7).abs() < 1e-9);
        assert_eq!(CompletionStats::of(&[7.0]).p90_ms, 7.0);
    }

    #[test]
    fn boost_reaction_is_read_from_the_stats_line() {
        let line = r#"{"x":1,"boost_reaction_us":{"p50":120.5,"p99":900,"count":42,"over_1ms":1}}"#;
        let b = parse_stats(line).unwrap().boost;
        assert_eq!(b, Some(BoostReaction { p50: 120.5, p99: 900.0, count: 42, over_1ms: 1 }));
        assert_eq!(parse_stats(r#"{"x":1}"#).unwrap().boost, None);
        assert!(parse_stats("nope").is_err());
    }

    #[test]
    fn the_schedulers_counters_are_read_from_the_stats_line() {
        let line = r#"{"x":1,"sched_ext":{"enqueues":5,"direct":0,"dispatches":4,"steals":0,"preemptions":0,"extensions":0,"adaptations":0,"near_provider":2,"lends":3,"lends_used":1,"queued":[0]}}"#;
        let s = parse_stats(line).unwrap().sched_ext.unwrap();
        assert_eq!((s.enqueues, s.lends, s.lends_used, s.queued), (5, 3, 1, vec![0]));
        assert_eq!(parse_stats(r#"{"sched_ext":null}"#).unwrap().sched_ext, None);
        let line = r#"{"enforcer":"schedlab's sched_ext scheduler","lost_events":3}"#;
        let s = parse_stats(line).unwrap();
        assert_eq!((s.enforcer.as_str(), s.lost_events), ("schedlab's sched_ext scheduler", 3));
        assert!(!s.profiling && parse_stats(r#"{"profiling":true}"#).unwrap().profiling);
    }
}

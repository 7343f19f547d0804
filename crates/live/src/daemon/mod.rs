//! The daemon (`schedlab run`): the papers' mechanisms acting on the live machine from
//! user space, every change journaled before it is applied and undone at the end.
//!
//! - **Classes** ([`classes`]): at exec (from the observer's events, not by polling
//!   /proc) a process gets the class of the first rule that matches it; one no rule
//!   matches is watched for a while and then classified by the learned model. A forked
//!   child keeps its parent's class until it execs.
//! - **Distribution** (paper 000, [`schedlab_behavior::distribution`]): per class a CPU
//!   plan (fair share, weighted, isolate), applied with `sched_setaffinity` (or a cpuset
//!   cgroup when the class asks for one), re-planned every `replan_ms` as processes
//!   come and go and as load changes; processes joined by strong dependency edges share
//!   a CPU unless that overloads it.
//! - **Provider boosting** (paper 004, [`boost`]). SWAP's confidence persists in the
//!   store: per provider program and resource kind, the mean over its provider entries
//!   is kept every 30 s and at exit, and a new provider entry of that program and kind
//!   starts there instead of at the base K.
//! - **Burst-aware slices** (paper 001, [`slices`]).
//! - **Per-class nice and policy**; real-time policies only within `rt_max_ms` of CPU
//!   per second (a process over it is put back to SCHED_OTHER until it is within it).
//!
//! Safety: processes are held by pidfd and start time; kernel threads, pid 1 and the
//! daemon itself are left alone unless a rule names them (kernel threads) ; a setting
//! someone else changes makes the daemon release the process (the user wins); every
//! change is restored when the daemon stops, and a killed daemon's journal is restored
//! by `schedlab restore` or at the next start.

pub mod boost;
pub mod classes;
pub mod control;
pub mod priority;
pub mod slices;
pub mod stats;
pub mod windows;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use schedlab_behavior::distribution::{self, ClassPlan, Edge, PlanInput, PlanTask};
use schedlab_behavior::learn::{Classifier, ProcessProfile};
use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, Policy, PrevState};
use schedlab_store::{ProgramConfidence, Setting, Store};

use self::boost::{Action, Booster, Ended, Rank};
use self::classes::ClassReason;
use self::control::{ControlSocket, Request};
use self::slices::Slices;
use self::stats::{BoostRow, DependencyRow, Explanation, LatencyHistogram, ProcessRow, Stats};
use self::windows::{Turn, Windows};
use crate::activity::Activity;
use crate::actuator::{Actuator, ActuatorError};
use crate::config::{ClassPolicy, Config};
use crate::dependencies::DependencyRecorder;
use crate::observer::{Observer, ObserverError, ObserverOptions, SchedEvents};
use crate::process::{ProcInfo, ProcessHandle};
use crate::settings::{self, CpuSet};

/// What can stop the daemon.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Observer(#[from] ObserverError),
    #[error("the journal: {0}")]
    Actuator(#[from] ActuatorError),
    #[error("the control socket {path}: {source}")]
    Socket { path: String, source: io::Error },
    #[error("{0}")]
    Setup(String),
}

/// How the daemon runs.
#[derive(Debug)]
pub struct Options {
    /// The checked configuration.
    pub config: Config,
    /// Decide and print, but change nothing.
    pub dry_run: bool,
    /// The control socket's path.
    pub socket: std::path::PathBuf,
    /// Stop after this long (tests, benchmarks); `None` runs until a signal.
    pub duration: Option<Duration>,
}

/// A process that exec'd (`parent: None`) or was forked, when the event was read.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    pid: u32,
    parent: Option<u32>,
    seen: Instant,
}

/// Whether schedlab manages a process.
#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    /// Its class's settings are applied and kept.
    Managed,
    /// It has a class, applied once it has lived `min_age_ms`: a change to a process
    /// about to exit costs more than it can give.
    Young,
    /// Someone else changed a setting schedlab had set: the user wins.
    Released(String),
    /// Not touched (no class, a class with `manage = false`, a kernel thread, …).
    Left(String),
}

/// A process the daemon knows of.
#[derive(Debug)]
struct Proc {
    info: ProcInfo,
    handle: Option<ProcessHandle>,
    class: Option<String>,
    reason: ClassReason,
    state: State,
    first_seen: Instant,
    /// The CPUs schedlab bound it to and why.
    cpus: Option<(Vec<u32>, String)>,
    /// The cpuset cgroup schedlab moved it into.
    cgroup: Option<String>,
    nice: Option<i32>,
    policy: Option<String>,
    /// The RT policy was taken back for using more than its bound this period.
    rt_demoted: bool,
    /// CPU time of its threads at the last planning, and the load since.
    runtime_prev: Ns,
    load: f64,
    /// Its latest decisions.
    decisions: VecDeque<String>,
}

impl Proc {
    fn new(info: ProcInfo) -> Proc {
        let handle = ProcessHandle::open(Pid(info.pid)).ok().filter(|h| h.start_time() == info.start_time);
        Proc {
            info,
            handle,
            class: None,
            reason: ClassReason::Watching,
            state: State::Left("not classified yet".into()),
            first_seen: Instant::now(),
            cpus: None,
            cgroup: None,
            nice: None,
            policy: None,
            rt_demoted: false,
            runtime_prev: 0,
            load: 0.0,
            decisions: VecDeque::new(),
        }
    }
}

/// `CLOCK_MONOTONIC` now, in ns: the clock of the observer's timestamps.
fn monotonic_ns() -> Ns {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as Ns * 1_000_000_000 + ts.tv_nsec as Ns
}

/// The program (executable path) thread `tid` runs, from /proc.
fn program_of(tid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{tid}/exe")).ok().map(|p| p.display().to_string())
}

/// How long the process has lived (from its start time, in clock ticks since boot).
fn age_of(info: &ProcInfo) -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to; sysconf has no preconditions.
    let (now, hz) = unsafe {
        libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts);
        (Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32), libc::sysconf(libc::_SC_CLK_TCK).max(1) as u64)
    };
    now.saturating_sub(Duration::from_millis(info.start_time.saturating_mul(1000) / hz))
}

/// A thread's rank for boosting, read from the kernel.
fn rank_of(tid: Pid) -> Option<Rank> {
    let p = settings::get_policy(tid).ok()?;
    Some(match p.policy {
        Policy::Fifo | Policy::Rr => Rank::Rt { policy: p.policy, priority: p.rt_priority },
        Policy::Idle => Rank::Idle,
        Policy::Other | Policy::Batch => Rank::Fair { nice: settings::get_nice(tid).ok()? },
    })
}

/// The online CPUs (`/sys/devices/system/cpu/online`).
fn online_cpus() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| crate::config::parse_cpu_list(s.trim()).ok())
        .unwrap_or_else(|| (0..std::thread::available_parallelism().map_or(1, |n| n.get() as u32)).collect())
}

/// Dependency edges this strong (wakeups seen) keep two processes on one CPU.
const STRONG_EDGE_WAKEUPS: f64 = 10.0;
/// What a process waiting for `min_age_ms` is said to be doing.
const YOUNG: &str = "young: its class applies once it has lived min_age_ms";
/// Decisions kept per process for `explain`.
const DECISIONS_KEPT: usize = 12;

/// The daemon's state.
pub struct Daemon<'s> {
    config: Config,
    dry_run: bool,
    actuator: Actuator<'s>,
    store_path: std::path::PathBuf,
    observer: Observer,
    /// Per-thread run and sleep statistics, gathered in profiling windows.
    activity: Activity,
    /// The profiling windows, the system-call counts when the current one opened, and
    /// the sched events the observer sends outside windows.
    windows: Windows,
    window_counts: HashMap<(u32, u32), u64>,
    sched_events: SchedEvents,
    deps: DependencyRecorder,
    booster: Option<Booster>,
    slices: Option<Slices>,
    model: Option<Classifier>,
    procs: BTreeMap<u32, Proc>,
    /// Thread → process, for threads seen.
    tgids: HashMap<u32, u32>,
    /// New processes not yet taken in ([`Daemon::admit`]), oldest first.
    arrivals: VecDeque<Arrival>,
    /// Requester threads blocked now with a boost decision pending or in force, and
    /// when they blocked.
    blocked: HashMap<Pid, Ns>,
    /// Threads marked urgent in the observer.
    urgent: HashSet<u32>,
    /// What each boosted provider process had changed for its boost.
    raised: HashMap<u32, Setting>,
    /// (provider, requester) pairs boosted so far: only the first boost is logged.
    boosted_pairs: HashSet<(u32, u32)>,
    /// The cpuset cgroups made for classes that ask for one, by class.
    groups: BTreeMap<String, crate::cgroup::CpusetGroup>,
    cpus: Vec<u32>,
    counters: Stats,
    reaction: LatencyHistogram,
    /// Decisions not yet shown.
    fresh: Vec<String>,
    started: Instant,
    self_pid: u32,
    /// The daemon's executable: schedlab's own processes (a benchmark and its workers)
    /// get no class: a benchmark measures the daemon, it is not its subject. Boosting
    /// still lends them priority like any provider.
    self_exe: String,
}

impl std::fmt::Debug for Daemon<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon").field("procs", &self.procs.len()).finish_non_exhaustive()
    }
}

/// Collects a poll's events.
struct Collect<'a>(&'a mut Vec<Event>);

impl EventSink for Collect<'_> {
    fn event(&mut self, e: &Event) {
        self.0.push(e.clone());
    }
}

impl<'s> Daemon<'s> {
    /// Restores what a previous daemon left in the journal, starts the observer, and
    /// classifies the processes that run now (by rules; the model watches the others).
    pub fn start(store: &'s Store, config: Config, dry_run: bool) -> Result<Daemon<'s>, DaemonError> {
        let mut actuator = Actuator::new(store);
        let report = actuator.restore_all()?;
        if let Some((_, e)) = report.failed.first() {
            return Err(DaemonError::Setup(format!(
                "{} change(s) a previous daemon left could not be undone (first: {e}); \
                 run `schedlab restore` and check the processes",
                report.failed.len()
            )));
        }
        let d = &config.daemon;
        // Only threads that may need their providers boosted are watched; PFS slices and
        // co-location learn from every switch and wake-up, and pay for it.
        let sched_events = if d.slices || d.colocate { SchedEvents::All } else { SchedEvents::Watched };
        let observer = Observer::start(ObserverOptions {
            reader_nice: Some(priority::FALLBACK_NICE),
            sched_events,
            ..ObserverOptions::watched()
        })?;
        let booster = d.boost.then(|| Booster::new(d.boost_max_ms * slices::MS));
        let slices = if d.slices {
            let pfs =
                store.load_pfs().map_err(|e| DaemonError::Setup(format!("reading PFS knowledge: {e}")))?;
            let default_ns = settings::default_slice_ns().unwrap_or(3 * slices::MS);
            Some(Slices::new(slices::params(d.slice_tm_ms, d.slice_x, d.slice_y), pfs, default_ns))
        } else {
            None
        };
        let model = d.model.then(Classifier::shipped);
        let mut deps = DependencyRecorder::new();
        let kept: HashMap<(String, String), u32> = store
            .confidences()
            .map_err(|e| DaemonError::Setup(format!("reading kept confidences: {e}")))?
            .into_iter()
            .map(|c| ((c.program, c.kind), c.confidence))
            .collect();
        deps.detector_mut().set_initial_confidence(Box::new(move |pid, r| {
            kept.get(&(program_of(pid.0)?, r.kind().to_string())).copied()
        }));
        let windows = Windows::new(Duration::from_millis(d.model_after_ms), d.profile_duty_pct);
        let mut daemon = Daemon {
            config,
            dry_run,
            actuator,
            store_path: store.path().to_path_buf(),
            observer,
            activity: Activity::default(),
            windows,
            window_counts: HashMap::new(),
            sched_events,
            deps,
            booster,
            slices,
            model,
            procs: BTreeMap::new(),
            tgids: HashMap::new(),
            arrivals: VecDeque::new(),
            blocked: HashMap::new(),
            urgent: HashSet::new(),
            raised: HashMap::new(),
            boosted_pairs: HashSet::new(),
            groups: BTreeMap::new(),
            cpus: online_cpus(),
            counters: Stats { dry_run, restored_at_start: report.restored, ..Stats::default() },
            reaction: LatencyHistogram::default(),
            fresh: Vec::new(),
            started: Instant::now(),
            self_pid: std::process::id(),
            self_exe: std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
        };
        if report.restored + report.skipped > 0 {
            daemon.note(
                None,
                format!(
                    "restored {} change(s) a previous daemon left ({} of processes gone)",
                    report.restored, report.skipped
                ),
            );
        }
        for pid in crate::process::all_pids().unwrap_or_default() {
            daemon.classify_new(pid, false);
            daemon.watch_if_high(pid);
        }
        daemon.replan();
        Ok(daemon)
    }

    /// Runs until `stop` is set (a signal) or `duration` passes, calling `tick` about
    /// once a second with the statistics and the decisions made since the last call;
    /// then restores everything. Serves the control socket meanwhile.
    pub fn run(
        &mut self,
        socket: &ControlSocket,
        stop: &AtomicBool,
        duration: Option<Duration>,
        mut tick: impl FnMut(&Stats, Vec<String>),
    ) -> Result<(), DaemonError> {
        let replan_every = Duration::from_millis(self.config.daemon.replan_ms);
        let (mut last_plan, mut last_tick, mut last_save) = (Instant::now(), Instant::now(), Instant::now());
        let mut batch = Vec::new();
        let mut elevation = priority::Elevation::raise();
        self.counters.reaction_thread = elevation.describe();
        let result = loop {
            if stop.load(Ordering::Relaxed) || duration.is_some_and(|d| self.started.elapsed() >= d) {
                break Ok(());
            }
            if let Some(why) = elevation.check() {
                self.counters.reaction_thread = why.clone();
                self.note(None, why);
            }
            batch.clear();
            // Woken at once by a watched thread's block; otherwise often enough to end
            // boosts on time while there are any, and to plan.
            let busy =
                !self.arrivals.is_empty() || self.booster.as_ref().is_some_and(|b| b.active().count() > 0);
            let wait = Duration::from_millis(if busy { 50 } else { 200 });
            match self.observer.poll(&mut Collect(&mut batch), wait) {
                Ok(_) => {}
                Err(_) if stop.load(Ordering::Relaxed) => break Ok(()),
                Err(e) => break Err(e.into()),
            }
            let events = std::mem::take(&mut batch);
            self.handle(&events);
            self.admit();
            batch = events;
            self.decide_boosts();
            self.profile();
            if last_plan.elapsed() >= replan_every {
                last_plan = Instant::now();
                self.replan();
            }
            socket.serve(|r| self.answer(r));
            if last_tick.elapsed() >= Duration::from_secs(1) {
                last_tick = Instant::now();
                tick(&self.stats(), std::mem::take(&mut self.fresh));
            }
            if last_save.elapsed() >= Duration::from_secs(30) {
                last_save = Instant::now();
                self.save_knowledge();
            }
        };
        self.save_knowledge();
        result
    }

    /// Undoes every change (boosts, classes, slices) and says how many.
    pub fn shutdown(&mut self) -> Result<crate::actuator::RestoreReport, DaemonError> {
        for tid in std::mem::take(&mut self.urgent) {
            let _ = self.observer.set_watched(tid, false);
        }
        let report = self.actuator.restore_all()?;
        for (class, group) in std::mem::take(&mut self.groups) {
            if let Err(e) = group.remove() {
                self.note(None, format!("cannot remove the cpuset cgroup of class {class}: {e}"));
            }
        }
        Ok(report)
    }

    /// The statistics now.
    pub fn stats(&mut self) -> Stats {
        let mut s = self.counters.clone();
        s.uptime_s = self.started.elapsed().as_secs_f64();
        s.events = self.observer.events();
        s.lost_events = self.observer.lost_events().unwrap_or(0);
        s.managed = self.procs.values().filter(|p| p.state == State::Managed).count();
        s.released = self.procs.values().filter(|p| matches!(p.state, State::Released(_))).count();
        if let Some(b) = &self.booster {
            s.boosts_active = b.active().count();
        }
        s.boost_reaction_us = self.reaction.summary();
        s.programs_with_pfs = self.slices.as_ref().map_or(0, Slices::programs);
        s.profiling = self.windows.is_open();
        let mut rows: Vec<ProcessRow> = self
            .procs
            .values()
            .filter(|p| {
                p.class.is_some()
                    || matches!(p.state, State::Released(_))
                    || self.booster.as_ref().is_some_and(|b| b.is_boosted(p.info.pid))
                    || self.slices.as_ref().is_some_and(|s| s.slice_of(p.info.pid).is_some())
            })
            .map(|p| self.row(p))
            .collect();
        rows.sort_by(|a, b| b.load.total_cmp(&a.load).then(a.pid.cmp(&b.pid)));
        s.processes = rows;
        s
    }

    fn row(&self, p: &Proc) -> ProcessRow {
        let boost = self.booster.as_ref().and_then(|b| b.on_provider(p.info.pid)).map(|b| BoostRow {
            requester: b.requester.0,
            requester_comm: self.comm_of(b.requester.0),
            resource: b.resource.to_string(),
            confidence: b.confidence,
            chain: b.chain.iter().map(|p| p.0).collect(),
            inherited: b.rank.describe(),
            age_ms: monotonic_ns().saturating_sub(b.since) as f64 / 1e6,
        });
        ProcessRow {
            pid: p.info.pid,
            comm: p.info.comm.clone(),
            class: p.class.clone(),
            reason: stats::reason_json(&p.reason),
            state: match &p.state {
                State::Managed => "managed".into(),
                State::Young => YOUNG.into(),
                State::Released(why) => format!("released: {why}"),
                State::Left(why) => format!("left alone: {why}"),
            },
            cpus: p.cpus.as_ref().map(|(c, _)| CpuSet::new(c.iter().map(|&c| c as usize)).to_string()),
            placement: p.cpus.as_ref().map(|(_, why)| why.clone()),
            nice: p.nice,
            policy: p.policy.clone(),
            boost,
            slice: self.slices.as_ref().and_then(|s| s.slice_of(p.info.pid)).cloned(),
            load: p.load,
        }
    }

    fn comm_of(&self, tid: u32) -> String {
        let tgid = self.tgids.get(&tid).copied().unwrap_or(tid);
        self.procs
            .get(&tgid)
            .map(|p| p.info.comm.clone())
            .or_else(|| self.observer.task(tid).map(|t| t.comm.clone()))
            .unwrap_or_default()
    }

    /// Answers a control request.
    fn answer(&mut self, request: Result<Request, String>) -> serde_json::Value {
        let value = match request {
            Ok(Request::Stats) => serde_json::to_value(self.stats()),
            Ok(Request::Explain { pid }) => match self.explain(pid) {
                Some(e) => serde_json::to_value(e),
                None => {
                    return serde_json::json!({ "error": format!("the daemon does not know process {pid}") })
                }
            },
            Err(e) => return serde_json::json!({ "error": e }),
        };
        value.unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
    }

    /// Everything decided about process `pid` (or the process of thread `pid`); a
    /// process not yet taken in says so.
    pub fn explain(&self, pid: u32) -> Option<Explanation> {
        let tgid = self.tgids.get(&pid).copied().unwrap_or(pid);
        let arrived;
        let p = match self.procs.get(&tgid) {
            Some(p) => p,
            None if self.arrivals.iter().any(|a| a.pid == tgid) => {
                let mut p = Proc::new(ProcInfo::read(tgid).ok()?);
                p.reason = ClassReason::Unclassified { why: "new: not taken in yet".into() };
                p.state = State::Left(format!(
                    "new: taken in once it has lived min_age_ms ({} ms)",
                    self.config.daemon.min_age_ms
                ));
                arrived = p;
                &arrived
            }
            None => return None,
        };
        let tgid_of = |t: u32| self.tgids.get(&t).copied().unwrap_or(t);
        let dependencies = self
            .deps
            .dependencies()
            .into_iter()
            .filter(|d| tgid_of(d.requester.0) == tgid || tgid_of(d.provider.0) == tgid)
            .take(10)
            .map(|d| DependencyRow {
                requester: d.requester.0,
                provider: d.provider.0,
                resource: d.resource.to_string(),
                confidence: d.confidence,
                wakeups: d.wakeups,
            })
            .collect();
        let program = if p.info.exe.is_empty() { p.info.comm.clone() } else { p.info.exe.clone() };
        Some(Explanation {
            process: self.row(p),
            dependencies,
            pfs_bursts_ns: self.slices.as_ref().map(|s| s.bursts_of(&program)).unwrap_or_default(),
            decisions: p.decisions.iter().cloned().collect(),
        })
    }

    /// Records a decision (for the log, the live table and `explain`).
    fn note(&mut self, pid: Option<u32>, text: String) {
        self.note_as(pid, text, true);
    }

    /// [`Daemon::note`] if `loud`, else [`Daemon::note_quietly`].
    fn note_as(&mut self, pid: Option<u32>, text: String, loud: bool) {
        let line = self.note_quietly(pid, text);
        if loud {
            self.fresh.push(line);
        }
    }

    /// Records a decision for `explain` only: boosts come and go hundreds of times a
    /// second; the log shows the first boost of each provider for each requester.
    fn note_quietly(&mut self, pid: Option<u32>, text: String) -> String {
        let line = format!("[{:8.3}s] {text}", self.started.elapsed().as_secs_f64());
        if let Some(p) = pid.and_then(|pid| self.procs.get_mut(&pid)) {
            if p.decisions.len() == DECISIONS_KEPT {
                p.decisions.pop_front();
            }
            p.decisions.push_back(line.clone());
        }
        line
    }

    fn name(&self, pid: u32) -> String {
        format!("{pid} ({})", self.comm_of(pid))
    }

    // ---------------------------------------------------------------- events

    fn handle(&mut self, events: &[Event]) {
        // Where each thread is last woken in this batch: a block before that is over
        // already, and not worth a boost.
        let mut last_wakeup: HashMap<Pid, usize> = HashMap::new();
        if self.booster.is_some() {
            for (i, e) in events.iter().enumerate() {
                if let EventKind::Wakeup { wakee, .. } = e.kind {
                    last_wakeup.insert(wakee, i);
                }
            }
        }
        for (i, e) in events.iter().enumerate() {
            self.activity.event(e);
            self.deps.event(e);
            if let Some(s) = &mut self.slices {
                s.event(e);
            }
            match &e.kind {
                EventKind::Exec { tgid, pid, .. } => {
                    self.tgids.insert(pid.0, tgid.0);
                    self.arrivals.push_back(Arrival { pid: tgid.0, parent: None, seen: Instant::now() });
                    self.watch_if_high(tgid.0);
                }
                EventKind::Fork { parent, child, thread } => {
                    let parent_tgid = self.tgid(parent.0);
                    if *thread {
                        self.tgids.insert(child.0, parent_tgid);
                        if self.urgent.contains(&parent.0) {
                            self.mark_urgent(child.0);
                        }
                    } else {
                        self.tgids.insert(child.0, child.0);
                        let seen = Instant::now();
                        self.arrivals.push_back(Arrival { pid: child.0, parent: Some(parent_tgid), seen });
                        self.watch_if_high(child.0);
                    }
                }
                EventKind::Exit { pid, .. } => self.exited(*pid),
                EventKind::Block { pid, .. }
                    if self.booster.is_some() && last_wakeup.get(pid).is_none_or(|&w| w < i) =>
                {
                    self.blocked.insert(*pid, e.time);
                    self.decide_boost(*pid, e.time);
                }
                EventKind::Switch { prev, prev_state: PrevState::Blocked, .. } if self.slices.is_some() => {
                    self.slice_after_block(*prev);
                }
                EventKind::Wakeup { wakee, .. } if self.blocked.remove(wakee).is_some() => {
                    self.end_boost(*wakee, Ended::Wakeup);
                }
                _ => {}
            }
        }
    }

    /// Takes in the new processes (execs and forks) that have lived `min_age_ms`: only
    /// then is /proc read, a handle opened and a class looked up, so that the hundreds
    /// of short programs a build or a shell loop runs a second cost one queue entry each.
    /// A process gone by then is dropped; a pid reused since is read as the process it
    /// is now (and waits for its own age before any change).
    fn admit(&mut self) {
        let min_age = Duration::from_millis(self.config.daemon.min_age_ms);
        while self.arrivals.front().is_some_and(|a| a.seen.elapsed() >= min_age) {
            let Some(a) = self.arrivals.pop_front() else { break };
            match a.parent {
                Some(parent) if crate::process::ProcInfo::read(a.pid).is_ok_and(|i| i.ppid == parent) => {
                    self.forked(parent, a.pid)
                }
                Some(_) => {}
                None => self.classify_new(a.pid, true),
            }
        }
    }

    fn tgid(&mut self, tid: u32) -> u32 {
        if let Some(&t) = self.tgids.get(&tid) {
            return t;
        }
        let t = self
            .observer
            .task(tid)
            .map(|t| t.tgid)
            .filter(|&t| t != 0)
            .or_else(|| crate::process::tgid_of(tid))
            .unwrap_or(tid);
        self.tgids.insert(tid, t);
        t
    }

    /// A process to know of: a new one (exec, fork) or one running at start. Rules
    /// classify it now; the model later.
    fn classify_new(&mut self, pid: u32, exec: bool) {
        let Ok(info) = ProcInfo::read(pid) else { return };
        let parent_comm = ProcInfo::read(info.ppid).map(|p| p.comm).unwrap_or_default();
        let matched = classes::by_rules(&self.config, &info, &parent_comm);
        let existing = self.procs.remove(&pid).filter(|p| p.info.start_time == info.start_time);
        let mut p = existing.unwrap_or_else(|| Proc::new(info.clone()));
        p.info = info;
        let ours = pid == self.self_pid || (!self.self_exe.is_empty() && p.info.exe == self.self_exe);
        if ours || pid == 1 || (p.info.kthread && matched.is_none()) {
            p.reason = ClassReason::KernelThread;
            p.state =
                State::Left(if p.info.kthread { "kernel thread" } else { "init or schedlab's own" }.into());
            if !p.info.kthread {
                p.reason = ClassReason::Unclassified { why: p.state_text() };
            }
            self.procs.insert(pid, p);
            return;
        }
        let rule_changed = match (&matched, &p.reason) {
            (Some((_, r)), old) => r != old,
            (None, ClassReason::Rule { .. }) => true,
            _ => false,
        };
        match matched {
            Some((class, reason)) => {
                p.class = Some(class);
                p.reason = reason;
            }
            None if exec || p.class.is_none() => {
                p.class = None;
                p.first_seen = Instant::now();
                p.reason = if self.model.is_some() {
                    ClassReason::Watching
                } else {
                    ClassReason::Unclassified { why: "no rule matches and the model is off".into() }
                };
                p.state = State::Left(stats::reason_text(&stats::reason_json(&p.reason)));
            }
            None => {}
        }
        self.procs.insert(pid, p);
        if rule_changed || exec {
            // Applied now if it is old enough (a process running at start, a rule
            // that changed), else at the first planning after `min_age_ms`; placed at
            // the next planning, not per exec (a build runs hundreds a second).
            self.apply_class(pid);
        }
    }

    /// A new process above nice 0 (or real time) may need its providers boosted from
    /// its first block: its main thread is watched at once (two system calls, no /proc
    /// read, unlike taking it in).
    /// Kernel threads (kworker/*H run at nice −20), pid 1 and the daemon are not.
    fn watch_if_high(&mut self, pid: u32) {
        if self.booster.is_none() || pid == 1 || pid == self.self_pid {
            return;
        }
        if rank_of(Pid(pid)).is_some_and(|r| r.outranks(Rank::Fair { nice: 0 }))
            && ProcInfo::read(pid).is_ok_and(|i| !i.kthread)
        {
            self.mark_urgent(pid);
        }
    }

    fn mark_urgent(&mut self, tid: u32) {
        if self.urgent.insert(tid) {
            let _ = self.observer.set_watched(tid, true);
        }
    }

    fn forked(&mut self, parent: u32, child: u32) {
        let Ok(info) = ProcInfo::read(child) else { return };
        let mut p = Proc::new(info);
        let parent_proc = self.procs.get(&parent);
        let inherit = parent_proc
            .filter(|pp| matches!(pp.state, State::Managed | State::Young))
            .map(|pp| (pp.class.clone(), pp.info.key()));
        match inherit {
            Some((class, parent_key)) => {
                p.class = class;
                p.reason = ClassReason::Inherited { parent };
                p.state = State::Managed;
                if let (false, Some(h)) = (self.dry_run, &p.handle) {
                    if let Err(e) = self.actuator.adopt(h, parent_key) {
                        p.state = State::Left(format!("cannot take over from its parent: {e}"));
                    }
                }
                // What it has is what the kernel copied at the fork, which may be from
                // before the parent's own change (a fork right after its exec): the
                // class is applied again below (no-op changes are skipped) and the plan
                // binds it.
            }
            None => {
                p.reason = if self.model.is_some() {
                    ClassReason::Watching
                } else {
                    ClassReason::Unclassified { why: "no rule matches and the model is off".into() }
                };
                p.state = State::Left(stats::reason_text(&stats::reason_json(&p.reason)));
            }
        }
        let managed = p.state == State::Managed;
        self.procs.insert(child, p);
        if managed {
            self.apply_class(child);
        }
    }

    fn exited(&mut self, tid: Pid) {
        self.blocked.remove(&tid);
        self.end_boost(tid, Ended::Wakeup);
        if self.urgent.remove(&tid.0) {
            let _ = self.observer.set_watched(tid.0, false);
        }
        let tgid = self.tgids.remove(&tid.0).unwrap_or(tid.0);
        self.activity.remove(tid);
        if tgid != tid.0 {
            return;
        }
        if let Some(p) = self.procs.remove(&tgid) {
            let _ = self.actuator.forget(p.info.key());
        }
        if let Some(b) = &mut self.booster {
            b.provider_gone(tgid);
        }
        self.raised.remove(&tgid);
        if let Some(s) = &mut self.slices {
            s.forget(tgid);
        }
    }

    // ---------------------------------------------------------------- classes

    /// Applies the class's nice value and policy (CPUs come from the plan).
    fn apply_class(&mut self, pid: u32) {
        let Some(p) = self.procs.get(&pid) else { return };
        let Some(class_name) = p.class.clone() else { return };
        let why = format!("class {class_name} ({})", stats::reason_text(&stats::reason_json(&p.reason)));
        let Some(class) = self.config.classes.get(&class_name).cloned() else { return };
        if !class.manage {
            self.set_state(pid, State::Left(format!("class {class_name} has manage = false")));
            return;
        }
        if matches!(p.state, State::Released(_)) {
            return;
        }
        if age_of(&p.info) < Duration::from_millis(self.config.daemon.min_age_ms) {
            self.set_state(pid, State::Young);
            return;
        }
        self.set_state(pid, State::Managed);
        if let Some(nice) = class.nice {
            self.change(pid, Change::Nice(i32::from(nice)), &why);
        }
        if let Some(policy) = class.policy {
            let (policy, prio) = match policy {
                ClassPolicy::Other => (Policy::Other, 0),
                ClassPolicy::Batch => (Policy::Batch, 0),
                ClassPolicy::Idle => (Policy::Idle, 0),
                ClassPolicy::Fifo { priority, .. } => (Policy::Fifo, u32::from(priority)),
                ClassPolicy::Rr { priority, .. } => (Policy::Rr, u32::from(priority)),
            };
            self.change(pid, Change::Policy(policy, prio), &why);
        }
    }

    fn set_state(&mut self, pid: u32, state: State) {
        if let Some(p) = self.procs.get_mut(&pid) {
            p.state = state;
        }
    }

    /// Opens and closes the profiling windows ([`windows`]); at a window's end, the
    /// model classifies the processes that lived through it.
    fn profile(&mut self) {
        if self.model.is_none() {
            return;
        }
        let min_age = Duration::from_millis(self.config.daemon.min_age_ms);
        let wanted =
            self.procs.values().any(|p| p.reason == ClassReason::Watching && age_of(&p.info) >= min_age);
        let turn = self.windows.tick(Instant::now(), wanted);
        let hooked = match turn {
            Some(Turn::Open) => {
                self.window_counts = self.observer.syscall_counts().unwrap_or_default();
                self.activity = Activity::default();
                self.observer
                    .set_syscall_hook(true)
                    .and_then(|()| self.observer.set_sched_events(SchedEvents::All))
            }
            Some(Turn::Close(since)) => {
                self.classify_by_model(since);
                self.observer
                    .set_syscall_hook(false)
                    .and_then(|()| self.observer.set_sched_events(self.sched_events))
            }
            None => Ok(()),
        };
        if let Err(e) = hooked {
            self.note(None, format!("profiling window: {e}"));
        }
    }

    /// Classifies with the model the processes still watched that lived through the
    /// window that began at `since`, from what they did in it.
    fn classify_by_model(&mut self, since: Instant) {
        let Some(model) = &self.model else { return };
        let due: Vec<u32> = self
            .procs
            .iter()
            .filter(|(_, p)| p.reason == ClassReason::Watching && p.first_seen <= since)
            .map(|(&pid, _)| pid)
            .collect();
        if due.is_empty() {
            return;
        }
        let counts = self.observer.syscall_counts().unwrap_or_default();
        let mut by_tgid: HashMap<u32, ProcessProfile> = HashMap::new();
        for (&(tgid, nr), &n) in &counts {
            let before = self.window_counts.get(&(tgid, nr)).copied().unwrap_or(0);
            if let (true, Some(name)) = (due.contains(&tgid), schedlab_model::syscall_name(nr)) {
                by_tgid.entry(tgid).or_default().syscalls.insert(name.to_string(), n.saturating_sub(before));
            }
        }
        for (tid, t) in &self.activity.threads {
            let tgid = self.tgids.get(&tid.0).copied().unwrap_or(tid.0);
            if let Some(profile) = due.contains(&tgid).then(|| by_tgid.entry(tgid).or_default()) {
                profile.voluntary_switches += t.nvcsw;
                profile.involuntary_switches += t.nivcsw;
                profile.run_bursts_ns.extend_from_slice(&t.bursts);
                profile.runtime_ns += t.runtime;
                profile.sleep_ns += t.sleep;
            }
        }
        let mut predicted = Vec::new();
        for pid in due {
            let Some(p) = self.procs.get(&pid) else { continue };
            let mut profile = by_tgid.remove(&pid).unwrap_or_default();
            profile.name = p.info.comm.clone();
            profile.window_secs = since.elapsed().as_secs_f64();
            predicted.push((pid, model.predict(&profile.features())));
        }
        let least = self.config.daemon.model_confidence.unwrap_or_else(|| model.min_confidence());
        for (pid, (label, confidence)) in predicted {
            let class = label.to_lowercase();
            let known = self.config.classes.contains_key(&class);
            let Some(p) = self.procs.get_mut(&pid) else { continue };
            if confidence < least {
                p.reason = ClassReason::Unclassified {
                    why: format!(
                        "the model says {label} with confidence {confidence:.2}, below model_confidence {least:.2}"
                    ),
                };
                p.state = State::Left("the model is not sure enough".into());
            } else if known {
                p.class = Some(class);
                p.reason = ClassReason::Model { label, confidence };
                self.apply_class(pid);
            } else {
                p.reason = ClassReason::Unclassified {
                    why: format!("the model says {label}, which names no class"),
                };
                p.state = State::Left("no class".into());
            }
        }
    }

    // ---------------------------------------------------------------- planning

    /// Every planning period: loads, the model, users' own changes, real-time bounds,
    /// and the CPU plan.
    fn replan(&mut self) {
        let period = self.config.daemon.replan_ms as f64 * 1e6;
        // Load from /proc, not from events: the observer sends no switch of a thread it
        // does not watch. Only processes schedlab may act on are read.
        for (&pid, p) in &mut self.procs {
            if p.class.is_none() && !self.raised.contains_key(&pid) {
                continue;
            }
            let r = crate::process::cpu_time_ns(Pid(pid)).unwrap_or(p.runtime_prev);
            // The first reading is the baseline: what it used before is no load now.
            p.load = if p.runtime_prev == 0 { 0.0 } else { r.saturating_sub(p.runtime_prev) as f64 / period };
            p.runtime_prev = r;
        }
        let young: Vec<u32> =
            self.procs.iter().filter(|(_, p)| p.state == State::Young).map(|(&pid, _)| pid).collect();
        for pid in young {
            self.apply_class(pid);
        }
        self.check_users_changes();
        self.bound_realtime();
        self.place();
    }

    /// Releases processes whose settings someone else changed; forgets those gone.
    fn check_users_changes(&mut self) {
        let mut gone = Vec::new();
        let mut released = Vec::new();
        for (&pid, p) in &self.procs {
            let Some(h) = &p.handle else { continue };
            if self.raised.contains_key(&pid) || !self.actuator.changed_externally(h) {
                continue;
            }
            if h.is_same() {
                released.push(pid);
            } else {
                gone.push(pid);
            }
        }
        for pid in gone {
            if let Some(p) = self.procs.remove(&pid) {
                let _ = self.actuator.forget(p.info.key());
            }
        }
        for pid in released {
            let Some(p) = self.procs.get_mut(&pid) else { continue };
            if let Some(h) = &p.handle {
                let _ = self.actuator.release(h);
            }
            let now = (settings::get_nice(Pid(pid)).ok(), crate::settings::get_affinity(Pid(pid)).ok());
            let why = format!(
                "someone else changed it (nice now {}, CPUs {}); schedlab stops managing it",
                now.0.map_or("?".into(), |n| n.to_string()),
                now.1.map_or("?".into(), |c| c.to_string())
            );
            p.state = State::Released(why.clone());
            (p.cpus, p.nice, p.policy) = (None, None, None);
            let name = self.name(pid);
            self.note(Some(pid), format!("{name}: {why}"));
        }
    }

    /// Takes a real-time policy back from a process that used more CPU than its class
    /// allows per second (`rt_max_ms`, measured over the planning period); gives it back
    /// once a period under SCHED_OTHER shows it within the bound again. A runaway
    /// real-time process thus holds the CPU for one planning period at most (and the
    /// kernel's own throttling, 95 %, still applies within it).
    fn bound_realtime(&mut self) {
        let mut over = Vec::new();
        let mut back = Vec::new();
        for (&pid, p) in &self.procs {
            let Some(class) = p.class.as_ref().and_then(|c| self.config.classes.get(c)) else { continue };
            let (
                Some(ClassPolicy::Fifo { max_ms_per_s, .. } | ClassPolicy::Rr { max_ms_per_s, .. }),
                State::Managed,
            ) = (class.policy, &p.state)
            else {
                continue;
            };
            let over_bound = p.load * 1000.0 > f64::from(max_ms_per_s);
            if p.rt_demoted && !over_bound {
                back.push(pid);
            } else if !p.rt_demoted && over_bound {
                over.push((pid, max_ms_per_s));
            }
        }
        for (pid, max) in over {
            let why = format!("used more than its bound of {max} ms of CPU per second");
            self.change(pid, Change::Policy(Policy::Other, 0), &why);
            if let Some(p) = self.procs.get_mut(&pid) {
                p.rt_demoted = true;
            }
        }
        for pid in back {
            if let Some(p) = self.procs.get_mut(&pid) {
                p.rt_demoted = false;
            }
            self.apply_class(pid);
        }
    }

    /// Computes the CPU plan and binds the processes whose CPUs change.
    /// Only classes with a plan take part: an unbound class's processes are placed by
    /// the kernel (and an `isolate` class keeps only bound classes off its CPUs).
    fn place(&mut self) {
        let classes: Vec<ClassPlan> = self
            .config
            .classes
            .values()
            .filter(|c| c.manage)
            .filter_map(|c| {
                Some(ClassPlan { name: c.name.clone(), cpus: c.cpus.clone(), plan: c.plan.clone()? })
            })
            .collect();
        if classes.is_empty() {
            return;
        }
        let tasks: Vec<PlanTask> = self
            .procs
            .values()
            .filter(|p| p.state == State::Managed)
            .filter_map(|p| Some(PlanTask { id: p.info.pid, class: p.class.clone()?, load: p.load }))
            .filter(|t| classes.iter().any(|c| c.name == t.class))
            .collect();
        let edges: Vec<Edge> = if self.config.daemon.colocate {
            let tgid_of = |t: u32| self.tgids.get(&t).copied().unwrap_or(t);
            self.deps
                .dependencies()
                .into_iter()
                .map(|d| Edge {
                    a: tgid_of(d.requester.0),
                    b: tgid_of(d.provider.0),
                    strength: d.wakeups as f64,
                })
                .filter(|e| e.a != e.b)
                .collect()
        } else {
            Vec::new()
        };
        let input = PlanInput {
            cpus: &self.cpus,
            classes: &classes,
            tasks: &tasks,
            edges: &edges,
            min_edge_strength: STRONG_EDGE_WAKEUPS,
            max_cpu_load: 1.0,
        };
        let placements = match distribution::plan(&input) {
            Ok(p) => p,
            Err(e) => {
                self.note(None, format!("no CPU plan: {e}"));
                return;
            }
        };
        for pl in placements {
            if !self.confine(pl.id, &pl.class) {
                continue;
            }
            let why = format!(
                "{} plan of class {}: {}",
                plan_name(&pl.reason),
                pl.class,
                describe_placement(&pl.reason)
            );
            let Some(p) = self.procs.get_mut(&pl.id) else { continue };
            if let Some((cpus, reason)) = &mut p.cpus {
                if *cpus == pl.cpus {
                    // The same CPUs, perhaps for another reason now (a new dependency):
                    // `explain` gives the current one.
                    *reason = why;
                    continue;
                }
            }
            if self.change(pl.id, Change::Cpus(pl.cpus.clone()), &why) {
                if let Some(p) = self.procs.get_mut(&pl.id) {
                    p.cpus = Some((pl.cpus, why));
                }
            }
        }
    }

    /// For a class with `cpuset = true`, moves the process into the class's cpuset
    /// cgroup (made on first use with the class's CPUs). True if the process may be
    /// bound now (no cpuset wanted, or it is in the group).
    fn confine(&mut self, pid: u32, class_name: &str) -> bool {
        let Some(class) = self.config.classes.get(class_name) else { return false };
        if !class.cpuset {
            return true;
        }
        if !self.groups.contains_key(class_name) && !self.dry_run {
            let cpus = class.cpus.clone().unwrap_or_else(|| self.cpus.clone());
            let set = CpuSet::new(cpus.iter().map(|&c| c as usize));
            match crate::cgroup::CpusetGroup::create(class_name, &set) {
                Ok(g) => {
                    self.groups.insert(class_name.to_string(), g);
                }
                Err(e) => {
                    self.note(None, format!("cannot make the cpuset cgroup of class {class_name}: {e}"));
                    return false;
                }
            }
        }
        let path = match self.groups.get(class_name) {
            Some(g) => g.path(),
            None => format!("/schedlab/{class_name}"),
        };
        if self.procs.get(&pid).is_some_and(|p| p.cgroup.as_deref() == Some(path.as_str())) {
            return true;
        }
        let why = format!("class {class_name} asks for a cpuset cgroup");
        if self.change(pid, Change::Cgroup(path.clone()), &why) {
            if let Some(p) = self.procs.get_mut(&pid) {
                p.cgroup = Some(path);
                // Joining a cpuset resets the affinity (cgroup v1): bind again.
                p.cpus = None;
            }
            return true;
        }
        false
    }

    // ---------------------------------------------------------------- boosting

    /// Decides the boosts in force again: confidences change, boosts expire, providers
    /// block. Only requesters with a boost in force are decided again (a machine has hundreds
    /// of threads blocked for good); one without a boost when it blocked is decided again
    /// at its next block.
    fn decide_boosts(&mut self) {
        let Some(booster) = &self.booster else { return };
        let boosted: Vec<(Pid, Ns)> = booster
            .requesters()
            .into_iter()
            .filter_map(|p| self.blocked.get(&p).map(|&since| (p, since)))
            .collect();
        for (pid, since) in boosted {
            self.decide_boost(pid, since);
        }
    }

    fn decide_boost(&mut self, requester: Pid, since: Ns) {
        let Some(booster) = &mut self.booster else { return };
        self.deps.advance_to(monotonic_ns().max(since));
        let tgids = &self.tgids;
        let observer = &self.observer;
        let tgid_of = |p: Pid| -> Option<u32> {
            tgids.get(&p.0).copied().or_else(|| observer.task(p.0).map(|t| t.tgid).filter(|&t| t != 0))
        };
        let (actions, ended) =
            booster.decide(self.deps.detector(), requester, since, monotonic_ns(), &rank_of, &tgid_of);
        if booster.active().any(|b| b.requester == requester) {
            self.mark_urgent(requester.0);
        }
        for (b, why) in ended {
            self.counters.boosts_expired += u64::from(why == Ended::Expired);
            if why == Ended::Expired {
                let name = self.name(b.provider_tgid);
                self.note(Some(b.provider_tgid), format!("{name}: boost for {} expired", b.requester.0));
            }
        }
        self.boost_actions(actions, since);
    }

    fn end_boost(&mut self, requester: Pid, why: Ended) {
        let Some(booster) = &mut self.booster else { return };
        let (actions, ended) = booster.woke(requester);
        if ended.is_some() && why == Ended::Wakeup {
            self.counters.boosts_ended_by_wakeup += 1;
        }
        self.boost_actions(actions, 0);
    }

    fn boost_actions(&mut self, actions: Vec<Action>, since: Ns) {
        for a in actions {
            match a {
                Action::Raise { tgid, rank } => {
                    let b = self.booster.as_ref().and_then(|b| b.on_provider(tgid)).cloned();
                    let why = b.as_ref().map_or_else(String::new, |b| {
                        format!(
                            "provider of {} blocked on {} (confidence {}), inherits {}",
                            self.name(b.requester.0),
                            b.resource,
                            b.confidence,
                            rank.describe()
                        )
                    });
                    self.ensure_known(tgid);
                    let change = match rank {
                        Rank::Rt { policy, priority } => Change::Policy(policy, priority),
                        Rank::Fair { nice } => Change::Nice(nice),
                        Rank::Idle => continue,
                    };
                    let setting = change.setting();
                    let first = b
                        .as_ref()
                        .is_some_and(|b| self.boosted_pairs.insert((b.provider_tgid, b.requester.0)));
                    // Held: the provider is there by itself; nothing to lower later.
                    if self.change_noted(tgid, change, &why, first) == Outcome::Made {
                        self.raised.insert(tgid, setting);
                        self.counters.boosts_total += 1;
                        if since > 0 {
                            self.reaction.record(monotonic_ns().saturating_sub(since));
                        }
                    }
                }
                Action::Lower { tgid } => {
                    let Some(setting) = self.raised.remove(&tgid) else { continue };
                    if self.dry_run {
                        let name = self.name(tgid);
                        self.note_quietly(Some(tgid), format!("would end the boost of {name}"));
                        continue;
                    }
                    let Some(h) = self.procs.get(&tgid).and_then(|p| p.handle.as_ref()) else { continue };
                    if let Err(e) = self.actuator.revert(h, setting) {
                        self.counters.failed_changes += 1;
                        let name = self.name(tgid);
                        self.note(Some(tgid), format!("{name}: ending its boost failed: {e}"));
                    }
                }
            }
        }
    }

    /// Makes sure a process (a provider no class covers) is known, with a handle.
    fn ensure_known(&mut self, tgid: u32) {
        if self.procs.get(&tgid).is_some_and(|p| p.handle.is_some()) {
            return;
        }
        if let Ok(info) = ProcInfo::read(tgid) {
            let mut p = Proc::new(info);
            p.reason = ClassReason::Unclassified { why: "a provider, boosted".into() };
            p.state = State::Left("a provider (boosted only)".into());
            self.procs.insert(tgid, p);
        }
    }

    // ---------------------------------------------------------------- slices

    fn slice_after_block(&mut self, tid: Pid) {
        let tgid = self.tgid(tid.0);
        if tgid != tid.0 || tgid == self.self_pid {
            return;
        }
        let program = || {
            std::fs::read_link(format!("/proc/{}/exe", tid.0))
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let Some(slice) = self.slices.as_mut().and_then(|s| s.after_block(tid, program)) else { return };
        if self.procs.get(&tgid).is_some_and(|p| matches!(p.state, State::Released(_))) {
            return;
        }
        self.ensure_known(tgid);
        let why = match slice {
            0 => "PFS: the next burst does not end within slice + T_m; default slice".to_string(),
            ns => format!("PFS: the next burst ends in {:.2} ms, within slice + T_m", ns as f64 / 1e6),
        };
        if self.change(tgid, Change::Slice(slice), &why) {
            if slice == 0 {
                self.counters.slices_reset += 1;
            } else {
                self.counters.slices_set += 1;
            }
        }
    }

    /// Keeps what was learned in the store: every program's PFS, and SWAP's confidence
    /// per provider program and resource kind (the mean over its provider entries now).
    fn save_knowledge(&mut self) {
        let Ok(mut store) = Store::open(&self.store_path) else { return };
        if let Some(s) = &self.slices {
            let _ = store.save_pfs(s.store());
        }
        let mut sums: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
        for obj in self.deps.detector().table().iter() {
            for e in obj.providers() {
                if let Some(program) = program_of(e.pid.0) {
                    let s = sums.entry((program, obj.resource().kind().to_string())).or_default();
                    s.0 += u64::from(e.confidence.value());
                    s.1 += 1;
                }
            }
        }
        let rows: Vec<ProgramConfidence> = sums
            .into_iter()
            .map(|((program, kind), (sum, n))| ProgramConfidence {
                program,
                kind,
                confidence: (sum / n) as u32,
            })
            .collect();
        let _ = store.save_confidences(&rows);
    }

    // ---------------------------------------------------------------- acting

    /// Applies one change to process `pid` through the journaled actuator (or prints it
    /// in a dry run); true if applied. Failures are noted and counted; a process that is
    /// gone is forgotten.
    fn change(&mut self, pid: u32, change: Change, why: &str) -> bool {
        self.change_noted(pid, change, why, true) != Outcome::Failed
    }

    /// [`Daemon::change`], the decision logged (`loud`) or only kept for `explain`.
    fn change_noted(&mut self, pid: u32, change: Change, why: &str, loud: bool) -> Outcome {
        if change.holds(pid) {
            // Nothing to change (and nothing to journal): the process has it already.
            change.record(self.procs.get_mut(&pid));
            return Outcome::Held;
        }
        let name = self.name(pid);
        let what = change.describe();
        if self.dry_run {
            self.counters.changes += 1;
            self.note_as(Some(pid), format!("would {what} of {name}: {why}"), loud);
            change.record(self.procs.get_mut(&pid));
            return Outcome::Made;
        }
        let Some(h) = self.procs.get(&pid).and_then(|p| p.handle.as_ref()) else { return Outcome::Failed };
        let result = match &change {
            Change::Nice(n) => self.actuator.set_nice(h, *n),
            Change::Policy(p, prio) => {
                let runtime = self.slices.as_ref().and_then(|s| s.slice_of(pid)).map_or(0, |s| s.slice_ns);
                self.actuator.set_policy(h, *p, *prio, if p.is_rt() { 0 } else { runtime })
            }
            Change::Slice(ns) => {
                let current = settings::get_policy(Pid(pid)).map(|v| v.policy).unwrap_or(Policy::Other);
                if current.is_rt() {
                    return Outcome::Failed;
                }
                self.actuator.set_policy(h, current, 0, *ns)
            }
            Change::Cpus(cpus) => {
                self.actuator.set_affinity(h, &CpuSet::new(cpus.iter().map(|&c| c as usize)))
            }
            Change::Cgroup(path) => self.actuator.set_cgroup(h, path),
        };
        match result {
            Ok(()) => {
                self.counters.changes += 1;
                self.note_as(Some(pid), format!("{what} of {name}: {why}"), loud);
                change.record(self.procs.get_mut(&pid));
                Outcome::Made
            }
            Err(ActuatorError::NotSame(_)) => {
                if let Some(p) = self.procs.remove(&pid) {
                    let _ = self.actuator.forget(p.info.key());
                }
                Outcome::Failed
            }
            Err(e) => {
                self.counters.failed_changes += 1;
                self.note(Some(pid), format!("cannot {what} of {name}: {e}"));
                Outcome::Failed
            }
        }
    }
}

/// What became of a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// The process had it already: nothing was journaled.
    Held,
    /// Journaled and applied (or, in a dry run, printed).
    Made,
    /// Not applied (noted and counted, or the process is gone).
    Failed,
}

/// One change the daemon makes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Change {
    Nice(i32),
    Policy(Policy, u32),
    Slice(u64),
    Cpus(Vec<u32>),
    Cgroup(String),
}

impl Change {
    fn setting(&self) -> Setting {
        match self {
            Change::Nice(_) => Setting::Nice,
            Change::Policy(..) | Change::Slice(_) => Setting::Policy,
            Change::Cpus(_) => Setting::Affinity,
            Change::Cgroup(_) => Setting::Cgroup,
        }
    }

    fn describe(&self) -> String {
        match self {
            Change::Nice(n) => format!("set nice {n}"),
            Change::Policy(p, 0) => format!("set policy {}", p.name()),
            Change::Policy(p, prio) => format!("set policy {} {prio}", p.name()),
            Change::Slice(0) => "reset the slice".into(),
            Change::Slice(ns) => format!("set the slice to {:.2} ms", *ns as f64 / 1e6),
            Change::Cpus(c) => format!("bind to CPUs {}", CpuSet::new(c.iter().map(|&c| c as usize))),
            Change::Cgroup(path) => format!("move into cpuset cgroup {path}"),
        }
    }

    /// Whether process `pid` has this setting already (its main thread).
    fn holds(&self, pid: u32) -> bool {
        let tid = Pid(pid);
        match self {
            Change::Nice(n) => settings::get_nice(tid).is_ok_and(|now| now == *n),
            Change::Policy(p, prio) => {
                settings::get_policy(tid).is_ok_and(|now| now.policy == *p && now.rt_priority == *prio)
            }
            Change::Slice(ns) => settings::get_policy(tid).is_ok_and(|now| now.sched_runtime_ns == *ns),
            Change::Cpus(c) => {
                settings::get_affinity(tid).is_ok_and(|now| now == CpuSet::new(c.iter().map(|&c| c as usize)))
            }
            Change::Cgroup(path) => crate::cgroup::current_cpuset_cgroup(tid).is_ok_and(|now| now == *path),
        }
    }

    /// Keeps what was set on the process's record (for the table).
    fn record(&self, p: Option<&mut Proc>) {
        let Some(p) = p else { return };
        match self {
            Change::Nice(n) => p.nice = Some(*n),
            Change::Policy(pol, prio) => {
                p.policy =
                    Some(if *prio > 0 { format!("{} {prio}", pol.name()) } else { pol.name().to_string() })
            }
            Change::Slice(_) | Change::Cpus(_) | Change::Cgroup(_) => {}
        }
    }
}

impl Proc {
    fn state_text(&self) -> String {
        match &self.state {
            State::Managed => "managed".into(),
            State::Young => YOUNG.into(),
            State::Released(w) | State::Left(w) => w.clone(),
        }
    }
}

fn plan_name(r: &distribution::PlacementReason) -> &'static str {
    match r {
        distribution::PlacementReason::FairShare { .. } => "fair-share",
        distribution::PlacementReason::Weighted { .. } => "weighted",
        distribution::PlacementReason::Isolated => "isolate",
        distribution::PlacementReason::CoLocated { .. } => "communication-aware",
    }
}

fn describe_placement(r: &distribution::PlacementReason) -> String {
    use distribution::PlacementReason as R;
    match r {
        R::FairShare { index_in_class, class_size } => {
            format!("process {} of {class_size}", index_in_class + 1)
        }
        R::Weighted { index_in_class, class_size, share, total_shares } => {
            format!("process {} of {class_size}, share {share}/{total_shares}", index_in_class + 1)
        }
        R::Isolated => "the class's own CPUs".into(),
        R::CoLocated { with, strength, group_size } => {
            format!("with {with} ({strength:.0} wakeups; a group of {group_size})")
        }
    }
}

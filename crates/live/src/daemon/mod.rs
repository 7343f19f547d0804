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
//! Safety: a process is acted on through a pidfd checked against its start time;
//! kernel threads, pid 1 and the daemon itself are left alone unless a rule names them
//! (kernel threads); a setting someone else changes makes the daemon release the
//! process (the user wins); every change is restored when the daemon stops, and a
//! killed daemon's journal is restored by `schedlab restore` or at the next start.
//!
//! Decisions and effects are apart. The decision core ([`core`]) knows the processes and
//! decides, from the observer's events and what it reads through the [`kernel::Kernel`]
//! trait, with no system call of its own: its decisions are plain data
//! ([`core::Decision`]: a class's nice value or policy, CPUs, a cgroup, a boost and its
//! end, a slice, a thread to watch, a profiling window), unit-tested without root, and
//! the same decisions can be enforced by another mechanism (a sched_ext scheduler).
//! [`Daemon`] is the shell around it: it polls the observer, hands the events and the
//! loop's turns to the core, and carries each decision out on the live machine
//! (`live`: journal first, then the system call; only shown in a dry run), telling
//! the core what became of it. The daemon's own thread priority ([`priority`]), the
//! control socket ([`control`]) and the store stay in the shell.

pub mod boost;
pub mod classes;
pub mod control;
pub mod core;
pub mod expiry;
pub mod kernel;
pub mod launch;
mod live;
pub mod metrics;
pub mod priority;
pub mod sched_ext;
pub mod slices;
pub mod stats;
pub mod windows;

use std::collections::HashMap;
use std::io;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use schedlab_behavior::learn::Classifier;
use schedlab_store::{EnforcerTrial, Store};

use self::control::{ControlSocket, Request, RequestError};
use self::core::{Core, Predictor, Setup};
use self::live::Live;
use self::sched_ext::SchedExt;
use self::slices::Slices;
use self::stats::{Explanation, Stats};
use crate::actuator::{Actuator, ActuatorError, RestoreReport};
use crate::config::Config;
use crate::dependencies::DependencyRecorder;
use crate::observer::{Observer, ObserverError, ObserverOptions, SchedEvents};
use crate::settings;

/// What can stop the daemon.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Observer(#[from] ObserverError),
    #[error("the journal: {0}")]
    Actuator(#[from] ActuatorError),
    #[error(transparent)]
    Store(#[from] schedlab_store::Error),
    #[error("the control socket {path}: {source}")]
    Socket { path: String, source: io::Error },
    /// Changes a previous daemon left that cannot be undone yet: starting would stack
    /// new changes on them.
    #[error(
        "{count} change(s) a previous daemon left could not be undone for now (first: {first}); \
         run `schedlab restore` again, or `schedlab restore --discard` to leave them"
    )]
    Unrestored {
        /// How many.
        count: usize,
        /// Why the first could not.
        #[source]
        first: ActuatorError,
    },
    /// What the store keeps of earlier runs could not be read.
    #[error("reading {what}: {source}")]
    Knowledge {
        /// Which knowledge (PFS's, SWAP's kept confidences).
        what: &'static str,
        #[source]
        source: schedlab_store::Error,
    },
    /// The thread that ends raises on time could not start.
    #[error("starting the thread that ends raises on time: {0}")]
    Expiry(#[source] io::Error),
    #[error("schedlab's sched_ext scheduler: {0}")]
    SchedExt(#[from] schedlab_ext::scheduler::ExtError),
    /// The kernel ended the sched_ext scheduler while the daemon ran: every task is back
    /// in the fair class; the daemon may start again with the system calls.
    #[error("the kernel ended schedlab's sched_ext scheduler: {0}")]
    SchedExtExited(schedlab_ext::stats::Exit),
}

/// What carries the core's decisions out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcer {
    /// schedlab's sched_ext scheduler where the kernel has sched_ext, none other is
    /// loaded, and the scheduler's last trial on this kernel (`schedlab bench suite
    /// --enforcer sched-ext`, kept in the store) ran every workload and lost none; the
    /// system calls otherwise (see [`sched_ext_trial_verdict`]).
    #[default]
    Auto,
    /// schedlab's sched_ext scheduler, or the daemon does not start.
    SchedExt,
    /// The scheduling system calls, journaled and undone at the end.
    Syscalls,
}

impl Enforcer {
    /// Its name as `--enforcer` and the trials spell it.
    pub fn name(self) -> &'static str {
        match self {
            Enforcer::Auto => "auto",
            Enforcer::SchedExt => SCHED_EXT_TRIAL,
            Enforcer::Syscalls => "syscalls",
        }
    }
}

/// The name enforcer trials give the sched_ext scheduler (`--enforcer`'s spelling).
pub const SCHED_EXT_TRIAL: &str = "sched-ext";

/// Whether `auto` may load the sched_ext scheduler on kernel `kernel`, given its last
/// trial there (`None`: never judged): only where that trial ran every workload of the
/// suite and lost none. Do no harm, measured: the scheduler wins where it can (SWAP's
/// client-server, hackbench's pipes, the wake-up tail in the VM of issue 12) but a
/// sched_ext scheduler's own path costs every wake-up a little, which under qemu's TCG
/// was 10 % of cyclictest's median; whether it is as much on a machine's hardware only
/// that machine can say. `Err` says why not, and how to judge it.
pub fn sched_ext_trial_verdict(trial: Option<&EnforcerTrial>, kernel: &str) -> Result<(), NoSchedExt> {
    let kernel = kernel.to_string();
    match trial {
        None => Err(NoSchedExt::NeverJudged { kernel }),
        Some(t) if !t.complete => Err(NoSchedExt::Incomplete { kernel, summary: t.summary.clone() }),
        Some(t) if t.losses > 0 => {
            Err(NoSchedExt::Lost { kernel, losses: t.losses, summary: t.summary.clone() })
        }
        Some(_) => Ok(()),
    }
}

/// How to judge the sched_ext scheduler, or load it regardless: what every trial
/// refusal ends with.
const JUDGE: &str =
    "`schedlab bench suite --enforcer sched-ext` judges it; `--enforcer sched-ext` loads it anyway";

/// Why `--enforcer auto` does not load the sched_ext scheduler here (and uses the
/// system calls): not a failure, a verdict the daemon reports.
#[derive(Debug, thiserror::Error)]
pub enum NoSchedExt {
    #[error("this kernel has no sched_ext")]
    Absent,
    #[error("another sched_ext scheduler: {0}")]
    Taken(schedlab_ext::kernel::State),
    #[error("reading /sys/kernel/sched_ext: {0}")]
    Unreadable(#[source] std::io::Error),
    #[error("schedlab's sched_ext scheduler was never judged on kernel {kernel}: {JUDGE}")]
    NeverJudged { kernel: String },
    #[error(
        "the last trial of schedlab's sched_ext scheduler on kernel {kernel} ran only some workloads \
         ({summary}): {JUDGE}"
    )]
    Incomplete { kernel: String, summary: String },
    #[error(
        "in its last trial on kernel {kernel} schedlab's sched_ext scheduler lost {losses} workload \
         metric(s) to bare Linux ({summary}): {JUDGE}"
    )]
    Lost { kernel: String, losses: u32, summary: String },
}

/// How the daemon names the sched_ext scheduler as its enforcer (in its stats).
pub const SCHED_EXT_ENFORCER: &str = "schedlab's sched_ext scheduler";

/// How the daemon's name of the system calls as its enforcer begins (then why, in
/// parentheses).
pub const SYSCALLS_ENFORCER: &str = "system calls";

/// What `--enforcer auto` picks on this machine, with the trials kept in `store`:
/// `Ok(())` for the sched_ext scheduler, `Err(why)` for the system calls.
pub fn auto_choice(store: &Store) -> Result<Result<(), NoSchedExt>, DaemonError> {
    use schedlab_ext::kernel::State;
    Ok(match State::read() {
        Ok(State::Absent) => Err(NoSchedExt::Absent),
        Ok(State::Disabled) => {
            let kernel = schedlab_ext::kernel::release();
            let trial = store.last_enforcer_trial(&kernel, SCHED_EXT_TRIAL)?;
            sched_ext_trial_verdict(trial.as_ref(), &kernel)
        }
        Ok(other) => Err(NoSchedExt::Taken(other)),
        Err(e) => Err(NoSchedExt::Unreadable(e)),
    })
}

/// Loads the sched_ext scheduler as `choice` says; `None` and why for the system calls.
fn choose_enforcer(
    choice: Enforcer,
    dry_run: bool,
    store: &Store,
    tunables: &schedlab_ext::plan::Tunables,
) -> Result<(Option<SchedExt>, String), DaemonError> {
    use schedlab_ext::scheduler::{ExtError, Scheduler};
    let syscalls = |why: String| Ok((None, format!("{SYSCALLS_ENFORCER} ({why})")));
    match choice {
        Enforcer::Syscalls => return syscalls("chosen".into()),
        _ if dry_run => return syscalls("a dry run loads no scheduler".into()),
        Enforcer::Auto => {
            if let Err(why) = auto_choice(store)? {
                return syscalls(why.to_string());
            }
        }
        Enforcer::SchedExt => {}
    }
    match Scheduler::load(tunables, Duration::from_secs(120)) {
        Ok(s) => Ok((Some(SchedExt::new(s)), SCHED_EXT_ENFORCER.into())),
        Err(e @ ExtError::Bpf { .. }) | Err(e @ ExtError::NotEnabled(..)) | Err(e @ ExtError::Exited(_))
            if choice == Enforcer::Auto =>
        {
            syscalls(format!("the sched_ext scheduler did not load: {e}"))
        }
        Err(e) => Err(e.into()),
    }
}

/// How many closed journal entries the daemon keeps (for `sqlite3` archaeology); older
/// ones are deleted as it runs.
pub const JOURNAL_KEEP: usize = 10_000;

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

/// The online CPUs (`/sys/devices/system/cpu/online`).
fn online_cpus() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| crate::config::parse_cpu_list(s.trim()).ok())
        .unwrap_or_else(|| (0..std::thread::available_parallelism().map_or(1, |n| n.get() as u32)).collect())
}

/// Checkpoints the store's write-ahead log from a thread of its own, at normal priority,
/// so that the loop's journal commits (a boost's, on the reaction path) never wait for
/// a sync ([`Store::commit_without_syncs`]): measured in the suite, a sync in the loop
/// held a boost for 5 to 65 ms. Stopped (and joined) when dropped.
#[derive(Debug)]
struct Checkpointer {
    /// Dropped to stop the thread: it sleeps on the other end between checkpoints.
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// How often the log is checkpointed.
    const EVERY: Duration = Duration::from_secs(10);

    /// Starts it on its own connection to the file of `stores[0]`, then makes `stores`
    /// (the loop's connections) commit without syncs; `None` (and they sync and
    /// checkpoint as before) if the thread cannot be had. Once it runs it stays, even if
    /// a connection keeps its syncs: the log is checkpointed either way.
    fn start(stores: &[&Store]) -> Option<Checkpointer> {
        let own = Store::open(stores.first()?.path()).ok()?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("schedlab-ckpt".into())
            .spawn(move || {
                // Wakes once per checkpoint, and at once when the daemon stops.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(Self::EVERY) {
                    let _ = own.checkpoint();
                }
                let _ = own.checkpoint();
            })
            .ok()?;
        for store in stores {
            let _ = store.commit_without_syncs();
        }
        Some(Checkpointer { stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The daemon: the decision core and the live machine it acts on.
#[derive(Debug)]
pub struct Daemon<'s> {
    /// The store's lock: no other daemon or restore acts on this journal meanwhile.
    _lock: schedlab_store::StoreLock,
    core: Core,
    live: Live<'s>,
    /// The store's checkpoints, off the loop (`None`: the loop's connections do them).
    _checkpointer: Option<Checkpointer>,
    /// A connection of its own for what was learned (the actuator's is shared), opened
    /// once; `None` if it could not be.
    knowledge: Option<Store>,
    replan_every: Duration,
    /// Entries a previous daemon left that were restored at start.
    restored_at_start: usize,
    /// How the reaction thread runs ([`priority`]).
    reaction_thread: String,
    /// What carries the decisions out, in words.
    enforcer: String,
}

impl<'s> Daemon<'s> {
    /// Restores what a previous daemon left in the journal, starts the observer, and
    /// classifies the processes that run now (by rules; the model watches the others).
    ///
    /// `enforcer` chooses what carries the decisions out (the sched_ext scheduler is
    /// loaded last, once everything else has started).
    pub fn start(
        store: &'s Store,
        config: Config,
        dry_run: bool,
        enforcer: Enforcer,
    ) -> Result<Daemon<'s>, DaemonError> {
        let lock = store.lock()?;
        let mut actuator = Actuator::new(store);
        let mut report = actuator.restore_all()?;
        if !report.failed.is_empty() {
            let count = report.failed.len();
            let first = report.failed.swap_remove(0).1;
            return Err(DaemonError::Unrestored { count, first });
        }
        let d = &config.daemon;
        // Only threads that may need their providers boosted are watched; PFS slices and
        // co-location learn from every switch and wake-up, and pay for it.
        let sched_events = if d.slices || d.colocate { SchedEvents::All } else { SchedEvents::Watched };
        let mut observer = Observer::start(ObserverOptions {
            reader_nice: Some(priority::FALLBACK_NICE),
            sched_events,
            ..ObserverOptions::watched()
        })?;
        let slices = if d.slices {
            let pfs = store
                .load_pfs()
                .map_err(|source| DaemonError::Knowledge { what: "PFS knowledge", source })?;
            let default_ns = settings::default_slice_ns().unwrap_or(3 * slices::MS);
            Some(Slices::new(slices::params(d.slice_tm_ms, d.slice_x, d.slice_y), pfs, default_ns))
        } else {
            None
        };
        let model = d.model.then(|| Box::new(Classifier::shipped()) as Box<dyn Predictor>);
        let habits = match d.learn {
            true => Some(
                store
                    .load_habits()
                    .map_err(|source| DaemonError::Knowledge { what: "programs' habits", source })?,
            ),
            false => None,
        };
        let mut deps = DependencyRecorder::new();
        let kept: HashMap<(String, String), u32> = store
            .confidences()
            .map_err(|source| DaemonError::Knowledge { what: "kept confidences", source })?
            .into_iter()
            .map(|c| ((c.program, c.kind), c.confidence))
            .collect();
        deps.detector_mut().set_initial_confidence(Box::new(move |pid, r| {
            kept.get(&(crate::process::exe_of(pid.0)?, r.kind().to_string())).copied()
        }));
        let replan_every = Duration::from_millis(d.replan_ms);
        let expiry = expiry::Expiry::start().map_err(DaemonError::Expiry)?;
        let setup = Setup {
            cpus: online_cpus(),
            self_pid: std::process::id(),
            self_exe: std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
            deps,
            slices,
            model,
            habits,
        };
        let tunables = schedlab_ext::plan::Tunables {
            slice_ns: d.ext_slice_ms * 1_000_000,
            timeshare: d.ext_timeshare,
            pfs_t_m_ns: d.slice_tm_ms * 1_000_000,
            pfs_x_pct: d.slice_x,
            pfs_y_pct: d.slice_y,
            lend_ns: d.boost_max_ms * 1_000_000,
            ..Default::default()
        };
        let (sched_ext, enforcer) = choose_enforcer(enforcer, dry_run, store, &tunables)?;
        // The scheduler lends turns in the kernel: the daemon only learns who provides
        // for whom, which can wait for the next batch of events.
        observer.set_wake_on_watched(sched_ext.is_none());
        let knowledge = Store::open(store.path()).ok();
        let mut on_loop = vec![store];
        on_loop.extend(knowledge.as_ref());
        let checkpointer = Checkpointer::start(&on_loop);
        let proc_fields = config.rule_fields();
        let mut daemon = Daemon {
            _lock: lock,
            core: Core::new(config, setup, Instant::now()),
            live: Live::new(observer, actuator, expiry, sched_events, proc_fields, dry_run),
            _checkpointer: checkpointer,
            knowledge,
            replan_every,
            restored_at_start: report.restored,
            reaction_thread: String::new(),
            enforcer,
        };
        daemon.live.sched_ext = sched_ext;
        let text = format!("decisions carried out by {}", daemon.enforcer);
        daemon.core.note(None, text, &daemon.live);
        if report.restored + report.kept + report.skipped + report.other_boot + report.abandoned.len() > 0 {
            let text = format!("what a previous daemon left: {}", report.describe());
            daemon.core.note(None, text, &daemon.live);
        }
        for (id, e) in &report.abandoned {
            let text = format!("journal entry {} could never be undone, closed: {e}", id.0);
            daemon.core.note(None, text, &daemon.live);
        }
        let pids = crate::process::all_pids().unwrap_or_default();
        daemon.core.running(&pids, &mut daemon.live);
        Ok(daemon)
    }

    /// Runs until `stop` says so (a signal) or `duration` passes, calling `tick` about
    /// once a second with the decisions made since the last call and a way to get the
    /// statistics (their percentiles cost the real-time loop ~100 µs: taken only when
    /// shown). Serves the control socket meanwhile. It restores nothing when it returns:
    /// [`Daemon::shutdown`] does, or the daemon runs on (`run` again).
    pub fn run(
        &mut self,
        socket: &ControlSocket,
        stop: &dyn Fn() -> bool,
        duration: Option<Duration>,
        mut tick: impl FnMut(&mut dyn FnMut() -> Stats, Vec<String>),
    ) -> Result<(), DaemonError> {
        let (mut last_plan, mut last_tick, mut last_save) = (Instant::now(), Instant::now(), Instant::now());
        let (mut last_rescan, mut lost_seen) =
            (Instant::now(), self.live.observer.lost_events().unwrap_or(0));
        let mut batch = Vec::new();
        let mut elevation = match self.live.sched_ext {
            None => priority::Elevation::raise(),
            Some(_) => priority::Elevation::in_kernel(),
        };
        self.reaction_thread = elevation.describe();
        let result = loop {
            if stop() || duration.is_some_and(|d| self.core.uptime(&self.live) >= d) {
                break Ok(());
            }
            if let Some(why) = elevation.check() {
                self.reaction_thread = why.clone();
                self.core.note(None, why, &self.live);
            }
            batch.clear();
            // Woken at once by a watched thread's block (not with the sched_ext
            // scheduler, which lends in the kernel); otherwise often enough to end boosts
            // on time while there are any, and to plan.
            let mut wait = self.core.next_wait(&self.live);
            if self.live.sched_ext.is_some() && self.live.observer.sched_programs_attached() {
                // Batches, but soon enough that a block is decided on before its boost
                // would have expired (`boost_max_ms`): the scheduler lends only to a
                // provider the daemon has named.
                wait = wait.min(Self::BATCH_WAIT);
            }
            match self.live.observer.poll(&mut batch, wait) {
                Ok(_) => {}
                Err(_) if stop() => break Ok(()),
                Err(e) => break Err(e.into()),
            }
            if let Some(exit) = self.live.sched_ext.as_ref().and_then(|e| e.exit()) {
                break Err(DaemonError::SchedExtExited(exit));
            }
            self.core.events(&batch, &mut self.live);
            self.core.tick(&mut self.live);
            if last_plan.elapsed() >= self.replan_every {
                last_plan = Instant::now();
                self.core.replan(&mut self.live);
            }
            if let Err(e) = self.live.actuator.settle() {
                break Err(e.into());
            }
            socket.serve(|r| self.answer(r));
            if last_tick.elapsed() >= Duration::from_secs(1) {
                last_tick = Instant::now();
                let lost = self.live.observer.lost_events().unwrap_or(lost_seen);
                if lost > lost_seen || last_rescan.elapsed() >= Self::RESCAN_EVERY {
                    lost_seen = lost;
                    last_rescan = Instant::now();
                    self.rescan();
                }
                let fresh = self.core.take_fresh();
                tick(&mut || self.stats(), fresh);
            }
            if last_save.elapsed() >= Duration::from_secs(30) {
                last_save = Instant::now();
                self.save_knowledge();
            }
        };
        self.save_knowledge();
        result
    }

    /// The longest a batch of watched threads' events waits with the sched_ext scheduler.
    const BATCH_WAIT: Duration = Duration::from_millis(20);

    /// How often /proc is read again for what events may have missed, even with no loss
    /// counted.
    const RESCAN_EVERY: Duration = Duration::from_secs(60);

    /// Puts right what lost events left wrong: threads known but gone are taken as
    /// exited, processes not known are taken in, the observer forgets tasks gone.
    fn rescan(&mut self) {
        let pids = crate::process::all_pids().unwrap_or_default();
        let gone = self.core.rescan(&pids, &mut self.live) + self.live.observer.forget_gone_tasks();
        if gone > 0 {
            self.core.note(
                None,
                format!("rescan: {gone} thread(s) gone unseen (their exit was lost)"),
                &self.live,
            );
        }
    }

    /// Undoes every change (boosts, classes, slices) and says how many.
    pub fn shutdown(&mut self) -> Result<RestoreReport, DaemonError> {
        self.core.stop(&mut self.live);
        if let Some(ext) = self.live.sched_ext.take() {
            ext.unload();
        }
        let report = self.live.actuator.restore_all()?;
        for (class, group) in std::mem::take(&mut self.live.groups) {
            if let Err(e) = group.remove() {
                let text = format!("cannot remove the cpuset cgroup of class {class}: {e}");
                self.core.note(None, text, &self.live);
            }
        }
        Ok(report)
    }

    /// The statistics now.
    pub fn stats(&mut self) -> Stats {
        let mut s = self.core.stats(&self.live);
        s.dry_run = self.live.dry_run;
        s.restored_at_start = self.restored_at_start;
        s.reaction_thread = self.reaction_thread.clone();
        s.enforcer = self.enforcer.clone();
        s.sched_ext = self.live.sched_ext.as_ref().and_then(|e| e.stats());
        s.events = self.live.observer.events();
        s.lost_events = self.live.observer.lost_events().unwrap_or(0);
        s.raises_expired_by_clock = self.live.expiry.expired();
        s.cpu_s =
            crate::process::cpu_time_ns(schedlab_model::Pid(std::process::id())).unwrap_or(0) as f64 / 1e9;
        s
    }

    /// Everything decided about process `pid` (or the process of thread `pid`); a
    /// process not yet taken in says so.
    pub fn explain(&self, pid: u32) -> Option<Explanation> {
        let mut e = self.core.explain(pid, &self.live)?;
        e.sched_ext = self.live.sched_ext.as_ref().map(|x| x.explain(pid));
        Some(e)
    }

    /// Answers a control request.
    fn answer(&mut self, request: Result<Request, RequestError>) -> serde_json::Value {
        let value = match request {
            Ok(Request::Stats) => serde_json::to_value(self.stats()),
            Ok(Request::Explain { pid }) => match self.explain(pid) {
                Some(e) => serde_json::to_value(e),
                None => {
                    return serde_json::json!({ "error": format!("the daemon does not know process {pid}") })
                }
            },
            Err(e) => return serde_json::json!({ "error": e.to_string() }),
        };
        value.unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
    }

    /// Keeps what was learned in the store: every program's PFS, SWAP's confidence per
    /// provider program and resource kind (the mean over its provider entries now), and
    /// the programs' habits.
    fn save_knowledge(&mut self) {
        let Some(store) = &mut self.knowledge else { return };
        let _ = store.journal_prune(JOURNAL_KEEP);
        if let Some(pfs) = self.core.pfs() {
            let _ = store.save_pfs(pfs);
        }
        let _ = store.save_confidences(&self.core.confidences(&self.live));
        if let Some(habits) = self.core.habits() {
            let _ = store.save_habits(habits);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(complete: bool, losses: u32) -> EnforcerTrial {
        EnforcerTrial {
            kernel: "7.3.0-1-amd64".into(),
            enforcer: SCHED_EXT_TRIAL.into(),
            at_unix_s: 1_800_000_000,
            complete,
            losses,
            summary: "wakeup p50 1.10 (1.09-1.15)".into(),
        }
    }

    #[test]
    fn auto_loads_sched_ext_only_after_a_complete_trial_without_a_loss() {
        let k = "7.3.0-1-amd64";
        assert!(sched_ext_trial_verdict(Some(&trial(true, 0)), k).is_ok());
        let never = sched_ext_trial_verdict(None, k).unwrap_err().to_string();
        assert!(never.contains("never judged on kernel 7.3.0-1-amd64"), "{never}");
        assert!(never.contains("schedlab bench suite --enforcer sched-ext"), "{never}");
        let lost = sched_ext_trial_verdict(Some(&trial(true, 1)), k).unwrap_err().to_string();
        assert!(lost.contains("lost 1 workload metric(s)") && lost.contains("wakeup p50 1.10"), "{lost}");
        let partial = sched_ext_trial_verdict(Some(&trial(false, 0)), k).unwrap_err().to_string();
        assert!(partial.contains("ran only some workloads"), "{partial}");
    }
}

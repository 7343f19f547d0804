//! The decision core: everything the daemon knows about the machine's processes and
//! everything it decides about them, with no system call in it.
//!
//! In: the observer's events ([`Core::events`]), the loop's turns ([`Core::tick`], about
//! every 50–200 ms: new processes taken in, boosts, profiling windows; [`Core::replan`],
//! every `replan_ms`: loads, users' changes, real-time bounds, CPU plans) and what the
//! machine answers to reads ([`Kernel`]). Out: [`Decision`]s as plain data, handed to an
//! [`Enforcer`] one at a time; what became of each ([`Outcome`]) is what the core goes
//! on from, as a decision may depend on the one before (a process is bound to its CPUs
//! only once it is in its class's cgroup; a boost is lowered only if it was raised).
//! The log of decisions (the daemon's output, `explain`) and the statistics are kept
//! here too.
//!
//! - `admission`: exec, fork and exit; new processes (`arrivals`) taken in once they
//!   have lived `min_age_ms`, and classified by the rules.
//! - `classification`: a class applied; the profiling windows and the model.
//! - `learning`: each program's habits from its processes' lives; a program known to
//!   run CPU-bound classed at its exec.
//! - `placement`: the planning period.
//! - `boosting`: provider boosts; `slicing`: burst-aware slices.
//! - `report`: statistics, `explain`, the knowledge to keep.

mod admission;
mod arrivals;
mod boosting;
mod classification;
mod decision;
#[cfg(test)]
mod fake;
mod learning;
mod placement;
mod report;
mod slicing;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, Policy, PrevState};

use self::arrivals::{Arrival, Arrivals};
use self::boosting::Raised;
pub use self::classification::Predictor;
pub use self::decision::{cpu_set, Change, Decision, Enforcer, Kept, Outcome, Raise, RaiseId};
use super::boost::Booster;
use super::classes::ClassReason;
use super::kernel::Kernel;
use super::slices::{self, Slices};
use super::stats::{LatencyHistogram, StageHistograms, Stats};
use super::windows::Windows;
use crate::activity::Activity;
use crate::config::Config;
use crate::dependencies::DependencyRecorder;
use crate::process::ProcInfo;

/// What the core works on: the machine's reads and the enforcer of its decisions.
pub trait Machine: Kernel + Enforcer {}

impl<T: Kernel + Enforcer> Machine for T {}

/// What the core is given at start besides the configuration.
pub struct Setup {
    /// The online CPUs: what the plans divide.
    pub cpus: Vec<u32>,
    /// The daemon's pid and executable: schedlab's own processes (a benchmark and its
    /// workers) get no class, as a benchmark measures the daemon and is not its
    /// subject. Boosting still lends them priority like any provider.
    pub self_pid: u32,
    pub self_exe: String,
    /// SWAP's detector, with what the daemon knows of socket peers and kept confidences.
    pub deps: DependencyRecorder,
    /// PFS, when slices are on.
    pub slices: Option<Slices>,
    /// The model, when it is on.
    pub model: Option<Box<dyn Predictor>>,
    /// The programs' habits kept from earlier runs, when learning is on.
    pub habits: Option<schedlab_behavior::habits::Habits>,
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

/// A process the core knows of.
#[derive(Debug)]
struct Proc {
    info: ProcInfo,
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
    /// Its threads at the last planning: its CPU set is never smaller.
    threads: u32,
    /// Its latest decisions.
    decisions: VecDeque<String>,
    /// Its main thread's schedstat at the last reading (run, runnable-waiting) and when:
    /// whether it runs CPU-bound now ([`Core::busy_class`]).
    sched_seen: Option<(Ns, Ns, Instant)>,
    /// Whether it draws for a person, once looked at ([`Core::drawing`]).
    draws: Option<bool>,
}

impl Proc {
    fn new(info: ProcInfo, now: Instant) -> Proc {
        Proc {
            info,
            class: None,
            reason: ClassReason::Watching,
            state: State::Left("not classified yet".into()),
            first_seen: now,
            cpus: None,
            cgroup: None,
            nice: None,
            policy: None,
            rt_demoted: false,
            runtime_prev: 0,
            load: 0.0,
            threads: 1,
            decisions: VecDeque::new(),
            sched_seen: None,
            draws: None,
        }
    }

    fn state_text(&self) -> String {
        match &self.state {
            State::Managed => "managed".into(),
            State::Young => YOUNG.into(),
            State::Released(w) | State::Left(w) => w.clone(),
        }
    }
}

/// What a process waiting for `min_age_ms` is said to be doing.
const YOUNG: &str = "young: its class applies once it has lived min_age_ms";
/// Decisions kept per process for `explain`.
const DECISIONS_KEPT: usize = 12;

/// What became of a change the core decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Applied {
    /// The process had it already: nothing was decided.
    Held,
    /// Carried out (or, in a dry run, shown).
    Made,
    /// Not carried out (noted and counted, or the process is gone).
    Not,
}

/// The daemon's knowledge and decisions.
pub struct Core {
    config: Config,
    /// Per-thread run and sleep statistics, gathered in profiling windows.
    activity: Activity,
    /// The profiling windows, and the system-call counts when the current one opened.
    windows: Windows,
    window_counts: HashMap<(u32, u32), u64>,
    deps: DependencyRecorder,
    booster: Option<Booster>,
    slices: Option<Slices>,
    model: Option<Box<dyn Predictor>>,
    /// Each program's habits, when learning is on, and the program each process runs.
    habits: Option<schedlab_behavior::habits::Habits>,
    programs: HashMap<u32, String>,
    procs: BTreeMap<u32, Proc>,
    /// Thread → process, for threads seen.
    tgids: HashMap<u32, u32>,
    /// New processes not yet taken in ([`Core::admit`]).
    arrivals: Arrivals,
    /// Requester threads blocked now with a boost decision pending or in force, and
    /// when they blocked.
    blocked: HashMap<Pid, Ns>,
    /// Requesters awake whose boost lingers ([`BOOST_LINGER_NS`]), and when they woke.
    lingering: HashMap<Pid, Ns>,
    /// Threads watched ([`Decision::Watch`]).
    urgent: HashSet<u32>,
    /// The raises in force on each boosted provider process, oldest first.
    raised: HashMap<u32, Raised>,
    /// The id the next raise gets.
    next_raise: u64,
    /// Classes whose cpuset cgroup cannot be had (cgroup v2, no controller): bound with
    /// affinity instead, without asking again.
    no_group: HashSet<String>,
    /// (provider, requester) pairs boosted so far: only the first boost is logged.
    boosted_pairs: HashSet<(u32, u32)>,
    cpus: Vec<u32>,
    counters: Stats,
    reaction: LatencyHistogram,
    reaction_stages: StageHistograms,
    /// While a batch of events is handled: when it was read (monotonic ns).
    batch_read: Option<Ns>,
    /// Decisions not yet shown.
    fresh: Vec<String>,
    started: Instant,
    self_pid: u32,
    self_exe: String,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core").field("procs", &self.procs.len()).finish_non_exhaustive()
    }
}

impl Core {
    /// A core that knows no process yet, started at `now`.
    pub fn new(config: Config, setup: Setup, now: Instant) -> Core {
        let d = &config.daemon;
        let booster = d.boost.then(|| Booster::new(d.boost_max_ms * slices::MS));
        let windows = Windows::new(Duration::from_millis(d.model_after_ms), d.profile_duty_pct);
        Core {
            activity: Activity::default(),
            windows,
            window_counts: HashMap::new(),
            deps: setup.deps,
            booster,
            slices: setup.slices,
            model: setup.model,
            habits: setup.habits,
            programs: HashMap::new(),
            procs: BTreeMap::new(),
            tgids: HashMap::new(),
            arrivals: Arrivals::default(),
            blocked: HashMap::new(),
            lingering: HashMap::new(),
            urgent: HashSet::new(),
            raised: HashMap::new(),
            next_raise: 1,
            no_group: HashSet::new(),
            boosted_pairs: HashSet::new(),
            cpus: setup.cpus,
            counters: Stats::default(),
            reaction: LatencyHistogram::default(),
            reaction_stages: StageHistograms::default(),
            batch_read: None,
            fresh: Vec::new(),
            started: now,
            self_pid: setup.self_pid,
            self_exe: setup.self_exe,
            config,
        }
    }

    /// A batch of the observer's events, in order.
    pub fn events(&mut self, events: &[Event], m: &mut dyn Machine) {
        self.batch_read = Some(m.monotonic_ns());
        self.handle_events(events, m);
        self.batch_read = None;
    }

    fn handle_events(&mut self, events: &[Event], m: &mut dyn Machine) {
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
        let profiling = self.windows.is_open();
        for (i, e) in events.iter().enumerate() {
            // Run bursts and sleeps are read at a window's end, of what happened in it.
            if profiling {
                self.activity.event(e);
            }
            self.deps.event(e);
            if let Some(s) = &mut self.slices {
                s.event(e);
            }
            match &e.kind {
                EventKind::Exec { tgid, pid, comm, path } => {
                    self.tgids.insert(pid.0, tgid.0);
                    // PFS and the habits know a program by its path, else its comm.
                    let program = if path.is_empty() { comm } else { path };
                    if !self.exec_learned(tgid.0, program, m) {
                        self.arrivals.push(Arrival { pid: tgid.0, parent: None, seen: m.now() });
                    }
                    self.watch_if_high(tgid.0, m);
                    if self.slices.is_some() {
                        self.flow_at_exec(*tgid, program, m);
                    }
                }
                EventKind::Fork { parent, child, thread } => {
                    let parent_tgid = self.tgid(parent.0, m);
                    if *thread {
                        self.tgids.insert(child.0, parent_tgid);
                    } else {
                        self.tgids.insert(child.0, child.0);
                        let seen = m.now();
                        self.arrivals.push(Arrival { pid: child.0, parent: Some(parent_tgid), seen });
                    }
                    // A new thread or process has the rank of the thread that forked it
                    // (the kernel copied it): watched if that one is, with no read of its
                    // own (a fork storm is hundreds a second).
                    if self.urgent.contains(&parent.0) {
                        self.mark_urgent(child.0, m);
                    }
                }
                EventKind::Exit { pid, life, .. } => {
                    if let Some(life) = life {
                        self.learn_life(pid.0, life, m);
                    }
                    self.exited(*pid, m);
                }
                EventKind::Block { pid, .. }
                    if self.booster.is_some() && last_wakeup.get(pid).is_none_or(|&w| w < i) =>
                {
                    self.lingering.remove(pid);
                    self.blocked.insert(*pid, e.time);
                    self.decide_boost(*pid, e.time, m);
                }
                EventKind::Switch { prev, prev_state: PrevState::Blocked, .. } if self.slices.is_some() => {
                    self.slice_after_block(*prev, m);
                }
                EventKind::Wakeup { wakee, .. } if self.blocked.remove(wakee).is_some() => {
                    self.requester_woke(*wakee, e.time, m);
                }
                _ => {}
            }
        }
    }

    /// A turn of the loop: takes in the new processes old enough, decides the boosts in
    /// force again, and opens or closes a profiling window.
    pub fn tick(&mut self, m: &mut dyn Machine) {
        self.end_lingering(m);
        self.admit(m);
        self.decide_boosts(m);
        self.profile(m);
    }

    /// How long the loop may wait for events before its next turn: at once (1 ms) while
    /// new processes old enough wait to be taken in (admission has a time budget per
    /// turn) or a boost lingers (it ends [`BOOST_LINGER_NS`] after its requester woke),
    /// 50 ms while something else waits on the clock (a new process, a boost in force,
    /// which must end on time), else 200 ms.
    pub fn next_wait(&self, k: &dyn Kernel) -> Duration {
        if self.admission_due(k.now()) || !self.lingering.is_empty() {
            Duration::from_millis(1)
        } else if self.arrivals.any_waiting()
            || self.booster.as_ref().is_some_and(|b| b.active().next().is_some())
        {
            Duration::from_millis(50)
        } else {
            Duration::from_millis(200)
        }
    }

    /// The decisions logged since the last call.
    pub fn take_fresh(&mut self) -> Vec<String> {
        std::mem::take(&mut self.fresh)
    }

    /// How long the core has run.
    pub fn uptime(&self, k: &dyn Kernel) -> Duration {
        k.now().saturating_duration_since(self.started)
    }

    /// The daemon stops: no thread stays watched.
    pub fn stop(&mut self, m: &mut dyn Machine) {
        for tid in std::mem::take(&mut self.urgent) {
            m.enforce(&Decision::Watch { tid, on: false });
        }
    }

    /// Records a decision (for the log, the live table and `explain`).
    pub fn note(&mut self, pid: Option<u32>, text: String, k: &dyn Kernel) {
        self.note_as(pid, text, true, k);
    }

    /// [`Core::note`] if `loud`, else [`Core::note_quietly`].
    fn note_as(&mut self, pid: Option<u32>, text: String, loud: bool, k: &dyn Kernel) {
        let line = self.note_quietly(pid, text, k);
        if loud {
            self.fresh.push(line);
        }
    }

    /// Records a decision for `explain` only: boosts come and go hundreds of times a
    /// second; the log shows the first boost of each provider for each requester.
    fn note_quietly(&mut self, pid: Option<u32>, text: String, k: &dyn Kernel) -> String {
        let line = format!("[{:8.3}s] {text}", self.uptime(k).as_secs_f64());
        if let Some(p) = pid.and_then(|pid| self.procs.get_mut(&pid)) {
            if p.decisions.len() == DECISIONS_KEPT {
                p.decisions.pop_front();
            }
            p.decisions.push_back(line.clone());
        }
        line
    }

    /// `pid (comm)`, for the log.
    fn name(&self, pid: u32, k: &dyn Kernel) -> String {
        format!("{pid} ({})", self.comm_of(pid, k))
    }

    /// The name of thread `tid`'s process, safe to print ([`crate::text::printable`]).
    fn comm_of(&self, tid: u32, k: &dyn Kernel) -> String {
        let tgid = self.tgids.get(&tid).copied().unwrap_or(tid);
        let comm = self
            .procs
            .get(&tgid)
            .map(|p| p.info.comm.as_str())
            .or_else(|| k.task(tid).map(|t| t.comm.as_str()));
        crate::text::printable(comm.unwrap_or_default()).into_owned()
    }

    fn set_state(&mut self, pid: u32, state: State) {
        if let Some(p) = self.procs.get_mut(&pid) {
            p.state = state;
        }
    }

    /// Whether process `pid` (`info`) is init or schedlab's own (a benchmark and its
    /// workers): never given a class.
    fn ours_or_init(&self, pid: u32, info: &ProcInfo) -> bool {
        pid == 1 || pid == self.self_pid || (!self.self_exe.is_empty() && info.exe == self.self_exe)
    }

    /// Forgets process `pid`: it exited, or its pid is another process's now.
    fn forget(&mut self, pid: u32, m: &mut dyn Machine) {
        if let Some(p) = self.procs.remove(&pid) {
            m.enforce(&Decision::Forget { process: p.info.key() });
        }
    }

    /// The policy change that gives process `pid` `policy` at `priority`: under a fair
    /// policy it keeps the slice schedlab gave it.
    fn policy_change(&self, pid: u32, policy: Policy, priority: u32) -> Change {
        let slice_ns = match policy.is_rt() {
            true => 0,
            false => self.slices.as_ref().and_then(|s| s.slice_of(pid)).map_or(0, |s| s.slice_ns),
        };
        Change::Policy { policy, priority, slice_ns }
    }

    /// Makes one change to process `pid`; true if made (or, in a dry run, shown).
    /// Failures are noted and counted; a process that is gone is forgotten.
    fn change(&mut self, pid: u32, change: Change, why: &str, m: &mut dyn Machine) -> bool {
        self.change_noted(pid, change, why, true, m) != Applied::Not
    }

    /// [`Core::change`], the decision logged (`loud`) or only kept for `explain`.
    fn change_noted(
        &mut self,
        pid: u32,
        change: Change,
        why: &str,
        loud: bool,
        m: &mut dyn Machine,
    ) -> Applied {
        if m.holds(pid, &change) {
            // Nothing to change (and nothing to journal): the process has it already.
            self.record(pid, &change);
            return Applied::Held;
        }
        let Some(process) = self.procs.get(&pid).map(|p| p.info.key()) else { return Applied::Not };
        let decision = Decision::Set { process, change: change.clone() };
        self.enforce_noted(pid, &[change], &decision, why, loud, m)
    }

    /// Gives process `pid` its class's nice value and policy (`policy`, a
    /// [`Change::Policy`]): in one decision when it holds neither, else as
    /// [`Core::change`] would each.
    fn change_class(&mut self, pid: u32, nice: i32, policy: Change, why: &str, m: &mut dyn Machine) {
        let process = self.procs.get(&pid).map(|p| p.info.key());
        match (process, &policy) {
            (Some(process), &Change::Policy { policy: p, priority, slice_ns })
                if !m.holds(pid, &Change::Nice(nice)) && !m.holds(pid, &policy) =>
            {
                let decision = Decision::SetClass { process, nice, policy: p, priority, slice_ns };
                self.enforce_noted(pid, &decision.changes(), &decision, why, true, m);
            }
            _ => {
                self.change(pid, Change::Nice(nice), why, m);
                self.change(pid, policy, why, m);
            }
        }
    }

    /// Carries out `decision`, which gives process `pid` `changes`, and notes what
    /// became of it: the decision logged (`loud`) or only kept for `explain`; failures
    /// noted and counted; a process that is gone forgotten.
    fn enforce_noted(
        &mut self,
        pid: u32,
        changes: &[Change],
        decision: &Decision,
        why: &str,
        loud: bool,
        m: &mut dyn Machine,
    ) -> Applied {
        let what = changes.iter().map(Change::describe).collect::<Vec<_>>().join(" and ");
        match m.enforce(decision) {
            outcome @ (Outcome::Made | Outcome::Shown) => {
                self.counters.changes += changes.len() as u64;
                let would = if outcome == Outcome::Shown { "would " } else { "" };
                let name = self.name(pid, m);
                self.note_as(Some(pid), format!("{would}{what} of {name}: {why}"), loud, m);
                for change in changes {
                    self.record(pid, change);
                }
                Applied::Made
            }
            Outcome::Gone => {
                self.forget(pid, m);
                Applied::Not
            }
            Outcome::Skipped => Applied::Not,
            Outcome::Failed(e) => {
                self.counters.failed_changes += 1;
                let name = self.name(pid, m);
                self.note(Some(pid), format!("cannot {what} of {name}: {e}"), m);
                Applied::Not
            }
        }
    }

    /// Keeps what was set on the process's record (for the table).
    fn record(&mut self, pid: u32, change: &Change) {
        let Some(p) = self.procs.get_mut(&pid) else { return };
        match change {
            Change::Nice(n) => p.nice = Some(*n),
            Change::Policy { policy, priority, .. } => {
                p.policy = Some(match priority {
                    0 => policy.name().to_string(),
                    _ => format!("{} {priority}", policy.name()),
                })
            }
            Change::Slice(_) | Change::Cpus(_) | Change::Cgroup(_) => {}
        }
    }
}

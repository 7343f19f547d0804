//! A machine for the core's tests, held in memory: processes with their settings, the
//! observer's task table, and clocks the tests move by hand ([`FakeMachine::advance`]).
//! Every decision is recorded ([`FakeMachine::take`]) and carried out on those
//! settings, so that what the core reads afterwards is what it set, as on a real
//! machine.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use schedlab_behavior::swap::{SwapDetector, SwapParams};
use schedlab_model::{Event, EventKind, Ns, Pid, Policy};
use schedlab_store::ProcessKey;

use super::{cpu_set, Change, Core, Decision, Enforcer, Kept, Outcome, Predictor, RaiseId, Setup};
use crate::config::Config;
use crate::daemon::boost::Rank;
use crate::daemon::kernel::Kernel;
use crate::dependencies::DependencyRecorder;
use crate::observer::TaskInfo;
use crate::process::ProcInfo;
use crate::settings::CpuSet;

/// The daemon's pid and executable on the fake machine.
pub const SELF_PID: u32 = 999;
pub const SELF_EXE: &str = "/usr/bin/schedlab";
/// How long the fake machine had been up when a test began.
const BOOTED: Duration = Duration::from_secs(100);
/// Clock ticks per second, the unit of [`ProcInfo::start_time`].
const HZ: u64 = 100;

/// A process's scheduling settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub nice: i32,
    pub policy: Policy,
    pub priority: u32,
    pub slice_ns: u64,
    pub cpus: Vec<u32>,
    pub cgroup: String,
    /// `RLIMIT_RTPRIO`.
    pub rt_limit: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            nice: 0,
            policy: Policy::Other,
            priority: 0,
            slice_ns: 0,
            cpus: vec![0, 1],
            cgroup: "/".into(),
            rt_limit: 0,
        }
    }
}

/// A process of the fake machine (its settings are its main thread's).
#[derive(Clone, Debug)]
pub struct FakeProcess {
    pub info: ProcInfo,
    pub settings: Settings,
    pub cpu_time_ns: Ns,
    pub threads: u32,
    /// Its main thread's time run and time waited runnable (`/proc/PID/schedstat`).
    pub schedstat: (Ns, Ns),
    /// It has a display library mapped.
    pub draws: bool,
}

/// The machine.
#[derive(Debug)]
pub struct FakeMachine {
    start: Instant,
    /// Time since the start; a `Cell`, so that reads can cost time ([`FakeMachine::read_cost`]).
    elapsed: std::cell::Cell<Duration>,
    /// What reading a process from /proc costs on this machine (default: nothing).
    pub read_cost: Duration,
    pub processes: BTreeMap<u32, FakeProcess>,
    tasks: HashMap<u32, TaskInfo>,
    /// The settings a process had before each raise in force: what its end gives back.
    raised: HashMap<RaiseId, Settings>,
    /// The settings each process had before its first change: what a restore gives back.
    originals: HashMap<u32, Settings>,
    /// The programs whose execs wake the reader at once.
    pub exec_wakes: BTreeSet<String>,
    decisions: Vec<Decision>,
    /// Processes whose settings a user changed since schedlab set them.
    pub changed_by_user: HashSet<u32>,
    groups: BTreeSet<String>,
    /// Why no cpuset group can be made here (cgroup v2), if none can.
    pub no_groups: Option<String>,
}

impl FakeMachine {
    /// Two CPUs, no process.
    pub fn new() -> FakeMachine {
        FakeMachine {
            start: Instant::now(),
            elapsed: std::cell::Cell::new(Duration::ZERO),
            read_cost: Duration::ZERO,
            processes: BTreeMap::new(),
            tasks: HashMap::new(),
            raised: HashMap::new(),
            originals: HashMap::new(),
            exec_wakes: BTreeSet::new(),
            decisions: Vec::new(),
            changed_by_user: HashSet::new(),
            groups: BTreeSet::new(),
            no_groups: None,
        }
    }

    /// A core with configuration `config` (TOML) and `model`, started now, on this
    /// machine's two CPUs.
    /// With `learn = true`, it knows no program's habits yet.
    pub fn core(&self, config: &str, model: Option<Box<dyn Predictor>>) -> Core {
        self.core_knowing(config, model, schedlab_behavior::habits::Habits::default())
    }

    /// [`FakeMachine::core`], knowing `habits` from earlier runs when learning is on.
    pub fn core_knowing(
        &self,
        config: &str,
        model: Option<Box<dyn Predictor>>,
        habits: schedlab_behavior::habits::Habits,
    ) -> Core {
        let config = Config::parse(config, "test.toml").expect("a valid configuration");
        let setup = Setup {
            cpus: vec![0, 1],
            self_pid: SELF_PID,
            self_exe: SELF_EXE.into(),
            deps: DependencyRecorder::with_detector(SwapDetector::new(SwapParams::default())),
            slices: None,
            model,
            habits: config.daemon.learn.then_some(habits),
        };
        Core::new(config, setup, self.now())
    }

    /// Starts process `pid` named `comm` (program `/usr/bin/<comm>`, a child of pid 1)
    /// `age` ago, with the default settings.
    pub fn spawn(&mut self, pid: u32, comm: &str, age: Duration) -> &mut FakeProcess {
        let started = (BOOTED + self.elapsed.get()).saturating_sub(age);
        let info = ProcInfo {
            pid,
            start_time: started.as_millis() as u64 * HZ / 1000,
            comm: comm.into(),
            exe: format!("/usr/bin/{comm}"),
            ppid: 1,
            ..ProcInfo::default()
        };
        self.tasks.insert(pid, TaskInfo { tgid: pid, comm: comm.into(), exe: None });
        self.processes.insert(
            pid,
            FakeProcess {
                info,
                settings: Settings::default(),
                cpu_time_ns: 0,
                threads: 1,
                schedstat: (0, 0),
                draws: false,
            },
        );
        self.processes.get_mut(&pid).expect("just inserted")
    }

    /// Process `pid` exits: the event that says so.
    pub fn exit(&mut self, pid: u32) -> Event {
        self.exit_having_lived(pid, None)
    }

    /// Process `pid` exits, its main thread having lived `life`.
    pub fn exit_having_lived(&mut self, pid: u32, life: Option<schedlab_model::Life>) -> Event {
        self.processes.remove(&pid);
        self.tasks.remove(&pid);
        self.event(EventKind::Exit { pid: Pid(pid), code: 0, life })
    }

    /// Process `pid` exec'd its program: the event that says so.
    pub fn exec(&self, pid: u32) -> Event {
        let p = &self.processes[&pid];
        let kind = EventKind::Exec {
            pid: Pid(pid),
            tgid: Pid(pid),
            comm: p.info.comm.clone(),
            path: p.info.exe.clone(),
        };
        self.event(kind)
    }

    /// An event now.
    pub fn event(&self, kind: EventKind) -> Event {
        Event { time: self.monotonic_ns(), kind }
    }

    /// Moves both clocks on.
    pub fn advance(&mut self, by: Duration) {
        self.elapsed.set(self.elapsed.get() + by);
    }

    /// The decisions since the last call, in order.
    pub fn take(&mut self) -> Vec<Decision> {
        std::mem::take(&mut self.decisions)
    }

    /// Process `pid`'s identity.
    pub fn key(&self, pid: u32) -> ProcessKey {
        self.processes[&pid].info.key()
    }

    /// The decision that gives process `pid` `change`.
    pub fn set(&self, pid: u32, change: Change) -> Decision {
        Decision::Set { process: self.key(pid), change }
    }

    /// The decision that gives process `pid` a class of nice value `nice` and the
    /// fair policy `policy`.
    pub fn set_class(&self, pid: u32, nice: i32, policy: Policy) -> Decision {
        Decision::SetClass { process: self.key(pid), nice, policy, priority: 0, slice_ns: 0 }
    }

    /// Process `pid`'s settings now.
    pub fn settings_of(&self, pid: u32) -> &Settings {
        &self.processes[&pid].settings
    }

    fn settings(&self, pid: u32) -> Option<&Settings> {
        self.processes.get(&pid).map(|p| &p.settings)
    }
}

impl Kernel for FakeMachine {
    fn now(&self) -> Instant {
        self.start + self.elapsed.get()
    }

    fn monotonic_ns(&self) -> Ns {
        (BOOTED + self.elapsed.get()).as_nanos() as Ns
    }

    fn alive(&self, tid: u32) -> bool {
        self.processes.contains_key(&tid) || self.tasks.contains_key(&tid)
    }

    fn start_time(&self, pid: u32) -> Option<u64> {
        self.processes.get(&pid).map(|p| p.info.start_time)
    }

    fn process(&self, pid: u32) -> Option<ProcInfo> {
        self.elapsed.set(self.elapsed.get() + self.read_cost);
        self.processes.get(&pid).map(|p| p.info.clone())
    }

    fn age(&self, start_time: u64) -> Duration {
        (BOOTED + self.elapsed.get()).saturating_sub(Duration::from_millis(start_time * 1000 / HZ))
    }

    fn usage(&self, pid: u32) -> Option<(Ns, u32)> {
        self.processes.get(&pid).map(|p| (p.cpu_time_ns, p.threads))
    }

    fn schedstat(&self, pid: u32) -> Option<(Ns, Ns)> {
        self.processes.get(&pid).map(|p| p.schedstat)
    }

    fn draws(&self, pid: u32) -> bool {
        self.processes.get(&pid).is_some_and(|p| p.draws)
    }

    fn rank(&self, tid: Pid) -> Option<Rank> {
        let s = self.settings(tid.0)?;
        Some(match s.policy {
            Policy::Fifo | Policy::Rr => Rank::Rt { policy: s.policy, priority: s.priority },
            Policy::Idle => Rank::Idle,
            Policy::Other | Policy::Batch => Rank::Fair { nice: s.nice },
        })
    }

    fn holds(&self, pid: u32, change: &Change) -> bool {
        let Some(s) = self.settings(pid) else { return false };
        match change {
            Change::Nice(n) => s.nice == *n,
            Change::Policy { policy, priority, slice_ns } => {
                s.policy == *policy && s.priority == *priority && (*slice_ns == 0 || s.slice_ns == *slice_ns)
            }
            Change::Slice(ns) => s.slice_ns == *ns,
            Change::Cpus(cpus) => s.cpus == *cpus,
            Change::Cgroup(path) => s.cgroup == *path,
        }
    }

    fn rt_priority_limit(&self, pid: u32) -> Option<u32> {
        self.settings(pid).map(|s| s.rt_limit)
    }

    fn nice(&self, pid: u32) -> Option<i32> {
        self.settings(pid).map(|s| s.nice)
    }

    fn affinity(&self, pid: u32) -> Option<CpuSet> {
        self.settings(pid).map(|s| cpu_set(&s.cpus))
    }

    fn task(&self, tid: u32) -> Option<&TaskInfo> {
        self.tasks.get(&tid)
    }

    fn tgid(&self, tid: u32) -> Option<u32> {
        self.tasks.get(&tid).map(|t| t.tgid)
    }

    fn program(&self, tid: u32) -> Option<String> {
        self.processes.get(&self.tgid(tid)?).map(|p| p.info.exe.clone())
    }

    fn syscall_counts(&self) -> HashMap<(u32, u32), u64> {
        HashMap::new()
    }
}

/// Gives `s` what `change` sets.
fn apply(s: &mut Settings, change: &Change) {
    match change {
        Change::Nice(n) => s.nice = *n,
        Change::Policy { policy, priority, slice_ns } => {
            (s.policy, s.priority, s.slice_ns) = (*policy, *priority, *slice_ns)
        }
        Change::Slice(ns) => s.slice_ns = *ns,
        Change::Cpus(cpus) => s.cpus = cpus.clone(),
        Change::Cgroup(path) => s.cgroup = path.clone(),
    }
}

impl Enforcer for FakeMachine {
    fn enforce(&mut self, decision: &Decision) -> Outcome {
        self.decisions.push(decision.clone());
        match decision {
            Decision::Set { process, .. } | Decision::SetClass { process, .. } => {
                let Some(p) = self.processes.get_mut(&process.pid.0).filter(|p| p.info.key() == *process)
                else {
                    return Outcome::Gone;
                };
                self.originals.entry(process.pid.0).or_insert_with(|| p.settings.clone());
                for change in decision.changes() {
                    apply(&mut p.settings, &change);
                }
            }
            Decision::Restore { process } => {
                let Some(p) = self.processes.get_mut(&process.pid.0).filter(|p| p.info.key() == *process)
                else {
                    return Outcome::Gone;
                };
                if let Some(original) = self.originals.remove(&process.pid.0) {
                    p.settings = original;
                }
            }
            Decision::WakeAtExec { program, on } => {
                match on {
                    true => self.exec_wakes.insert(program.clone()),
                    false => self.exec_wakes.remove(program),
                };
            }
            Decision::Raise { process, raise, id, .. } => {
                let Some(p) = self.processes.get_mut(&process.pid.0).filter(|p| p.info.key() == *process)
                else {
                    return Outcome::Gone;
                };
                self.raised.insert(*id, p.settings.clone());
                apply(&mut p.settings, &raise.as_change());
            }
            Decision::EndRaise { process, id } => {
                let (Some(old), Some(p)) = (self.raised.remove(id), self.processes.get_mut(&process.pid.0))
                else {
                    return Outcome::Gone;
                };
                let s = &mut p.settings;
                (s.nice, s.policy, s.priority, s.slice_ns) =
                    (old.nice, old.policy, old.priority, old.slice_ns);
            }
            Decision::Release { process } => {
                self.changed_by_user.remove(&process.pid.0);
            }
            Decision::MakeGroup { class, .. } => match &self.no_groups {
                Some(why) => return Outcome::Failed(why.clone()),
                None => {
                    self.groups.insert(class.clone());
                }
            },
            Decision::Adopt { .. }
            | Decision::Provider { .. }
            | Decision::Flow { .. }
            | Decision::Renew { .. }
            | Decision::Forget { .. }
            | Decision::Watch { .. }
            | Decision::Profile { .. } => {}
        }
        Outcome::Made
    }

    fn kept(&self, process: ProcessKey) -> Kept {
        match self.changed_by_user.contains(&process.pid.0) {
            true => Kept::Changed,
            false => Kept::Yes,
        }
    }

    fn group_path(&self, class: &str) -> Option<String> {
        self.groups.contains(class).then(|| format!("/schedlab/{class}"))
    }
}

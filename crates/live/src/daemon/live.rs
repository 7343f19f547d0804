//! The live machine the daemon runs the core on: the core's reads ([`Kernel`]) answered
//! from /proc, the scheduling getters and the observer; its decisions ([`Enforcer`])
//! carried out through the journaled actuator, cpuset cgroups and the observer's marks,
//! or, in a dry run, only shown (the observer's marks and windows still change: they
//! change what is seen, not what runs).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use schedlab_model::{Ns, Pid, Policy};
use schedlab_store::{JournalId, ProcessKey};

use super::boost::Rank;
use super::core::{cpu_set, Change, Decision, Enforcer, Kept, Outcome, Raise, RaiseId};
use super::expiry::Expiry;
use super::kernel::Kernel;
use super::sched_ext::SchedExt;
use crate::actuator::{Actuator, ActuatorError};
use crate::cgroup::CpusetGroup;
use crate::observer::{Observer, SchedEvents, TaskInfo};
use crate::process::{ProcFields, ProcInfo, ProcessHandle};
use crate::settings::{self, CpuSet};

/// The live machine.
#[derive(Debug)]
pub struct Live<'s> {
    /// The daemon's eyes: events, tasks, system-call counts; threads watched.
    pub observer: Observer,
    /// Every change journaled before it is applied, and undone at the end.
    pub actuator: Actuator<'s>,
    /// The cpuset cgroups made for classes that ask for one, by class.
    pub groups: BTreeMap<String, CpusetGroup>,
    /// Decisions are shown, not carried out.
    pub dry_run: bool,
    /// Handles of the processes acted on lately: a pidfd each, so at most
    /// [`MAX_HANDLES`] (a machine of thousands of managed processes must not use up the
    /// daemon's descriptors); one not held is opened again when needed.
    handles: Handles,
    /// What the observer records of switches and wakings outside profiling windows.
    sched_events: SchedEvents,
    /// The raises in force: their process and the journal entries each made.
    raises: HashMap<RaiseId, (ProcessKey, Vec<JournalId>)>,
    /// Ends the raises whose time ran out, whatever the loop is doing.
    pub expiry: Expiry,
    /// schedlab's sched_ext scheduler, when it enforces the plan and the boosts
    /// ([`SchedExt`] says which decisions it takes).
    pub sched_ext: Option<SchedExt>,
    /// What of a process is read from /proc: what the rules match on.
    proc_fields: ProcFields,
}

impl<'s> Live<'s> {
    /// The machine the daemon acts on through `observer` and `actuator`; its observer
    /// records `sched_events` outside profiling windows; of a process, it reads
    /// `proc_fields` (and what every process has) from /proc.
    pub fn new(
        observer: Observer,
        actuator: Actuator<'s>,
        expiry: Expiry,
        sched_events: SchedEvents,
        proc_fields: ProcFields,
        dry_run: bool,
    ) -> Live<'s> {
        Live {
            observer,
            actuator,
            groups: BTreeMap::new(),
            dry_run,
            handles: Handles::default(),
            sched_events,
            raises: HashMap::new(),
            expiry,
            sched_ext: None,
            proc_fields,
        }
    }
}

/// The most process handles (pidfds) held at once.
pub const MAX_HANDLES: usize = 256;

/// Process handles by pid, the least recently used dropped past [`MAX_HANDLES`].
#[derive(Debug, Default)]
struct Handles {
    by_pid: HashMap<u32, (ProcessHandle, u64)>,
    /// Counts uses: the last use of each handle is when it was.
    uses: u64,
}

impl Handles {
    /// The handle of `process`, opened if it is not held; `None` if the pid is not that
    /// process (any more).
    fn get(&mut self, process: ProcessKey) -> Option<&ProcessHandle> {
        self.uses += 1;
        let held = self.by_pid.get(&process.pid.0).is_some_and(|(h, _)| h.key() == process);
        if !held {
            let h = ProcessHandle::open(process.pid).ok().filter(|h| h.start_time() == process.start_time)?;
            if self.by_pid.len() >= MAX_HANDLES {
                let oldest = self.by_pid.iter().min_by_key(|(_, (_, used))| *used).map(|(&pid, _)| pid);
                self.by_pid.remove(&oldest.expect("full"));
            }
            self.by_pid.insert(process.pid.0, (h, 0));
        }
        let (h, used) = self.by_pid.get_mut(&process.pid.0).expect("held or just opened");
        *used = self.uses;
        Some(h)
    }

    fn remove(&mut self, pid: u32) {
        self.by_pid.remove(&pid);
    }

    fn held(&self, process: ProcessKey) -> Option<&ProcessHandle> {
        self.by_pid.get(&process.pid.0).map(|(h, _)| h).filter(|h| h.key() == process)
    }
}

impl Kernel for Live<'_> {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn monotonic_ns(&self) -> Ns {
        crate::process::monotonic_ns()
    }

    fn alive(&self, tid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{tid}")).exists()
    }

    fn start_time(&self, pid: u32) -> Option<u64> {
        crate::process::start_time(Pid(pid)).ok()
    }

    fn process(&self, pid: u32) -> Option<ProcInfo> {
        ProcInfo::read_some(pid, self.proc_fields).ok()
    }

    fn age(&self, start_time: u64) -> Duration {
        crate::process::age(start_time)
    }

    fn usage(&self, pid: u32) -> Option<(Ns, u32)> {
        crate::process::usage(Pid(pid)).ok()
    }

    fn schedstat(&self, pid: u32) -> Option<(Ns, Ns)> {
        crate::process::schedstat(pid).ok()
    }

    fn draws(&self, pid: u32) -> bool {
        crate::process::draws_for_a_person(pid).unwrap_or(false)
    }

    fn rank(&self, tid: Pid) -> Option<Rank> {
        let p = settings::get_policy(tid).ok()?;
        Some(match p.policy {
            Policy::Fifo | Policy::Rr => Rank::Rt { policy: p.policy, priority: p.rt_priority },
            Policy::Idle => Rank::Idle,
            Policy::Other | Policy::Batch => Rank::Fair { nice: settings::get_nice(tid).ok()? },
        })
    }

    fn rt_priority_limit(&self, pid: u32) -> Option<u32> {
        settings::rt_priority_limit(Pid(pid)).ok()
    }

    fn holds(&self, pid: u32, change: &Change) -> bool {
        let tid = Pid(pid);
        match change {
            Change::Nice(n) => settings::get_nice(tid).is_ok_and(|now| now == *n),
            Change::Policy { policy, priority, slice_ns } => settings::get_policy(tid).is_ok_and(|now| {
                now.policy == *policy
                    && now.rt_priority == *priority
                    && (*slice_ns == 0 || now.sched_runtime_ns == *slice_ns)
            }),
            Change::Slice(ns) => settings::get_policy(tid).is_ok_and(|now| now.sched_runtime_ns == *ns),
            Change::Cpus(c) => match &self.sched_ext {
                Some(ext) => ext.holds_cpus(pid, c),
                None => settings::get_affinity(tid).is_ok_and(|now| now == cpu_set(c)),
            },
            Change::Cgroup(path) => crate::cgroup::current_cpuset_cgroup(tid).is_ok_and(|now| now == *path),
        }
    }

    fn nice(&self, pid: u32) -> Option<i32> {
        settings::get_nice(Pid(pid)).ok()
    }

    fn affinity(&self, pid: u32) -> Option<CpuSet> {
        settings::get_affinity(Pid(pid)).ok()
    }

    fn task(&self, tid: u32) -> Option<&TaskInfo> {
        self.observer.task(tid)
    }

    fn tgid(&self, tid: u32) -> Option<u32> {
        crate::process::tgid_of(tid)
    }

    fn program(&self, tid: u32) -> Option<String> {
        crate::process::exe_of(tid)
    }

    fn syscall_counts(&self) -> HashMap<(u32, u32), u64> {
        self.observer.syscall_counts().unwrap_or_default()
    }
}

/// What a call of the actuator or the observer came to.
fn outcome<E: std::fmt::Display, T>(result: Result<T, E>) -> Outcome {
    match result {
        Ok(_) => Outcome::Made,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

impl Enforcer for Live<'_> {
    fn enforce(&mut self, decision: &Decision) -> Outcome {
        if let Some(outcome) = self.sched_ext.as_mut().and_then(|ext| ext.enforce(decision)) {
            return outcome;
        }
        match decision {
            // Only a sched_ext scheduler acts on a dependency or a flow itself.
            Decision::Provider { .. } | Decision::Flow { .. } => Outcome::Skipped,
            Decision::Watch { tid, on } => outcome(self.observer.set_watched(*tid, *on)),
            Decision::WakeAtExec { program, on } => outcome(self.observer.set_exec_wake(program, *on)),
            Decision::Profile { on } => {
                let sched_events = if *on { SchedEvents::All } else { self.sched_events };
                outcome(
                    self.observer
                        .set_syscall_hook(*on)
                        .and_then(|()| self.observer.set_sched_events(sched_events)),
                )
            }
            Decision::Forget { process } => {
                self.handles.remove(process.pid.0);
                let expiry = &self.expiry;
                self.raises.retain(|id, (k, _)| {
                    let keep = k != process;
                    if !keep {
                        expiry.end(*id);
                    }
                    keep
                });
                self.actuator.forget(*process);
                Outcome::Made
            }
            Decision::Release { process } => match self.handles.get(*process) {
                Some(h) => outcome(self.actuator.release(h)),
                None => Outcome::Skipped,
            },
            _ if self.dry_run => Outcome::Shown,
            Decision::Restore { process } => match self.handles.get(*process) {
                Some(h) => match self.actuator.restore(h) {
                    Err(ActuatorError::NotSame(_)) => Outcome::Gone,
                    other => outcome(other),
                },
                None => Outcome::Skipped,
            },
            Decision::MakeGroup { .. }
                if crate::cgroup::Hierarchy::detect()
                    .is_ok_and(|h| h.version() == crate::cgroup::Version::V2) =>
            {
                Outcome::Failed(
                    "with cgroup v2 a cpuset group would take processes out of their systemd units \
                     (their MemoryMax, TasksMax, device and IP filters)"
                        .into(),
                )
            }
            Decision::MakeGroup { class, cpus } => match CpusetGroup::create(class, &cpu_set(cpus)) {
                Ok(g) => {
                    self.groups.insert(class.clone(), g);
                    Outcome::Made
                }
                Err(e) => Outcome::Failed(e.to_string()),
            },
            Decision::SetClass { process, nice, policy, priority, slice_ns } => {
                let Some(h) = self.handles.get(*process) else { return Outcome::Skipped };
                match self.actuator.set_nice_and_policy(h, *nice, *policy, *priority, *slice_ns) {
                    Err(ActuatorError::NotSame(_)) => Outcome::Gone,
                    other => outcome(other),
                }
            }
            Decision::Set { process, change } => {
                let Some(h) = self.handles.get(*process) else { return Outcome::Skipped };
                let result = match change {
                    Change::Nice(n) => self.actuator.set_nice(h, *n),
                    Change::Policy { policy, priority, slice_ns } => {
                        self.actuator.set_policy(h, *policy, *priority, *slice_ns)
                    }
                    Change::Slice(ns) => {
                        let current =
                            settings::get_policy(process.pid).map(|v| v.policy).unwrap_or(Policy::Other);
                        if current.is_rt() {
                            return Outcome::Skipped;
                        }
                        self.actuator.set_policy(h, current, 0, *ns)
                    }
                    Change::Cpus(cpus) => self.actuator.set_affinity(h, &cpu_set(cpus)),
                    Change::Cgroup(path) => self.actuator.set_cgroup(h, path),
                };
                match result {
                    Err(ActuatorError::NotSame(_)) => Outcome::Gone,
                    other => outcome(other),
                }
            }
            Decision::Raise { process, raise, id, until } => {
                let Some(h) = self.handles.get(*process) else { return Outcome::Skipped };
                let result = match *raise {
                    Raise::Nice(n) => self.actuator.raise_nice(h, n),
                    Raise::RealTime { policy, priority } => self.actuator.raise_policy(h, policy, priority),
                };
                match result {
                    Ok(ids) => {
                        self.expiry.lease(*id, *process, self.actuator.values(*process, &ids), *until);
                        self.raises.insert(*id, (*process, ids));
                        Outcome::Made
                    }
                    Err(ActuatorError::NotSame(_)) => Outcome::Gone,
                    Err(e) => Outcome::Failed(e.to_string()),
                }
            }
            Decision::Renew { id, until } => {
                self.expiry.renew(*id, *until);
                Outcome::Made
            }
            Decision::EndRaise { process, id } => {
                self.expiry.end(*id);
                let Some((_, ids)) = self.raises.remove(id) else { return Outcome::Skipped };
                let Some(h) = self.handles.get(*process) else { return Outcome::Skipped };
                let mut result = Ok(true);
                for jid in ids.into_iter().rev() {
                    result = result.and(self.actuator.revert(h, jid));
                }
                outcome(result)
            }
            Decision::Adopt { child, parent } => match self.handles.get(*child) {
                Some(h) => outcome(self.actuator.adopt(h, *parent)),
                None => Outcome::Skipped,
            },
        }
    }

    fn kept(&self, process: ProcessKey) -> Kept {
        if !self.actuator.changes(process) {
            return Kept::Yes;
        }
        // A handle not held is opened only when a value differs: the check of every
        // managed process at every plan then costs the reads of its values alone.
        let opened;
        let h = match self.handles.held(process) {
            Some(h) => h,
            None if !self.actuator.differs(process) => return Kept::Yes,
            None => match ProcessHandle::open(process.pid) {
                Ok(h) if h.start_time() == process.start_time => {
                    opened = h;
                    &opened
                }
                _ => return Kept::Gone,
            },
        };
        if !self.actuator.changed_externally(h) {
            Kept::Yes
        } else if h.is_same() {
            Kept::Changed
        } else {
            Kept::Gone
        }
    }

    fn group_path(&self, class: &str) -> Option<String> {
        self.groups.get(class).map(CpusetGroup::path)
    }
}

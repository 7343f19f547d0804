//! The sched_ext enforcer: the core's decisions carried out by schedlab's own sched_ext
//! scheduler (crates/ext) instead of system calls, where the kernel has sched_ext.
//!
//! What it takes over, and how (everything else, such as a class's nice value or
//! policy, an administrator's explicit choice, stays with the journaled actuator):
//! - **CPU plans** (`Set` of `Cpus`, paper 000): each distinct CPU set of the plan is a
//!   class of the scheduler, with its own queue and those CPUs; a process planned on a
//!   set joins its class. The class's weight is 100 per member process, so that between
//!   classes each process weighs what it would on its own. Nothing is journaled: no
//!   process's affinity changes, and unloading the scheduler undoes it all.
//! - **Boosts** (paper 004): a `Provider` decision names a requester's provider in the
//!   scheduler's map; from then on the scheduler runs that provider in its requester's
//!   turn whenever the requester wakes it, with no round trip through user space. The
//!   `Raise` that follows needs nothing more (it is made: the scheduler carries it), nor
//!   does its end. A provider entry stays while SWAP keeps naming it; the map is an LRU,
//!   so stale entries of exited threads give way to new ones.
//! - **cpuset cgroups**: not needed (a class has its queue); skipped.

use std::collections::HashMap;

use schedlab_ext::plan::{ClassPlan, MAX_CLASSES};
use schedlab_ext::scheduler::{ExtError, Scheduler};
use schedlab_ext::stats::{Exit, Stats as ExtStats};

use super::core::{Change, Decision, Outcome};

/// The scheduler, and the classes made of the plan's CPU sets.
#[derive(Debug)]
pub struct SchedExt {
    scheduler: Scheduler,
    /// Each CPU set of the plan and its class id.
    classes: HashMap<Vec<u32>, u32>,
    /// Each process's class id.
    members: HashMap<u32, u32>,
}

impl SchedExt {
    /// Drives `scheduler` (loaded).
    pub fn new(scheduler: Scheduler) -> SchedExt {
        SchedExt { scheduler, classes: HashMap::new(), members: HashMap::new() }
    }

    /// Carries out `decision` if it is the scheduler's to carry out; `None` leaves it to
    /// the system calls.
    pub fn enforce(&mut self, decision: &Decision) -> Option<Outcome> {
        let result = match decision {
            Decision::Set { process, change: Change::Cpus(cpus) } => self.join(process.pid.0, cpus),
            Decision::Set { change: Change::Cgroup(_), .. } | Decision::MakeGroup { .. } => {
                return Some(Outcome::Skipped)
            }
            Decision::Provider { requester, provider, confidence } => {
                self.scheduler.set_provider(requester.0, provider.0, *confidence)
            }
            Decision::Raise { .. } | Decision::Renew { .. } | Decision::EndRaise { .. } => Ok(()),
            Decision::Forget { process } => {
                // The system calls' side forgets it too.
                let _ = self.leave(process.pid.0);
                return None;
            }
            _ => return None,
        };
        Some(match result {
            Ok(()) => Outcome::Made,
            Err(e) => Outcome::Failed(e.to_string()),
        })
    }

    /// Whether process `tgid` is in the class of CPU set `cpus`.
    pub fn holds_cpus(&self, tgid: u32, cpus: &[u32]) -> bool {
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        self.classes.get(&cpus).is_some_and(|c| self.members.get(&tgid) == Some(c))
    }

    /// Puts process `tgid` in the class of CPU set `cpus`.
    fn join(&mut self, tgid: u32, cpus: &[u32]) -> Result<(), ExtError> {
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        let next = self.classes.len() as u32 + 1;
        let class = match self.classes.get(&cpus) {
            Some(&c) => c,
            None if next < MAX_CLASSES => {
                self.classes.insert(cpus.clone(), next);
                next
            }
            // Out of queues: the default class (every CPU) holds the rest.
            None => 0,
        };
        if let Some(old) = self.members.insert(tgid, class) {
            if old != class {
                self.weigh(old)?;
            }
        }
        self.weigh(class)?;
        self.scheduler.set_process(tgid, class, 0)?;
        self.scheduler.publish();
        Ok(())
    }

    /// Takes process `tgid` out of its class.
    fn leave(&mut self, tgid: u32) -> Result<(), ExtError> {
        let Some(class) = self.members.remove(&tgid) else { return Ok(()) };
        self.weigh(class)?;
        self.scheduler.forget_process(tgid)?;
        self.scheduler.publish();
        Ok(())
    }

    /// Gives class `class` its CPU set and a weight of 100 per member.
    fn weigh(&mut self, class: u32) -> Result<(), ExtError> {
        if class == 0 {
            return Ok(());
        }
        let Some(cpus) = self.classes.iter().find(|(_, &c)| c == class).map(|(s, _)| s.clone()) else {
            return Ok(());
        };
        let members = self.members.values().filter(|&&c| c == class).count() as u32;
        let plan = ClassPlan { cpus, weight: (100 * members.max(1)).min(10_000), slice_ns: 0 };
        self.scheduler.set_class(class, &plan)
    }

    /// Why the kernel ended the scheduler, once it has.
    pub fn exit(&self) -> Option<Exit> {
        self.scheduler.exit()
    }

    /// The scheduler's counters.
    pub fn stats(&self) -> Option<ExtStats> {
        self.scheduler.stats().ok()
    }

    /// Unloads the scheduler (every task goes back to the fair class); the exit the
    /// kernel reported.
    pub fn unload(self) -> Option<Exit> {
        self.scheduler.unload()
    }
}

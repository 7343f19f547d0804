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
    classes: Classes,
}

impl SchedExt {
    /// Drives `scheduler` (loaded).
    pub fn new(scheduler: Scheduler) -> SchedExt {
        SchedExt { scheduler, classes: Classes::default() }
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
        self.classes.holds(tgid, cpus)
    }

    /// Puts process `tgid` in the class of CPU set `cpus`.
    fn join(&mut self, tgid: u32, cpus: &[u32]) -> Result<(), ExtError> {
        let (class, changed) = self.classes.join(tgid, cpus);
        for (id, plan) in &changed {
            self.scheduler.set_class(*id, plan)?;
        }
        self.scheduler.set_process(tgid, class, 0)?;
        self.scheduler.publish();
        Ok(())
    }

    /// Takes process `tgid` out of its class.
    fn leave(&mut self, tgid: u32) -> Result<(), ExtError> {
        let Some(changed) = self.classes.leave(tgid) else { return Ok(()) };
        for (id, plan) in &changed {
            self.scheduler.set_class(*id, plan)?;
        }
        self.scheduler.forget_process(tgid)?;
        self.scheduler.publish();
        Ok(())
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

/// The plan's CPU sets as the scheduler's classes: which class each process is in, and
/// each class's plan (its CPUs, a weight of 100 per member). Bookkeeping only: what
/// changes is handed back for the scheduler's maps.
#[derive(Debug, Default)]
struct Classes {
    /// Each CPU set (sorted) and its class id.
    ids: HashMap<Vec<u32>, u32>,
    /// By class id − 1: the class's CPU set and how many processes it has.
    sets: Vec<(Vec<u32>, u32)>,
    /// Each process's class id (0: the default class).
    members: HashMap<u32, u32>,
}

impl Classes {
    fn sorted(cpus: &[u32]) -> Vec<u32> {
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }

    /// Whether process `tgid` is in the class of CPU set `cpus`.
    fn holds(&self, tgid: u32, cpus: &[u32]) -> bool {
        self.ids.get(&Self::sorted(cpus)).is_some_and(|c| self.members.get(&tgid) == Some(c))
    }

    /// Puts process `tgid` in the class of CPU set `cpus` (a new class for a new set,
    /// the default class once the scheduler's queues are used up): its class id, and
    /// the plans of the classes that changed.
    fn join(&mut self, tgid: u32, cpus: &[u32]) -> (u32, Vec<(u32, ClassPlan)>) {
        let cpus = Self::sorted(cpus);
        let class = match self.ids.get(&cpus) {
            Some(&c) => c,
            None if (self.sets.len() as u32 + 1) < MAX_CLASSES => {
                self.sets.push((cpus.clone(), 0));
                let id = self.sets.len() as u32;
                self.ids.insert(cpus, id);
                id
            }
            None => 0,
        };
        let old = self.members.insert(tgid, class);
        if old == Some(class) {
            return (class, Vec::new());
        }
        let changed = [old.and_then(|o| self.count(o, -1)), self.count(class, 1)];
        (class, changed.into_iter().flatten().collect())
    }

    /// Takes process `tgid` out of its class: the plan of the class, if it changed;
    /// `None` if the process was in none.
    fn leave(&mut self, tgid: u32) -> Option<Vec<(u32, ClassPlan)>> {
        let class = self.members.remove(&tgid)?;
        Some(self.count(class, -1).into_iter().collect())
    }

    /// Adds `delta` members to class `class`: its new plan (none for the default class).
    fn count(&mut self, class: u32, delta: i32) -> Option<(u32, ClassPlan)> {
        let (cpus, members) = self.sets.get_mut(class.checked_sub(1)? as usize)?;
        *members = members.saturating_add_signed(delta);
        let weight = (100 * (*members).max(1)).min(10_000);
        Some((class, ClassPlan { cpus: cpus.clone(), weight, slice_ns: 0 }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(changed: &[(u32, ClassPlan)]) -> Vec<(u32, u32)> {
        changed.iter().map(|(c, p)| (*c, p.weight)).collect()
    }

    #[test]
    fn each_cpu_set_is_a_class_weighted_by_its_members() {
        let mut classes = Classes::default();
        assert_eq!(weights(&classes.join(10, &[1, 0]).1), [(1, 100)]);
        let (class, changed) = classes.join(11, &[0, 1, 1]);
        assert_eq!((class, weights(&changed)), (1, vec![(1, 200)]), "the same set, sorted");
        assert_eq!(changed[0].1.cpus, [0, 1]);
        assert!(classes.holds(11, &[1, 0]) && !classes.holds(11, &[0]));
        assert!(classes.join(11, &[0, 1]).1.is_empty(), "no change, nothing to write");
        assert_eq!(weights(&classes.join(11, &[2]).1), [(1, 100), (2, 100)], "a move reweighs both");
        assert_eq!(weights(&classes.leave(10).unwrap()), [(1, 100)], "an empty class keeps weight 100");
        assert_eq!(classes.leave(10), None);
    }

    #[test]
    fn past_the_schedulers_queues_processes_go_to_the_default_class() {
        let mut classes = Classes::default();
        for cpu in 0..MAX_CLASSES - 1 {
            assert_eq!(classes.join(cpu, &[cpu]).0, cpu + 1);
        }
        let (class, changed) = classes.join(1000, &[1000]);
        assert_eq!((class, changed.len()), (0, 0));
        assert!(!classes.holds(1000, &[1000]) && classes.members[&1000] == 0);
    }
}

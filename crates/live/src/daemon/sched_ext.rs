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
//! - **Flows** (paper 001): a `Flow` decision (a process exec'd a program with a PFS)
//!   writes the program's predicted bursts to the scheduler's map, under an id of the
//!   program's, and names that id in the process's plan; the scheduler follows the flow
//!   at each slice's end and adapts it by x/y itself. The bursts are written again at a
//!   later exec only when one of them has moved by more than 10 % in user space's
//!   learning since (an exec-heavy program would otherwise cost hundreds of map writes
//!   per exec). The EEVDF slices of the system calls' PFS (`Set` of `Slice`) mean
//!   nothing to the scheduler and are skipped.
//! - **cpuset cgroups**: not needed (a class has its queue); skipped.

use std::collections::HashMap;

use schedlab_ext::plan::{ClassPlan, MAX_CLASSES, MAX_FLOW_BURSTS};
use schedlab_ext::scheduler::{ExtError, Scheduler};
use schedlab_ext::stats::{Exit, Stats as ExtStats};

use super::core::{Change, Decision, Outcome};
use super::stats::ExtProcess;

/// The scheduler, the classes made of the plan's CPU sets, and the flows handed to it.
#[derive(Debug)]
pub struct SchedExt {
    scheduler: Scheduler,
    classes: Classes,
    flows: Flows,
}

impl SchedExt {
    /// Drives `scheduler` (loaded).
    pub fn new(scheduler: Scheduler) -> SchedExt {
        SchedExt { scheduler, classes: Classes::default(), flows: Flows::default() }
    }

    /// Carries out `decision` if it is the scheduler's to carry out; `None` leaves it to
    /// the system calls.
    pub fn enforce(&mut self, decision: &Decision) -> Option<Outcome> {
        let result = match decision {
            Decision::Set { process, change: Change::Cpus(cpus) } => self.join(process.pid.0, cpus),
            Decision::Set { change: Change::Cgroup(_) | Change::Slice(_), .. }
            | Decision::MakeGroup { .. } => return Some(Outcome::Skipped),
            Decision::Flow { process, program, bursts } => self.follow(process.0, program, bursts),
            Decision::Provider { requester, provider, confidence } => {
                self.scheduler.set_provider(requester.0, provider.0, *confidence)
            }
            Decision::Raise { .. } | Decision::Renew { .. } | Decision::EndRaise { .. } => Ok(()),
            Decision::Forget { process } | Decision::Restore { process } => {
                // The system calls' side forgets it (undoes its settings) too.
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

    /// How the scheduler holds process `tgid`: its class and that class's queue, its
    /// flow and the flow's first bursts as adapted in the scheduler.
    pub fn explain(&self, tgid: u32) -> ExtProcess {
        let class = self.classes.class_of(tgid);
        let flow = self.flows.program_of(tgid);
        let queued = self.stats().and_then(|s| s.queued.get(class as usize).copied()).unwrap_or(0);
        let bursts_ns = match flow {
            0 => Vec::new(),
            id => self.scheduler.bursts(id, 20).unwrap_or_default(),
        };
        ExtProcess { class, queued, flow, bursts_ns }
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
        self.scheduler.set_process(tgid, class, self.flows.program_of(tgid))?;
        self.scheduler.publish();
        Ok(())
    }

    /// Process `tgid` follows `program`'s flow, `bursts`.
    fn follow(&mut self, tgid: u32, program: &str, bursts: &[u64]) -> Result<(), ExtError> {
        let (id, write) = self.flows.follow(tgid, program, bursts);
        if write {
            self.scheduler.set_bursts(id, &bursts[..bursts.len().min(MAX_FLOW_BURSTS)])?;
        }
        self.scheduler.set_process(tgid, self.classes.class_of(tgid), id)?;
        self.scheduler.publish();
        Ok(())
    }

    /// Takes process `tgid` out of its class and its flow.
    fn leave(&mut self, tgid: u32) -> Result<(), ExtError> {
        let followed = self.flows.leave(tgid);
        let changed = self.classes.leave(tgid);
        if !followed && changed.is_none() {
            return Ok(());
        }
        for (id, plan) in changed.iter().flatten() {
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

    /// The class of process `tgid` (0: the default class).
    fn class_of(&self, tgid: u32) -> u32 {
        self.members.get(&tgid).copied().unwrap_or(0)
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

/// The most programs whose flows are kept track of; past it, the programs no process
/// follows are forgotten (their bursts fade from the scheduler's LRU map).
const MAX_FLOWS: usize = 4096;

/// The flows handed to the scheduler: an id per program (never reused, so that a
/// forgotten program's bursts are not taken for another's), the bursts last written for
/// it, and the program each process follows. Bookkeeping only.
#[derive(Debug, Default)]
struct Flows {
    programs: HashMap<String, (u32, Vec<u64>)>,
    last_id: u32,
    followers: HashMap<u32, u32>,
}

impl Flows {
    /// Process `tgid` follows `program`'s flow, `bursts`: the program's id, and whether
    /// its bursts are to be written (new, or one moved by more than 10 % since written).
    fn follow(&mut self, tgid: u32, program: &str, bursts: &[u64]) -> (u32, bool) {
        if !self.programs.contains_key(program) && self.programs.len() >= MAX_FLOWS {
            let followed: std::collections::HashSet<u32> = self.followers.values().copied().collect();
            self.programs.retain(|_, (id, _)| followed.contains(id));
        }
        let (id, write) = match self.programs.get_mut(program) {
            Some((id, written)) => {
                let moved = written.len() != bursts.len()
                    || written.iter().zip(bursts).any(|(&w, &b)| w.abs_diff(b) * 10 > w);
                if moved {
                    *written = bursts.to_vec();
                }
                (*id, moved)
            }
            None => {
                self.last_id = self.last_id.checked_add(1).unwrap_or(1);
                self.programs.insert(program.to_string(), (self.last_id, bursts.to_vec()));
                (self.last_id, true)
            }
        };
        self.followers.insert(tgid, id);
        (id, write)
    }

    /// The id of the program process `tgid` follows (0: none).
    fn program_of(&self, tgid: u32) -> u32 {
        self.followers.get(&tgid).copied().unwrap_or(0)
    }

    /// Process `tgid` follows no flow any more; whether it followed one.
    fn leave(&mut self, tgid: u32) -> bool {
        self.followers.remove(&tgid).is_some()
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

    #[test]
    fn a_programs_bursts_are_written_when_new_or_moved() {
        let mut flows = Flows::default();
        assert_eq!(flows.follow(10, "/bin/a", &[100, 200]), (1, true));
        assert_eq!(flows.follow(11, "/bin/a", &[105, 190]), (1, false), "within 10 %: as written");
        assert_eq!(flows.follow(12, "/bin/a", &[100, 250]), (1, true), "200 → 250 moved");
        assert_eq!(flows.follow(13, "/bin/a", &[100, 250, 30]), (1, true), "one more burst");
        assert_eq!(flows.follow(14, "/bin/b", &[7]), (2, true));
        assert_eq!((flows.program_of(11), flows.program_of(14), flows.program_of(99)), (1, 2, 0));
        assert!(flows.leave(11) && !flows.leave(11));
        assert_eq!(flows.program_of(11), 0);
    }

    #[test]
    fn past_max_flows_unfollowed_programs_are_forgotten_and_ids_never_reused() {
        let mut flows = Flows::default();
        for i in 0..MAX_FLOWS as u32 {
            flows.follow(i, &format!("/bin/p{i}"), &[1]);
            if i > 0 {
                flows.leave(i);
            }
        }
        let (id, write) = flows.follow(5000, "/bin/new", &[1]);
        assert_eq!((id, write), (MAX_FLOWS as u32 + 1, true));
        assert_eq!(flows.programs.len(), 2, "the one still followed, and the new one");
        assert_eq!(flows.follow(0, "/bin/p0", &[1]), (1, false));
    }
}

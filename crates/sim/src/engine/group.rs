//! Fair group scheduling (`CONFIG_FAIR_GROUP_SCHED`) as Linux 6.18's
//! `kernel/sched/fair.c` does it: task groups (cgroups with the cpu controller,
//! autogroups) each have a fair queue and an entity on every CPU, the entity queued on
//! its parent group's queue (the root's for a top-level group) while the group has
//! something queued there; the fair class picks among a queue's entities — tasks and
//! groups alike — level by level down to a task.
//!
//! - **Walks.** Enqueuing a task queues it and every ancestor entity not yet queued,
//!   bottom-up (`enqueue_task_fair`); dequeuing takes it off and every ancestor whose
//!   queue it leaves empty (`dequeue_entities`); both then update the ancestors above
//!   (their averages, runnable counts, weights and slices). DELAY_DEQUEUE applies to
//!   group entities too: a group whose queue empties while its entity is not eligible
//!   stays queued, delayed, until picked (then it leaves) or until a task joins it again
//!   (then it is requeued where it is). Picking descends from the root
//!   (`pick_task_fair`); switching tasks puts the old path and sets the new one only
//!   below where they meet (`pick_next_task_fair`). Every accounting charges each level's
//!   running entity (`update_curr`), and each level may ask for a resched.
//! - **Weights.** A group's entity on a CPU weighs the group's `shares` times its queue's
//!   load there over the group's load everywhere (`calc_group_shares`: the queue's load is
//!   the larger of its weight and its load average; the group's total is `tg->load_avg`,
//!   the sum of each queue's contribution, refreshed at most once a millisecond and only
//!   when a queue's average moved by more than 1/64 of its contribution,
//!   `update_tg_load_avg`; at least `MIN_SHARES`, at most the shares), recomputed
//!   whenever the entity is queued or dequeued around it or ticked (`update_cfs_group`,
//!   `reweight_entity`). A group whose queue is empty keeps its weight.
//! - **Load tracking.** A group entity's averages are its queue's, propagated when tasks
//!   join or leave the queue (`propagate_entity_load_avg`, `load.rs` and
//!   [`crate::pelt`]), so the root's load — `cpu_load` — is its group entities' load.
//!   The balancer and wake-up placement compare a task's hierarchical load,
//!   `task_h_load`: its load times its queue's share of the root's (`h_load`, computed
//!   top-down, once per jiffy per queue, `update_cfs_rq_h_load`). An idle CPU's group
//!   queues decay bottom-up with the root when blocked averages are updated
//!   (`__update_blocked_fair`), those with something left on a per-CPU list
//!   (`leaf_cfs_rq_list`).
//! - **Preemption.** A waking task is compared with the running one through their
//!   ancestors that share a queue (`find_matching_se`). When a task sleeps and its group
//!   keeps others queued, the group's entity becomes its queue's next buddy (the
//!   `set_next_buddy` of `dequeue_entities`) and is picked while eligible (PICK_BUDDY).
//!
//! Without task groups every task is on its CPU's root queue, each walk is one step, and
//! a task's hierarchical load is its load (a kernel without `CONFIG_FAIR_GROUP_SCHED`).
//! Not modelled: bandwidth control (`cpu.max`, throttling), `cpu.idle` groups, and the
//! wall-clock rate of the kernel's own accounting: every accounting here charges all
//! levels of the running task's path, where the kernel charges a level when it next
//! touches that queue (the virtual times are the same integrals, rounded differently).

use std::cmp::Reverse;

use schedlab_model::{Ns, NSEC_PER_MSEC};

use super::load::{Pelt, PELT_EPOCH_NS};
use super::Engine;
use crate::class::{is_group, Dequeue, Enqueue, Entity, FairClass, FairRq, GROUP_SE};
use crate::config::Tunables;
use crate::pelt::{CfsAvg, SchedAvg};
use crate::weights::{scale_load_down, LoadWeight, NICE_0_LOAD, SCHED_FIXEDPOINT_SHIFT};
use crate::workload::{Policy, TaskGroup, MIN_SHARES};

/// A `last_h_load_update` no jiffy equals.
const NEVER: u64 = u64::MAX;

/// `struct cfs_rq`: a CPU's root fair queue, or a task group's queue on one CPU, with
/// what the kernel keeps per queue around the class's own queue. The engine holds them
/// all in one vector: the CPUs' root queues first (queue `cpu`), then each group's, CPU
/// by CPU (group `g`'s on CPU `c` is `cpus + g × cpus + c`); a group queue's entity is
/// [`GROUP_SE`] | (its queue − `cpus`).
#[derive(Clone, Debug, Default)]
pub(super) struct CfsRq {
    /// The class's queue.
    pub fair: FairRq,
    /// Its load tracking.
    pub avg: CfsAvg,
    /// Tasks queued at or below it, delayed ones included (`h_nr_queued`).
    pub h_nr_queued: u32,
    /// Those not delayed (`h_nr_runnable`).
    pub h_nr_runnable: u32,
    /// The queue its group's entity is queued on (a root queue: itself).
    pub parent: u32,
    /// The depth of the entities on it (`se->depth`): 0 on a root queue.
    pub depth: u32,
    /// Its group (a group queue).
    pub tg: u32,
    /// `se->runnable_weight` of its group's entity: its `h_nr_runnable` when the entity
    /// was last updated (`se_update_runnable`).
    pub runnable_weight: u32,
    /// Its contribution to its group's `load_avg` (`tg_load_avg_contrib`).
    pub tg_load_avg_contrib: u64,
    /// When that was last refreshed (`last_update_tg_load_avg`).
    pub last_update_tg_load_avg: Ns,
    /// Its share of the root's load (`h_load`), as of `last_h_load_update` (jiffies;
    /// [`NEVER`] before the first computation: the simulation's jiffies start at 0,
    /// which the kernel's, starting far from 0, never equal at boot).
    pub h_load: u64,
    pub last_h_load_update: u64,
    /// The queue below it on the path `h_load` was last computed along.
    h_load_next: Option<u32>,
    /// On its CPU's list of group queues whose blocked load decays (`on_list`).
    on_list: bool,
    /// Its child queues on that list.
    children_on_list: u32,
}

/// A task group as the engine keeps it (`struct task_group`).
#[derive(Clone, Debug)]
pub(super) struct Tg {
    /// `tg->shares` at the kernel's resolution (`scale_load`).
    shares: u64,
    /// `tg->load_avg`: the sum of its queues' contributions.
    load_avg: i64,
}

/// The task groups of a simulation: every queue, the groups, and each CPU's list of
/// group queues with blocked load.
pub(super) struct Hierarchy {
    pub cfs: Vec<CfsRq>,
    pub tgs: Vec<Tg>,
    pub leaf: Vec<Vec<u32>>,
    /// The group entities, in their id order.
    pub entities: Vec<Entity>,
}

impl Hierarchy {
    /// The queues of `cpus` CPUs with `groups` (each parent before its children): root
    /// queues current at the PELT epoch, and each group's queue and entity on each CPU,
    /// the entity weighing `NICE_0_LOAD` and attached to its parent's queue
    /// (`init_tg_cfs_entry`, `online_fair_sched_group`).
    pub fn new(cpus: u32, groups: &[TaskGroup], t: &Tunables) -> Self {
        let n = cpus as usize * (1 + groups.len());
        let mut cfs: Vec<CfsRq> = Vec::with_capacity(n);
        for q in 0..n as u32 {
            let (parent, tg) = if q < cpus {
                (q, 0)
            } else {
                let (g, c) = ((q - cpus) / cpus, (q - cpus) % cpus);
                (groups[g as usize].parent.map_or(c, |p| cpus + p * cpus + c), g)
            };
            let depth = if q < cpus { 0 } else { cfs[parent as usize].depth + 1 };
            cfs.push(CfsRq {
                avg: CfsAvg::new(PELT_EPOCH_NS),
                parent,
                depth,
                tg,
                last_h_load_update: NEVER,
                ..CfsRq::default()
            });
        }
        let entity = Entity {
            policy: Policy::Other,
            load: LoadWeight::for_shares(NICE_0_LOAD << SCHED_FIXEDPOINT_SHIFT),
            slice: t.base_slice_ns,
            avg: SchedAvg { last_update_time: PELT_EPOCH_NS, ..SchedAvg::default() },
            ..Entity::default()
        };
        Hierarchy {
            cfs,
            tgs: groups
                .iter()
                .map(|g| Tg { shares: g.shares << SCHED_FIXEDPOINT_SHIFT, load_avg: 0 })
                .collect(),
            leaf: vec![Vec::new(); if groups.is_empty() { 0 } else { cpus as usize }],
            entities: vec![entity; groups.len() * cpus as usize],
        }
    }
}

impl<F: FairClass> Engine<'_, F> {
    /// Whether the workload has task groups.
    pub(super) fn grouped(&self) -> bool {
        !self.tgs.is_empty()
    }

    /// The queue task `pid` is (or would be) on when on `cpu` (`cfs_rq_of` after
    /// `set_task_rq`).
    pub(super) fn task_q_on(&self, pid: u32, cpu: u32) -> u32 {
        match self.tasks[pid as usize].group {
            None => cpu,
            Some(g) => self.cpus + g * self.cpus + cpu,
        }
    }

    /// The queue task `pid` is on, on its CPU.
    pub(super) fn task_q(&self, pid: u32) -> u32 {
        self.task_q_on(pid, self.tasks[pid as usize].cpu)
    }

    /// The queue group entity `se` owns (`group_cfs_rq`).
    pub(super) fn my_q(&self, se: u32) -> u32 {
        self.cpus + (se ^ GROUP_SE)
    }

    /// The queue entity `se` is on (`cfs_rq_of`).
    fn se_q(&self, se: u32) -> u32 {
        if is_group(se) {
            self.cfs[self.my_q(se) as usize].parent
        } else {
            self.task_q(se)
        }
    }

    /// The group entity that owns queue `q` and the queue it is on (`parent_entity`);
    /// `None` for a root queue.
    pub(super) fn owner(&self, q: u32) -> Option<(u32, u32)> {
        (q >= self.cpus).then(|| (GROUP_SE | (q - self.cpus), self.cfs[q as usize].parent))
    }

    /// `cfs_rq_min_slice` of queue `q` (with task groups only: then the class is EEVDF).
    fn queue_min_slice(&self, q: u32) -> Option<Ns> {
        if !self.grouped() {
            return None;
        }
        self.fair.min_slice(&self.cfs[q as usize].fair, &self.ents)
    }

    /// Group entity `se`, on queue `q`, takes `slice` (when there is one).
    fn set_group_slice(&mut self, q: u32, se: u32, slice: Option<Ns>) {
        if let Some(s) = slice {
            self.fair.set_slice(&mut self.cfs[q as usize].fair, &mut self.ents, se, s);
        }
    }

    /// `se_update_runnable`: a group entity's runnable weight follows its queue.
    fn se_update_runnable(&mut self, se: u32) {
        if is_group(se) {
            let q = self.my_q(se);
            let c = &mut self.cfs[q as usize];
            c.runnable_weight = c.h_nr_runnable;
        }
    }

    /// `enqueue_task_fair`, its part in the hierarchy (the CPU's counts and `util_est` are
    /// the caller's): `pid` is queued with `how`, then each ancestor not queued yet (a
    /// delayed one is requeued where it is), bottom-up, with the slice of the queue below;
    /// the ancestors above are updated.
    pub(super) fn enqueue_task_fair(&mut self, pid: u32, how: Enqueue) {
        let (mut se, mut q, mut how, mut slice) = (Some(pid), self.task_q(pid), how, None);
        while let Some(e) = se {
            if self.ents[e].on_rq {
                if self.ents[e].delayed {
                    self.requeue_delayed_entity(q, e);
                }
                break;
            }
            self.set_group_slice(q, e, slice);
            self.enqueue_entity(q, e, how);
            let c = &mut self.cfs[q as usize];
            c.h_nr_runnable += 1;
            c.h_nr_queued += 1;
            how = Enqueue::Wakeup;
            let below = q;
            (se, q) = self.up(q);
            slice = se.and_then(|_| self.queue_min_slice(below));
        }
        self.update_above(se, q, slice, 1, 1);
    }

    /// The second walk of `enqueue_task_fair` and `dequeue_entities`: from group entity
    /// `se` (on `q`) up, each ancestor still queued has its averages brought to now, its
    /// runnable count and weight refreshed and its queue's shortest slice (the one below
    /// `slice` to start with), and each queue's counts change by `runnable` and `queued`.
    fn update_above(
        &mut self,
        mut se: Option<u32>,
        mut q: u32,
        mut slice: Option<Ns>,
        runnable: i32,
        queued: i32,
    ) {
        while let Some(e) = se {
            self.update_load_avg(q, e, Pelt::Tg);
            self.se_update_runnable(e);
            self.update_cfs_group(e);
            self.set_group_slice(q, e, slice);
            slice = self.queue_min_slice(q);
            let c = &mut self.cfs[q as usize];
            c.h_nr_runnable = c.h_nr_runnable.checked_add_signed(runnable).expect("a count of queued tasks");
            c.h_nr_queued = c.h_nr_queued.checked_add_signed(queued).expect("a count of queued tasks");
            (se, q) = self.up(q);
        }
    }

    /// The entity owning `q` and the queue it is on, or nothing above a root queue
    /// (`q` itself is kept then).
    fn up(&self, q: u32) -> (Option<u32>, u32) {
        match self.owner(q) {
            Some((se, pq)) => (Some(se), pq),
            None => (None, q),
        }
    }

    /// `enqueue_entity` of `se` on `q` (its running entity already charged): averages
    /// brought to now and a migrated or new task attached, a group's runnable count and
    /// weight refreshed, then the class places and queues it; a queue that gets its first
    /// entity joins its CPU's list of queues to decay.
    fn enqueue_entity(&mut self, q: u32, se: u32, how: Enqueue) {
        self.update_load_avg(q, se, Pelt::Attach);
        self.se_update_runnable(se);
        self.update_cfs_group(se);
        self.fair.enqueue(&mut self.cfs[q as usize].fair, &mut self.ents, se, how);
        if self.cfs[q as usize].fair.nr_running == 1 {
            self.list_add_leaf(q);
        }
    }

    /// `requeue_delayed_entity`: a delayed entity gets going again where it is queued
    /// (the class may place it afresh: DELAY_ZERO); its averages are brought to now while
    /// still delayed, then a task counts as runnable again at every level.
    pub(super) fn requeue_delayed_entity(&mut self, q: u32, se: u32) {
        self.update_load_avg(q, se, Pelt::Plain);
        self.fair.requeue_delayed(&mut self.cfs[q as usize].fair, &mut self.ents, se);
        if !is_group(se) {
            self.walk_runnable(q, 1);
        }
    }

    /// `set_delayed`/`clear_delayed` of a task on `q`: it stops or starts counting as
    /// runnable at every level.
    fn walk_runnable(&mut self, mut q: u32, delta: i32) {
        loop {
            let c = &mut self.cfs[q as usize];
            c.h_nr_runnable = c.h_nr_runnable.checked_add_signed(delta).expect("a count of queued tasks");
            match self.owner(q) {
                Some((_, pq)) => q = pq,
                None => return,
            }
        }
    }

    /// `dequeue_entities` from `start` (a task, or a delayed group entity that was
    /// picked): it leaves with `how`, then each ancestor whose queue it left empty, as a
    /// sleeper; an entity that sleeps while not eligible stays queued, delayed
    /// (DELAY_DEQUEUE; not `start` when `delay` is false: a dying or moving task), and
    /// a delayed task stops the walk there. A task that sleeps while its group keeps
    /// others queued makes the group the next buddy above. `detach` takes a migrating
    /// task out of its queue's averages. Returns false when `start`, a task, stays
    /// queued, delayed.
    pub(super) fn dequeue_entities(&mut self, start: u32, how: Dequeue, delay: bool, detach: bool) -> bool {
        let task = !is_group(start);
        let sleep = how != Dequeue::Migrate;
        let (queued, runnable) =
            if task { (1, u32::from(sleep || !self.ents[start].delayed)) } else { (0, 0) };
        let (mut se, mut q) = (Some(start), self.se_q(start));
        let (mut how, mut delay, mut detach, mut slice) = (how, delay, detach, None);
        while let Some(e) = se {
            if !self.dequeue_entity(q, e, how, delay, detach) {
                if e == start && task {
                    return false;
                }
                slice = self.queue_min_slice(q);
                break;
            }
            let c = &mut self.cfs[q as usize];
            c.h_nr_runnable -= runnable;
            c.h_nr_queued -= queued;
            let (parent, pq) = self.up(q);
            if self.cfs[q as usize].fair.load != 0 {
                slice = self.queue_min_slice(q);
                if let Some(p) = parent.filter(|_| sleep) {
                    self.set_next_buddy(p);
                }
                (se, q) = (parent, pq);
                break;
            }
            (se, q) = (parent, pq);
            (how, delay, detach) = (Dequeue::Sleep, true, false);
        }
        self.update_above(se, q, slice, -(runnable as i32), -(queued as i32));
        true
    }

    /// `dequeue_entity` of `se` from `q` (its running entity already charged): a sleeper
    /// the class keeps queued (DELAY_DEQUEUE) is brought to now and marked delayed
    /// (false); otherwise its averages are brought to now (a migrating task detached)
    /// and the class takes it off. Its weight needs no refresh (`update_cfs_group`): a
    /// group's entity leaves only once its queue is empty, whose weight it keeps.
    fn dequeue_entity(&mut self, q: u32, se: u32, how: Dequeue, delay: bool, detach: bool) -> bool {
        self.clear_buddies(q, se);
        if how != Dequeue::Delayed
            && delay
            && self.fair.delay_dequeue(&mut self.cfs[q as usize].fair, &mut self.ents, se)
        {
            self.update_load_avg(q, se, Pelt::Plain);
            self.ents[se].delayed = true;
            if !is_group(se) {
                self.walk_runnable(q, -1);
            }
            return false;
        }
        self.update_load_avg(q, se, if detach { Pelt::Detach } else { Pelt::Tg });
        self.se_update_runnable(se);
        if how == Dequeue::Delayed && !is_group(se) {
            self.walk_runnable(q, 1);
        }
        self.fair.dequeue(&mut self.cfs[q as usize].fair, &mut self.ents, se, how);
        true
    }

    /// `set_next_buddy`: `se` and its ancestors become their queues' next buddies (none
    /// of a `SCHED_IDLE` task).
    fn set_next_buddy(&mut self, mut se: u32) {
        loop {
            let e = &self.ents[se];
            if !e.on_rq || e.is_idle_policy() {
                return;
            }
            let q = self.se_q(se);
            self.cfs[q as usize].fair.next = Some(se);
            match self.owner(q) {
                Some((p, _)) => se = p,
                None => return,
            }
        }
    }

    /// `clear_buddies`: when `se` is `q`'s next buddy, it and the ancestors that are
    /// theirs stop being so.
    pub(super) fn clear_buddies(&mut self, mut q: u32, mut se: u32) {
        while self.cfs[q as usize].fair.next == Some(se) {
            self.cfs[q as usize].fair.next = None;
            match self.owner(q) {
                Some((p, pq)) => (se, q) = (p, pq),
                None => return,
            }
        }
    }

    /// `pick_task_fair`: from `cpu`'s root queue down, the class picks an entity at each
    /// level until a task; a delayed entity picked leaves for good (DELAY_DEQUEUE) and
    /// the pick starts over.
    pub(super) fn pick_task_fair(&mut self, cpu: u32) -> Option<u32> {
        'again: loop {
            let mut q = cpu;
            loop {
                let se = self.fair.pick(&mut self.cfs[q as usize].fair, &mut self.ents)?;
                if self.ents[se].delayed {
                    if is_group(se) {
                        self.account(cpu);
                        self.dequeue_entities(se, Dequeue::Delayed, false, false);
                    } else {
                        self.dequeue(se, Dequeue::Delayed);
                    }
                    continue 'again;
                }
                if !is_group(se) {
                    return Some(se);
                }
                q = self.my_q(se);
            }
        }
    }

    /// The deepest running entity of `cpu`'s fair hierarchy (following `curr` down from
    /// the root) and its queue.
    fn curr_bottom(&self, cpu: u32) -> Option<(u32, u32)> {
        let (mut q, mut found) = (cpu, None);
        while let Some(c) = self.cfs[q as usize].fair.curr {
            found = Some((c, q));
            if !is_group(c) {
                break;
            }
            q = self.my_q(c);
        }
        found
    }

    /// `pick_next_task_fair` once `p` is picked: the running path is put back and `p`'s
    /// set, bottom-up, only below the queue where they meet (`put_prev_entity`,
    /// `set_next_entity`).
    pub(super) fn set_next_task_fair(&mut self, cpu: u32, p: u32) {
        let mut prev = self.curr_bottom(cpu);
        let (mut se, mut q) = (p, self.task_q(p));
        loop {
            let Some((pse, pq)) = prev else {
                self.set_next_entity(q, se);
                match self.owner(q) {
                    Some(up) => (se, q) = up,
                    None => return,
                }
                continue;
            };
            if q == pq {
                if se != pse {
                    self.put_prev_entity(pq, pse);
                    self.set_next_entity(q, se);
                }
                return;
            }
            let (d, pd) = (self.cfs[q as usize].depth, self.cfs[pq as usize].depth);
            if d <= pd {
                self.put_prev_entity(pq, pse);
                prev = self.owner(pq);
            }
            if d >= pd {
                self.set_next_entity(q, se);
                (se, q) = self.owner(q).expect("deeper than a root queue");
            }
        }
    }

    /// `put_prev_task_fair`: the running path is put back, bottom-up.
    pub(super) fn put_prev_task_fair(&mut self, cpu: u32) {
        let mut at = self.curr_bottom(cpu);
        while let Some((se, q)) = at {
            self.put_prev_entity(q, se);
            at = self.owner(q);
        }
    }

    /// `put_prev_entity`: the running entity of `q` stops running; still queued, its
    /// averages are brought up to now while it is still `curr`.
    fn put_prev_entity(&mut self, q: u32, se: u32) {
        if self.ents[se].on_rq {
            self.update_load_avg(q, se, Pelt::Plain);
        }
        self.fair.put_prev(&mut self.cfs[q as usize].fair, &mut self.ents, se);
    }

    /// `set_next_entity`: `se` (queued on `q`) starts running, its averages brought up
    /// to now first; it is no longer a buddy.
    fn set_next_entity(&mut self, q: u32, se: u32) {
        self.clear_buddies(q, se);
        self.update_load_avg(q, se, Pelt::Tg);
        self.fair.set_next(&mut self.cfs[q as usize].fair, &mut self.ents, se);
    }

    /// `entity_tick` at every level of the running task `pid`'s path: each entity's
    /// averages and its queue's up to now, and each group's weight.
    pub(super) fn tick_path(&mut self, pid: u32) {
        let (mut se, mut q) = (pid, self.task_q(pid));
        loop {
            self.update_load_avg(q, se, Pelt::Tg);
            self.update_cfs_group(se);
            match self.owner(q) {
                Some(up) => (se, q) = up,
                None => return,
            }
        }
    }

    /// `update_curr` at every level of `pid`'s path, charging `delta` ns to each level's
    /// running entity; whether a level asks for a resched (whose running entity then
    /// stops being a buddy).
    pub(super) fn update_curr_path(&mut self, pid: u32, delta: Ns) -> bool {
        let (mut q, mut resched) = (self.task_q(pid), false);
        loop {
            let c = &mut self.cfs[q as usize];
            if self.fair.update_curr(&mut c.fair, &mut self.ents, delta) {
                resched = true;
                if let Some(curr) = c.fair.curr {
                    self.clear_buddies(q, curr);
                }
            }
            match self.owner(q) {
                Some((_, pq)) => q = pq,
                None => return resched,
            }
        }
    }

    /// The class's slice bookkeeping at every level of `pid`'s path: a new slice
    /// (`renew`), or the slice given up (`expire`).
    pub(super) fn slice_path(&mut self, pid: u32, renew: bool) {
        let mut q = self.task_q(pid);
        loop {
            let rq = &mut self.cfs[q as usize].fair;
            if renew {
                self.fair.renew(rq, &mut self.ents);
            } else {
                self.fair.expire(rq, &mut self.ents);
            }
            match self.owner(q) {
                Some((_, pq)) => q = pq,
                None => return,
            }
        }
    }

    /// `find_matching_se`: the ancestors of the running task `curr` and of `woken` (or
    /// the tasks themselves) that share a queue, and that queue.
    pub(super) fn find_matching_se(&self, curr: u32, woken: u32) -> (u32, u32, u32) {
        let (mut se, mut q) = (curr, self.task_q(curr));
        let (mut pse, mut pq) = (woken, self.task_q(woken));
        while self.cfs[q as usize].depth > self.cfs[pq as usize].depth {
            (se, q) = self.owner(q).expect("deeper than a root queue");
        }
        while self.cfs[pq as usize].depth > self.cfs[q as usize].depth {
            (pse, pq) = self.owner(pq).expect("deeper than a root queue");
        }
        while q != pq {
            (se, q) = self.owner(q).expect("below the common root");
            (pse, pq) = self.owner(pq).expect("below the common root");
        }
        (se, pse, q)
    }

    /// `update_cfs_group`: group entity `se` takes its share of the group's shares,
    /// unless its queue is empty (it keeps its weight: DELAY_DEQUEUE may keep it queued).
    fn update_cfs_group(&mut self, se: u32) {
        if !is_group(se) {
            return;
        }
        let gq = self.my_q(se);
        if self.cfs[gq as usize].fair.load == 0 {
            return;
        }
        let shares = self.calc_group_shares(gq);
        if self.ents[se].load.scaled != shares {
            self.reweight_entity(self.cfs[gq as usize].parent, se, LoadWeight::for_shares(shares));
        }
    }

    /// `calc_group_shares` of group queue `gq`: `tg->shares × load / tg_weight`, where
    /// the queue's load is the larger of its weight and its load average and the group's
    /// is its total with this queue's current load in place of its last contribution;
    /// at least `MIN_SHARES`, at most the shares.
    fn calc_group_shares(&self, gq: u32) -> u64 {
        let c = &self.cfs[gq as usize];
        let tg = &self.tgs[c.tg as usize];
        let tg_shares = tg.shares as i64;
        let load = scale_load_down(c.fair.load).max(c.avg.avg.load_avg) as i64;
        let tg_weight = tg.load_avg - c.tg_load_avg_contrib as i64 + load;
        let mut shares = tg_shares * load;
        if tg_weight != 0 {
            shares /= tg_weight;
        }
        shares.clamp(MIN_SHARES as i64, tg_shares) as u64
    }

    /// `reweight_entity`: entity `se` on `q` takes weight `load`: the class re-places it
    /// if queued; its load average is recomputed at the new weight and `q`'s follows.
    fn reweight_entity(&mut self, q: u32, se: u32, load: LoadWeight) {
        let old = self.ents[se].load.weight;
        self.fair.reweight(&mut self.cfs[q as usize].fair, &mut self.ents, se, load);
        let e = &mut self.ents[se];
        self.cfs[q as usize].avg.reweight(&mut e.avg, old, load.weight);
    }

    /// `update_tg_load_avg`: a group queue's load average enters its group's total when
    /// it moved by more than 1/64 of its last contribution, at most once a millisecond
    /// (of the CPU's clock); root queues have no group total.
    pub(super) fn update_tg_load_avg(&mut self, q: u32) {
        if q < self.cpus {
            return;
        }
        let now = self.pelt_now();
        let c = &mut self.cfs[q as usize];
        if now - c.last_update_tg_load_avg < NSEC_PER_MSEC {
            return;
        }
        let delta = c.avg.avg.load_avg as i64 - c.tg_load_avg_contrib as i64;
        if delta.unsigned_abs() > c.tg_load_avg_contrib / 64 {
            self.tgs[c.tg as usize].load_avg += delta;
            c.tg_load_avg_contrib = c.avg.avg.load_avg;
            c.last_update_tg_load_avg = now;
        }
    }

    /// `task_h_load`: task `pid`'s load as a share of its CPU's root load: its load times
    /// its queue's `h_load` over the queue's load. Without task groups, its load.
    pub(super) fn task_h_load(&mut self, pid: u32) -> u64 {
        let load = self.ents[pid].avg.load_avg;
        if !self.grouped() {
            return load;
        }
        let q = self.task_q(pid);
        self.update_cfs_rq_h_load(q);
        let c = &self.cfs[q as usize];
        load * c.h_load / (c.avg.avg.load_avg + 1)
    }

    /// `update_cfs_rq_h_load`: up from `q` to the root (whose `h_load` is its load) or to
    /// a queue already done this jiffy, then down again, each queue's `h_load` its
    /// parent's times its entity's share of the parent's load.
    fn update_cfs_rq_h_load(&mut self, q: u32) {
        let now = self.jiffies();
        if self.cfs[q as usize].last_h_load_update == now {
            return;
        }
        self.cfs[q as usize].h_load_next = None;
        let mut top = q;
        loop {
            match self.owner(top) {
                None => {
                    let c = &mut self.cfs[top as usize];
                    c.h_load = c.avg.avg.load_avg;
                    c.last_h_load_update = now;
                    break;
                }
                Some((_, pq)) => {
                    self.cfs[pq as usize].h_load_next = Some(top);
                    top = pq;
                    if self.cfs[pq as usize].last_h_load_update == now {
                        break;
                    }
                }
            }
        }
        while let Some(child) = self.cfs[top as usize].h_load_next {
            let parent = &self.cfs[top as usize];
            let se = GROUP_SE | (child - self.cpus);
            let load = parent.h_load * self.ents[se].avg.load_avg / (parent.avg.avg.load_avg + 1);
            let c = &mut self.cfs[child as usize];
            c.h_load = load;
            c.last_h_load_update = now;
            top = child;
        }
    }

    /// `list_add_leaf_cfs_rq` for a group queue: it joins its CPU's list of queues whose
    /// blocked load decays.
    fn list_add_leaf(&mut self, q: u32) {
        if q < self.cpus || self.cfs[q as usize].on_list {
            return;
        }
        self.cfs[q as usize].on_list = true;
        self.leaf[((q - self.cpus) % self.cpus) as usize].push(q);
        let parent = self.cfs[q as usize].parent;
        if parent >= self.cpus {
            self.cfs[parent as usize].children_on_list += 1;
        }
    }

    /// `propagate_entity_cfs_rq`: after a task joined or left queue `q`'s averages, each
    /// ancestor entity is updated, bottom-up, so that the change propagates to the root.
    pub(super) fn propagate_entity_cfs_rq(&mut self, q: u32) {
        self.list_add_leaf(q);
        let mut at = self.owner(q);
        while let Some((se, pq)) = at {
            self.update_load_avg(pq, se, Pelt::Tg);
            self.list_add_leaf(pq);
            at = self.owner(pq);
        }
    }

    /// `__update_blocked_fair` for `cpu`'s group queues, bottom-up: each decays to now
    /// (its group's load refreshed when it changed), its entity is updated (carrying
    /// pending propagation) unless it has nothing left to decay or carry
    /// (`skip_blocked_update`), and a queue with nothing left, queued or to decay, and
    /// no child on the list leaves it (`cfs_rq_is_decayed`). Returns whether some load or
    /// utilization is left to decay.
    pub(super) fn update_blocked_groups(&mut self, cpu: u32) -> bool {
        if !self.grouped() {
            return false;
        }
        let mut list = std::mem::take(&mut self.leaf[cpu as usize]);
        list.sort_by_key(|&q| Reverse(self.cfs[q as usize].depth));
        let mut blocked = false;
        list.retain(|&q| {
            if self.update_cfs_rq(q) {
                self.update_tg_load_avg(q);
            }
            let (se, pq) = self.owner(q).expect("a group queue");
            let e = &self.ents[se].avg;
            if e.load_avg != 0 || e.util_avg != 0 || self.cfs[q as usize].avg.propagating() {
                self.update_load_avg(pq, se, Pelt::Tg);
            }
            let c = &self.cfs[q as usize];
            blocked |= c.avg.has_blocked();
            let decayed = c.fair.load == 0 && c.avg.is_decayed() && c.children_on_list == 0;
            if decayed {
                self.cfs[q as usize].on_list = false;
                if pq >= self.cpus {
                    self.cfs[pq as usize].children_on_list -= 1;
                }
            }
            !decayed
        });
        self.leaf[cpu as usize] = list;
        blocked
    }

    /// `detach_tasks`' candidates on `cpu`: its queued tasks (not the running one) at
    /// every level, the least recently queued of each queue first and the running
    /// group's last, at most `max`.
    pub(super) fn queued_tasks(&self, cpu: u32, max: usize) -> Vec<u32> {
        let mut out = Vec::new();
        self.collect_queued(cpu, max, &mut out);
        out
    }

    fn collect_queued(&self, q: u32, max: usize, out: &mut Vec<u32>) {
        let fair = &self.cfs[q as usize].fair;
        let running_group = fair.curr.filter(|&c| is_group(c));
        for se in fair.queued().rev().chain(running_group) {
            if out.len() >= max {
                return;
            }
            if is_group(se) {
                self.collect_queued(self.my_q(se), max, out);
            } else {
                out.push(se);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::Eevdf;
    use crate::{tunable_scale, FairFlavor, Hooks, Op, Program, SimConfig, TaskSpec, Workload};

    const MS: u64 = 1_000_000;

    /// `w` on `cpus` CPUs under EEVDF, run until its duration.
    fn run(w: &Workload, cpus: u32) -> Engine<'_, Eevdf> {
        let config = SimConfig::new(cpus, FairFlavor::Eevdf);
        let eevdf = Eevdf::new(&config.tunables, tunable_scale(cpus));
        let mut e = Engine::new(w, &config, eevdf, Hooks::default()).expect("a valid workload");
        e.advance().expect("runs");
        e
    }

    #[test]
    fn a_group_entity_weighs_its_queues_share_of_the_groups_load() {
        // /g (1024) has one hog pinned to CPU 0 and three to CPU 1. After a second every
        // task's load is 1023 (PELT's ceiling, to rounding): the group's queues carry 1023
        // and 3069, tg->load_avg is their sum, and calc_group_shares gives the entities
        // 2^20 × 1023/4092 = 262144 and 2^20 × 3069/4092 = 786432 at the kernel's
        // resolution, 256 and 768 as the arithmetic uses them.
        let mut w = Workload { duration_ns: Some(1000 * MS), ..Default::default() };
        let g = w.add_group(TaskGroup::cpu_weight("/g", None, 100));
        let p = w.add_program(Program::new("hog").op(Op::Compute(10_000 * MS)));
        for cpu in [0, 1, 1, 1] {
            w.tasks.push(TaskSpec { group: Some(g), affinity: Some(vec![cpu]), ..TaskSpec::new("hog", p) });
        }
        let e = run(&w, 2);
        let (q0, q1) = (e.task_q_on(1, 0), e.task_q_on(2, 1));
        let loads = (e.cfs[q0 as usize].avg.avg.load_avg, e.cfs[q1 as usize].avg.avg.load_avg);
        assert!(loads.0.abs_diff(1023) <= 1 && loads.1.abs_diff(3069) <= 3, "{loads:?}");
        assert_eq!(
            e.tgs[0].load_avg as u64,
            e.cfs[q0 as usize].tg_load_avg_contrib + e.cfs[q1 as usize].tg_load_avg_contrib
        );
        let se0 = &e.ents[GROUP_SE | (q0 - 2)];
        let se1 = &e.ents[GROUP_SE | (q1 - 2)];
        assert!(se0.load.scaled.abs_diff(262_144) <= 512, "{:?}", se0.load);
        assert!(se1.load.scaled.abs_diff(786_432) <= 512, "{:?}", se1.load);
        assert_eq!((se0.load.weight, se1.load.weight), (se0.load.scaled >> 10, se1.load.scaled >> 10));
        // Each CPU's root load is the group entity's: always queued, at its weight.
        assert!(
            e.cpu_load(0).abs_diff(256) <= 2 && e.cpu_load(1).abs_diff(768) <= 2,
            "{} {}",
            e.cpu_load(0),
            e.cpu_load(1)
        );
        // A task's hierarchical load is its share of that: 1023 × 256/1024 on CPU 0.
        let mut e = e;
        assert!(e.task_h_load(1).abs_diff(255) <= 2, "{}", e.task_h_load(1));
        assert!(e.task_h_load(2).abs_diff(255) <= 2, "{}", e.task_h_load(2));
    }

    /// One CPU (base slice 0.7 ms, ticks every 4 ms): task x of /a runs 3 ms from 0 then
    /// sleeps `sleep`; a hog h of /b runs whenever x does not.
    fn sleeper_and_hog(sleep: u64, until: u64) -> Workload {
        let mut w = Workload { duration_ns: Some(until), ..Default::default() };
        let a = w.add_group(TaskGroup::cpu_weight("/a", None, 100));
        let b = w.add_group(TaskGroup::cpu_weight("/b", None, 100));
        let x =
            w.add_program(Program::new("x").op(Op::Compute(3 * MS)).op(Op::Sleep(sleep)).op(Op::Compute(MS)));
        let h = w.add_program(Program::new("h").op(Op::Compute(1000 * MS)));
        w.tasks.push(TaskSpec { group: Some(a), ..TaskSpec::new("x", x) });
        w.tasks.push(TaskSpec { group: Some(b), ..TaskSpec::new("h", h) });
        w
    }

    #[test]
    fn a_group_that_empties_while_not_eligible_stays_queued_delayed() {
        // At 0 both groups' entities are placed at V = 0 with deadlines 0.7 ms; /a's
        // comes first (the lower id) and x runs. At 3 ms x sleeps: /a's queue empties,
        // and its entity, 3 ms of vruntime ahead of /b's (V = 1.5 ms), is not eligible:
        // DELAY_DEQUEUE keeps it on the root queue, delayed, with its weight. /b's hog
        // runs; at the 4 ms tick /a's entity is still ahead of V.
        let w = sleeper_and_hog(100 * MS, 5 * MS);
        let e = run(&w, 1);
        let a = GROUP_SE;
        assert!(e.ents[a].delayed && e.ents[a].on_rq);
        assert_eq!((e.cfs[0].fair.nr_running, e.cfs[0].h_nr_queued, e.cfs[0].h_nr_runnable), (2, 1, 1));
        assert_eq!(e.cfs[e.my_q(a) as usize].fair.nr_running, 0);
        assert_eq!(e.ents[a].load.weight, 1024, "an empty group keeps its weight");
        assert_eq!(e.rqs[0].curr, 2, "h runs");
        // By the 8 ms tick /b's entity has run 5 ms: V = 4 ms, /a's entity is eligible
        // with the earlier deadline (3.7 ms), is picked, and leaves for good, its positive
        // lag dropped (DELAY_ZERO).
        let w = sleeper_and_hog(100 * MS, 9 * MS);
        let e = run(&w, 1);
        assert!(!e.ents[a].on_rq && !e.ents[a].delayed);
        assert_eq!(e.ents[a].vlag, 0);
        assert_eq!((e.cfs[0].fair.nr_running, e.cfs[0].h_nr_queued), (1, 1));
    }

    #[test]
    fn a_task_waking_into_its_delayed_group_requeues_the_group() {
        // x sleeps 4 ms and wakes at 7 ms (plus its context switch and system call, 1.8
        // µs), while /a's entity is still delayed (its vruntime 3 ms, /b's 4 ms: V = 3.5
        // ms): x joins /a's queue and /a's entity is requeued where it is, except that its
        // lag became positive, which DELAY_ZERO drops: it is placed at the V of the
        // others, /b's vruntime, 4 ms. Both deadlines are then 4.7 ms; /a's, in the tree,
        // wins the tie against the running /b: x runs at once. 0.1 ms later /a's entity is
        // at 4.1 ms, not at the 3.1 ms it would be had it stayed where it was.
        let w = sleeper_and_hog(4 * MS, 7 * MS + MS / 10);
        let e = run(&w, 1);
        let a = GROUP_SE;
        assert!(e.ents[a].on_rq && !e.ents[a].delayed);
        assert_eq!(e.cfs[e.my_q(a) as usize].h_nr_queued, 1);
        assert_eq!((e.cfs[0].fair.nr_running, e.cfs[0].h_nr_queued, e.cfs[0].h_nr_runnable), (2, 2, 2));
        assert_eq!(e.rqs[0].curr, 1, "x runs");
        let v = e.ents[a].vruntime;
        assert!((4 * MS as i64..4 * MS as i64 + MS as i64 / 5).contains(&v), "{v}");
    }
}

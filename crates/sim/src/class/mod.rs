//! The scheduling classes, stacked as in Linux: the fair server (a deadline entity)
//! above RT (FIFO, RR) above the fair class, which comes in three flavours (cfs, eevdf,
//! timeshare), above idle.
//!
//! The stop class is not modelled: the simulated kernel has no stopper work
//! (migrations are done directly by the balancer).

mod cfs;
mod eevdf;
mod rt;
mod server;
mod timeshare;

use std::collections::BTreeSet;
use std::ops::{Index, IndexMut};

use schedlab_model::Ns;

use crate::pelt::SchedAvg;
use crate::weights::LoadWeight;
use crate::workload::Policy;

pub(crate) use cfs::Cfs;
pub(crate) use eevdf::Eevdf;
pub(crate) use rt::RtRq;
pub(crate) use server::{Charge, FairServer, Fire, ServerParams, ServerState};
pub(crate) use timeshare::Timeshare;

/// The scheduler's view of one task (`struct sched_entity` plus the policy fields of
/// `task_struct`), or of a task group on one CPU (its `tg->se[cpu]`, whose `my_q` is the
/// group's queue there: the engine keeps that link). Indexed in [`Ents`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Entity {
    pub policy: Policy,
    pub nice: i8,
    pub rt_priority: u8,
    pub load: LoadWeight,
    /// Virtual runtime (signed so that placement before zero needs no wrap-around).
    pub vruntime: i64,
    /// EEVDF virtual deadline.
    pub deadline: i64,
    /// EEVDF lag kept across a dequeue.
    pub vlag: i64,
    /// EEVDF: the vruntime up to which the running task is protected from a pick of
    /// another task (RUN_TO_PARITY's `se->vprot`).
    pub vprot: i64,
    /// EEVDF requested slice.
    pub slice: Ns,
    /// The slice was set by `sched_attr.sched_runtime`.
    pub custom_slice: bool,
    /// The deadline is stored relative to vruntime (across a migration).
    pub rel_deadline: bool,
    /// CPU time consumed, and its value when the task was last picked.
    pub sum_exec: Ns,
    pub prev_sum_exec: Ns,
    /// Queued on a run queue (running, waiting to run, or delayed).
    pub on_rq: bool,
    /// EEVDF DELAY_DEQUEUE: the task sleeps but stays queued, competing, until it is
    /// picked or woken (`se->sched_delayed`).
    pub delayed: bool,
    /// RR: ticks left of the quantum.
    pub rr_ticks_left: u64,
    /// Timeshare: FIFO position within the priority level.
    pub ts_seq: u64,
    /// Its load tracking (`se->avg`), kept by the engine where the kernel updates it.
    pub avg: SchedAvg,
}

impl Default for LoadWeight {
    fn default() -> Self {
        LoadWeight::for_task(0, false)
    }
}

impl Entity {
    pub fn is_idle_policy(&self) -> bool {
        self.policy == Policy::Idle
    }
}

/// The bit that marks an entity id as a task group's entity rather than a task's pid.
pub(crate) const GROUP_SE: u32 = 1 << 31;

/// Whether entity id `id` is a task group's entity (`!entity_is_task`).
pub(crate) fn is_group(id: u32) -> bool {
    id & GROUP_SE != 0
}

/// Every scheduling entity of a simulation: each task's, by pid, and each task group's
/// per-CPU entity, by [`GROUP_SE`] | its index, so that the classes queue and compare
/// both alike (the kernel's `struct sched_entity` is the same for both). Without task
/// groups there are none of the second kind.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ents {
    pub tasks: Vec<Entity>,
    pub groups: Vec<Entity>,
}

impl Index<u32> for Ents {
    type Output = Entity;

    #[inline]
    fn index(&self, id: u32) -> &Entity {
        if is_group(id) {
            &self.groups[(id ^ GROUP_SE) as usize]
        } else {
            &self.tasks[id as usize]
        }
    }
}

impl IndexMut<u32> for Ents {
    #[inline]
    fn index_mut(&mut self, id: u32) -> &mut Entity {
        if is_group(id) {
            &mut self.groups[(id ^ GROUP_SE) as usize]
        } else {
            &mut self.tasks[id as usize]
        }
    }
}

#[cfg(test)]
impl From<Vec<Entity>> for Ents {
    fn from(tasks: Vec<Entity>) -> Self {
        Ents { tasks, groups: Vec::new() }
    }
}

/// How a task arrives on a fair run queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Enqueue {
    /// A new task (fork or workload start): `ENQUEUE_INITIAL`.
    New,
    /// A task waking up on the CPU it slept on.
    Wakeup,
    /// A task waking up on another CPU, whose queue had this `min_vruntime`.
    WakeupMigrated { from_min_vruntime: i64 },
    /// A runnable task moved by the balancer from a queue with this `min_vruntime`.
    Migrated { from_min_vruntime: i64 },
}

/// How a task leaves a fair run queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dequeue {
    /// It blocks or exits (`DEQUEUE_SLEEP`).
    Sleep,
    /// A delayed sleeper leaves for good: it was picked, or it was never woken before
    /// it had to go (`DEQUEUE_SLEEP | DEQUEUE_DELAYED`).
    Delayed,
    /// It moves to another CPU while runnable.
    Migrate,
}

/// A fair run queue's entities (`struct cfs_rq`): a CPU's root queue, or a task group's
/// queue on one CPU. The flavours share it; each uses the fields it needs.
#[derive(Clone, Debug, Default)]
pub(crate) struct FairRq {
    /// Queued entities that are not running, ordered by the flavour's key
    /// (cfs: vruntime; eevdf: deadline; timeshare: priority and arrival).
    pub tree: BTreeSet<(i64, u32)>,
    /// EEVDF: the same entities ordered by vruntime (the kernel's augmented
    /// `min_vruntime`).
    pub by_vruntime: BTreeSet<(i64, u32)>,
    /// The running entity of this class, if any (not in `tree`).
    pub curr: Option<u32>,
    /// Entities on the queue, including `curr` (`nr_queued`).
    pub nr_running: u32,
    /// Sum of their weights, including `curr`, at the kernel's resolution
    /// (`cfs_rq->load.weight`, Σ [`LoadWeight::scaled`]).
    pub load: u64,
    pub min_vruntime: i64,
    /// EEVDF: Σ (vruntime − min_vruntime) · weight over the tree (not curr).
    pub avg_vruntime: i128,
    /// EEVDF: Σ weight over the tree (not curr).
    pub avg_load: i64,
    /// EEVDF: the slices of the queued entities (tree and curr) that have one of their
    /// own (`custom_slice`), ascending, each with how many have it: the kernel's
    /// augmented `min_slice`; the other entities' slice is the base slice.
    pub custom_slices: SliceCounts,
    /// EEVDF: the entity to pick while it is eligible (`cfs_rq->next`, PICK_BUDDY): with
    /// task groups, the group whose task just slept while the group kept others queued.
    pub next: Option<u32>,
    /// CFS: the skip buddy set by `sched_yield`.
    pub skip: Option<u32>,
    /// Timeshare: arrival counter.
    pub seq: u64,
}

/// A multiset of slices, kept sorted: few distinct values occur (the base slice, a few
/// tasks' own), so a sorted vector is the cheapest ordered set.
#[derive(Clone, Debug, Default)]
pub(crate) struct SliceCounts {
    counts: Vec<(Ns, u32)>,
    total: u32,
}

impl SliceCounts {
    pub fn insert(&mut self, slice: Ns) {
        match self.counts.binary_search_by_key(&slice, |&(s, _)| s) {
            Ok(i) => self.counts[i].1 += 1,
            Err(i) => self.counts.insert(i, (slice, 1)),
        }
        self.total += 1;
    }

    pub fn remove(&mut self, slice: Ns) {
        let i = self.counts.binary_search_by_key(&slice, |&(s, _)| s).expect("a counted slice");
        self.counts[i].1 -= 1;
        if self.counts[i].1 == 0 {
            self.counts.remove(i);
        }
        self.total -= 1;
    }

    /// How many slices are counted.
    pub fn len(&self) -> u32 {
        self.total
    }

    /// The smallest.
    pub fn min(&self) -> Option<Ns> {
        self.counts.first().map(|&(s, _)| s)
    }
}

impl FairRq {
    /// The key-ordered first queued entity.
    pub fn first(&self) -> Option<u32> {
        self.tree.first().map(|&(_, p)| p)
    }

    /// Entities waiting (not running) in key order, for the balancer.
    pub fn queued(&self) -> impl DoubleEndedIterator<Item = u32> + '_ {
        self.tree.iter().map(|&(_, p)| p)
    }
}

/// One flavour of the fair class. The engine accounts CPU time (`sum_exec`) and calls
/// [`FairClass::update_curr`] with each slice of it; everything else is the flavour's.
pub(crate) trait FairClass {
    /// Advances the running entity by `delta` ns of real time; true asks for a resched.
    fn update_curr(&self, rq: &mut FairRq, ents: &mut Ents, delta: Ns) -> bool;
    /// Puts `pid` on the queue.
    fn enqueue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32, how: Enqueue);
    /// Takes `pid` off the queue (it may be `curr`).
    fn dequeue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32, how: Dequeue);
    /// `pid` goes to sleep: true when it stays queued, delayed (the engine marks it),
    /// instead of leaving (EEVDF's DELAY_DEQUEUE); the other flavours always let it leave.
    fn delay_dequeue(&self, _rq: &mut FairRq, _ents: &mut Ents, _pid: u32) -> bool {
        false
    }
    /// The delayed sleeper `pid` wakes up where it is queued (`requeue_delayed_entity`).
    fn requeue_delayed(&self, _rq: &mut FairRq, ents: &mut Ents, pid: u32) {
        ents[pid].delayed = false;
    }
    /// The entity that should run next (may be `curr`).
    fn pick(&self, rq: &mut FairRq, ents: &mut Ents) -> Option<u32>;
    /// `curr` stops running but stays queued.
    fn put_prev(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32);
    /// `pid` (queued) starts running.
    fn set_next(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32);
    /// The periodic tick while `curr` runs; true asks for a resched.
    fn tick(&self, rq: &mut FairRq, ents: &mut Ents) -> bool;
    /// A task of policy `policy` was just enqueued while another runs: should it
    /// preempt? `curr` and `woken` are the running task's and the woken task's entities
    /// on a common queue (the tasks themselves, or with task groups the ancestors that
    /// `find_matching_se` finds).
    fn wakeup_preempt(&self, rq: &mut FairRq, ents: &mut Ents, curr: u32, woken: u32, policy: Policy)
        -> bool;
    /// `sched_yield()` by `curr`; `alone` says no other task is queued on the CPU.
    fn yield_curr(&self, rq: &mut FairRq, ents: &mut Ents, alone: bool);
    /// Real time until `curr`'s slice ends (for HRTICK and exact quanta), if it has one.
    fn slice_left(&self, rq: &FairRq, ents: &Ents) -> Option<Ns>;
    /// Whether slices expire exactly (a timer) rather than at ticks unless HRTICK is on.
    fn exact_slices(&self) -> bool {
        false
    }
    /// The slice timer fired for `curr`; true when its slice is over (the kernel's
    /// HRTICK tick with `queued` set always reschedules).
    fn slice_end(&self, _rq: &mut FairRq, _ents: &mut Ents) -> bool {
        true
    }
    /// `curr`'s slice is over and it gives way: the flavour's bookkeeping for that
    /// (timeshare: to the tail of its level). Should it still be picked again, it starts
    /// a new slice.
    fn expire(&self, rq: &mut FairRq, ents: &mut Ents);
    /// `curr`'s slice is over but a layer (PFS) lets it keep the CPU: a new slice.
    fn renew(&self, rq: &mut FairRq, ents: &mut Ents);
    /// Whether the flavour schedules task groups (their entities queued like tasks). The
    /// engine refuses a workload with groups otherwise, and calls the methods below
    /// only when it does.
    fn groups(&self) -> bool {
        false
    }
    /// `cfs_rq_min_slice`: the shortest slice queued (`None` when nothing is).
    fn min_slice(&self, _rq: &FairRq, _ents: &Ents) -> Option<Ns> {
        unreachable!("only a flavour with task groups is asked")
    }
    /// A group entity takes `slice`, its queue's shortest, while it may be queued.
    fn set_slice(&self, _rq: &mut FairRq, _ents: &mut Ents, _id: u32, _slice: Ns) {
        unreachable!("only a flavour with task groups is asked")
    }
    /// `reweight_entity`: a group entity takes a new weight, queued or not.
    fn reweight(&self, _rq: &mut FairRq, _ents: &mut Ents, _id: u32, _load: LoadWeight) {
        unreachable!("only a flavour with task groups is asked")
    }
}

/// A new slice for the running task: the slice length is counted from now.
fn restart_slice(rq: &FairRq, ents: &mut Ents) {
    if let Some(c) = rq.curr {
        let se = &mut ents[c];
        se.prev_sum_exec = se.sum_exec;
    }
}

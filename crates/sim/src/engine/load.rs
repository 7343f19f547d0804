//! Load tracking in the engine: the PELT averages ([`crate::pelt`]) of every fair
//! entity (tasks, and with task groups each group's entity on each CPU) and of every
//! fair run queue, updated where Linux 6.18's `kernel/sched/fair.c` updates them, and the
//! values the balancer and wake-up placement read from them.
//!
//! `update_load_avg` brings an entity's averages and then its queue's up to now, and
//! with task groups propagates to a group's entity what joined or left its group's
//! queue (`propagate_entity_load_avg`) and refreshes the group's total load
//! (`update_tg_load_avg`). It runs when an entity is queued (`enqueue_entity`, which
//! attaches a new or migrated task to the queue's averages), dequeued
//! (`dequeue_entity`, also when DELAY_DEQUEUE keeps a sleeper queued, and when that
//! delayed entity finally leaves), when the running entity stops running while queued
//! (`put_prev_entity`) or a queued one starts (`set_next_entity`), and at the tick
//! (`entity_tick`, at every level). A task that sleeps is not updated: its averages stay
//! in its queue's (the queue's *blocked load*) and decay with them; its own decay over
//! the sleep happens when it is next updated. A task waking on another CPU is decayed to
//! its old queue's last update and removed from it at that queue's next update
//! (`migrate_task_rq_fair`: `remove_entity_load_avg`, and `migrate_se_pelt_lag` when the
//! old CPU is idle); a task the balancer moves is detached at once
//! (`detach_entity_load_avg`); both are attached where they are queued next. A task that
//! dies is removed (`task_dead_fair`). An idle CPU's queues decay only when the balancer
//! updates blocked averages (`sched_balance_update_blocked_averages`, see `smp.rs` and
//! `group.rs`).
//!
//! The PELT clock (`rq_clock_pelt`) is the simulated time plus [`PELT_EPOCH_NS`]: with
//! every CPU at full capacity and frequency it runs with the task clock and loses no
//! idle time, and like the kernel's it is never 0, so a zero `last_update_time` keeps
//! its meaning of "attached nowhere".

use schedlab_model::Ns;

use super::Engine;
use crate::class::{is_group, FairClass};
use crate::pelt::CAPACITY;
use crate::weights::{scale_load_down, LoadWeight};

/// The PELT clock at simulated time 0: as if the machine had been up for 2³⁰ ns, a
/// multiple of 1024 ns so that PELT periods start at the same simulated instants.
pub(super) const PELT_EPOCH_NS: Ns = 1 << 30;

/// What `update_load_avg` does besides updating (the kernel's flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pelt {
    /// Update only (`0`).
    Plain,
    /// Also refresh the group's total load when the queue's changed (`UPDATE_TG`).
    Tg,
    /// `UPDATE_TG | DO_ATTACH`: an entity attached nowhere joins the queue's averages.
    Attach,
    /// `UPDATE_TG | DO_DETACH`: the entity leaves the queue's averages (it migrates).
    Detach,
}

impl<F: FairClass> Engine<'_, F> {
    /// The PELT clock, which also stands in for the CPUs' `sched_clock`: simulated time
    /// since an imagined boot.
    pub(super) fn pelt_now(&self) -> Ns {
        self.now + PELT_EPOCH_NS
    }

    /// `cfs_rq->h_nr_runnable` of `cpu`'s root queue: its fair tasks, at every level,
    /// that are queued and not delayed.
    pub(super) fn h_nr_runnable(&self, cpu: u32) -> u32 {
        self.cfs[cpu as usize].h_nr_runnable
    }

    /// `se_runnable`: what entity `se` contributes to its runnable sum: a task 1 while
    /// queued, a group its `runnable_weight`; nothing while delayed.
    fn se_runnable(&self, se: u32) -> u64 {
        let e = &self.ents[se];
        if e.delayed || !e.on_rq {
            0
        } else if is_group(se) {
            u64::from(self.cfs[self.my_q(se) as usize].runnable_weight)
        } else {
            1
        }
    }

    /// `update_cfs_rq_load_avg` of queue `q` to now: its total weight counts as load, its
    /// runnable tasks as runnable, its `curr` as running; whether anything changed.
    pub(super) fn update_cfs_rq(&mut self, q: u32) -> bool {
        let now = self.pelt_now();
        let c = &mut self.cfs[q as usize];
        let (load, running) = (scale_load_down(c.fair.load), c.fair.curr.is_some());
        c.avg.update(now, load, u64::from(c.h_nr_runnable), running)
    }

    /// `update_load_avg`: entity `se` (if attached) and then its queue `q` up to now; for
    /// a group entity, what changed in its group's queue propagates; `how` attaches or
    /// detaches, and refreshes the group's load (`update_tg_load_avg`).
    pub(super) fn update_load_avg(&mut self, q: u32, se: u32, how: Pelt) {
        let now = self.pelt_now();
        let running = self.cfs[q as usize].fair.curr == Some(se);
        let runnable = self.se_runnable(se);
        let e = &mut self.ents[se];
        if e.avg.last_update_time != 0 {
            e.avg.update_se(now, e.load.weight, e.on_rq, runnable, running);
        }
        let mut decayed = self.update_cfs_rq(q);
        if is_group(se) {
            decayed |= self.propagate_entity_load_avg(q, se);
        }
        let e = &mut self.ents[se];
        match how {
            Pelt::Attach if e.avg.last_update_time == 0 => {
                self.cfs[q as usize].avg.attach(&mut e.avg, e.load.weight);
                self.update_tg_load_avg(q);
            }
            Pelt::Detach => {
                self.cfs[q as usize].avg.detach(&e.avg, e.load.weight);
                self.update_tg_load_avg(q);
            }
            Pelt::Tg | Pelt::Attach if decayed => self.update_tg_load_avg(q),
            _ => {}
        }
    }

    /// `propagate_entity_load_avg` of group entity `se`, queued on `q`: the change
    /// awaiting in its group's queue, if any, moves into its averages and `q`'s.
    fn propagate_entity_load_avg(&mut self, q: u32, se: u32) -> bool {
        let gq = self.my_q(se);
        if !self.cfs[gq as usize].avg.propagating() {
            return false;
        }
        let (parent, group) = two_mut(&mut self.cfs, q as usize, gq as usize);
        let e = &mut self.ents[se];
        let group_weight = scale_load_down(group.fair.load);
        parent.avg.propagate(&mut e.avg, e.load.weight, &mut group.avg, group_weight)
    }

    /// The `util_est` part of `dequeue_task_fair`: the CPU's root queue loses the task's
    /// estimate (unless it is delayed, when it already has), and a task going to sleep
    /// completes an activation (`util_est_update`).
    pub(super) fn dequeue_util_est(&mut self, cpu: u32, pid: u32, sleep: bool) {
        let se = &mut self.ents[pid];
        if !se.delayed {
            self.cfs[cpu as usize].avg.util_est_dequeue(&se.avg);
        }
        if sleep {
            se.avg.util_est_update();
        }
    }

    /// `post_init_entity_util_avg`, for a new task placed on `cpu`: a fair task's initial
    /// utilization from its queue's there; a real-time task is attached nowhere, its
    /// clock set so that becoming fair later ages it from now.
    pub(super) fn post_init_load(&mut self, cpu: u32, pid: u32) {
        let now = self.pelt_now();
        let q = self.task_q_on(pid, cpu);
        let se = &mut self.ents[pid];
        if se.policy.is_rt() {
            se.avg.last_update_time = now;
        } else {
            self.cfs[q as usize].avg.post_init(&mut se.avg, se.load.weight);
        }
    }

    /// `migrate_task_rq_fair` for a fair task waking on another CPU than `prev`: it
    /// leaves its queue's averages on `prev` at that queue's next update
    /// (`remove_entity_load_avg`); when `prev` is idle its stale clock is caught up
    /// (`migrate_se_pelt_lag`, whose estimate of the idle CPU's clock is exactly now here:
    /// no lost idle time, no throttling); then the task is attached nowhere until it is
    /// queued.
    pub(super) fn migrate_load(&mut self, prev: u32, pid: u32) {
        let now = self.pelt_now();
        let q = self.task_q_on(pid, prev);
        let idle = self.rqs[prev as usize].curr == 0;
        let se = &mut self.ents[pid];
        self.cfs[q as usize].avg.remove(&mut se.avg, se.load.weight);
        if idle && !se.avg.is_decayed() {
            se.avg.update_blocked(now, se.load.weight);
        }
        se.avg.last_update_time = 0;
    }

    /// `task_dead_fair`: a dead task's averages leave its queue at the queue's next
    /// update.
    pub(super) fn remove_dead_load(&mut self, pid: u32) {
        let q = self.task_q(pid);
        let se = &mut self.ents[pid];
        self.cfs[q as usize].avg.remove(&mut se.avg, se.load.weight);
    }

    /// `reweight_task_fair` for a fair task off the queue: its load changes weight in
    /// its queue's averages; the entity takes the new weight.
    pub(super) fn reweight_load(&mut self, pid: u32, load: LoadWeight) {
        let q = self.task_q(pid);
        let se = &mut self.ents[pid];
        self.cfs[q as usize].avg.reweight(&mut se.avg, se.load.weight, load.weight);
        se.load = load;
    }

    /// `detach_entity_cfs_rq` (`switched_from_fair`, a task leaving its group): a task
    /// leaves its queue's averages, caught up first, and the change propagates up the
    /// hierarchy (`propagate_entity_cfs_rq`).
    pub(super) fn detach_load(&mut self, pid: u32) {
        if self.ents[pid].avg.last_update_time == 0 {
            return;
        }
        let q = self.task_q(pid);
        self.update_load_avg(q, pid, Pelt::Plain);
        let se = &self.ents[pid];
        self.cfs[q as usize].avg.detach(&se.avg, se.load.weight);
        self.update_tg_load_avg(q);
        self.propagate_entity_cfs_rq(q);
    }

    /// `attach_entity_cfs_rq` (`switched_to_fair`, a task joining its group): a task is
    /// aged to now (ATTACH_AGE_LOAD) and joins its queue's averages; the change
    /// propagates up.
    pub(super) fn attach_load(&mut self, pid: u32) {
        let q = self.task_q(pid);
        self.update_load_avg(q, pid, Pelt::Plain);
        let se = &mut self.ents[pid];
        self.cfs[q as usize].avg.attach(&mut se.avg, se.load.weight);
        self.update_tg_load_avg(q);
        self.propagate_entity_cfs_rq(q);
    }

    /// `sched_balance_update_blocked_averages`: `cpu`'s queues decay to now (the blocked
    /// load of their sleeping tasks), its task groups' bottom-up (`group.rs`), then the
    /// root; once nothing is left, the NOHZ balancer stops updating it
    /// (`has_blocked_load`).
    pub(super) fn update_blocked_averages(&mut self, cpu: u32) {
        let jiffies = self.jiffies();
        self.rqs[cpu as usize].last_blocked_load_update_tick = jiffies;
        let groups_blocked = self.update_blocked_groups(cpu);
        self.update_cfs_rq(cpu);
        if !groups_blocked && !self.cfs[cpu as usize].avg.has_blocked() {
            self.rqs[cpu as usize].has_blocked_load = false;
        }
    }

    /// `cpu_load`: the root queue's load average, blocked load included.
    pub(super) fn cpu_load(&self, cpu: u32) -> u64 {
        self.cfs[cpu as usize].avg.avg.load_avg
    }

    /// `cpu_runnable`: the root queue's runnable average.
    pub(super) fn cpu_runnable(&self, cpu: u32) -> u64 {
        self.cfs[cpu as usize].avg.avg.runnable_avg
    }

    /// `cpu_util_cfs` (`cpu_util(cpu, NULL, -1, 0)`), or with `boost`
    /// `cpu_util_cfs_boost`: the root queue's utilization (with `boost` at least its
    /// runnable average), at least the estimate of its queued tasks (UTIL_EST), at most
    /// the capacity.
    pub(super) fn cpu_util(&self, cpu: u32, boost: bool) -> u64 {
        let a = &self.cfs[cpu as usize].avg.avg;
        let util = if boost { a.util_avg.max(a.runnable_avg) } else { a.util_avg };
        util.max(u64::from(a.util_est)).min(CAPACITY)
    }
}

/// Two distinct elements of `v`, both mutable.
pub(super) fn two_mut<T>(v: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b, "two different elements");
    if a < b {
        let (lo, hi) = v.split_at_mut(b);
        (&mut lo[a], &mut hi[0])
    } else {
        let (lo, hi) = v.split_at_mut(a);
        (&mut hi[0], &mut lo[b])
    }
}

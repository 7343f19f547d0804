//! Load tracking in the engine: the PELT averages ([`crate::pelt`]) of every fair task
//! and of every CPU's fair run queue, updated where Linux 6.18's `kernel/sched/fair.c`
//! updates them, and the values the balancer and wake-up placement read from them.
//!
//! `update_load_avg` brings a task's averages and then its queue's up to now. It runs
//! when a task is queued (`enqueue_entity`, which attaches a new or migrated task to the
//! queue's averages), dequeued (`dequeue_entity`, also when DELAY_DEQUEUE keeps a
//! sleeper queued, and when that delayed task finally leaves), when the running task
//! stops running while queued (`put_prev_entity`) or a queued one starts
//! (`set_next_entity`), and at the tick (`entity_tick`). A task that sleeps is not
//! updated: its averages stay in its queue's (the queue's *blocked load*) and decay
//! with them; its own decay over the sleep happens when it is next updated. A task
//! waking on another CPU is decayed to its old queue's last update and removed from it
//! at that queue's next update (`migrate_task_rq_fair`: `remove_entity_load_avg`, and
//! `migrate_se_pelt_lag` when the old CPU is idle); a task the balancer moves is
//! detached at once (`detach_entity_load_avg`); both are attached where they are queued
//! next. A task that dies is removed (`task_dead_fair`). An idle CPU's queue decays only
//! when the balancer updates blocked averages (`sched_balance_update_blocked_averages`,
//! see `smp.rs`).
//!
//! The PELT clock (`rq_clock_pelt`) is the simulated time plus [`PELT_EPOCH_NS`]: with
//! every CPU at full capacity and frequency it runs with the task clock and loses no
//! idle time, and like the kernel's it is never 0, so a zero `last_update_time` keeps
//! its meaning of "attached nowhere".

use schedlab_model::Ns;

use super::Engine;
use crate::class::FairClass;
use crate::pelt::CAPACITY;
use crate::weights::LoadWeight;

/// The PELT clock at simulated time 0: as if the machine had been up for 2³⁰ ns, a
/// multiple of 1024 ns so that PELT periods start at the same simulated instants.
pub(super) const PELT_EPOCH_NS: Ns = 1 << 30;

impl<F: FairClass> Engine<'_, F> {
    fn pelt_now(&self) -> Ns {
        self.now + PELT_EPOCH_NS
    }

    /// `cfs_rq->h_nr_runnable`: the queued fair tasks of `cpu` that are not delayed.
    pub(super) fn h_nr_runnable(&self, cpu: u32) -> u32 {
        let rq = &self.rqs[cpu as usize];
        rq.fair.nr_running - rq.nr_delayed
    }

    /// `update_cfs_rq_load_avg` of `cpu`'s queue to now: its total weight counts as
    /// load, its runnable tasks as runnable, its `curr` as running.
    fn update_cfs_rq(&mut self, cpu: u32) {
        let now = self.pelt_now();
        let runnable = u64::from(self.h_nr_runnable(cpu));
        let rq = &mut self.rqs[cpu as usize];
        rq.cfs_avg.update(now, rq.fair.load, runnable, rq.fair.curr.is_some());
    }

    /// `update_load_avg`: the fair task `pid` (if attached) and then `cpu`'s queue up to
    /// now; with `attach` (`DO_ATTACH`, from an enqueue) a task attached nowhere joins
    /// the queue's averages.
    pub(super) fn update_load_avg(&mut self, cpu: u32, pid: u32, attach: bool) {
        let now = self.pelt_now();
        let running = self.rqs[cpu as usize].fair.curr == Some(pid);
        let se = &mut self.ents[pid as usize];
        if se.avg.last_update_time != 0 {
            let (weight, on_rq, runnable) = (se.load.weight, se.on_rq, se.on_rq && !se.delayed);
            se.avg.update_task(now, weight, on_rq, runnable, running);
        }
        self.update_cfs_rq(cpu);
        let se = &mut self.ents[pid as usize];
        if attach && se.avg.last_update_time == 0 {
            self.rqs[cpu as usize].cfs_avg.attach(&mut se.avg, se.load.weight);
        }
    }

    /// The averages' part of `enqueue_task_fair` for `pid` joining `cpu`'s queue (before
    /// the class queues it): the queue's estimate gains the task's (`util_est_enqueue`),
    /// and `enqueue_entity`'s update, attaching.
    pub(super) fn enqueue_load(&mut self, cpu: u32, pid: u32) {
        self.rqs[cpu as usize].cfs_avg.util_est_enqueue(&self.ents[pid as usize].avg);
        self.update_load_avg(cpu, pid, true);
    }

    /// The `util_est` part of `dequeue_task_fair`: the queue loses the task's estimate
    /// (unless it is delayed, when it already has), and a task going to sleep completes
    /// an activation (`util_est_update`).
    pub(super) fn dequeue_util_est(&mut self, cpu: u32, pid: u32, sleep: bool) {
        let se = &mut self.ents[pid as usize];
        if !se.delayed {
            self.rqs[cpu as usize].cfs_avg.util_est_dequeue(&se.avg);
        }
        if sleep {
            se.avg.util_est_update();
        }
    }

    /// `post_init_entity_util_avg`, for a new task placed on `cpu`: a fair task's initial
    /// utilization from the queue's; a real-time task is attached nowhere, its clock set
    /// so that becoming fair later ages it from now.
    pub(super) fn post_init_load(&mut self, cpu: u32, pid: u32) {
        let now = self.pelt_now();
        let se = &mut self.ents[pid as usize];
        if se.policy.is_rt() {
            se.avg.last_update_time = now;
        } else {
            self.rqs[cpu as usize].cfs_avg.post_init(&mut se.avg, se.load.weight);
        }
    }

    /// `migrate_task_rq_fair` for a fair task waking on another CPU than `prev`: it
    /// leaves `prev`'s averages at that queue's next update (`remove_entity_load_avg`);
    /// when `prev` is idle its stale clock is caught up (`migrate_se_pelt_lag`, whose
    /// estimate of the idle CPU's clock is exactly now here: no lost idle time, no
    /// throttling); then the task is attached nowhere until it is queued.
    pub(super) fn migrate_load(&mut self, prev: u32, pid: u32) {
        let now = self.pelt_now();
        let rq = &mut self.rqs[prev as usize];
        let se = &mut self.ents[pid as usize];
        rq.cfs_avg.remove(&mut se.avg, se.load.weight);
        if rq.curr == 0 && !se.avg.is_decayed() {
            se.avg.update_blocked(now, se.load.weight);
        }
        se.avg.last_update_time = 0;
    }

    /// `detach_entity_load_avg` for a task the balancer just dequeued from `cpu` (its
    /// averages and the queue's are current), and the `last_update_time = 0` of
    /// `migrate_task_rq_fair`: it is attached where it is queued next.
    pub(super) fn detach_migrating_load(&mut self, cpu: u32, pid: u32) {
        let se = &mut self.ents[pid as usize];
        self.rqs[cpu as usize].cfs_avg.detach(&se.avg, se.load.weight);
        se.avg.last_update_time = 0;
    }

    /// `task_dead_fair`: a dead task's averages leave `cpu`'s queue at its next update.
    pub(super) fn remove_dead_load(&mut self, cpu: u32, pid: u32) {
        let se = &mut self.ents[pid as usize];
        self.rqs[cpu as usize].cfs_avg.remove(&mut se.avg, se.load.weight);
    }

    /// `reweight_task_fair` for a fair task off the queue: its load changes weight in
    /// `cpu`'s averages; the entity takes the new weight.
    pub(super) fn reweight_load(&mut self, cpu: u32, pid: u32, load: LoadWeight) {
        let se = &mut self.ents[pid as usize];
        self.rqs[cpu as usize].cfs_avg.reweight(&mut se.avg, se.load.weight, load.weight);
        se.load = load;
    }

    /// `detach_entity_cfs_rq` (`switched_from_fair`): a task that stops being fair leaves
    /// `cpu`'s averages, caught up first.
    pub(super) fn detach_load(&mut self, cpu: u32, pid: u32) {
        if self.ents[pid as usize].avg.last_update_time == 0 {
            return;
        }
        self.update_load_avg(cpu, pid, false);
        let se = &self.ents[pid as usize];
        self.rqs[cpu as usize].cfs_avg.detach(&se.avg, se.load.weight);
    }

    /// `attach_entity_cfs_rq` (`switched_to_fair`): a task that becomes fair is aged to
    /// now (ATTACH_AGE_LOAD) and joins `cpu`'s averages.
    pub(super) fn attach_load(&mut self, cpu: u32, pid: u32) {
        self.update_load_avg(cpu, pid, false);
        let se = &mut self.ents[pid as usize];
        self.rqs[cpu as usize].cfs_avg.attach(&mut se.avg, se.load.weight);
    }

    /// `sched_balance_update_blocked_averages`: `cpu`'s queue decays to now (the blocked
    /// load of its sleeping tasks); once nothing is left, the NOHZ balancer stops
    /// updating it (`has_blocked_load`).
    pub(super) fn update_blocked_averages(&mut self, cpu: u32) {
        let jiffies = self.jiffies();
        self.rqs[cpu as usize].last_blocked_load_update_tick = jiffies;
        self.update_cfs_rq(cpu);
        let rq = &mut self.rqs[cpu as usize];
        if !rq.cfs_avg.has_blocked() {
            rq.has_blocked_load = false;
        }
    }

    /// `cpu_load`: the queue's load average, blocked load included.
    pub(super) fn cpu_load(&self, cpu: u32) -> u64 {
        self.rqs[cpu as usize].cfs_avg.avg.load_avg
    }

    /// `cpu_runnable`: the queue's runnable average.
    pub(super) fn cpu_runnable(&self, cpu: u32) -> u64 {
        self.rqs[cpu as usize].cfs_avg.avg.runnable_avg
    }

    /// `cpu_util_cfs` (`cpu_util(cpu, NULL, -1, 0)`), or with `boost`
    /// `cpu_util_cfs_boost`: the queue's utilization (with `boost` at least its runnable
    /// average), at least the estimate of its queued tasks (UTIL_EST), at most the
    /// capacity.
    pub(super) fn cpu_util(&self, cpu: u32, boost: bool) -> u64 {
        let a = &self.rqs[cpu as usize].cfs_avg.avg;
        let util = if boost { a.util_avg.max(a.runnable_avg) } else { a.util_avg };
        util.max(u64::from(a.util_est)).min(CAPACITY)
    }
}

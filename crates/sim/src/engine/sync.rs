//! Synchronization between the threads of a workload — pthread mutexes (with priority
//! inheritance), condition variables, rt-app's barriers and timers — and the system
//! calls by which a task changes its own affinity and scheduling policy.
//!
//! Waiters are woken in the order the kernel's futex wake-ups take them: real-time
//! tasks by priority, then everyone else, in arrival order within a priority.

use std::collections::{HashMap, VecDeque};

use schedlab_model::Ns;

use super::task::{Phase, State, Wait};
use super::Engine;
use crate::class::{Dequeue, Enqueue, FairClass};
use crate::cpuset::CpuSet;
use crate::program::{CpuSetId, Op, Sched, SyncId, TimerId};
use crate::weights::LoadWeight;
use crate::workload::{Policy, SyncSpec, Workload};

/// Where a task taken off its queue to be changed was ([`Engine::save`]).
struct Saved {
    cpu: u32,
    /// It was queued (runnable, running, or virtual runnable).
    queued: bool,
    /// It was its CPU's running task.
    running: bool,
    /// Its queue's `min_vruntime`, to place it again.
    from_min_vruntime: i64,
}

/// The state of one synchronization object.
#[derive(Clone, Debug)]
enum Object {
    Mutex { pi: bool, owner: Option<u32>, waiters: VecDeque<u32> },
    Cond { waiters: VecDeque<u32> },
    Barrier { users: u32, waiters: Vec<u32> },
}

/// The synchronization objects of a run and who waits for what.
#[derive(Clone, Debug)]
pub(crate) struct SyncState {
    objects: Vec<Object>,
    /// The next activation of each shared timer, once a task has used it.
    timers: Vec<Option<Ns>>,
    /// The mutex each blocked task waits for (priority inheritance follows it).
    waiting_for: HashMap<u32, SyncId>,
    /// The settings of tasks boosted by priority inheritance, as the tasks set them.
    base: HashMap<u32, Sched>,
}

impl SyncState {
    pub fn new(w: &Workload) -> Self {
        let objects = w
            .sync
            .iter()
            .map(|s| match *s {
                SyncSpec::Mutex { pi } => Object::Mutex { pi, owner: None, waiters: VecDeque::new() },
                SyncSpec::Cond => Object::Cond { waiters: VecDeque::new() },
                SyncSpec::Barrier { users } => Object::Barrier { users, waiters: Vec::new() },
            })
            .collect();
        SyncState {
            objects,
            timers: vec![None; w.timers.len()],
            waiting_for: HashMap::new(),
            base: HashMap::new(),
        }
    }

    fn mutex(&mut self, id: SyncId) -> (&mut Option<u32>, &mut VecDeque<u32>, bool) {
        match &mut self.objects[id as usize] {
            Object::Mutex { pi, owner, waiters } => (owner, waiters, *pi),
            _ => unreachable!("validated: {id} is a mutex"),
        }
    }

    fn cond(&mut self, id: SyncId) -> &mut VecDeque<u32> {
        match &mut self.objects[id as usize] {
            Object::Cond { waiters } => waiters,
            _ => unreachable!("validated: {id} is a condition variable"),
        }
    }
}

impl<F: FairClass> Engine<'_, F> {
    /// Completes `op` in user space when it needs no system call — a free mutex, an
    /// unlock nobody waits for, a signal to an empty condition variable — as glibc
    /// does; true when done.
    pub(super) fn sync_fast_path(&mut self, pid: u32, op: &Op) -> bool {
        match *op {
            Op::Lock { mutex } => {
                let (owner, _, _) = self.sync.mutex(mutex);
                let free = owner.is_none();
                if free {
                    *owner = Some(pid);
                }
                free
            }
            Op::Unlock { mutex } => {
                let (owner, waiters, _) = self.sync.mutex(mutex);
                let free = *owner == Some(pid) && waiters.is_empty();
                if free {
                    *owner = None;
                }
                free
            }
            Op::CondSignal { cond, .. } => self.sync.cond(cond).is_empty(),
            _ => false,
        }
    }

    /// Performs a synchronization, timer or self-setting operation whose system-call
    /// entry is paid.
    pub(super) fn sync_attempt(&mut self, pid: u32, op: Op) {
        match op {
            Op::Lock { mutex } => self.lock(pid, mutex),
            Op::Unlock { mutex } => {
                self.release(pid, mutex);
                self.return_to_user(pid);
            }
            Op::CondWait { cond, mutex } => {
                self.release(pid, mutex);
                self.sync.cond(cond).push_back(pid);
                self.block(pid, Wait::Object, None, None);
            }
            Op::CondSignal { cond, all } => {
                while let Some(w) = self.take_top(|s| s.cond(cond)) {
                    self.wake(w, pid, Phase::Completed(0));
                    if !all {
                        break;
                    }
                }
                self.return_to_user(pid);
            }
            Op::Barrier { barrier } => {
                let Object::Barrier { users, waiters } = &mut self.sync.objects[barrier as usize] else {
                    unreachable!("validated: {barrier} is a barrier")
                };
                if waiters.len() + 1 >= *users as usize {
                    for w in std::mem::take(waiters) {
                        self.wake(w, pid, Phase::Completed(0));
                    }
                    self.return_to_user(pid);
                } else {
                    waiters.push(pid);
                    self.block(pid, Wait::Object, None, None);
                }
            }
            Op::Timer { timer, period } => self.timer(pid, timer, period),
            Op::SetAffinity { cpus } => self.set_affinity(pid, cpus),
            Op::SetGroup { group } => {
                self.set_group(pid, group);
                self.return_to_user(pid);
            }
            Op::SetSched { policy, nice, rt_priority } => {
                let s = Sched { policy, nice, rt_priority };
                if let Some(own) = self.sync.base.get_mut(&pid) {
                    // Boosted: the new settings are its own, the boost stays on top.
                    *own = s;
                    self.pi_update(pid);
                } else {
                    self.set_sched(pid, s);
                }
                self.return_to_user(pid);
            }
            _ => unreachable!("not a synchronization operation: {op:?}"),
        }
    }

    /// Ends a system call that may have made another task preempt the caller (a wake-up,
    /// a lower priority): as at the kernel's return to user space, a caller whose CPU must
    /// reschedule is switched out first and returns when it runs again; otherwise it goes
    /// on at once.
    fn return_to_user(&mut self, pid: u32) {
        let cpu = self.tasks[pid as usize].cpu;
        if !self.resched_mask.contains(cpu) {
            self.finish_syscall(pid, 0);
            return;
        }
        let t = &mut self.tasks[pid as usize];
        t.phase = Phase::Completed(0);
        t.work = 0;
        self.start_stint(pid);
    }

    /// Takes the waiter the kernel wakes first from the queue `queue` picks: the highest
    /// class priority, the longest waiting among equals.
    fn take_top(&mut self, queue: impl FnOnce(&mut SyncState) -> &mut VecDeque<u32>) -> Option<u32> {
        let ents = &self.ents;
        let prio = |p: u32| {
            let e = &ents[p];
            Sched { policy: e.policy, nice: e.nice, rt_priority: e.rt_priority }.class_prio()
        };
        let q = queue(&mut self.sync);
        let best = q.iter().enumerate().max_by_key(|&(i, &p)| (prio(p), std::cmp::Reverse(i)))?.0;
        q.remove(best)
    }

    /// `pthread_mutex_lock` past the fast path: takes the mutex if it is free (after a
    /// wake-up, or freed meanwhile), else waits for it, boosting a PI mutex's owner.
    fn lock(&mut self, pid: u32, mutex: SyncId) {
        let (owner, waiters, pi) = self.sync.mutex(mutex);
        match *owner {
            None => {
                *owner = Some(pid);
                self.finish_syscall(pid, 0);
            }
            Some(holder) => {
                waiters.push_back(pid);
                self.sync.waiting_for.insert(pid, mutex);
                self.block(pid, Wait::Object, None, None);
                if pi {
                    self.pi_update(holder);
                }
            }
        }
    }

    /// Unlocks `mutex` (as glibc does, whoever holds it). A PI mutex passes to its top
    /// waiter, and its old owner loses the boost it had from it; otherwise the top
    /// waiter wakes to try again.
    fn release(&mut self, pid: u32, mutex: SyncId) {
        let (owner, _, pi) = self.sync.mutex(mutex);
        *owner = None;
        let Some(w) = self.take_top(|s| s.mutex(mutex).1) else {
            if pi {
                self.pi_update(pid);
            }
            return;
        };
        self.sync.waiting_for.remove(&w);
        if pi {
            *self.sync.mutex(mutex).0 = Some(w);
            self.pi_update(pid);
            self.pi_update(w);
            self.wake(w, pid, Phase::Completed(0));
        } else {
            self.wake(w, pid, Phase::Retry);
        }
    }

    /// Gives `pid` the highest of its own priority and those of the real-time tasks
    /// waiting for the PI mutexes it holds (the kernel's `rt_mutex_setprio`: a boosted
    /// task runs as `SCHED_FIFO`, or `SCHED_RR` if that is its own policy), then does
    /// the same along the chain of PI mutexes it waits for. Fair waiters boost nobody:
    /// the kernel keeps a fair task's weight from its own nice value.
    fn pi_update(&mut self, pid: u32) {
        let mut p = pid;
        for _ in 0..self.tasks.len() {
            if self.tasks[p as usize].state == State::Dead {
                return;
            }
            let e = &self.ents[p];
            let current = Sched { policy: e.policy, nice: e.nice, rt_priority: e.rt_priority };
            let own = self.sync.base.get(&p).copied().unwrap_or(current);
            let top = self
                .sync
                .objects
                .iter()
                .filter_map(|o| match o {
                    Object::Mutex { pi: true, owner: Some(o), waiters } if *o == p => Some(waiters),
                    _ => None,
                })
                .flatten()
                .map(|&w| self.class_prio(w))
                .max()
                .unwrap_or(0);
            let want = if top > own.class_prio() {
                self.sync.base.insert(p, own);
                let policy = if own.policy == Policy::Rr { Policy::Rr } else { Policy::Fifo };
                Sched { policy, nice: own.nice, rt_priority: (top - 1) as u8 }
            } else {
                self.sync.base.remove(&p);
                own
            };
            if want == current {
                return;
            }
            self.set_sched(p, want);
            let Some(&m) = self.sync.waiting_for.get(&p) else { return };
            match self.sync.mutex(m) {
                (&mut Some(next), _, true) => p = next,
                _ => return,
            }
        }
    }

    /// Takes `pid` off its queue to change it (`DEQUEUE_SAVE`), saying where it was and
    /// how, so that it can be queued again keeping its place (`ENQUEUE_RESTORE`).
    fn save(&mut self, pid: u32) -> Saved {
        let t = &self.tasks[pid as usize];
        let cpu = t.cpu;
        let queued = matches!(t.state, State::Runnable | State::Running) || t.virtual_runnable;
        let running = t.state == State::Running && self.rqs[cpu as usize].curr == pid;
        let from_min_vruntime = self.cfs[self.task_q(pid) as usize].fair.min_vruntime;
        if queued {
            self.dequeue(pid, Dequeue::Migrate);
        }
        Saved { cpu, queued, running, from_min_vruntime }
    }

    /// Changes the policy and priority of `pid` as `__sched_setscheduler` does: a
    /// queued task leaves its class's queue and joins the new one keeping its place
    /// (`DEQUEUE_SAVE`/`ENQUEUE_RESTORE`), then the CPU decides again who runs.
    fn set_sched(&mut self, pid: u32, s: Sched) {
        let Saved { cpu, queued, running, from_min_vruntime } = self.save(pid);
        // set_load_weight with the old class: a fair task's load changes weight in its
        // queue's averages (`reweight_task_fair`); switched_from_fair then takes it out.
        let load = LoadWeight::for_task(s.nice, s.policy == Policy::Idle);
        let was_fair = !self.is_rt(pid);
        if was_fair {
            self.reweight_load(pid, load);
            if s.policy.is_rt() {
                self.detach_load(pid);
            }
        }
        let e = &mut self.ents[pid];
        e.policy = s.policy;
        e.nice = s.nice;
        e.rt_priority = s.rt_priority;
        e.load = load;
        let becomes_fair = !was_fair && !s.policy.is_rt();
        if !queued {
            if becomes_fair {
                self.attach_load(pid);
            }
            return;
        }
        if running && s.policy.is_rt() {
            // A running real-time task stays out of its list; schedule() puts it back
            // at the head, as after a preemption.
            let rq = &mut self.rqs[cpu as usize];
            rq.nr_running += 1;
            self.overloaded_cpus += u32::from(rq.nr_running == 2);
            self.rt_runnable += 1;
            self.rt_task_queued();
        } else {
            self.enqueue(pid, cpu, Enqueue::Migrated { from_min_vruntime });
        }
        if becomes_fair {
            // switched_to_fair, once queued.
            self.attach_load(pid);
        }
        if running {
            self.resched(cpu);
        } else {
            self.check_preempt(cpu, pid);
        }
    }

    /// Moves `pid` to task group `group` (`None`: the root group) as `sched_move_task`
    /// does: a queued task leaves its queue keeping its place
    /// (`DEQUEUE_SAVE`/`ENQUEUE_RESTORE`), the running one its CPU's fair path; a fair
    /// task's averages leave the old group's queue and join the new one's
    /// (`task_change_group_fair`: detached, propagated up, attached, propagated up); it
    /// is queued again in the new group, and the CPU decides again who runs. A
    /// real-time task only changes groups: the fair hierarchy is not its (and real-time
    /// group scheduling is not simulated); it is queued there if it becomes fair.
    fn set_group(&mut self, pid: u32, group: Option<u32>) {
        let t = &self.tasks[pid as usize];
        if t.group == group {
            return;
        }
        if self.is_rt(pid) {
            self.tasks[pid as usize].group = group;
            return;
        }
        let Saved { cpu, queued, running, from_min_vruntime } = self.save(pid);
        if running {
            self.put_prev_task_fair(cpu);
        }
        self.detach_load(pid);
        self.ents[pid].avg.last_update_time = 0;
        self.tasks[pid as usize].group = group;
        self.attach_load(pid);
        if queued {
            self.enqueue(pid, cpu, Enqueue::Migrated { from_min_vruntime });
        }
        if running {
            self.resched(cpu);
        } else if queued {
            self.check_preempt(cpu, pid);
        }
    }

    /// `sched_setaffinity()` on itself: a task whose CPU is no longer allowed moves at
    /// once (the kernel's stopper preempts it; here it blocks and wakes on an allowed
    /// CPU in the same instant).
    fn set_affinity(&mut self, pid: u32, cpus: Option<CpuSetId>) {
        let n = self.cpus;
        let mask = cpus.map_or_else(
            || CpuSet::full(n),
            |set| CpuSet::of(n, self.workload.cpu_sets[set as usize].iter().copied()),
        );
        let t = &mut self.tasks[pid as usize];
        t.affinity = mask;
        if t.allowed(t.cpu) {
            self.finish_syscall(pid, 0);
        } else {
            self.block(pid, Wait::Timer, None, None);
            self.wake(pid, pid, Phase::Completed(0));
        }
    }

    /// rt-app's timer: the next activation is `period` after the last one, the first
    /// one `period` after the task's start; a task that is early sleeps until then, a
    /// late one goes on, restarting a relative timer from now.
    fn timer(&mut self, pid: u32, timer: TimerId, period: Ns) {
        let now = self.now;
        let spec = self.workload.timers[timer as usize];
        let t = &mut self.tasks[pid as usize];
        let slot = if spec.per_task {
            if t.timers.len() <= timer as usize {
                t.timers.resize(timer as usize + 1, None);
            }
            &mut t.timers[timer as usize]
        } else {
            &mut self.sync.timers[timer as usize]
        };
        let next = slot.unwrap_or(t.stats.started) + period;
        *slot = Some(if next <= now && spec.relative { now } else { next });
        if next > now {
            self.block(pid, Wait::Timer, None, Some(next));
        } else {
            self.finish_syscall(pid, 0);
        }
    }
}

//! The event-driven core: a queue of timed items ordered by (time, rank, sequence), per-CPU
//! run queues, the tick, and `schedule()`.
//!
//! Time only moves when an item is taken off the queue; everything an item causes
//! (wake-ups, preemption, IPC) happens at that instant, and the CPUs marked for
//! rescheduling are rescheduled before the next item.

mod bandwidth;
mod domains;
mod group;
mod ipc;
mod load;
mod ops;
mod smp;
mod sync;
mod task;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, PrevState};

use crate::class::{Dequeue, Enqueue, Entity, Ents, FairClass, FairServer, RtRq, ServerState};
use crate::config::{SimConfig, Tunables};
use crate::cpuset::CpuSet;
use crate::pelt::SchedAvg;
use crate::program::{Op, Program};
use crate::report::{Percentiles, Report, TaskReport};
use crate::weights::LoadWeight;
use crate::workload::{Policy, Workload};
use crate::{Hooks, SimError};
use schedlab_model::{ProviderLayer, SliceLayer};

use bandwidth::Bandwidth;
use domains::Domains;
use group::{CfsRq, Hierarchy, Tg};
use ipc::Object;
use task::{Phase, State, Task, Wait};

/// Items are processed this many at one instant before the run is declared stuck
/// (a program that loops without using time).
const STALL_LIMIT: u64 = 50_000_000;

/// What a queued item does when its time comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    /// A workload task starts.
    Start(u32),
    /// A running task finishes the CPU work of its current step.
    Step { pid: u32, gen: u32 },
    /// A blocked task's timer expires.
    Timer { pid: u32, gen: u32 },
    /// The periodic tick of a CPU.
    Tick(u32),
    /// The slice timer of a CPU (HRTICK, or the timeshare quantum).
    SliceEnd { cpu: u32, gen: u32 },
    /// An idle CPU that was sent work is out of its idle state and schedules
    /// (`idle_exit_ns` after the work arrived).
    IdleExit(u32),
    /// The RT bandwidth period timer (one for all CPUs).
    RtPeriod,
    /// The zero-laxity timer of a CPU's fair server.
    ServerTimer { cpu: u32, gen: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Queued {
    time: Ns,
    /// The item's rank in the top bit, then the sequence number: the order among items
    /// of one instant in one integer, so that the queue compares two words.
    order: u64,
    item: Item,
}

impl Item {
    /// Order among items of the same instant: what tasks do (finish work, wake from a
    /// timer, start) comes before the clock's interrupts (tick, slice timer), so that
    /// work ending exactly as a slice ends is done within that slice.
    fn rank(self) -> u8 {
        match self {
            Item::Start(_) | Item::Step { .. } | Item::Timer { .. } => 0,
            Item::Tick(_)
            | Item::SliceEnd { .. }
            | Item::IdleExit(_)
            | Item::RtPeriod
            | Item::ServerTimer { .. } => 1,
        }
    }
}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time, self.order).cmp(&(other.time, other.order))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A CPU's run queue (`struct rq`).
#[derive(Debug, Default)]
struct Rq {
    /// The running task, 0 when idle.
    curr: u32,
    /// The task the classes picked and account the CPU time to: `curr` itself, or a
    /// virtual runnable requester a provider (`curr`) runs for (SWAP).
    donor: u32,
    rt: RtRq,
    /// The deadline server that runs fair tasks starved by real-time ones.
    server: FairServer,
    /// Runnable tasks on this CPU, the running one included (delayed fair tasks too).
    nr_running: u32,
    /// Its fair queues' averages may still have something to decay
    /// (`rq->has_blocked_load`).
    has_blocked_load: bool,
    /// When (jiffies) they were last decayed (`rq->last_blocked_load_update_tick`).
    last_blocked_load_update_tick: u64,
    /// When the running task's CPU time was last accounted.
    exec_start: Ns,
    busy_ns: Ns,
    tick_armed: bool,
    slice_gen: u32,
    /// When (in jiffies) its domains are next due for periodic balancing.
    next_balance: u64,
    /// When it last went idle, until a task wakes on it (0: not idle since).
    idle_stamp: Ns,
    /// How long it stays idle on average (`avg_idle`), to bound newly-idle balancing.
    avg_idle: Ns,
    /// When it last switched to idle.
    idle_since: Ns,
    /// Idle, sent work, and leaving its idle state: an [`Item::IdleExit`] is queued.
    leaving_idle: bool,
}

/// The simulated machine, generic over the fair-class flavour.
pub(crate) struct Engine<'a, F: FairClass> {
    now: Ns,
    t: Tunables,
    cpus: u32,
    fair: F,
    queue: BinaryHeap<Reverse<Queued>>,
    seq: u64,
    events: u64,
    programs: &'a [Program],
    workload: &'a Workload,
    tasks: Vec<Task>,
    ents: Ents,
    rqs: Vec<Rq>,
    /// The fair queues: each CPU's root queue (its index is the CPU's), then each task
    /// group's on each CPU ([`group`]).
    cfs: Vec<CfsRq>,
    /// The task groups (none: every task on its CPU's root queue).
    tgs: Vec<Tg>,
    /// Per CPU: its group queues with blocked load to decay (`leaf_cfs_rq_list`).
    leaf: Vec<Vec<u32>>,
    /// The sched domains, with each CPU's balancing state.
    dom: Domains,
    /// CPUs running nothing, their ticks stopped (`nohz.idle_cpus_mask`).
    idle: CpuSet,
    /// Per LLC: its CPUs running something (`nr_busy_cpus`).
    llc_busy: Vec<u32>,
    /// Per LLC: a core may be wholly idle (`has_idle_cores`, a hint).
    has_idle_cores: Vec<bool>,
    /// Per domain span: the parent level found it imbalanced by affinity
    /// (`sgc->imbalance`).
    group_imbalance: Vec<bool>,
    /// When (in jiffies) some idle CPU is next due for balancing (`nohz.next_balance`).
    nohz_next_balance: u64,
    /// CPUs with more than one runnable task (the root domain's overload flag).
    overloaded_cpus: u32,
    /// Per LLC: how many CPUs a wake-up scans for an idle one (SIS_UTIL's
    /// `sd_llc_shared->nr_idle_scan`), set at each periodic balance of the LLC domain.
    nr_idle_scan: Vec<u32>,
    /// Some idle CPU may have blocked load to decay (`nohz.has_blocked`).
    nohz_has_blocked: bool,
    /// When (jiffies) idle CPUs' blocked load is next decayed (`nohz.next_blocked`).
    nohz_next_blocked: u64,
    /// Runnable real-time tasks, so that RT pulls scan only when there are some.
    rt_runnable: u32,
    /// RT throttling and the fair server.
    bw: Bandwidth,
    objs: Vec<Object>,
    sync: sync::SyncState,
    sink: Option<&'a mut dyn EventSink>,
    layer: Option<&'a mut dyn SliceLayer>,
    provider: Option<&'a mut dyn ProviderLayer>,
    /// CPUs to reschedule before the next item.
    resched_mask: CpuSet,
    rng: Pcg64Mcg,
    /// Tasks not yet dead (including those not started).
    alive: u32,
    last_exit: Ns,
    context_switches: u64,
    migrations: u64,
    rr_ticks: u64,
}

impl<'a, F: FairClass> Engine<'a, F> {
    pub fn new(
        workload: &'a Workload,
        config: &SimConfig,
        fair: F,
        hooks: Hooks<'a>,
    ) -> Result<Self, SimError> {
        let cpus = config.cpus();
        if cpus == 0 {
            return Err(SimError::NoCpus);
        }
        workload.validate(cpus)?;
        let t = config.tunables.clone();
        t.check()?;
        if !workload.groups.is_empty() && !fair.groups() {
            return Err(SimError::GroupsNeedEevdf { fair: config.fair.name() });
        }
        let rt = workload.may_run_rt();
        if rt && t.sched_rt_runtime_ns == Some(0) {
            return Err(SimError::NoRtRuntime);
        }
        let all_cpus = CpuSet::full(cpus);
        let dom = Domains::build(&config.topology);
        let avg_idle = 2 * t.migration_cost_ns;
        let rr_ticks = (t.rr_timeslice_ns / t.tick_ns()).max(1);
        let objs = workload.objects.iter().enumerate().map(|(i, o)| Object::new(i as u32, o, &t)).collect();
        let h = Hierarchy::new(cpus, &workload.groups, &t);
        let mut e = Engine {
            now: 0,
            cpus,
            fair,
            queue: BinaryHeap::new(),
            seq: 0,
            events: 0,
            programs: &workload.programs,
            workload,
            tasks: Vec::with_capacity(workload.tasks.len() + 1),
            ents: Ents { tasks: Vec::with_capacity(workload.tasks.len() + 1), groups: h.entities },
            rqs: (0..cpus).map(|_| Rq { avg_idle, ..Rq::default() }).collect(),
            cfs: h.cfs,
            tgs: h.tgs,
            leaf: h.leaf,
            idle: all_cpus.clone(),
            llc_busy: vec![0; dom.llc_cpus.len()],
            has_idle_cores: vec![true; dom.llc_cpus.len()],
            group_imbalance: vec![false; dom.units as usize],
            nohz_next_balance: 0,
            overloaded_cpus: 0,
            // Before the first periodic balance the LLCs are idle: every CPU may be scanned.
            nr_idle_scan: dom.llc_cpus.iter().map(|c| c.len() as u32).collect(),
            nohz_has_blocked: false,
            nohz_next_blocked: 0,
            rt_runnable: 0,
            bw: Bandwidth::new(&t, rt),
            dom,
            objs,
            sync: sync::SyncState::new(workload),
            sink: hooks.sink,
            layer: hooks.layer,
            provider: hooks.provider,
            resched_mask: CpuSet::empty(cpus),
            rng: Pcg64Mcg::seed_from_u64(config.seed),
            alive: 0,
            last_exit: 0,
            context_switches: 0,
            migrations: 0,
            rr_ticks,
            t,
        };
        // Pid 0 is the idle task.
        e.tasks.push(Task::new(0, "swapper".into(), 0, Vec::new(), all_cpus.clone()));
        e.ents.tasks.push(Entity::default());
        for (i, spec) in workload.tasks.iter().enumerate() {
            let pid = i as u32 + 1;
            let affinity = spec
                .affinity
                .as_ref()
                .map_or_else(|| all_cpus.clone(), |a| CpuSet::of(cpus, a.iter().copied()));
            let name = if spec.name.is_empty() {
                workload.programs[spec.program as usize].comm.clone()
            } else {
                spec.name.clone()
            };
            let mut task = Task::new(pid, name, spec.program, spec.fds.clone(), affinity);
            task.tgid = spec.thread_of.map_or(pid, |p| p + 1);
            task.group = spec.group;
            let leader = task.tgid;
            e.tasks.push(task);
            e.tasks[leader as usize].live_threads += 1;
            let ent = e.new_entity(spec.policy, spec.nice, spec.rt_priority, spec.slice_ns);
            e.ents.tasks.push(ent);
            for fd in &spec.fds {
                e.objs[fd.object as usize].adjust_ends(fd.end, 1, &mut Vec::new());
            }
            e.alive += 1;
            e.push(spec.start_ns, Item::Start(pid));
        }
        Ok(e)
    }

    fn new_entity(&self, policy: Policy, nice: i8, rt_priority: u8, slice: Option<Ns>) -> Entity {
        let load = LoadWeight::for_task(nice, policy == Policy::Idle);
        Entity {
            policy,
            nice,
            rt_priority,
            load,
            avg: SchedAvg::new_task(load.weight),
            slice: slice.map_or(self.t.base_slice_ns, |s| s.clamp(100_000, 100_000_000)),
            custom_slice: slice.is_some(),
            rr_ticks_left: self.rr_ticks,
            ..Entity::default()
        }
    }

    fn push(&mut self, time: Ns, item: Item) {
        self.seq += 1;
        let order = u64::from(item.rank()) << 63 | self.seq;
        self.queue.push(Reverse(Queued { time, order, item }));
    }

    /// Sends an event to the sink and the layers, building it only when there is one.
    fn emit(&mut self, build: impl FnOnce(&Self) -> EventKind) {
        if self.sink.is_some() || self.layer.is_some() || self.provider.is_some() {
            let event = Event { time: self.now, kind: build(self) };
            if let Some(sink) = self.sink.as_mut() {
                sink.event(&event);
            }
            if let Some(layer) = self.layer.as_mut() {
                layer.event(&event);
            }
            if let Some(provider) = self.provider.as_mut() {
                provider.event(&event);
            }
        }
    }

    /// Runs ([`Self::advance`]) and reports.
    pub fn run(mut self) -> Result<Report, SimError> {
        let wall = Instant::now();
        self.advance()?;
        Ok(self.report(wall.elapsed().as_nanos() as Ns))
    }

    /// Takes items off the queue until every task has exited, nothing can happen any
    /// more, or the workload's duration has passed.
    fn advance(&mut self) -> Result<(), SimError> {
        let mut stalled = 0u64;
        while let Some(Reverse(q)) = self.queue.pop() {
            if self.workload.duration_ns.is_some_and(|d| q.time > d) {
                self.now = self.workload.duration_ns.unwrap_or(q.time);
                break;
            }
            self.events += 1;
            if q.time > self.now {
                self.now = q.time;
                stalled = 0;
            } else {
                stalled += 1;
                if stalled > STALL_LIMIT {
                    return Err(SimError::Stalled { at_ns: self.now });
                }
            }
            match q.item {
                Item::Start(pid) => self.start_task(pid),
                Item::Step { pid, gen } => self.on_step(pid, gen),
                Item::Timer { pid, gen } => self.on_timer(pid, gen),
                Item::Tick(cpu) => self.on_tick(cpu),
                Item::SliceEnd { cpu, gen } => self.on_slice_end(cpu, gen),
                Item::IdleExit(cpu) => {
                    // Awake now: it schedules at once, and is asleep again only once it
                    // has been idle for a while.
                    let rq = &mut self.rqs[cpu as usize];
                    rq.leaving_idle = false;
                    rq.idle_since = self.now;
                    self.resched(cpu);
                }
                Item::RtPeriod => self.on_rt_period(),
                Item::ServerTimer { cpu, gen } => self.on_server_timer(cpu, gen),
            }
            self.flush_resched();
            if self.alive == 0 {
                break;
            }
        }
        Ok(())
    }

    // ---- accounting -------------------------------------------------------------

    fn is_rt(&self, pid: u32) -> bool {
        self.ents[pid].policy.is_rt()
    }

    /// A class-ordered priority: 0 idle, 1 fair, 1 + rt_priority for RT.
    fn class_prio(&self, pid: u32) -> u32 {
        match pid {
            0 => 0,
            p if self.is_rt(p) => 1 + u32::from(self.ents[p].rt_priority),
            _ => 1,
        }
    }

    /// Charges the running task of `cpu` with the CPU time since the last accounting
    /// (`update_curr`).
    fn account(&mut self, cpu: u32) {
        let rq = &mut self.rqs[cpu as usize];
        let curr = rq.curr;
        if curr == 0 {
            return;
        }
        let delta = self.now - rq.exec_start;
        if delta == 0 {
            return;
        }
        rq.exec_start = self.now;
        rq.busy_ns += delta;
        self.tasks[curr as usize].stats.cpu_ns += delta;
        let donor = rq.donor;
        self.ents[donor].sum_exec += delta;
        if self.ents[donor].policy.is_rt() {
            self.charge_rt(cpu, delta);
            return;
        }
        let expired = self.update_curr_path(donor, delta);
        if self.rqs[cpu as usize].server.state != ServerState::Stopped {
            self.charge_server(cpu, delta);
        }
        if expired {
            self.slice_expired(cpu);
        }
    }

    /// The fair class says the running task's slice is over: a layer (PFS) may let it
    /// keep the CPU for a new slice; otherwise it gives way.
    fn slice_expired(&mut self, cpu: u32) {
        let curr = self.rqs[cpu as usize].curr;
        let now = self.now;
        let keep = self.layer.as_mut().is_some_and(|l| l.keep_running(Pid(curr), now));
        let donor = self.rqs[cpu as usize].donor;
        self.slice_path(donor, keep);
        if keep {
            self.arm_slice(cpu);
        } else {
            self.resched(cpu);
        }
    }

    fn resched(&mut self, cpu: u32) {
        self.resched_mask.insert(cpu);
    }

    /// Reschedules the marked CPUs, the lowest first. An idle CPU first leaves its idle
    /// state: it schedules `idle_exit_ns` later (the interrupt that wakes it and its
    /// exit latency), unless it is still on its way into idle (it went idle at this very
    /// instant).
    fn flush_resched(&mut self) {
        while let Some(cpu) = self.resched_mask.first() {
            self.resched_mask.remove(cpu);
            let rq = &mut self.rqs[cpu as usize];
            let sleeping = rq.curr == 0 && rq.idle_since < self.now;
            if self.t.idle_exit_ns > 0 && !rq.leaving_idle && sleeping {
                rq.leaving_idle = true;
                let at = self.now + self.t.idle_exit_ns;
                self.push(at, Item::IdleExit(cpu));
            } else if !rq.leaving_idle {
                self.schedule(cpu);
            }
        }
    }

    // ---- run-queue membership ---------------------------------------------------

    fn enqueue(&mut self, pid: u32, cpu: u32, how: Enqueue) {
        self.account(cpu);
        self.tasks[pid as usize].cpu = cpu;
        let rq = &mut self.rqs[cpu as usize];
        rq.nr_running += 1;
        self.overloaded_cpus += u32::from(rq.nr_running == 2);
        let e = &self.ents[pid];
        if e.policy.is_rt() {
            self.rt_runnable += 1;
            rq.rt.enqueue(pid, e.rt_priority, false);
            self.rt_task_queued();
        } else {
            // enqueue_task_fair: the task's estimate joins the CPU's, then the hierarchy.
            self.cfs[cpu as usize].avg.util_est_enqueue(&self.ents[pid].avg);
            self.enqueue_task_fair(pid, how);
            if self.cfs[cpu as usize].h_nr_queued == 1 && self.bw.server.is_some() {
                self.server_start(cpu);
            }
            // hrtick_update: the running task's slice may now end sooner.
            self.arm_slice(cpu);
        }
    }

    /// `dequeue_task`: `pid` leaves its run queue for good (it exits, moves, changes
    /// policy or group, or a delayed sleeper finally goes). A fair task's `util_est`
    /// leaves the CPU's (a delayed task that finally leaves goes straight to
    /// `dequeue_entities` and has none left there), and the hierarchy is walked.
    fn dequeue(&mut self, pid: u32, how: Dequeue) {
        self.dequeue_task(pid, how, false);
    }

    /// [`Self::dequeue`]; `detach` takes a fair task the balancer moves out of its
    /// queue's averages at once (`DO_DETACH`).
    fn dequeue_task(&mut self, pid: u32, how: Dequeue, detach: bool) {
        let cpu = self.tasks[pid as usize].cpu;
        self.account(cpu);
        if !self.is_rt(pid) {
            if how != Dequeue::Delayed {
                self.dequeue_util_est(cpu, pid, how == Dequeue::Sleep);
            }
            self.dequeue_entities(pid, how, false, detach);
        }
        self.leave_rq(cpu, pid);
    }

    /// `pid` no longer counts on `cpu` (a fair task is already off its queues).
    fn leave_rq(&mut self, cpu: u32, pid: u32) {
        let rq = &mut self.rqs[cpu as usize];
        rq.nr_running -= 1;
        self.overloaded_cpus -= u32::from(rq.nr_running == 1);
        let e = &self.ents[pid];
        if e.policy.is_rt() {
            self.rt_runnable -= 1;
            if rq.curr != pid {
                rq.rt.dequeue(pid, e.rt_priority);
            }
        } else if self.cfs[cpu as usize].h_nr_queued == 0 {
            self.server_stop(cpu);
        }
    }

    /// The running task `pid` goes to sleep: it leaves its run queue, or stays queued,
    /// delayed, when the fair class says so (DELAY_DEQUEUE). A delayed task still counts
    /// as queued, as in the kernel's `rq->nr_running`, and as load (it is on its queue),
    /// but no longer as runnable (`h_nr_runnable`). Either way its activation is over
    /// (`util_est`) and its averages are brought up to now, as `dequeue_task_fair` does
    /// before the class decides.
    fn sleep(&mut self, pid: u32) {
        let cpu = self.tasks[pid as usize].cpu;
        self.account(cpu);
        if self.is_rt(pid) {
            self.leave_rq(cpu, pid);
            return;
        }
        self.dequeue_util_est(cpu, pid, true);
        if self.dequeue_entities(pid, Dequeue::Sleep, true, false) {
            self.leave_rq(cpu, pid);
        }
    }

    /// `wakeup_preempt`: should `woken`, just queued on `cpu`, preempt what runs there?
    fn check_preempt(&mut self, cpu: u32, woken: u32) {
        if self.resched_mask.contains(cpu) {
            return;
        }
        let curr = self.rqs[cpu as usize].donor;
        let (cp, wp) = (self.class_prio(curr), self.class_prio(woken));
        if wp > cp {
            self.resched(cpu);
        } else if wp == 1 && cp == 1 {
            self.account(cpu);
            let policy = self.ents[woken].policy;
            let (se, pse, q) = self.find_matching_se(curr, woken);
            if self.fair.wakeup_preempt(&mut self.cfs[q as usize].fair, &mut self.ents, se, pse, policy) {
                self.resched(cpu);
            }
        }
    }

    // ---- schedule() -------------------------------------------------------------

    /// Picks the next task of `cpu` and switches to it.
    fn schedule(&mut self, cpu: u32) {
        let prev = self.rqs[cpu as usize].curr;
        self.account(cpu);
        let prev_runnable = prev != 0 && self.tasks[prev as usize].state == State::Running;
        let (next, donor) = self.pick_next(cpu, prev, prev_runnable);
        if next != prev {
            self.switch(cpu, prev, next);
        } else if next != 0 && !self.tasks[next as usize].step_queued {
            self.start_stint(next);
        }
        self.rqs[cpu as usize].donor = donor;
        let rt = donor != 0 && self.is_rt(donor);
        if next != 0 {
            self.arm_slice(cpu);
        }
        if rt && self.bw.server.is_some() {
            self.server_arm(cpu);
        }
        // Only an RT-overloaded CPU (two real-time tasks or more) pushes
        // (`rt_rq->overloaded`): not one whose single real-time task waits out its
        // throttling or its fair server's window.
        if self.rqs[cpu as usize].rt.nr_queued + u32::from(rt) >= 2 {
            self.push_rt(cpu);
        }
    }

    /// `pick_next_task`: RT first (unless throttled, or the fair server runs: then the
    /// fair class first), then the fair class, else pull work (newly idle balance), else
    /// idle. Returns the task to run and the one the classes picked (they
    /// differ when a provider runs in place of a virtual runnable requester).
    fn pick_next(&mut self, cpu: u32, prev: u32, prev_runnable: bool) -> (u32, u32) {
        // A real-time donor is out of its list while picked; it goes back while it can
        // still run, for itself or (virtual runnable) by proxy.
        let donor = self.rqs[cpu as usize].donor;
        if donor != 0 && self.is_rt(donor) {
            let t = &mut self.tasks[donor as usize];
            if (donor == prev && prev_runnable) || t.state == State::Runnable || t.virtual_runnable {
                let head = !std::mem::take(&mut t.requeue_tail);
                self.rqs[cpu as usize].rt.enqueue(donor, self.ents[donor].rt_priority, head);
            }
        }
        loop {
            let rt = if self.rt_may_run(cpu) { self.rqs[cpu as usize].rt.first() } else { None };
            let p = if let Some((p, prio)) = rt {
                self.rqs[cpu as usize].rt.dequeue(p, prio);
                self.put_prev_task_fair(cpu);
                p
            } else if let Some(p) = self.pick_task_fair(cpu) {
                self.set_next_task_fair(cpu, p);
                p
            } else {
                break;
            };
            if !self.tasks[p as usize].virtual_runnable {
                return (p, p);
            }
            match self.stand_in(cpu, p) {
                Some(q) => return (q, p),
                None => {
                    // No provider can run: it is merely blocked after all.
                    self.tasks[p as usize].virtual_runnable = false;
                    self.dequeue(p, Dequeue::Sleep);
                }
            }
        }
        if self.newidle_balance(cpu) {
            return self.pick_next(cpu, 0, false);
        }
        (0, 0)
    }

    /// The provider to run on `cpu` in place of the virtual runnable `requester`,
    /// brought to `cpu` if it waits elsewhere.
    fn stand_in(&mut self, cpu: u32, requester: u32) -> Option<u32> {
        let (tasks, ents, rqs) = (&self.tasks, &self.ents, &self.rqs);
        let can_run_here = |p: Pid| {
            let t = tasks.get(p.0 as usize).filter(|_| p.0 != 0 && p.0 != requester);
            t.is_some_and(|t| {
                // A runnable task another CPU has picked (its donor, about to run it) is
                // taken.
                let waiting = t.state == State::Runnable && rqs[t.cpu as usize].donor != p.0;
                !ents[p.0].policy.is_rt()
                    && t.allowed(cpu)
                    && (waiting || (t.state == State::Running && t.cpu == cpu))
            })
        };
        let now = self.now;
        let q = self.provider.as_mut()?.stand_in(Pid(requester), now, &can_run_here)?.0;
        if !can_run_here(Pid(q)) {
            return None;
        }
        if self.tasks[q as usize].cpu != cpu {
            self.migrate_queued(q, cpu);
        }
        Some(q)
    }

    /// Whether a task that just blocked has a provider that can run somewhere, so that
    /// it stays queued as virtual runnable.
    fn has_provider(&mut self, requester: u32) -> bool {
        let (tasks, ents) = (&self.tasks, &self.ents);
        let runnable = |p: Pid| {
            tasks.get(p.0 as usize).is_some_and(|t| {
                p.0 != 0
                    && p.0 != requester
                    && !ents[p.0].policy.is_rt()
                    && matches!(t.state, State::Runnable | State::Running)
            })
        };
        let now = self.now;
        self.provider.as_mut().is_some_and(|l| l.stand_in(Pid(requester), now, &runnable).is_some())
    }

    fn switch(&mut self, cpu: u32, prev: u32, next: u32) {
        let now = self.now;
        let mut prev_state = PrevState::Runnable;
        if prev != 0 {
            let t = &mut self.tasks[prev as usize];
            t.last_ran = now;
            match t.state {
                State::Running => {
                    t.state = State::Runnable;
                    t.stats.nivcsw += 1;
                    t.stats.since = now;
                    self.save_progress(prev);
                }
                State::Blocked => {
                    t.stats.nvcsw += 1;
                    prev_state = PrevState::Blocked;
                }
                _ => prev_state = PrevState::Dead,
            }
        }
        self.emit(|_| EventKind::Switch { cpu, prev: Pid(prev), prev_state, next: Pid(next) });
        self.context_switches += 1;
        if (prev == 0) != (next == 0) {
            self.set_idle(cpu, next == 0);
        }
        if prev == 0 {
            let idle = now - self.rqs[cpu as usize].exec_start;
            self.server_idle(cpu, idle);
        }
        let rq = &mut self.rqs[cpu as usize];
        rq.curr = next;
        rq.exec_start = now;
        if next == 0 {
            rq.idle_since = now;
        }
        if next != 0 {
            let cs = self.t.context_switch_ns;
            let t = &mut self.tasks[next as usize];
            t.stats.wait_ns += now - t.stats.since;
            t.state = State::Running;
            if let Some(w) = t.stats.woken_at.take() {
                t.stats.wakeup_latency.saturating_record(now - w);
            }
            t.overhead += cs;
            self.start_stint(next);
            self.arm_tick(cpu);
        }
    }

    /// `cpu` starts or stops running tasks: the NOHZ idle mask and the LLC's busy count
    /// follow, and a CPU going idle whose whole core is idle marks its LLC as having an
    /// idle core (`update_idle_core`).
    fn set_idle(&mut self, cpu: u32, idle: bool) {
        let llc = self.dom.llc[cpu as usize] as usize;
        if idle {
            self.idle.insert(cpu);
            self.llc_busy[llc] -= 1;
            // nohz_balance_enter_idle: it may have blocked load for the idle balancer to
            // decay.
            self.rqs[cpu as usize].has_blocked_load = true;
            self.nohz_has_blocked = true;
            let core = &self.dom.core_cpus[self.dom.core[cpu as usize] as usize];
            if core.iter().all(|&c| self.idle.contains(c)) {
                self.has_idle_cores[llc] = true;
            }
        } else {
            self.idle.remove(cpu);
            self.llc_busy[llc] += 1;
        }
    }

    /// Stops the running task's stint: what it did of its step is kept, its queued
    /// completion is cancelled.
    fn save_progress(&mut self, pid: u32) {
        let now = self.now;
        let t = &mut self.tasks[pid as usize];
        let ran = now - t.step_started;
        let ov = ran.min(t.overhead);
        t.overhead -= ov;
        t.work = t.work.saturating_sub(ran - ov);
        t.gen = t.gen.wrapping_add(1);
        t.step_queued = false;
    }

    /// Starts a stint of the running task's current step: its completion is queued.
    fn start_stint(&mut self, pid: u32) {
        let now = self.now;
        let t = &mut self.tasks[pid as usize];
        t.step_started = now;
        if t.phase == Phase::Compute && t.spin_until > 0 {
            t.work = t.spin_until.saturating_sub(now + t.overhead);
        }
        t.gen = t.gen.wrapping_add(1);
        t.step_queued = true;
        let (at, gen) = (now + t.overhead + t.work, t.gen);
        self.push(at, Item::Step { pid, gen });
    }

    // ---- timers -----------------------------------------------------------------

    fn arm_tick(&mut self, cpu: u32) {
        let rq = &mut self.rqs[cpu as usize];
        if !rq.tick_armed {
            rq.tick_armed = true;
            let tick = self.t.tick_ns();
            let at = (self.now / tick + 1) * tick;
            self.push(at, Item::Tick(cpu));
        }
    }

    /// Arms the slice timer of the running fair task when slices end exactly.
    fn arm_slice(&mut self, cpu: u32) {
        let curr = self.rqs[cpu as usize].donor;
        // As hrtick_start_fair: a slice only ends early for somebody else's sake.
        if curr == 0
            || self.ents[curr].policy.is_rt()
            || !(self.t.hrtick || self.fair.exact_slices())
            || self.cfs[cpu as usize].h_nr_queued < 2
        {
            return;
        }
        if let Some(left) = self.fair.slice_left(&self.cfs[self.task_q(curr) as usize].fair, &self.ents) {
            let rq = &mut self.rqs[cpu as usize];
            rq.slice_gen = rq.slice_gen.wrapping_add(1);
            let (at, gen) = (self.now + left, rq.slice_gen);
            self.push(at, Item::SliceEnd { cpu, gen });
        }
    }

    /// `scheduler_tick`: account, let the class decide on preemption, balance load.
    /// An idle CPU stops its tick (NOHZ idle).
    fn on_tick(&mut self, cpu: u32) {
        if self.rqs[cpu as usize].curr == 0 {
            self.rqs[cpu as usize].tick_armed = false;
            return;
        }
        let curr = self.rqs[cpu as usize].donor;
        self.account(cpu);
        if self.rqs[cpu as usize].curr != curr {
            // A provider runs for a virtual runnable task: decide again at every tick,
            // as confidence feedback may have made another provider the most confident.
            self.resched(cpu);
        }
        let rq = &mut self.rqs[cpu as usize];
        let e = &mut self.ents[curr];
        if e.policy == Policy::Rr {
            // task_tick_rt: the quantum is counted in ticks; when it ends, the task goes
            // to the tail only if another task of its priority is waiting.
            e.rr_ticks_left = e.rr_ticks_left.saturating_sub(1);
            if e.rr_ticks_left == 0 {
                e.rr_ticks_left = self.rr_ticks;
                if rq.rt.queued_at(e.rt_priority) > 0 {
                    self.tasks[curr as usize].requeue_tail = true;
                    self.resched(cpu);
                }
            }
        } else if !e.policy.is_rt() {
            // task_tick_fair: each level's running entity's averages (and its queue's)
            // up to now, and each group's weight.
            self.tick_path(curr);
            let q = self.task_q(curr);
            if self.fair.tick(&mut self.cfs[q as usize].fair, &mut self.ents) {
                self.slice_expired(cpu);
            }
        }
        self.tick_balance(cpu);
        let at = self.now + self.t.tick_ns();
        self.push(at, Item::Tick(cpu));
    }

    fn on_slice_end(&mut self, cpu: u32, gen: u32) {
        let rq = &self.rqs[cpu as usize];
        if rq.slice_gen != gen || rq.curr == 0 || self.is_rt(rq.donor) {
            return;
        }
        self.account(cpu);
        let q = self.task_q(self.rqs[cpu as usize].donor);
        if self.fair.slice_end(&mut self.cfs[q as usize].fair, &mut self.ents) {
            self.slice_expired(cpu);
        }
    }

    fn on_step(&mut self, pid: u32, gen: u32) {
        let t = &mut self.tasks[pid as usize];
        if t.gen != gen || t.state != State::Running {
            return;
        }
        t.step_queued = false;
        t.overhead = 0;
        t.work = 0;
        t.spin_until = 0;
        // No accounting here: whatever the step leads to (block, wake, preempt,
        // schedule) accounts the CPUs it touches, as the kernel's update_curr calls do.
        self.step_done(pid);
    }

    fn on_timer(&mut self, pid: u32, gen: u32) {
        let t = &self.tasks[pid as usize];
        if t.gen != gen || t.state != State::Blocked {
            return;
        }
        let phase = match t.wait {
            Wait::Io => Phase::Compute,
            Wait::Signal => Phase::Completed(-11), // EAGAIN: sigtimedwait timed out
            _ => Phase::Completed(0),
        };
        self.wake(pid, 0, phase);
    }

    // ---- task life ----------------------------------------------------------------

    fn start_task(&mut self, pid: u32) {
        let now = self.now;
        let t = &mut self.tasks[pid as usize];
        t.state = State::Runnable;
        t.stats.started = now;
        t.stats.since = now;
        let prev = t.cpu;
        self.emit(|e| {
            let t = &e.tasks[pid as usize];
            let p = &e.programs[t.program as usize];
            EventKind::Exec {
                pid: Pid(pid),
                tgid: Pid(t.tgid),
                comm: p.comm.chars().take(15).collect(),
                path: p.path.clone(),
            }
        });
        let cpu = self.select_cpu(pid, prev, None, false);
        self.post_init_load(cpu, pid);
        self.enqueue(pid, cpu, Enqueue::New);
        self.check_preempt(cpu, pid);
    }

    /// Blocks the running task `pid` (it is switched out at the next `schedule`).
    fn block(&mut self, pid: u32, wait: Wait, on: Option<schedlab_model::Resource>, until: Option<Ns>) {
        let now = self.now;
        let t = &mut self.tasks[pid as usize];
        t.state = State::Blocked;
        t.wait = wait;
        t.blocked_on = on;
        t.stats.since = now;
        let cpu = t.cpu;
        self.emit(|_| EventKind::Block { pid: Pid(pid), resource: on });
        let waits_on_someone = matches!(wait, Wait::Object | Wait::Signal | Wait::Child);
        if waits_on_someone && self.has_provider(pid) {
            // SWAP: it stays queued, virtual runnable.
            self.tasks[pid as usize].virtual_runnable = true;
        } else {
            self.sleep(pid);
        }
        if let Some(at) = until {
            let t = &mut self.tasks[pid as usize];
            t.gen = t.gen.wrapping_add(1);
            let gen = t.gen;
            self.push(at, Item::Timer { pid, gen });
        }
        self.resched(cpu);
    }

    /// `try_to_wake_up`: makes a blocked task runnable on the CPU chosen for it;
    /// `phase` says how it resumes its operation.
    fn wake(&mut self, pid: u32, waker: u32, phase: Phase) {
        let now = self.now;
        let t = &mut self.tasks[pid as usize];
        if t.state != State::Blocked {
            return;
        }
        t.gen = t.gen.wrapping_add(1);
        t.phase = phase;
        t.blocked_on = None;
        t.stats.sleep_ns += now - t.stats.since;
        t.stats.since = now;
        t.stats.wakeups += 1;
        t.stats.woken_at = Some(now);
        t.state = State::Runnable;
        let prev = t.cpu;
        let waker_runs = waker != 0 && self.tasks[waker as usize].state == State::Running;
        if waker_runs {
            self.tasks[waker as usize].overhead += self.t.wakeup_ns;
        }
        let t = &mut self.tasks[pid as usize];
        let stays = t.virtual_runnable || self.ents[pid].delayed;
        if stays && waker_runs {
            self.charge_remote_wakeup(waker, prev);
        }
        let t = &mut self.tasks[pid as usize];
        if std::mem::take(&mut t.virtual_runnable) {
            // Still queued where it was: it just runs for itself from now on.
            self.emit(|_| EventKind::Wakeup { waker: Pid(waker), wakee: Pid(pid), cpu: prev });
            if self.rqs[prev as usize].donor == pid {
                self.resched(prev);
            } else {
                self.check_preempt(prev, pid);
            }
            return;
        }
        if self.ents[pid].delayed {
            // ttwu_runnable: still queued where it slept, so it wakes there
            // (`enqueue_task_fair` with ENQUEUE_DELAYED: its estimate rejoins the queue's,
            // its averages are brought up to now while still delayed, then it is runnable).
            self.account(prev);
            self.cfs[prev as usize].avg.util_est_enqueue(&self.ents[pid].avg);
            self.requeue_delayed_entity(self.task_q(pid), pid);
            self.emit(|_| EventKind::Wakeup { waker: Pid(waker), wakee: Pid(pid), cpu: prev });
            if self.rqs[prev as usize].curr != pid {
                self.check_preempt(prev, pid);
            }
            return;
        }
        // The wake-up runs where the waker runs; a timer's or a device's on the task's
        // CPU. Pipes and sockets wake their readers and writers with WF_SYNC (the
        // waker is about to block), unless the waker is exiting.
        let this = if waker != 0 { self.tasks[waker as usize].cpu } else { prev };
        let sync = waker != 0 && self.tasks[waker as usize].state != State::Dead && {
            let w = &self.tasks[waker as usize];
            let op = self.programs[w.program as usize].ops.get(w.pc as usize);
            matches!(op, Some(Op::Read { .. } | Op::Write { .. }))
        };
        let cpu = self.select_cpu(pid, prev, Some(this), sync);
        if waker_runs {
            self.charge_remote_wakeup(waker, cpu);
        }
        self.note_idle_end(cpu);
        let how = if cpu == prev {
            Enqueue::Wakeup
        } else {
            if !self.is_rt(pid) {
                self.migrate_load(prev, pid);
            }
            self.count_migration(pid);
            Enqueue::WakeupMigrated {
                from_min_vruntime: self.cfs[self.task_q(pid) as usize].fair.min_vruntime,
            }
        };
        self.emit(|_| EventKind::Wakeup { waker: Pid(waker), wakee: Pid(pid), cpu });
        self.enqueue(pid, cpu, how);
        self.check_preempt(cpu, pid);
    }

    /// A running waker that woke a task onto `cpu`, another CPU than its own, pays for
    /// telling that CPU (`wakeup_remote_ns`: the inter-processor interrupt, and on a
    /// virtual machine the exit it takes).
    fn charge_remote_wakeup(&mut self, waker: u32, cpu: u32) {
        let w = &mut self.tasks[waker as usize];
        if w.cpu != cpu {
            w.overhead += self.t.wakeup_remote_ns;
        }
    }

    /// A task wakes on `cpu`: if it was idle, how long enters its `avg_idle` (an
    /// average over eight, at most twice the cost of balancing all its domains).
    fn note_idle_end(&mut self, cpu: u32) {
        let max = 2 * self.max_idle_balance_cost(cpu);
        let now = self.now;
        let rq = &mut self.rqs[cpu as usize];
        if rq.idle_stamp != 0 {
            let delta = (now - rq.idle_stamp) as i64;
            let avg = rq.avg_idle as i64;
            rq.avg_idle = ((avg + (delta - avg) / 8) as Ns).min(max);
            rq.idle_stamp = 0;
        }
    }

    fn count_migration(&mut self, pid: u32) {
        let t = &mut self.tasks[pid as usize];
        t.stats.migrations += 1;
        t.overhead += self.t.migration_ns;
        self.migrations += 1;
    }

    // ---- report -------------------------------------------------------------------

    fn report(self, wall_ns: Ns) -> Report {
        let end = self.now;
        let makespan = if self.alive == 0 { self.last_exit } else { end };
        let tasks = self.tasks[1..]
            .iter()
            .map(|t| {
                let e = &self.ents[t.pid];
                let (mut wait, mut sleep) = (t.stats.wait_ns, t.stats.sleep_ns);
                match t.state {
                    State::Runnable => wait += end - t.stats.since,
                    State::Blocked => sleep += end - t.stats.since,
                    _ => {}
                }
                let h = &t.stats.wakeup_latency;
                let q = |q: f64| h.lowest_equivalent(h.value_at_quantile(q));
                let latency = if h.is_empty() {
                    Percentiles::default()
                } else {
                    Percentiles { p50: q(0.5), p99: q(0.99), max: h.max() }
                };
                TaskReport {
                    name: t.name.clone(),
                    pid: t.pid,
                    ppid: t.ppid,
                    policy: e.policy.name(),
                    nice: e.nice,
                    rt_priority: e.rt_priority,
                    runtime_ns: t.stats.cpu_ns,
                    wait_ns: wait,
                    sleep_ns: sleep,
                    turnaround_ns: t.stats.exited.unwrap_or(end).saturating_sub(t.stats.started),
                    exited: t.stats.exited.is_some(),
                    nvcsw: t.stats.nvcsw,
                    nivcsw: t.stats.nivcsw,
                    migrations: t.stats.migrations,
                    wakeups: t.stats.wakeups,
                    wakeup_latency_ns: latency,
                }
            })
            .collect();
        Report {
            workload: self.workload.name.clone(),
            cpus: self.cpus,
            topology: String::new(),
            fair: "",
            seed: 0,
            makespan_ns: makespan,
            events: self.events,
            wall_ns,
            events_per_sec: self.events as f64 / (wall_ns.max(1) as f64 / 1e9),
            context_switches: self.context_switches,
            migrations: self.migrations,
            cpu_busy_ns: self.rqs.iter().map(|r| r.busy_ns).collect(),
            tasks,
        }
    }
}

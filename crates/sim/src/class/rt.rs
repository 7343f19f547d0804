//! The real-time class: `SCHED_FIFO` and `SCHED_RR`, priorities 1–99 (higher runs
//! first), one FIFO list per priority as in `struct rt_prio_array`.
//!
//! A preempted task stays at the head of its list; a task that wakes, yields, or whose
//! RR quantum (`sched_rr_timeslice`, counted in ticks) ends goes to the tail.
//!
//! **RT throttling** (`sched_rt_runtime_us` per `sched_rt_period_us`; kernel/sched/rt.c
//! with `CONFIG_RT_GROUP_SCHED`, as on this machine, where the root task group's
//! `rt_rq` of each CPU is throttled): the CPU time real-time tasks use on a CPU is added
//! to its `rt_time` (`update_curr_rt`); once that exceeds the runtime
//! (`sched_rt_runtime_exceeded`), the CPU's real-time tasks are not picked until the
//! period timer (`do_sched_rt_period_timer`) takes a runtime's worth off `rt_time`.
//! Without RT_RUNTIME_SHARE (off by default) a CPU borrows no runtime from the others
//! (`balance_runtime` does nothing), so a throttled CPU with no fair task idles.

use std::collections::VecDeque;

use schedlab_model::Ns;

/// The per-CPU real-time run queue (queued tasks only; the running one is not in it).
#[derive(Clone, Debug)]
pub(crate) struct RtRq {
    lists: Vec<VecDeque<u32>>,
    /// Bit `p` set when list `p` is not empty.
    bitmap: u128,
    pub nr_queued: u32,
    /// CPU time its real-time tasks used, less the runtime of the periods since
    /// (`rt_rq->rt_time`).
    rt_time: Ns,
    /// Its tasks have used up the runtime: none is picked until the next period
    /// (`rt_rq->rt_throttled`).
    pub throttled: bool,
}

impl Default for RtRq {
    fn default() -> Self {
        RtRq { lists: vec![VecDeque::new(); 100], bitmap: 0, nr_queued: 0, rt_time: 0, throttled: false }
    }
}

impl RtRq {
    pub fn enqueue(&mut self, pid: u32, prio: u8, head: bool) {
        let list = &mut self.lists[prio as usize];
        if head {
            list.push_front(pid);
        } else {
            list.push_back(pid);
        }
        self.bitmap |= 1 << prio;
        self.nr_queued += 1;
    }

    pub fn dequeue(&mut self, pid: u32, prio: u8) {
        let list = &mut self.lists[prio as usize];
        if let Some(i) = list.iter().position(|&p| p == pid) {
            list.remove(i);
            self.nr_queued -= 1;
            if list.is_empty() {
                self.bitmap &= !(1 << prio);
            }
        }
    }

    /// The highest priority with a queued task.
    pub fn top_prio(&self) -> Option<u8> {
        (self.bitmap != 0).then(|| (127 - self.bitmap.leading_zeros()) as u8)
    }

    /// The task at the head of the highest non-empty list, and its priority.
    pub fn first(&self) -> Option<(u32, u8)> {
        let p = self.top_prio()?;
        Some((self.lists[p as usize][0], p))
    }

    /// Tasks queued at `prio`.
    pub fn queued_at(&self, prio: u8) -> usize {
        self.lists[prio as usize].len()
    }

    /// `update_curr_rt` and `sched_rt_runtime_exceeded`: real-time tasks ran `delta` ns;
    /// true when this throttles the CPU's real-time tasks (`rt_time` > `runtime`).
    pub fn charge(&mut self, delta: Ns, runtime: Ns) -> bool {
        self.rt_time += delta;
        let throttle = !self.throttled && self.rt_time > runtime;
        self.throttled |= throttle;
        throttle
    }

    /// `do_sched_rt_period_timer` for this CPU: a period's runtime comes off `rt_time`;
    /// true when that lifts the throttling.
    pub fn replenish(&mut self, runtime: Ns) -> bool {
        self.rt_time -= self.rt_time.min(runtime);
        let lift = self.throttled && self.rt_time < runtime;
        self.throttled &= !lift;
        lift
    }

    /// Whether the period timer has anything left to do here (`rt_time` to pay back).
    pub fn owes(&self) -> bool {
        self.rt_time > 0
    }

    /// Queued tasks from the highest priority down.
    pub fn queued(&self) -> impl Iterator<Item = (u32, u8)> + '_ {
        (1..100u8).rev().flat_map(move |p| self.lists[p as usize].iter().map(move |&t| (t, p)))
    }
}

//! The real-time class: `SCHED_FIFO` and `SCHED_RR`, priorities 1–99 (higher runs
//! first), one FIFO list per priority as in `struct rt_prio_array`.
//!
//! A preempted task stays at the head of its list; a task that wakes, yields, or whose
//! RR quantum (`sched_rr_timeslice`, counted in ticks) ends goes to the tail. RT
//! throttling (`sched_rt_runtime_us`) is not modelled.

use std::collections::VecDeque;

/// The per-CPU real-time run queue (queued tasks only; the running one is not in it).
#[derive(Clone, Debug)]
pub(crate) struct RtRq {
    lists: Vec<VecDeque<u32>>,
    /// Bit `p` set when list `p` is not empty.
    bitmap: u128,
    pub nr_queued: u32,
}

impl Default for RtRq {
    fn default() -> Self {
        RtRq { lists: vec![VecDeque::new(); 100], bitmap: 0, nr_queued: 0 }
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

    /// Queued tasks from the highest priority down.
    pub fn queued(&self) -> impl Iterator<Item = (u32, u8)> + '_ {
        (1..100u8).rev().flat_map(move |p| self.lists[p as usize].iter().map(move |&t| (t, p)))
    }
}

//! Classic UNIX time sharing: round robin with a fixed quantum among the tasks of the
//! highest static priority, the baseline papers 001 (100 ms) and 004 (150 ms) compare
//! against.
//!
//! Decisions where "classic" is vague: the static priority is the nice value (lower
//! runs first, strictly); a task gets a fresh quantum each time it is dispatched; a
//! task whose quantum ends, that yields or that wakes goes to the tail of its level; a
//! waking task preempts only a task of a strictly lower priority. Quanta end exactly
//! (a timer), not at the next tick.

use schedlab_model::Ns;

use super::{Dequeue, Enqueue, Entity, Ents, FairClass, FairRq};
use crate::workload::Policy;

/// Round robin with quantum `quantum`.
pub(crate) struct Timeshare {
    quantum: Ns,
}

impl Timeshare {
    pub fn new(quantum: Ns) -> Self {
        Timeshare { quantum }
    }

    fn key(se: &Entity) -> i64 {
        ((i64::from(se.nice) + 20) << 48) | se.ts_seq as i64
    }

    /// Sends `pid` to the tail of its priority level.
    fn to_tail(rq: &mut FairRq, se: &mut Entity) {
        rq.seq += 1;
        se.ts_seq = rq.seq;
    }

    /// Whether the running task used up its quantum.
    fn quantum_used(&self, rq: &FairRq, ents: &Ents) -> bool {
        rq.curr.is_some_and(|c| {
            let se = &ents[c];
            se.sum_exec - se.prev_sum_exec >= self.quantum
        })
    }
}

impl FairClass for Timeshare {
    fn update_curr(&self, _rq: &mut FairRq, _ents: &mut Ents, _delta: Ns) -> bool {
        false
    }

    fn enqueue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32, _how: Enqueue) {
        let se = &mut ents[pid];
        Self::to_tail(rq, se);
        se.on_rq = true;
        rq.nr_running += 1;
        rq.load += se.load.scaled;
        rq.tree.insert((Self::key(se), pid));
    }

    fn dequeue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32, _how: Dequeue) {
        let se = &mut ents[pid];
        if rq.curr == Some(pid) {
            rq.curr = None;
        } else {
            rq.tree.remove(&(Self::key(se), pid));
        }
        se.on_rq = false;
        rq.nr_running -= 1;
        rq.load -= se.load.scaled;
    }

    fn pick(&self, rq: &mut FairRq, ents: &mut Ents) -> Option<u32> {
        match (rq.tree.first(), rq.curr) {
            (None, c) => c,
            (Some(&(k, p)), Some(c)) => Some(if Self::key(&ents[c]) < k { c } else { p }),
            (Some(&(_, p)), None) => Some(p),
        }
    }

    fn put_prev(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32) {
        let se = &ents[pid];
        if se.on_rq {
            rq.tree.insert((Self::key(se), pid));
        }
        rq.curr = None;
    }

    fn set_next(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32) {
        let se = &mut ents[pid];
        rq.tree.remove(&(Self::key(se), pid));
        rq.curr = Some(pid);
        se.prev_sum_exec = se.sum_exec;
    }

    fn tick(&self, rq: &mut FairRq, ents: &mut Ents) -> bool {
        self.quantum_used(rq, ents)
    }

    fn wakeup_preempt(
        &self,
        _rq: &mut FairRq,
        ents: &mut Ents,
        curr: u32,
        woken: u32,
        _policy: Policy,
    ) -> bool {
        ents[woken].nice < ents[curr].nice
    }

    fn yield_curr(&self, rq: &mut FairRq, ents: &mut Ents, _alone: bool) {
        if let Some(c) = rq.curr {
            Self::to_tail(rq, &mut ents[c]);
        }
    }

    fn slice_left(&self, rq: &FairRq, ents: &Ents) -> Option<Ns> {
        let se = &ents[rq.curr?];
        Some(self.quantum.saturating_sub(se.sum_exec - se.prev_sum_exec))
    }

    fn exact_slices(&self) -> bool {
        true
    }

    fn slice_end(&self, rq: &mut FairRq, ents: &mut Ents) -> bool {
        self.quantum_used(rq, ents)
    }

    /// To the tail of its level, with a fresh quantum should it be the only one left.
    fn expire(&self, rq: &mut FairRq, ents: &mut Ents) {
        if let Some(c) = rq.curr {
            Self::to_tail(rq, &mut ents[c]);
        }
        super::restart_slice(rq, ents);
    }

    fn renew(&self, rq: &mut FairRq, ents: &mut Ents) {
        super::restart_slice(rq, ents);
    }
}

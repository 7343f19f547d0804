//! EEVDF, the fair class of Linux 6.6 and later, as of 6.12 (kernel/sched/fair.c).
//!
//! Each task has a virtual runtime and a request of `slice` ns, whose virtual deadline
//! is `vruntime + slice·1024/weight`. A task is eligible when its vruntime is not ahead
//! of the load-weighted average `V = Σ vᵢwᵢ / Σ wᵢ` (its lag `V − vᵢ` is ≥ 0); the
//! eligible task with the earliest deadline runs. On dequeue the lag is kept (clamped
//! to the larger of two slices and a tick, in virtual time) and on enqueue the task is
//! placed at `V − lag`, inflated so that adding it does not move `V` (PLACE_LAG). New
//! tasks get half a slice for their first deadline (PLACE_DEADLINE_INITIAL). Once
//! picked, a task runs until its deadline (RUN_TO_PARITY) unless a waking task with a
//! shorter slice cuts it short (PREEMPT_SHORT). A per-task slice comes from
//! `sched_attr.sched_runtime`.
//!
//! The average is kept as the kernel keeps it: `avg_vruntime = Σ (vᵢ − min_vruntime)·wᵢ`
//! and `avg_load = Σ wᵢ` over the queued tasks, the running one added on demand, with
//! weights scaled down (nice 0 = 1024) and integer division rounding towards −∞.
//!
//! Not modelled: DELAY_DEQUEUE (6.12 keeps a sleeping task with negative lag queued until
//! it is eligible again), group scheduling, the NEXT_BUDDY feature (off by default).

use schedlab_model::Ns;

use super::{Dequeue, Enqueue, Entity, FairClass, FairRq};
use crate::config::Tunables;
use crate::weights::{calc_delta_fair, NICE_0_LOAD};
use crate::workload::Policy;

/// EEVDF with its tunables and features.
pub(crate) struct Eevdf {
    base_slice: Ns,
    tick: Ns,
    place_lag: bool,
    place_deadline_initial: bool,
    run_to_parity: bool,
    preempt_short: bool,
    wakeup_preemption: bool,
}

fn weight(se: &Entity) -> i64 {
    se.load.weight as i64
}

impl Eevdf {
    pub fn new(t: &Tunables) -> Self {
        Eevdf {
            base_slice: t.base_slice_ns,
            tick: t.tick_ns(),
            place_lag: t.place_lag,
            place_deadline_initial: t.place_deadline_initial,
            run_to_parity: t.run_to_parity,
            preempt_short: t.preempt_short,
            wakeup_preemption: t.wakeup_preemption,
        }
    }

    fn curr_on_rq(rq: &FairRq, ents: &[Entity]) -> Option<u32> {
        rq.curr.filter(|&c| ents[c as usize].on_rq)
    }

    /// Σ (vᵢ − min_vruntime)·wᵢ and Σ wᵢ including the running task.
    fn sums(rq: &FairRq, ents: &[Entity]) -> (i128, i128) {
        let (mut avg, mut load) = (rq.avg_vruntime, i128::from(rq.avg_load));
        if let Some(c) = Self::curr_on_rq(rq, ents) {
            let se = &ents[c as usize];
            avg += i128::from(se.vruntime - rq.min_vruntime) * i128::from(weight(se));
            load += i128::from(weight(se));
        }
        (avg, load)
    }

    /// `avg_vruntime`: V, the zero-lag point.
    pub fn avg_vruntime(rq: &FairRq, ents: &[Entity]) -> i64 {
        let (mut avg, load) = Self::sums(rq, ents);
        if load != 0 {
            if avg < 0 {
                avg -= load - 1; // sign-flips effective floor
            }
            avg /= load;
        }
        rq.min_vruntime + avg as i64
    }

    /// `vruntime_eligible`: `v ≤ V`, evaluated without the division.
    pub fn eligible(rq: &FairRq, ents: &[Entity], pid: u32) -> bool {
        let (avg, load) = Self::sums(rq, ents);
        avg >= i128::from(ents[pid as usize].vruntime - rq.min_vruntime) * load
    }

    fn tree_insert(rq: &mut FairRq, ents: &[Entity], pid: u32) {
        let se = &ents[pid as usize];
        rq.tree.insert((se.deadline, pid));
        rq.by_vruntime.insert((se.vruntime, pid));
        rq.avg_vruntime += i128::from(se.vruntime - rq.min_vruntime) * i128::from(weight(se));
        rq.avg_load += weight(se);
    }

    fn tree_remove(rq: &mut FairRq, ents: &[Entity], pid: u32) {
        let se = &ents[pid as usize];
        rq.tree.remove(&(se.deadline, pid));
        rq.by_vruntime.remove(&(se.vruntime, pid));
        rq.avg_vruntime -= i128::from(se.vruntime - rq.min_vruntime) * i128::from(weight(se));
        rq.avg_load -= weight(se);
    }

    /// `update_min_vruntime`: the smallest vruntime on the queue, never moving back; the
    /// sum kept relative to it is rebased.
    fn update_min_vruntime(rq: &mut FairRq, ents: &[Entity]) {
        let curr = Self::curr_on_rq(rq, ents);
        let mut v = curr.map_or(rq.min_vruntime, |c| ents[c as usize].vruntime);
        if let Some(&(min, _)) = rq.by_vruntime.first() {
            v = if curr.is_none() { min } else { v.min(min) };
        }
        let delta = v - rq.min_vruntime;
        if delta > 0 {
            rq.avg_vruntime -= i128::from(rq.avg_load) * i128::from(delta);
            rq.min_vruntime = v;
        }
    }

    /// `update_deadline`: a task that reached its deadline gets a new request.
    fn update_deadline(&self, se: &mut Entity) -> bool {
        if se.vruntime - se.deadline < 0 {
            return false;
        }
        if !se.custom_slice {
            se.slice = self.base_slice;
        }
        se.deadline = se.vruntime + calc_delta_fair(se.slice, se.load) as i64;
        true
    }

    /// The RUN_TO_PARITY mark: `set_next` stashes the deadline in `vlag`.
    fn protected(se: &Entity) -> bool {
        se.vlag == se.deadline
    }

    /// `place_entity`: at V minus the (inflated) lag, with a deadline one request on.
    fn place_entity(&self, rq: &FairRq, ents: &mut [Entity], pid: u32, initial: bool) {
        let v = Self::avg_vruntime(rq, ents);
        let curr_w = Self::curr_on_rq(rq, ents).map_or(0, |c| weight(&ents[c as usize]));
        let se = &mut ents[pid as usize];
        if !se.custom_slice {
            se.slice = self.base_slice;
        }
        let mut vslice = calc_delta_fair(se.slice, se.load) as i64;
        let mut lag = 0i64;
        if self.place_lag && rq.nr_running > 0 && se.vlag != 0 {
            // Adding the task moves V by −lag·w/(W+w); inflate the lag so that after the
            // insertion the task's lag is what it was when it left.
            let load = (rq.avg_load + curr_w).max(1);
            lag = (i128::from(se.vlag) * i128::from(load + weight(se)) / i128::from(load)) as i64;
        }
        se.vruntime = v - lag;
        if se.rel_deadline {
            se.deadline += se.vruntime;
            se.rel_deadline = false;
            return;
        }
        if self.place_deadline_initial && initial {
            vslice /= 2;
        }
        se.deadline = se.vruntime + vslice;
    }

    /// `pick_eevdf`.
    fn pick_eevdf(&self, rq: &FairRq, ents: &[Entity]) -> Option<u32> {
        let curr = Self::curr_on_rq(rq, ents);
        if rq.nr_running == 1 {
            return curr.or_else(|| rq.first());
        }
        let curr = curr.filter(|&c| Self::eligible(rq, ents, c));
        if let Some(c) = curr {
            if self.run_to_parity && Self::protected(&ents[c as usize]) {
                return Some(c);
            }
        }
        let best = rq.queued().find(|&p| Self::eligible(rq, ents, p));
        match (best, curr) {
            (None, c) => c,
            (Some(b), Some(c)) if ents[c as usize].deadline < ents[b as usize].deadline => Some(c),
            (b, _) => b,
        }
    }

    /// `do_preempt_short`: the waking task asks for a shorter slice and should go first.
    fn preempt_short_wakeup(&self, rq: &FairRq, ents: &[Entity], woken: u32, curr: u32) -> bool {
        let (p, c) = (&ents[woken as usize], &ents[curr as usize]);
        if !self.preempt_short || p.slice >= c.slice || !Self::eligible(rq, ents, woken) {
            return false;
        }
        p.deadline < c.deadline || !Self::eligible(rq, ents, curr)
    }
}

impl FairClass for Eevdf {
    fn update_curr(&self, rq: &mut FairRq, ents: &mut [Entity], delta: Ns) -> bool {
        let Some(c) = rq.curr else { return false };
        if delta == 0 {
            return false;
        }
        let se = &mut ents[c as usize];
        se.vruntime += calc_delta_fair(delta, se.load) as i64;
        let resched = self.update_deadline(se);
        Self::update_min_vruntime(rq, ents);
        if rq.nr_running == 1 {
            return false;
        }
        // did_preempt_short: a PREEMPT_SHORT cut of the protected slice takes effect as
        // soon as the running task is no longer eligible.
        let se = &ents[c as usize];
        resched || (self.preempt_short && !Self::protected(se) && !Self::eligible(rq, ents, c))
    }

    fn enqueue(&self, rq: &mut FairRq, ents: &mut [Entity], pid: u32, how: Enqueue) {
        self.place_entity(rq, ents, pid, how == Enqueue::New);
        let se = &mut ents[pid as usize];
        se.on_rq = true;
        rq.nr_running += 1;
        rq.load += se.load.weight;
        Self::tree_insert(rq, ents, pid);
    }

    fn dequeue(&self, rq: &mut FairRq, ents: &mut [Entity], pid: u32, how: Dequeue) {
        // update_entity_lag: remember how far behind (or ahead of) V the task leaves.
        let v = Self::avg_vruntime(rq, ents);
        if rq.curr == Some(pid) {
            rq.curr = None;
        } else {
            Self::tree_remove(rq, ents, pid);
        }
        let se = &mut ents[pid as usize];
        let limit = calc_delta_fair((2 * se.slice).max(self.tick), se.load) as i64;
        se.vlag = (v - se.vruntime).clamp(-limit, limit);
        if how == Dequeue::Migrate {
            // PLACE_REL_DEADLINE: keep the request's remaining length across the move.
            se.deadline -= se.vruntime;
            se.rel_deadline = true;
        }
        se.on_rq = false;
        rq.nr_running -= 1;
        rq.load -= se.load.weight;
        Self::update_min_vruntime(rq, ents);
    }

    fn pick(&self, rq: &mut FairRq, ents: &mut [Entity]) -> Option<u32> {
        self.pick_eevdf(rq, ents)
    }

    fn put_prev(&self, rq: &mut FairRq, ents: &mut [Entity], pid: u32) {
        if ents[pid as usize].on_rq {
            Self::tree_insert(rq, ents, pid);
        }
        rq.curr = None;
    }

    fn set_next(&self, rq: &mut FairRq, ents: &mut [Entity], pid: u32) {
        Self::tree_remove(rq, ents, pid);
        rq.curr = Some(pid);
        let se = &mut ents[pid as usize];
        se.vlag = se.deadline;
        se.prev_sum_exec = se.sum_exec;
    }

    /// The tick only updates the running task (done by the engine's accounting, which
    /// also reports a reached deadline).
    fn tick(&self, _rq: &mut FairRq, _ents: &mut [Entity]) -> bool {
        false
    }

    /// `check_preempt_wakeup_fair`.
    fn wakeup_preempt(&self, rq: &mut FairRq, ents: &mut [Entity], curr: u32, woken: u32) -> bool {
        let (c, w) = (&ents[curr as usize], &ents[woken as usize]);
        if c.is_idle_policy() && !w.is_idle_policy() {
            return true;
        }
        if w.policy != Policy::Other || !self.wakeup_preemption {
            return false;
        }
        if self.preempt_short_wakeup(rq, ents, woken, curr) {
            // cancel_protect_slice
            let c = &mut ents[curr as usize];
            if Self::protected(c) {
                c.vlag = c.deadline + 1;
            }
        }
        self.pick_eevdf(rq, ents) == Some(woken)
    }

    /// `yield_task_fair`: give up the rest of the request.
    fn yield_curr(&self, rq: &mut FairRq, ents: &mut [Entity]) {
        let Some(c) = rq.curr else { return };
        if rq.nr_running > 1 {
            let se = &mut ents[c as usize];
            se.deadline += calc_delta_fair(se.slice, se.load) as i64;
        }
    }

    /// The deadline already moved on (`update_deadline`): nothing more to do.
    fn expire(&self, _rq: &mut FairRq, _ents: &mut [Entity]) {}

    /// Keeping the CPU for the new request: protect it as RUN_TO_PARITY protects a
    /// freshly picked task.
    fn renew(&self, rq: &mut FairRq, ents: &mut [Entity]) {
        if let Some(c) = rq.curr {
            let se = &mut ents[c as usize];
            se.vlag = se.deadline;
        }
    }

    fn slice_left(&self, rq: &FairRq, ents: &[Entity]) -> Option<Ns> {
        let se = &ents[rq.curr? as usize];
        let vleft = (se.deadline - se.vruntime).max(0) as u128;
        // Real time = virtual time · weight / 1024, rounded up so the timer fires at or
        // after the deadline.
        let w = u128::from(se.load.weight);
        let n0 = u128::from(NICE_0_LOAD);
        Some(((vleft * w).div_ceil(n0)) as Ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::LoadWeight;

    fn fresh(nice: i8) -> Entity {
        Entity { nice, load: LoadWeight::for_task(nice, false), ..Entity::default() }
    }

    #[test]
    fn eligibility_is_against_the_weighted_average() {
        let e = Eevdf::new(&Tunables::defaults(1));
        let mut rq = FairRq::default();
        let mut ents = vec![Entity::default(), fresh(0), fresh(0), fresh(-5)];
        for p in 1..=3 {
            e.enqueue(&mut rq, &mut ents, p, Enqueue::New);
        }
        // Force known vruntimes: V = (0·1024 + 3000·1024 + 1000·3121) / 5169.
        e.dequeue(&mut rq, &mut ents, 1, Dequeue::Sleep);
        e.dequeue(&mut rq, &mut ents, 2, Dequeue::Sleep);
        e.dequeue(&mut rq, &mut ents, 3, Dequeue::Sleep);
        assert_eq!(rq.nr_running, 0);
        for (p, v) in [(1, 0), (2, 3000), (3, 1000)] {
            let se = &mut ents[p as usize];
            se.vruntime = v;
            se.deadline = v + 700_000;
            se.on_rq = true;
            rq.nr_running += 1;
            rq.load += se.load.weight;
            Eevdf::tree_insert(&mut rq, &ents, p);
        }
        let v = Eevdf::avg_vruntime(&rq, &ents);
        assert_eq!(v, (3000 * 1024 + 1000 * 3121) / 5169);
        assert!(Eevdf::eligible(&rq, &ents, 1));
        assert!(Eevdf::eligible(&rq, &ents, 3));
        assert!(!Eevdf::eligible(&rq, &ents, 2));
        // The earliest deadline among the eligible: task 1.
        assert_eq!(e.pick(&mut rq, &mut ents), Some(1));
    }

    #[test]
    fn lag_is_kept_and_clamped_across_a_sleep() {
        let e = Eevdf::new(&Tunables::defaults(1));
        let mut rq = FairRq::default();
        let mut ents = vec![Entity::default(), fresh(0), fresh(0)];
        e.enqueue(&mut rq, &mut ents, 1, Enqueue::New);
        e.enqueue(&mut rq, &mut ents, 2, Enqueue::New);
        e.set_next(&mut rq, &mut ents, 1);
        // Task 1 runs 1 ms: its lag becomes −(1 ms − V shift) = −0.5 ms.
        e.update_curr(&mut rq, &mut ents, 1_000_000);
        let v = Eevdf::avg_vruntime(&rq, &ents);
        e.dequeue(&mut rq, &mut ents, 1, Dequeue::Sleep);
        assert_eq!(ents[1].vlag, v - ents[1].vruntime);
        assert_eq!(ents[1].vlag, -500_000);
        // Run 10 ms more: the lag is clamped to max(2 slices, 1 tick) = 4 ms.
        e.enqueue(&mut rq, &mut ents, 1, Enqueue::Wakeup);
        e.set_next(&mut rq, &mut ents, 1);
        e.update_curr(&mut rq, &mut ents, 10_000_000);
        e.dequeue(&mut rq, &mut ents, 1, Dequeue::Sleep);
        assert_eq!(ents[1].vlag, -4_000_000);
    }
}

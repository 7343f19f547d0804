//! EEVDF, the fair class of Linux 6.6 and later, as of 6.18 (kernel/sched/fair.c).
//!
//! Each task has a virtual runtime and a request of `slice` ns, whose virtual deadline
//! is `vruntime + slice·1024/weight`. A task is eligible when its vruntime is not ahead
//! of the load-weighted average `V = Σ vᵢwᵢ / Σ wᵢ` (its lag `V − vᵢ` is ≥ 0); the
//! eligible task with the earliest deadline runs. On dequeue the lag is kept (clamped
//! to the larger of two slices and a tick, in virtual time) and on enqueue the task is
//! placed at `V − lag`, inflated so that adding it does not move `V` (PLACE_LAG). New
//! tasks get half a slice for their first deadline (PLACE_DEADLINE_INITIAL). Once
//! picked, a task is protected until its deadline, or for the shortest slice queued
//! with it if that is shorter (RUN_TO_PARITY, `vprot`; without the feature for one
//! normalized base slice at most), unless a waking task with a shorter slice cuts it
//! short (PREEMPT_SHORT); once the protection is over, every accounting asks for a
//! reschedule. A per-task slice comes from `sched_attr.sched_runtime`.
//!
//! A task that goes to sleep while it is not eligible (it received more than its share)
//! stays queued, delayed, until it is picked — then it leaves for good, its lag clipped
//! to zero if it became positive (DELAY_ZERO) — or until it is woken, when it is simply
//! queued again where it is, re-placed at zero lag if its lag became positive
//! (DELAY_DEQUEUE): sleeping does not shed negative lag.
//!
//! The average is kept as the kernel keeps it: `avg_vruntime = Σ (vᵢ − min_vruntime)·wᵢ`
//! and `avg_load = Σ wᵢ` over the queued tasks, the running one added on demand, with
//! weights scaled down (nice 0 = 1024) and integer division rounding towards −∞.
//!
//! With task groups the same rules pick among a queue's entities, tasks and groups
//! alike, level by level (the engine walks the hierarchy, `engine/group.rs`); a group's
//! entity has its queue's shortest slice, takes new weights as its group's shares are
//! redistributed (`reweight_entity`), and may be the queue's next buddy (PICK_BUDDY),
//! which is picked while eligible: the kernel names the group of a task that just slept
//! while the group kept others queued.
//!
//! Not modelled: the NEXT_BUDDY feature (off by default: a woken task is never made the
//! buddy).

use schedlab_model::Ns;

use super::{Dequeue, Enqueue, Entity, Ents, FairClass, FairRq};
use crate::config::Tunables;
use crate::weights::{calc_delta_fair, LoadWeight, NICE_0_LOAD};
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
    delay_dequeue: bool,
    delay_zero: bool,
    /// `normalized_sysctl_sched_base_slice`: the protected quantum without RUN_TO_PARITY.
    normalized_base_slice: Ns,
}

fn weight(se: &Entity) -> i64 {
    se.load.weight as i64
}

impl Eevdf {
    /// The class under tunables `t` on a machine whose tunables scale by `scale`
    /// ([`crate::tunable_scale`]).
    pub fn new(t: &Tunables, scale: u64) -> Self {
        Eevdf {
            base_slice: t.base_slice_ns,
            tick: t.tick_ns(),
            place_lag: t.place_lag,
            place_deadline_initial: t.place_deadline_initial,
            run_to_parity: t.run_to_parity,
            preempt_short: t.preempt_short,
            wakeup_preemption: t.wakeup_preemption,
            delay_dequeue: t.delay_dequeue,
            delay_zero: t.delay_zero,
            normalized_base_slice: t.base_slice_ns / scale.max(1),
        }
    }

    fn curr_on_rq(rq: &FairRq, ents: &Ents) -> Option<u32> {
        rq.curr.filter(|&c| ents[c].on_rq)
    }

    /// Σ (vᵢ − min_vruntime)·wᵢ and Σ wᵢ including the running task.
    fn sums(rq: &FairRq, ents: &Ents) -> (i128, i128) {
        let (mut avg, mut load) = (rq.avg_vruntime, i128::from(rq.avg_load));
        if let Some(c) = Self::curr_on_rq(rq, ents) {
            let se = &ents[c];
            avg += i128::from(se.vruntime - rq.min_vruntime) * i128::from(weight(se));
            load += i128::from(weight(se));
        }
        (avg, load)
    }

    /// `avg_vruntime`: V, the zero-lag point.
    pub fn avg_vruntime(rq: &FairRq, ents: &Ents) -> i64 {
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
    pub fn eligible(rq: &FairRq, ents: &Ents, pid: u32) -> bool {
        let (avg, load) = Self::sums(rq, ents);
        avg >= i128::from(ents[pid].vruntime - rq.min_vruntime) * load
    }

    /// `cfs_rq_min_slice`: the shortest slice among the queued entities (the tree and
    /// `curr`): the shortest of their own slices, or the base slice of the others.
    fn shortest_slice(&self, rq: &FairRq) -> Option<Ns> {
        let others = (rq.nr_running > rq.custom_slices.len()).then_some(self.base_slice);
        match (rq.custom_slices.min(), others) {
            (Some(own), Some(base)) => Some(own.min(base)),
            (own, base) => own.or(base),
        }
    }

    fn tree_insert(rq: &mut FairRq, ents: &Ents, pid: u32) {
        let se = &ents[pid];
        let new = rq.tree.insert((se.deadline, pid)) & rq.by_vruntime.insert((se.vruntime, pid));
        debug_assert!(new, "{pid} queued twice");
        rq.avg_vruntime += i128::from(se.vruntime - rq.min_vruntime) * i128::from(weight(se));
        rq.avg_load += weight(se);
    }

    fn tree_remove(rq: &mut FairRq, ents: &Ents, pid: u32) {
        let se = &ents[pid];
        let was = rq.tree.remove(&(se.deadline, pid)) & rq.by_vruntime.remove(&(se.vruntime, pid));
        debug_assert!(was, "{pid} not queued where its keys say");
        rq.avg_vruntime -= i128::from(se.vruntime - rq.min_vruntime) * i128::from(weight(se));
        rq.avg_load -= weight(se);
    }

    /// `update_min_vruntime`: the smallest vruntime on the queue, never moving back; the
    /// sum kept relative to it is rebased.
    fn update_min_vruntime(rq: &mut FairRq, ents: &Ents) {
        let curr = Self::curr_on_rq(rq, ents);
        let mut v = curr.map_or(rq.min_vruntime, |c| ents[c].vruntime);
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

    /// `protect_slice`: the running task has not used up its protected quantum.
    fn protected(se: &Entity) -> bool {
        se.vruntime < se.vprot
    }

    /// `set_protect_slice`, when `pid` is picked: protected until its deadline, or for
    /// the shortest slice queued with it (RUN_TO_PARITY) or one normalized base slice
    /// (without it) when that is shorter than its own.
    fn set_protect_slice(&self, rq: &FairRq, ents: &mut Ents, pid: u32) {
        let quantum = if self.run_to_parity {
            self.shortest_slice(rq).unwrap_or(self.base_slice)
        } else {
            self.normalized_base_slice
        };
        let se = &mut ents[pid];
        let slice = quantum.min(se.slice);
        se.vprot = se.deadline;
        if slice != se.slice {
            se.vprot = se.vprot.min(se.vruntime + calc_delta_fair(slice, se.load) as i64);
        }
    }

    /// `update_protect_slice`: a shorter slice was queued; the protection ends when that
    /// slice would have.
    fn update_protect_slice(&self, rq: &FairRq, ents: &mut Ents, pid: u32) {
        let Some(slice) = self.shortest_slice(rq) else { return };
        let se = &mut ents[pid];
        se.vprot = se.vprot.min(se.vruntime + calc_delta_fair(slice, se.load) as i64);
    }

    /// `cancel_protect_slice`.
    fn cancel_protect_slice(se: &mut Entity) {
        if Self::protected(se) {
            se.vprot = se.vruntime;
        }
    }

    /// `update_entity_lag`: how far behind V the task is, clamped to the larger of two
    /// slices and a tick (in virtual time).
    fn entity_lag(&self, v: i64, se: &Entity) -> i64 {
        let limit = calc_delta_fair((2 * se.slice).max(self.tick), se.load) as i64;
        (v - se.vruntime).clamp(-limit, limit)
    }

    /// `place_entity`: at V minus the (inflated) lag, with a deadline one request on.
    fn place_entity(&self, rq: &FairRq, ents: &mut Ents, pid: u32, initial: bool) {
        let v = Self::avg_vruntime(rq, ents);
        let curr_w = Self::curr_on_rq(rq, ents).map_or(0, |c| weight(&ents[c]));
        let se = &mut ents[pid];
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

    /// `__pick_eevdf`: the eligible task with the earliest deadline; a protected
    /// running task keeps the CPU when `protect` is set.
    fn pick_eevdf(&self, rq: &FairRq, ents: &Ents, protect: bool) -> Option<u32> {
        let curr = Self::curr_on_rq(rq, ents);
        if rq.nr_running == 1 {
            return curr.or_else(|| rq.first());
        }
        // PICK_BUDDY: the next buddy (only ever set with task groups) while eligible.
        if let Some(next) = rq.next.filter(|&n| Self::eligible(rq, ents, n)) {
            return Some(next);
        }
        let curr = curr.filter(|&c| Self::eligible(rq, ents, c));
        if let Some(c) = curr {
            if protect && Self::protected(&ents[c]) {
                return Some(c);
            }
        }
        let best = rq.queued().find(|&p| Self::eligible(rq, ents, p));
        match (best, curr) {
            (None, c) => c,
            (Some(b), Some(c)) if ents[c].deadline < ents[b].deadline => Some(c),
            (b, _) => b,
        }
    }
}

impl FairClass for Eevdf {
    fn update_curr(&self, rq: &mut FairRq, ents: &mut Ents, delta: Ns) -> bool {
        let Some(c) = rq.curr else { return false };
        if delta == 0 {
            return false;
        }
        let se = &mut ents[c];
        se.vruntime += calc_delta_fair(delta, se.load) as i64;
        let resched = self.update_deadline(se);
        Self::update_min_vruntime(rq, ents);
        if rq.nr_running == 1 {
            return false;
        }
        // Once the protected quantum is used up, every accounting asks to pick again.
        resched || !Self::protected(&ents[c])
    }

    fn enqueue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32, how: Enqueue) {
        self.place_entity(rq, ents, pid, how == Enqueue::New);
        let se = &mut ents[pid];
        se.on_rq = true;
        rq.nr_running += 1;
        rq.load += se.load.scaled;
        if se.custom_slice {
            rq.custom_slices.insert(se.slice);
        }
        Self::tree_insert(rq, ents, pid);
    }

    fn dequeue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32, how: Dequeue) {
        // update_entity_lag: remember how far behind (or ahead of) V the task leaves.
        let v = Self::avg_vruntime(rq, ents);
        if rq.curr == Some(pid) {
            rq.curr = None;
        } else {
            Self::tree_remove(rq, ents, pid);
        }
        let se = &mut ents[pid];
        se.vlag = self.entity_lag(v, se);
        match how {
            // PLACE_REL_DEADLINE: keep the request's remaining length across the move.
            Dequeue::Migrate => {
                se.deadline -= se.vruntime;
                se.rel_deadline = true;
            }
            // finish_delayed_dequeue_entity: DELAY_ZERO gives up a credit earned while
            // delayed.
            Dequeue::Delayed => {
                se.delayed = false;
                if self.delay_zero {
                    se.vlag = se.vlag.min(0);
                }
            }
            Dequeue::Sleep => {}
        }
        se.on_rq = false;
        rq.nr_running -= 1;
        rq.load -= se.load.scaled;
        if se.custom_slice {
            rq.custom_slices.remove(se.slice);
        }
        Self::update_min_vruntime(rq, ents);
    }

    /// DELAY_DEQUEUE: a sleeper that is not eligible stays queued, delayed.
    fn delay_dequeue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32) -> bool {
        self.delay_dequeue && !Self::eligible(rq, ents, pid)
    }

    /// `requeue_delayed_entity`: with DELAY_ZERO a lag that became positive while
    /// delayed is dropped and the task placed afresh at zero lag; otherwise it stays where
    /// it is.
    fn requeue_delayed(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32) {
        ents[pid].delayed = false;
        if !self.delay_zero {
            return;
        }
        let v = Self::avg_vruntime(rq, ents);
        let lag = self.entity_lag(v, &ents[pid]);
        if lag <= 0 {
            return;
        }
        let queued = rq.curr != Some(pid);
        if queued {
            Self::tree_remove(rq, ents, pid);
        }
        rq.nr_running -= 1;
        ents[pid].vlag = 0;
        self.place_entity(rq, ents, pid, false);
        rq.nr_running += 1;
        if queued {
            Self::tree_insert(rq, ents, pid);
        }
    }

    fn pick(&self, rq: &mut FairRq, ents: &mut Ents) -> Option<u32> {
        self.pick_eevdf(rq, ents, true)
    }

    fn put_prev(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32) {
        if ents[pid].on_rq {
            Self::tree_insert(rq, ents, pid);
        }
        rq.curr = None;
    }

    fn set_next(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32) {
        Self::tree_remove(rq, ents, pid);
        self.set_protect_slice(rq, ents, pid);
        rq.curr = Some(pid);
        let se = &mut ents[pid];
        se.prev_sum_exec = se.sum_exec;
    }

    /// The tick only updates the running task (done by the engine's accounting, which
    /// also reports a reached deadline).
    fn tick(&self, _rq: &mut FairRq, _ents: &mut Ents) -> bool {
        false
    }

    /// `check_preempt_wakeup_fair`.
    fn wakeup_preempt(
        &self,
        rq: &mut FairRq,
        ents: &mut Ents,
        curr: u32,
        woken: u32,
        policy: Policy,
    ) -> bool {
        let (c, w) = (&ents[curr], &ents[woken]);
        if c.is_idle_policy() && !w.is_idle_policy() {
            return true;
        }
        if policy != Policy::Other || !self.wakeup_preemption {
            return false;
        }
        // A waking task with a shorter slice is picked ignoring the protection; if it
        // is not the pick, the protection shrinks to its slice.
        let short = self.preempt_short && w.slice < c.slice;
        if self.pick_eevdf(rq, ents, !short) == Some(woken) {
            if short {
                Self::cancel_protect_slice(&mut ents[curr]);
            }
            return true;
        }
        if self.run_to_parity && short {
            self.update_protect_slice(rq, ents, curr);
        }
        false
    }

    /// `yield_task_fair`: give up the rest of the request.
    fn yield_curr(&self, rq: &mut FairRq, ents: &mut Ents, alone: bool) {
        let Some(c) = rq.curr else { return };
        if !alone {
            let se = &mut ents[c];
            se.deadline += calc_delta_fair(se.slice, se.load) as i64;
        }
    }

    /// The deadline already moved on (`update_deadline`): nothing more to do.
    fn expire(&self, _rq: &mut FairRq, _ents: &mut Ents) {}

    /// Keeping the CPU for the new request: protect it as a freshly picked task is.
    fn renew(&self, rq: &mut FairRq, ents: &mut Ents) {
        if let Some(c) = rq.curr {
            ents[c].vprot = ents[c].deadline;
        }
    }

    fn slice_left(&self, rq: &FairRq, ents: &Ents) -> Option<Ns> {
        let se = &ents[rq.curr?];
        let vleft = (se.deadline - se.vruntime).max(0) as u128;
        // Real time = virtual time · weight / 1024, rounded up so the timer fires at or
        // after the deadline.
        let w = u128::from(se.load.weight);
        let n0 = u128::from(NICE_0_LOAD);
        Some(((vleft * w).div_ceil(n0)) as Ns)
    }

    fn groups(&self) -> bool {
        true
    }

    fn min_slice(&self, rq: &FairRq, _ents: &Ents) -> Option<Ns> {
        self.shortest_slice(rq)
    }

    /// A group entity's slice is its queue's shortest (`enqueue_task_fair`,
    /// `dequeue_entities`), which makes it a slice of its own; the queue's count follows
    /// while it is queued.
    fn set_slice(&self, rq: &mut FairRq, ents: &mut Ents, id: u32, slice: Ns) {
        let se = &mut ents[id];
        if se.on_rq {
            if se.custom_slice {
                rq.custom_slices.remove(se.slice);
            }
            rq.custom_slices.insert(slice);
        }
        se.slice = slice;
        se.custom_slice = true;
    }

    /// `reweight_entity`: a queued entity leaves its place keeping its lag, its deadline
    /// and protection relative to its vruntime (`rel_vprot`, a fix backported to 6.18's
    /// stable kernels), all three scaled by old/new weight (lag is `V − v` in virtual
    /// time, which a heavier entity moves through more slowly), and is placed again at
    /// the new weight.
    fn reweight(&self, rq: &mut FairRq, ents: &mut Ents, id: u32, load: LoadWeight) {
        let on_rq = ents[id].on_rq;
        let curr = rq.curr == Some(id);
        let mut vprot = None;
        if on_rq {
            let v = Self::avg_vruntime(rq, ents);
            if !curr {
                Self::tree_remove(rq, ents, id);
            }
            let se = &mut ents[id];
            se.vlag = self.entity_lag(v, se);
            se.deadline -= se.vruntime;
            se.rel_deadline = true;
            if curr && Self::protected(se) {
                vprot = Some(se.vprot - se.vruntime);
            }
            rq.nr_running -= 1;
            rq.load -= se.load.scaled;
        }
        let se = &mut ents[id];
        let (old, new) = (i128::from(se.load.scaled), i128::from(load.scaled));
        let scale = |v: i64| (i128::from(v) * old / new) as i64;
        se.vlag = scale(se.vlag);
        if se.rel_deadline {
            se.deadline = scale(se.deadline);
        }
        let vprot = vprot.map(scale);
        se.load = load;
        if on_rq {
            self.place_entity(rq, ents, id, false);
            let se = &mut ents[id];
            if let Some(v) = vprot {
                se.vprot = se.vruntime + v;
            }
            rq.load += se.load.scaled;
            if !curr {
                Self::tree_insert(rq, ents, id);
            }
            rq.nr_running += 1;
            Self::update_min_vruntime(rq, ents);
        }
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
        let e = Eevdf::new(&Tunables::defaults(1), 1);
        let mut rq = FairRq::default();
        let mut ents = Ents::from(vec![Entity::default(), fresh(0), fresh(0), fresh(-5)]);
        for p in 1..=3 {
            e.enqueue(&mut rq, &mut ents, p, Enqueue::New);
        }
        // Force known vruntimes: V = (0·1024 + 3000·1024 + 1000·3121) / 5169.
        e.dequeue(&mut rq, &mut ents, 1, Dequeue::Sleep);
        e.dequeue(&mut rq, &mut ents, 2, Dequeue::Sleep);
        e.dequeue(&mut rq, &mut ents, 3, Dequeue::Sleep);
        assert_eq!(rq.nr_running, 0);
        for (p, v) in [(1, 0), (2, 3000), (3, 1000)] {
            let se = &mut ents[p];
            se.vruntime = v;
            se.deadline = v + 700_000;
            se.on_rq = true;
            rq.nr_running += 1;
            rq.load += se.load.scaled;
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
        let e = Eevdf::new(&Tunables::defaults(1), 1);
        let mut rq = FairRq::default();
        let mut ents = Ents::from(vec![Entity::default(), fresh(0), fresh(0)]);
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

    #[test]
    fn an_ineligible_sleeper_stays_queued_and_wakes_where_it_was() {
        let e = Eevdf::new(&Tunables::defaults(1), 1);
        let mut rq = FairRq::default();
        let mut ents = Ents::from(vec![Entity::default(), fresh(0), fresh(0)]);
        e.enqueue(&mut rq, &mut ents, 1, Enqueue::New);
        e.enqueue(&mut rq, &mut ents, 2, Enqueue::New);
        e.set_next(&mut rq, &mut ents, 1);
        // Task 1 runs 1 ms and sleeps 0.5 ms ahead of V: it stays queued, delayed.
        e.update_curr(&mut rq, &mut ents, 1_000_000);
        assert!(e.delay_dequeue(&mut rq, &mut ents, 1));
        ents[1].delayed = true;
        assert!(ents[1].on_rq);
        assert_eq!((rq.nr_running, Eevdf::avg_vruntime(&rq, &ents)), (2, ents[2].vruntime + 500_000));
        // Woken at once, it is queued again where it is: its negative lag is kept.
        let before = (ents[1].vruntime, ents[1].deadline);
        e.requeue_delayed(&mut rq, &mut ents, 1);
        assert_eq!((ents[1].vruntime, ents[1].deadline), before);
        assert!(!ents[1].delayed);
        // An eligible sleeper leaves at once.
        e.put_prev(&mut rq, &mut ents, 1);
        e.set_next(&mut rq, &mut ents, 2);
        assert!(!e.delay_dequeue(&mut rq, &mut ents, 2));
    }

    #[test]
    fn a_delayed_sleeper_that_became_eligible_leaves_with_zero_lag() {
        let e = Eevdf::new(&Tunables::defaults(1), 1);
        let mut rq = FairRq::default();
        let mut ents = Ents::from(vec![Entity::default(), fresh(0), fresh(0)]);
        e.enqueue(&mut rq, &mut ents, 1, Enqueue::New);
        e.enqueue(&mut rq, &mut ents, 2, Enqueue::New);
        e.set_next(&mut rq, &mut ents, 1);
        e.update_curr(&mut rq, &mut ents, 1_000_000);
        assert!(e.delay_dequeue(&mut rq, &mut ents, 1));
        ents[1].delayed = true;
        e.put_prev(&mut rq, &mut ents, 1);
        // Task 2 runs 3 ms: task 1 is now 1 ms behind V (lag +1 ms), and DELAY_ZERO
        // drops that credit when it is finally dequeued.
        e.set_next(&mut rq, &mut ents, 2);
        e.update_curr(&mut rq, &mut ents, 3_000_000);
        assert_eq!(Eevdf::avg_vruntime(&rq, &ents) - ents[1].vruntime, 1_000_000);
        e.dequeue(&mut rq, &mut ents, 1, Dequeue::Delayed);
        assert_eq!((ents[1].vlag, ents[1].delayed, rq.nr_running), (0, false, 1));
    }
}

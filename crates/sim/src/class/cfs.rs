//! The Completely Fair Scheduler of Linux 2.6.23–6.5 (kernel/sched/fair.c as of 6.1).
//!
//! Runnable tasks are ordered by virtual runtime; the leftmost runs. A task's slice is
//! its weight's share of the period (`sched_latency`, or `nr * min_granularity` past
//! `nr_latency` tasks); the tick preempts the current task when it used its slice or
//! leads the leftmost by more than a slice. A waking task preempts when the current
//! task's vruntime leads it by more than `wakeup_granularity` (scaled to the woken task's
//! weight). Sleepers are placed half a latency behind `min_vruntime`
//! (GENTLE_FAIR_SLEEPERS), new tasks one virtual slice ahead (START_DEBIT).
//!
//! Not modelled: the NEXT/LAST buddies (NEXT_BUDDY is off by default; LAST_BUDDY only
//! matters past `nr_latency` tasks), the long-sleeper reset of 6.3+, group scheduling.

use schedlab_model::Ns;

use super::{Dequeue, Enqueue, Ents, FairClass, FairRq};
use crate::config::Tunables;
use crate::weights::{calc_delta, calc_delta_fair, scale_load_down, LoadWeight};
use crate::workload::Policy;

/// CFS with its tunables and features.
pub(crate) struct Cfs {
    latency: Ns,
    min_granularity: Ns,
    wakeup_granularity: Ns,
    nr_latency: u64,
    start_debit: bool,
    gentle_fair_sleepers: bool,
    wakeup_preemption: bool,
}

impl Cfs {
    pub fn new(t: &Tunables) -> Self {
        Cfs {
            latency: t.sched_latency_ns,
            min_granularity: t.sched_min_granularity_ns,
            wakeup_granularity: t.sched_wakeup_granularity_ns,
            nr_latency: t.nr_latency(),
            start_debit: t.start_debit,
            gentle_fair_sleepers: t.gentle_fair_sleepers,
            wakeup_preemption: t.wakeup_preemption,
        }
    }

    /// `__sched_period`: the latency target, stretched when too many tasks share it.
    pub fn sched_period(&self, nr_running: u64) -> Ns {
        if nr_running > self.nr_latency {
            nr_running * self.min_granularity
        } else {
            self.latency
        }
    }

    /// `sched_slice`: `pid`'s weight share of the period (with `pid` counted as queued
    /// if it is not), at least `min_granularity` (BASE_SLICE).
    pub fn sched_slice(&self, rq: &FairRq, ents: &Ents, pid: u32) -> Ns {
        let se = &ents[pid];
        let extra = u64::from(!se.on_rq);
        let period = self.sched_period(u64::from(rq.nr_running) + extra);
        let load = LoadWeight::for_load(scale_load_down(rq.load + extra * se.load.scaled));
        calc_delta(period, se.load.weight, load).max(self.min_granularity)
    }

    fn update_min_vruntime(rq: &mut FairRq, ents: &Ents) {
        let curr = rq.curr.filter(|&c| ents[c].on_rq);
        let mut v = curr.map_or(rq.min_vruntime, |c| ents[c].vruntime);
        if let Some(&(left, _)) = rq.tree.first() {
            v = if curr.is_none() { left } else { v.min(left) };
        }
        rq.min_vruntime = rq.min_vruntime.max(v);
    }

    /// `place_entity`: new tasks start a virtual slice after `min_vruntime`; sleepers
    /// get up to (half) a latency of credit but never move backwards.
    fn place_entity(&self, rq: &FairRq, ents: &mut Ents, pid: u32, initial: bool) {
        let mut v = rq.min_vruntime;
        if initial && self.start_debit {
            let slice = self.sched_slice(rq, ents, pid);
            v += calc_delta_fair(slice, ents[pid].load) as i64;
        }
        if !initial {
            let se = &ents[pid];
            let mut thresh = if se.is_idle_policy() { self.min_granularity } else { self.latency } as i64;
            if self.gentle_fair_sleepers {
                thresh >>= 1;
            }
            v -= thresh;
        }
        let se = &mut ents[pid];
        se.vruntime = se.vruntime.max(v);
    }

    /// `wakeup_preempt_entity(curr, se)`: 1 when `curr` leads `se` by more than the
    /// wake-up granularity in `se`'s virtual time, −1 when it does not lead at all.
    fn wakeup_preempt_entity(&self, ents: &Ents, curr: u32, se: u32) -> i32 {
        let vdiff = ents[curr].vruntime - ents[se].vruntime;
        if vdiff <= 0 {
            return -1;
        }
        let gran = calc_delta_fair(self.wakeup_granularity, ents[se].load) as i64;
        i32::from(vdiff > gran)
    }
}

impl FairClass for Cfs {
    fn update_curr(&self, rq: &mut FairRq, ents: &mut Ents, delta: Ns) -> bool {
        if let Some(c) = rq.curr {
            let se = &mut ents[c];
            se.vruntime += calc_delta_fair(delta, se.load) as i64;
        }
        Self::update_min_vruntime(rq, ents);
        false
    }

    fn enqueue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32, how: Enqueue) {
        match how {
            Enqueue::New => {
                ents[pid].vruntime = rq.min_vruntime;
                self.place_entity(rq, ents, pid, true);
            }
            Enqueue::Wakeup => self.place_entity(rq, ents, pid, false),
            Enqueue::WakeupMigrated { from_min_vruntime } => {
                ents[pid].vruntime += rq.min_vruntime - from_min_vruntime;
                self.place_entity(rq, ents, pid, false);
            }
            Enqueue::Migrated { from_min_vruntime } => {
                ents[pid].vruntime += rq.min_vruntime - from_min_vruntime;
            }
        }
        let se = &mut ents[pid];
        se.on_rq = true;
        rq.nr_running += 1;
        rq.load += se.load.scaled;
        rq.tree.insert((se.vruntime, pid));
    }

    fn dequeue(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32, _how: Dequeue) {
        let se = &mut ents[pid];
        if rq.curr == Some(pid) {
            rq.curr = None;
        } else {
            rq.tree.remove(&(se.vruntime, pid));
        }
        if rq.skip == Some(pid) {
            rq.skip = None;
        }
        se.on_rq = false;
        rq.nr_running -= 1;
        rq.load -= se.load.scaled;
        Self::update_min_vruntime(rq, ents);
    }

    fn pick(&self, rq: &mut FairRq, ents: &mut Ents) -> Option<u32> {
        let curr = rq.curr;
        let before = |a: u32, b: u32| ents[a].vruntime < ents[b].vruntime;
        let left = match (rq.first(), curr) {
            (None, c) => c,
            (Some(l), Some(c)) if before(c, l) => Some(c),
            (l, _) => l,
        }?;
        let mut se = left;
        if rq.skip == Some(se) {
            // Avoid the yielding task if something else can run without being too unfair.
            let second = if Some(se) == curr {
                rq.first()
            } else {
                let next = rq.tree.range((ents[se].vruntime, se + 1)..).next().map(|&(_, p)| p);
                match (next, curr) {
                    (None, c) => c,
                    (Some(n), Some(c)) if before(c, n) => Some(c),
                    (n, _) => n,
                }
            };
            if let Some(s) = second {
                if self.wakeup_preempt_entity(ents, s, left) < 1 {
                    se = s;
                }
            }
        }
        if rq.skip == Some(se) {
            rq.skip = None;
        }
        Some(se)
    }

    fn put_prev(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32) {
        let se = &ents[pid];
        if se.on_rq {
            rq.tree.insert((se.vruntime, pid));
        }
        rq.curr = None;
    }

    fn set_next(&self, rq: &mut FairRq, ents: &mut Ents, pid: u32) {
        let se = &mut ents[pid];
        rq.tree.remove(&(se.vruntime, pid));
        rq.curr = Some(pid);
        se.prev_sum_exec = se.sum_exec;
    }

    /// `check_preempt_tick`.
    fn tick(&self, rq: &mut FairRq, ents: &mut Ents) -> bool {
        let Some(curr) = rq.curr else { return false };
        if rq.nr_running <= 1 {
            return false;
        }
        let ideal = self.sched_slice(rq, ents, curr);
        let se = &ents[curr];
        let ran = se.sum_exec - se.prev_sum_exec;
        if ran > ideal {
            return true;
        }
        if ran < self.min_granularity {
            return false;
        }
        let Some(left) = rq.first() else { return false };
        let delta = se.vruntime - ents[left].vruntime;
        delta > ideal as i64
    }

    /// `check_preempt_wakeup`.
    fn wakeup_preempt(
        &self,
        _rq: &mut FairRq,
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
        self.wakeup_preempt_entity(ents, curr, woken) == 1
    }

    fn yield_curr(&self, rq: &mut FairRq, _ents: &mut Ents, alone: bool) {
        if !alone {
            rq.skip = rq.curr;
        }
    }

    fn slice_left(&self, rq: &FairRq, ents: &Ents) -> Option<Ns> {
        let curr = rq.curr?;
        let se = &ents[curr];
        Some(self.sched_slice(rq, ents, curr).saturating_sub(se.sum_exec - se.prev_sum_exec))
    }

    /// A task whose slice ended and that is picked again (it is still leftmost) starts
    /// a new slice, as `set_next_entity` gives it on the kernel's simple pick path.
    fn expire(&self, rq: &mut FairRq, ents: &mut Ents) {
        super::restart_slice(rq, ents);
    }

    fn renew(&self, rq: &mut FairRq, ents: &mut Ents) {
        super::restart_slice(rq, ents);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::Entity;

    fn cfs_on_one_cpu() -> Cfs {
        Cfs::new(&Tunables::defaults(1))
    }

    fn entity(nice: i8, vruntime: i64) -> Entity {
        Entity { nice, vruntime, load: LoadWeight::for_task(nice, false), on_rq: true, ..Entity::default() }
    }

    #[test]
    fn period_grows_past_nr_latency() {
        let cfs = cfs_on_one_cpu();
        assert_eq!(cfs.sched_period(1), 6_000_000);
        assert_eq!(cfs.sched_period(8), 6_000_000);
        assert_eq!(cfs.sched_period(9), 9 * 750_000);
        assert_eq!(cfs.sched_period(16), 12_000_000);
    }

    /// Whether task 2, woken, preempts task 1.
    fn woken_preempts(cfs: &Cfs, rq: &mut FairRq, ents: &mut Ents) -> bool {
        let policy = ents[2].policy;
        cfs.wakeup_preempt(rq, ents, 1, 2, policy)
    }

    #[test]
    fn waking_task_preempts_only_beyond_wakeup_granularity() {
        let cfs = cfs_on_one_cpu();
        let gran = 1_000_000; // 1 ms on one CPU, in a nice-0 waker's virtual time
        let mut rq = FairRq::default();
        for (lead, preempts) in [(gran + 1, true), (gran, false), (0, false), (-5, false)] {
            let mut ents =
                Ents::from(vec![Entity::default(), entity(0, 10_000_000 + lead), entity(0, 10_000_000)]);
            assert_eq!(woken_preempts(&cfs, &mut rq, &mut ents), preempts, "lead {lead}");
        }
        // The granularity is in the waker's virtual time: a nice-5 waker's is 1 ms x 1024/335.
        let gran5 = calc_delta_fair(gran as u64, LoadWeight::for_task(5, false)) as i64;
        assert!(gran5 > 3 * gran);
        let mut ents = Ents::from(vec![Entity::default(), entity(0, gran5), entity(5, 0)]);
        assert!(!woken_preempts(&cfs, &mut rq, &mut ents));
        ents[1].vruntime = gran5 + 1;
        assert!(woken_preempts(&cfs, &mut rq, &mut ents));
        // SCHED_BATCH never preempts on wake-up; anything preempts SCHED_IDLE.
        let mut ents = Ents::from(vec![Entity::default(), entity(0, 10 * gran), entity(0, 0)]);
        ents[2].policy = Policy::Batch;
        assert!(!woken_preempts(&cfs, &mut rq, &mut ents));
        ents[2].policy = Policy::Other;
        ents[1].policy = Policy::Idle;
        ents[1].vruntime = -10 * gran;
        assert!(woken_preempts(&cfs, &mut rq, &mut ents));
    }

    #[test]
    fn slice_is_the_weight_share_of_the_period() {
        let cfs = cfs_on_one_cpu();
        let mut rq = FairRq::default();
        let mut ents = Ents::from(vec![Entity::default(), entity(0, 0), entity(1, 0)]);
        cfs.enqueue(&mut rq, &mut ents, 1, Enqueue::Migrated { from_min_vruntime: 0 });
        cfs.enqueue(&mut rq, &mut ents, 2, Enqueue::Migrated { from_min_vruntime: 0 });
        let (a, b) = (cfs.sched_slice(&rq, &ents, 1), cfs.sched_slice(&rq, &ents, 2));
        assert!(a.abs_diff(6_000_000 * 1024 / 1844) <= 2, "{a}");
        assert!(b.abs_diff(6_000_000 * 820 / 1844) <= 2, "{b}");
    }
}

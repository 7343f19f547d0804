//! SMP: where a waking task goes, and load balancing (periodic, on behalf of idle
//! CPUs, and when a CPU is about to go idle). Affinity is always respected.

use super::task::State;
use super::Engine;
use crate::class::FairClass;

impl<F: FairClass> Engine<'_, F> {
    fn allowed_cpus(&self, pid: u32) -> impl Iterator<Item = u32> + '_ {
        let mask = self.tasks[pid as usize].affinity;
        (0..self.cpus).filter(move |c| mask & (1 << c) != 0)
    }

    fn cpu_idle(&self, cpu: u32) -> bool {
        self.rqs[cpu as usize].nr_running == 0
    }

    /// The class priority of what runs (or is about to run) on `cpu`. A task that has
    /// just blocked or exited there, and is still the CPU's last pick while it
    /// reschedules, runs nothing: a CPU going idle pulls real-time tasks that wait
    /// elsewhere, as the kernel's newly idle `pull_rt_task` does.
    fn cpu_prio(&self, cpu: u32) -> u32 {
        let rq = &self.rqs[cpu as usize];
        let queued_rt = rq.rt.top_prio().map_or(0, |p| 1 + u32::from(p));
        let gone = matches!(self.tasks[rq.donor as usize].state, State::Blocked | State::Dead)
            && !self.tasks[rq.donor as usize].virtual_runnable;
        let running = if gone { 0 } else { self.class_prio(rq.donor) };
        let fair = u32::from(rq.fair.nr_running > 0);
        running.max(queued_rt).max(fair)
    }

    /// `select_task_rq`. A real-time task goes where the running priority is lowest.
    /// A fair task goes to its previous CPU if idle, else to an idle CPU, else to the
    /// least loaded one (fewest runnable tasks, then least fair load), the previous CPU
    /// winning ties.
    pub(super) fn select_cpu(&self, pid: u32, prev: u32) -> u32 {
        let prev_ok = self.tasks[pid as usize].allowed(prev);
        let first = if prev_ok {
            prev
        } else {
            self.allowed_cpus(pid).next().expect("validated: affinity not empty")
        };
        if self.is_rt(pid) {
            return self.allowed_cpus(pid).fold(first, |best, c| {
                if self.cpu_prio(c) < self.cpu_prio(best) {
                    c
                } else {
                    best
                }
            });
        }
        if prev_ok && self.cpu_idle(prev) {
            return prev;
        }
        let n = self.cpus;
        if let Some(c) =
            (1..=n).map(|i| (prev + i) % n).find(|&c| self.tasks[pid as usize].allowed(c) && self.cpu_idle(c))
        {
            return c;
        }
        let load = |c: u32| {
            let rq = &self.rqs[c as usize];
            (rq.nr_running, rq.fair.load)
        };
        self.allowed_cpus(pid).fold(first, |best, c| if load(c) < load(best) { c } else { best })
    }

    /// `can_migrate_task`: waiting (not running as another task's proxy while it is
    /// queued), allowed there, and not cache-hot unless balancing keeps failing (more
    /// than `cache_nice_tries` = 1 times).
    fn can_migrate(&self, pid: u32, to: u32) -> bool {
        let t = &self.tasks[pid as usize];
        if t.state != State::Runnable {
            return false;
        }
        let hot = self.now.saturating_sub(t.last_ran) < self.t.migration_cost_ns && t.last_ran > 0;
        t.allowed(to) && (!hot || self.rqs[to as usize].balance_failed > 1)
    }

    /// Periodic balancing at the tick of a busy CPU: it pulls for itself, and for every
    /// idle CPU (whose tick is stopped, as NOHZ idle balancing does).
    pub(super) fn periodic_balance(&mut self, cpu: u32) {
        self.pull_rt(cpu);
        self.pull_fair(cpu, false);
        for idle in 0..self.cpus {
            if idle != cpu && self.cpu_idle(idle) && (self.pull_rt(idle) || self.pull_fair(idle, false)) {
                self.resched(idle);
            }
        }
    }

    /// `newidle_balance`: `cpu` found nothing to run; pull one task if it can.
    pub(super) fn newidle_balance(&mut self, cpu: u32) -> bool {
        self.pull_rt(cpu) || self.pull_fair(cpu, true)
    }

    /// Pulls fair tasks from the busiest CPU until the loads are within half a task:
    /// `imbalance = (busiest − this) / 2`, moving each queued task whose weight fits in
    /// what is left of it (the threshold relaxed by each failed attempt, as
    /// `shr_bound(load, nr_balance_failed)` does). A newly idle CPU takes one task.
    fn pull_fair(&mut self, cpu: u32, newly_idle: bool) -> bool {
        let this_load = self.rqs[cpu as usize].fair.load;
        let busiest = (0..self.cpus)
            .filter(|&c| c != cpu && !self.rqs[c as usize].fair.tree.is_empty())
            .max_by_key(|&c| (self.rqs[c as usize].fair.load, std::cmp::Reverse(c)));
        let Some(busiest) = busiest else { return false };
        let busiest_load = self.rqs[busiest as usize].fair.load;
        if busiest_load <= this_load {
            return false;
        }
        let mut imbalance = (busiest_load - this_load) / 2;
        let failed = self.rqs[cpu as usize].balance_failed;
        // Least recently queued first: the back of the tree.
        let candidates: Vec<u32> = self.rqs[busiest as usize].fair.queued().rev().collect();
        let mut moved = false;
        for p in candidates {
            let w = self.ents[p as usize].load.weight;
            if (w >> failed.min(63)) > imbalance || !self.can_migrate(p, cpu) {
                continue;
            }
            self.migrate_queued(p, cpu);
            moved = true;
            imbalance = imbalance.saturating_sub(w);
            if newly_idle || imbalance == 0 {
                break;
            }
        }
        // A newly idle CPU's failures do not count (`sched_balance_rq` only counts
        // those of periodic balancing), so it never takes a cache-hot task.
        let rq = &mut self.rqs[cpu as usize];
        if moved {
            rq.balance_failed = 0;
        } else if !newly_idle {
            rq.balance_failed += 1;
        }
        moved
    }

    /// `pull_rt_task`: takes the highest-priority queued RT task elsewhere that would
    /// run here ahead of what this CPU runs.
    fn pull_rt(&mut self, cpu: u32) -> bool {
        let here = self.cpu_prio(cpu);
        let mut best: Option<(u32, u8)> = None;
        for c in (0..self.cpus).filter(|&c| c != cpu) {
            for (p, prio) in self.rqs[c as usize].rt.queued() {
                if 1 + u32::from(prio) > here
                    && self.tasks[p as usize].allowed(cpu)
                    && best.is_none_or(|(_, b)| prio > b)
                {
                    best = Some((p, prio));
                }
                if best.is_some_and(|(bp, _)| bp == p) {
                    break;
                }
            }
        }
        match best {
            Some((p, _)) => {
                self.migrate_queued(p, cpu);
                true
            }
            None => false,
        }
    }

    /// `push_rt_task`: a queued RT task moves to an allowed CPU running something of
    /// lower priority.
    pub(super) fn push_rt(&mut self, cpu: u32) {
        let Some((p, prio)) = self.rqs[cpu as usize].rt.first() else { return };
        let target = self
            .allowed_cpus(p)
            .filter(|&c| c != cpu && self.cpu_prio(c) < 1 + u32::from(prio))
            .min_by_key(|&c| self.cpu_prio(c));
        if let Some(c) = target {
            self.migrate_queued(p, c);
        }
    }
}

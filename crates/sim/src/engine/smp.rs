//! SMP: where a task goes when it wakes or starts, and load balancing over the sched
//! domains (periodic, on behalf of idle CPUs by one of them, and when a CPU is about to
//! go idle), as Linux 6.18's `kernel/sched/fair.c` does it. Affinity is always
//! respected.
//!
//! Loads, utilizations and runnable sums are the PELT averages (`load.rs`,
//! [`crate::pelt`]) as the kernel reads them, as of their last update: a CPU's load
//! (`cpu_load`) includes the blocked load of the tasks sleeping after running there, its
//! utilization (`cpu_util_cfs`) is at least the estimate of its queued tasks
//! (UTIL_EST), a task's load is its hierarchical load (`task_h_load`: its own average
//! without task groups, its share of its CPU's root load with them). Idle
//! CPUs' averages decay when blocked averages are updated: by a CPU before its periodic
//! balance, by a CPU going idle before its newly idle balance, and for all idle CPUs by
//! the NOHZ idle balancer (at most every 32 ms, `nohz.next_blocked`). SIS_UTIL's scan
//! depth is set from the LLC's utilization at each periodic balance of the LLC domain.
//!
//! Capacities are all equal (`SCHED_CAPACITY_SCALE`; real-time, deadline and interrupt
//! time do not reduce them: their PELT signals are not modelled); there is no
//! energy-aware placement, asymmetric packing, misfit or SMT-balance group type, NUMA
//! balancing or active balancing, and no exec balancing (new tasks are placed as forks).

use schedlab_model::Ns;

use super::domains::{Domain, Group};
use super::task::State;
use super::Engine;
use crate::class::FairClass;
use crate::cpuset::CpuSet;
use crate::pelt::{CAPACITY, LOAD_AVG_PERIOD};
/// `sysctl_sched_nr_migrate`: tasks one balance pass may move.
const NR_MIGRATE: usize = 32;
/// `MAX_PINNED_INTERVAL` (ms): how far the interval grows while every task is pinned.
const MAX_PINNED_INTERVAL_MS: u64 = 512;
/// `NUMA_IMBALANCE_MIN`: a pair of communicating tasks may stay on one node.
const NUMA_IMBALANCE_MIN: u32 = 2;
/// The host time one balancing pass costs per CPU of its domain, standing in for the
/// kernel's measured `max_newidle_lb_cost`: a newly idle CPU balances a domain only when
/// it expects to stay idle longer than that (`avg_idle`).
const NEWIDLE_COST_PER_CPU_NS: Ns = 100;

/// `enum cpu_idle_type`: why a CPU balances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IdleType {
    NotIdle,
    Idle,
    NewlyIdle,
}

/// `enum group_type`, in the kernel's order of how badly a group needs relief
/// (has_spare < fully_busy < imbalanced < overloaded; the asymmetric, misfit and
/// SMT-balance types are not modelled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    Imbalanced,
    Overloaded,
}

/// `enum migration_type`: what the imbalance counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Migration {
    /// Fair load (`cpu_load`, a task's `task_h_load`).
    Load,
    /// Utilization (`cpu_util_cfs_boost`, a task's `task_util_est`).
    Util,
    /// Tasks.
    Task,
}

/// `struct sg_lb_stats`.
#[derive(Clone, Copy, Debug, Default)]
struct GroupStats {
    /// Σ `cpu_load`.
    load: u64,
    /// Σ `cpu_util_cfs`.
    util: u64,
    /// Σ `cpu_runnable`.
    runnable: u64,
    /// Runnable tasks of every class, delayed fair ones included (`sum_nr_running`).
    nr_running: u32,
    /// Runnable fair tasks, not delayed (`sum_h_nr_running`).
    h_nr_running: u32,
    idle_cpus: u32,
    weight: u32,
    cores: u32,
    group_type: GroupType,
    avg_load: u64,
}

impl GroupStats {
    fn capacity(&self) -> u64 {
        u64::from(self.weight) * CAPACITY
    }

    /// The load per unit of capacity, the formula of `avg_load`.
    fn load_per_capacity(&self) -> u64 {
        self.load * CAPACITY / self.capacity()
    }

    /// `group_is_overloaded`: more tasks than CPUs, and the CPUs are (nearly) full.
    fn overloaded(&self, pct: u64) -> bool {
        self.nr_running > self.weight
            && (self.capacity() * 100 < self.util * pct || self.capacity() * pct < self.runnable * 100)
    }

    /// `group_has_capacity`.
    fn has_capacity(&self, pct: u64) -> bool {
        self.nr_running < self.weight
            || (self.capacity() * pct >= self.runnable * 100 && self.capacity() * 100 > self.util * pct)
    }

    /// `group_classify`.
    fn classify(&mut self, pct: u64, imbalanced: bool) {
        self.group_type = if self.overloaded(pct) {
            GroupType::Overloaded
        } else if imbalanced {
            GroupType::Imbalanced
        } else if !self.has_capacity(pct) {
            GroupType::FullyBusy
        } else {
            GroupType::HasSpare
        };
        if self.group_type == GroupType::Overloaded {
            self.avg_load = self.load_per_capacity();
        }
    }
}

/// `struct sd_lb_stats`: a domain's groups as the balancer sees them.
struct DomainStats {
    local: GroupStats,
    /// The busiest group other than the local one, with its index.
    busiest: Option<(usize, GroupStats)>,
    total_load: u64,
    total_capacity: u64,
    /// Σ `group_util`, for SIS_UTIL.
    sum_util: u64,
}

/// What `find_busiest_group` found to fix.
struct Imbalance {
    group: usize,
    migration: Migration,
    amount: u64,
}

impl<F: FairClass> Engine<'_, F> {
    fn cpu_idle(&self, cpu: u32) -> bool {
        self.rqs[cpu as usize].nr_running == 0
    }

    pub(super) fn jiffies(&self) -> u64 {
        self.now / self.t.tick_ns()
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
        let fair = u32::from(self.cfs[cpu as usize].h_nr_queued > 0);
        running.max(queued_rt).max(fair)
    }

    /// `select_task_rq`: the CPU a waking (`waker_cpu` is where the wake-up runs) or new
    /// (`waker_cpu` is `None`) task goes to. A real-time task goes where the running
    /// priority is lowest, its previous CPU winning ties; a fair task as
    /// [`Self::select_task_rq_fair`] decides. A CPU outside the affinity is replaced as
    /// `select_fallback_rq` does: the first allowed CPU of the previous CPU's LLC, else the
    /// first allowed one.
    pub(super) fn select_cpu(&mut self, pid: u32, prev: u32, waker_cpu: Option<u32>, sync: bool) -> u32 {
        let cpu = if self.is_rt(pid) {
            self.select_task_rq_rt(pid, prev)
        } else {
            self.select_task_rq_fair(pid, prev, waker_cpu, sync)
        };
        if self.tasks[pid as usize].allowed(cpu) {
            return cpu;
        }
        let aff = &self.tasks[pid as usize].affinity;
        let llc = &self.dom.llc_cpus[self.dom.llc[prev as usize] as usize];
        llc.iter()
            .copied()
            .find(|&c| aff.contains(c))
            .or_else(|| aff.first())
            .expect("validated: affinity not empty")
    }

    /// `select_task_rq_rt`, simplified to: the allowed CPU whose running (or queued)
    /// priority is lowest, `prev` winning ties (an idle `prev` at once).
    fn select_task_rq_rt(&self, pid: u32, prev: u32) -> u32 {
        let t = &self.tasks[pid as usize];
        let first =
            if t.allowed(prev) { prev } else { t.affinity.first().expect("validated: affinity not empty") };
        if self.cpu_prio(first) == 0 {
            return first;
        }
        t.affinity.iter().fold(first, |best, c| if self.cpu_prio(c) < self.cpu_prio(best) { c } else { best })
    }

    /// `select_task_rq_fair`. A new task (fork, exec, workload start) takes the slow
    /// path, [`Self::find_dst_cpu`] from the top domain of `prev` (its parent's CPU). A
    /// waking task takes the fast path: when the wake-up is not "wide" (`wake_wide`) and
    /// the waker's CPU is allowed, the lowest domain spanning both the waker's CPU and
    /// `prev` decides between them ([`Self::wake_affine`]); then
    /// [`Self::select_idle_sibling`] looks for an idle CPU near that target. A wake-up
    /// from a timer or a device runs on `prev` itself.
    fn select_task_rq_fair(&mut self, pid: u32, prev: u32, waker_cpu: Option<u32>, sync: bool) -> u32 {
        let Some(this) = waker_cpu else { return self.find_dst_cpu(pid, prev) };
        let waker = self.rqs[this as usize].curr;
        if waker != 0 {
            self.record_wakee(waker, pid);
        }
        let mut target = prev;
        let want_affine = !self.wake_wide(pid, this) && self.tasks[pid as usize].allowed(this);
        if want_affine && this != prev {
            let shared = self.dom.per_cpu[this as usize]
                .iter()
                .map(|cd| &self.dom.domains[cd.domain as usize])
                .find(|d| d.span.contains(prev));
            if let Some(pct) = shared.map(|d| d.imbalance_pct) {
                target = self.wake_affine(pct, pid, this, prev, sync);
            }
        }
        self.select_idle_sibling(pid, prev, target)
    }

    /// `record_wakee`: the waker (what runs where the wake-up runs) counts how often it
    /// switches between wakees (halved every second), to tell one-to-many wake-ups from
    /// pairs.
    fn record_wakee(&mut self, waker: u32, wakee: u32) {
        let now = self.now;
        let t = &mut self.tasks[waker as usize];
        if now > t.wakee_flip_decay_ts + 1_000_000_000 {
            t.wakee_flips >>= 1;
            t.wakee_flip_decay_ts = now;
        }
        if t.last_wakee != wakee {
            t.last_wakee = wakee;
            t.wakee_flips += 1;
        }
    }

    /// `wake_wide`: the waker and the wakee both switch partners often (more than the
    /// LLC has CPUs, one of them that many times the other): spread rather than pull the
    /// wakee to the waker. The waker is what runs on `this`.
    fn wake_wide(&self, pid: u32, this: u32) -> bool {
        let waker = self.rqs[this as usize].curr;
        if waker == 0 {
            return false;
        }
        let factor = self.dom.llc_cpus[self.dom.llc[this as usize] as usize].len() as u32;
        let (a, b) = (self.tasks[waker as usize].wakee_flips, self.tasks[pid as usize].wakee_flips);
        let (master, slave) = (a.max(b), a.min(b));
        !(slave < factor || master < slave.saturating_mul(factor))
    }

    /// `wake_affine`: `this` (the waker's CPU) if WA_IDLE or WA_WEIGHT prefer it, else
    /// `prev`. WA_IDLE: an idle `this` sharing the cache with `prev` (the wake-up comes
    /// from an interrupt) gives `prev` if that is idle too, else `this`; a sync wake-up
    /// whose waker is the only runnable task on `this` (delayed ones do not count) gives
    /// `this`; an idle `prev` gives `prev`. Otherwise WA_WEIGHT decides.
    fn wake_affine(&mut self, imbalance_pct: u64, pid: u32, this: u32, prev: u32, sync: bool) -> u32 {
        let idle = |c: u32| self.cpu_idle(c);
        let root = &self.cfs[this as usize];
        let delayed = root.h_nr_queued - root.h_nr_runnable;
        let wa_idle = if idle(this) && self.dom.share_cache(this, prev) {
            Some(if idle(prev) { prev } else { this })
        } else if sync && self.rqs[this as usize].nr_running - delayed == 1 {
            Some(this)
        } else if idle(prev) {
            Some(prev)
        } else {
            None
        };
        match wa_idle {
            Some(target) if target == this => this,
            Some(_) => prev,
            None if self.wake_affine_weight(imbalance_pct, pid, this, prev, sync) => this,
            None => prev,
        }
    }

    /// `wake_affine_weight`: whether `this` is less loaded than `prev` once the wakee's
    /// load moves from `prev` to `this` (and, for a sync wake-up, the waker's leaves
    /// `this`; a waker heavier than its CPU's load settles it), `prev` favoured by half
    /// the domain's imbalance percentage `imbalance_pct`. The loads are the CPUs' root
    /// averages and the tasks' hierarchical loads (`task_h_load`: with task groups, a
    /// task's share of its CPU's root load; the wakee's on its previous CPU), as last
    /// updated. The kernel also multiplies each side by the other CPU's capacity; all
    /// capacities are equal here.
    fn wake_affine_weight(&mut self, imbalance_pct: u64, pid: u32, this: u32, prev: u32, sync: bool) -> bool {
        let mut this_eff = self.cpu_load(this) as i64;
        if sync {
            let current = self.rqs[this as usize].curr;
            let current_load = if current == 0 { 0 } else { self.task_h_load(current) as i64 };
            if current_load > this_eff {
                return true;
            }
            this_eff -= current_load;
        }
        let task_load = self.task_h_load(pid) as i64;
        this_eff = (this_eff + task_load) * 100;
        let mut prev_eff =
            (self.cpu_load(prev) as i64 - task_load) * (100 + (imbalance_pct as i64 - 100) / 2);
        if sync {
            prev_eff += 1;
        }
        this_eff < prev_eff
    }

    /// `select_idle_sibling`: `target` if idle; `prev` if idle and sharing the cache;
    /// the task's `recent_used_cpu` if idle and sharing the cache; with SMT and no idle
    /// core known in the LLC, an idle sibling of `prev`; else [`Self::select_idle_cpu`]
    /// over the target's LLC; else `target`. Not modelled: SCHED_IDLE-only CPUs counting
    /// as idle, the per-CPU kthread stacking case, clusters, capacity fitting.
    fn select_idle_sibling(&mut self, pid: u32, prev: u32, target: u32) -> u32 {
        let allowed = |e: &Self, c: u32| e.tasks[pid as usize].allowed(c);
        if self.cpu_idle(target) && allowed(self, target) {
            return target;
        }
        if prev != target && self.dom.share_cache(prev, target) && self.cpu_idle(prev) && allowed(self, prev)
        {
            return prev;
        }
        let recent = std::mem::replace(&mut self.tasks[pid as usize].recent_used_cpu, prev);
        if recent < self.cpus
            && recent != prev
            && recent != target
            && self.dom.share_cache(recent, target)
            && self.cpu_idle(recent)
            && allowed(self, recent)
        {
            return recent;
        }
        let llc = self.dom.llc[target as usize];
        if self.dom.llc_cpus[llc as usize].len() < 2 {
            return target;
        }
        let has_idle_core = self.dom.smt && self.has_idle_cores[llc as usize];
        if self.dom.smt && !has_idle_core && self.dom.share_cache(prev, target) {
            // select_idle_smt: an idle sibling of prev.
            let core = self.dom.core[prev as usize];
            let sibling = self.dom.core_cpus[core as usize]
                .iter()
                .copied()
                .find(|&c| c != prev && self.cpu_idle(c) && allowed(self, c));
            if let Some(c) = sibling {
                return c;
            }
        }
        self.select_idle_cpu(pid, llc, has_idle_core, target).unwrap_or(target)
    }

    /// `select_idle_cpu`: scans the LLC's allowed CPUs after `target` (wrapping), unless
    /// SIS_UTIL's scan depth for the LLC (`nr_idle_scan`, see [`idle_cpu_scan`]) is 0: so
    /// busy an LLC is unlikely to have an idle CPU or core. When the LLC may have an idle
    /// core, the first core whose threads are all idle wins (an idle thread of a busy
    /// core is kept as the fallback) and the scan is not bounded; if no core was idle the
    /// LLC's hint is cleared. Otherwise the first idle CPU wins, within the scan depth.
    fn select_idle_cpu(&mut self, pid: u32, llc: u32, has_idle_core: bool, target: u32) -> Option<u32> {
        let scan = self.nr_idle_scan[llc as usize];
        if scan == 0 {
            return None;
        }
        let mut nr = scan + 1;
        let cpus = &self.dom.llc_cpus[llc as usize];
        let start = self.dom.llc_pos[target as usize] as usize + 1;
        let t = &self.tasks[pid as usize];
        let mut fallback = None;
        // Cores already looked at, so each is checked once (as the kernel drops a core's
        // siblings from the scan mask).
        let mut seen_cores: Vec<u32> = Vec::new();
        for i in 0..cpus.len() {
            let c = cpus[(start + i) % cpus.len()];
            if !t.allowed(c) {
                continue;
            }
            if has_idle_core {
                let core = self.dom.core[c as usize];
                if seen_cores.contains(&core) {
                    continue;
                }
                seen_cores.push(core);
                let threads = &self.dom.core_cpus[core as usize];
                let mut idle_thread = None;
                let mut all_idle = true;
                for &s in threads {
                    if self.cpu_idle(s) {
                        if idle_thread.is_none() && t.allowed(s) {
                            idle_thread = Some(s);
                        }
                    } else {
                        all_idle = false;
                    }
                }
                if all_idle && idle_thread.is_some() {
                    return idle_thread;
                }
                fallback = fallback.or(idle_thread);
            } else {
                nr -= 1;
                if nr == 0 {
                    return None;
                }
                if self.cpu_idle(c) {
                    return Some(c);
                }
            }
        }
        if has_idle_core {
            self.has_idle_cores[llc as usize] = false;
        }
        fallback
    }

    // ---- the slow path: new tasks -------------------------------------------------

    /// `sched_balance_find_dst_cpu` (was `find_idlest_cpu`): from the top domain of
    /// `cpu` down, the idlest group (if better than the local one) and its idlest CPU;
    /// continue below in that CPU's domains.
    fn find_dst_cpu(&self, pid: u32, prev: u32) -> u32 {
        let mut cpu = prev;
        let chain = &self.dom.per_cpu[cpu as usize];
        let Some(top) = chain.last() else { return prev };
        if !self.dom.domains[top.domain as usize].span.intersects(&self.tasks[pid as usize].affinity) {
            return prev;
        }
        let mut new = cpu;
        let mut level = Some(chain.len() - 1);
        while let Some(l) = level {
            let cd = &self.dom.per_cpu[cpu as usize][l];
            let d = &self.dom.domains[cd.domain as usize];
            let Some(g) = self.find_idlest_group(d, pid, cpu) else {
                level = l.checked_sub(1);
                continue;
            };
            new = self.find_idlest_group_cpu(&d.groups[g].cpus, pid, cpu);
            if new == cpu {
                level = l.checked_sub(1);
                continue;
            }
            let weight = d.weight;
            cpu = new;
            level = self.dom.per_cpu[cpu as usize]
                .iter()
                .rposition(|cd| self.dom.domains[cd.domain as usize].weight < weight);
        }
        new
    }

    /// The statistics of group `g`, classified: `update_sg_lb_stats` for balancing, or
    /// with `allowed` `update_sg_wakeup_stats` for a new task allowed on those CPUs, which
    /// sums only them (the capacity and weight stay the whole group's). A new task is
    /// attached nowhere yet (`last_update_time` 0), so the wake-up sums need none of the
    /// kernel's "without the task" corrections (`cpu_load_without` and the like).
    fn group_stats(&self, g: &Group, pct: u64, imbalanced: bool, allowed: Option<&CpuSet>) -> GroupStats {
        let mut s = GroupStats { weight: g.cpus.len() as u32, cores: g.cores, ..GroupStats::default() };
        for &c in g.cpus.iter().filter(|&&c| allowed.is_none_or(|a| a.contains(c))) {
            s.load += self.cpu_load(c);
            s.util += self.cpu_util(c, false);
            s.runnable += self.cpu_runnable(c);
            s.h_nr_running += self.h_nr_runnable(c);
            let nr_running = self.rqs[c as usize].nr_running;
            s.nr_running += nr_running;
            s.idle_cpus += u32::from(nr_running == 0);
        }
        s.classify(pct, imbalanced);
        s
    }

    /// `sched_balance_find_dst_group` (was `find_idlest_group`): the least busy group
    /// holding an allowed CPU, or `None` when the local group (holding `this`) should
    /// keep the task. Busy groups compare their average load (computed for fully busy
    /// ones too), groups with spare capacity their idle CPUs, then their utilization.
    fn find_idlest_group(&self, d: &Domain, pid: u32, this: u32) -> Option<usize> {
        let aff = &self.tasks[pid as usize].affinity;
        let mut local: Option<GroupStats> = None;
        let mut idlest: Option<(usize, GroupStats)> = None;
        for (i, g) in d.groups.iter().enumerate() {
            if !g.cpus.iter().any(|&c| aff.contains(c)) {
                continue;
            }
            let mut s = self.group_stats(g, d.imbalance_pct, false, Some(aff));
            if s.group_type == GroupType::FullyBusy {
                s.avg_load = s.load_per_capacity();
            }
            if g.cpus.contains(&this) {
                local = Some(s);
            } else if idlest.as_ref().is_none_or(|(_, best)| idlier(&s, best)) {
                idlest = Some((i, s));
            }
        }
        let (group, idlest) = idlest?;
        let Some(local) = local else { return Some(group) };
        if local.group_type != idlest.group_type {
            return (local.group_type > idlest.group_type).then_some(group);
        }
        match local.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let (local_avg, idlest_avg) = (local.avg_load, idlest.avg_load);
                let imbalance = CAPACITY * (d.imbalance_pct - 100) / 100;
                if d.numa() && idlest_avg + imbalance >= local_avg {
                    return None;
                }
                if idlest_avg >= local_avg + imbalance || 100 * local_avg <= d.imbalance_pct * idlest_avg {
                    return None;
                }
            }
            GroupType::Imbalanced => return None,
            GroupType::HasSpare => {
                if d.numa() {
                    // The kernel compares the allowed CPUs with NR_CPUS, its build's
                    // maximum, which no real task has: the bound always applies.
                    let imb_numa_nr = d.imb_numa_nr.min(aff.count());
                    let imbalance = local.idle_cpus.abs_diff(idlest.idle_cpus);
                    if adjust_numa_imbalance(imbalance, local.nr_running + 1, imb_numa_nr) == 0 {
                        return None;
                    }
                }
                if local.idle_cpus >= idlest.idle_cpus {
                    return None;
                }
            }
        }
        Some(group)
    }

    /// `sched_balance_find_dst_group_cpu` (was `find_idlest_group_cpu`): the idle
    /// allowed CPU that went idle last (the warmest cache; all idle states are equally
    /// shallow here, and CPUs that never ran tie, the lowest winning), else the allowed
    /// CPU of least load (`cpu_load`), else `this`.
    fn find_idlest_group_cpu(&self, cpus: &[u32], pid: u32, this: u32) -> u32 {
        if cpus.len() == 1 {
            return cpus[0];
        }
        let t = &self.tasks[pid as usize];
        let mut idle: Option<(u32, Ns)> = None;
        let mut least: Option<(u32, u64)> = None;
        for &c in cpus.iter().filter(|&&c| t.allowed(c)) {
            let rq = &self.rqs[c as usize];
            if rq.nr_running == 0 {
                if idle.is_none_or(|(_, stamp)| rq.idle_stamp > stamp) {
                    idle = Some((c, rq.idle_stamp));
                }
            } else if idle.is_none() && least.is_none_or(|(_, load)| self.cpu_load(c) < load) {
                least = Some((c, self.cpu_load(c)));
            }
        }
        idle.or(least).map_or(this, |(c, _)| c)
    }

    // ---- load balancing -----------------------------------------------------------

    /// `get_sd_balance_interval` in jiffies: the domain's interval (×`busy_factor` 16,
    /// less a jiffy, when the CPU is busy), between 1 jiffy and
    /// `max_load_balance_interval` (HZ × CPUs / 10).
    fn balance_interval(&self, interval_ms: u64, busy: bool) -> u64 {
        let ms = if busy { interval_ms * 16 } else { interval_ms };
        let mut j = (ms * self.t.hz).div_ceil(1000);
        if busy {
            j = j.saturating_sub(1);
        }
        j.clamp(1, (self.t.hz * u64::from(self.cpus) / 10).max(1))
    }

    /// At the tick of `cpu` (`sched_balance_trigger`): balance its own domains when they
    /// are due, and kick the idle balancer when that is due.
    pub(super) fn tick_balance(&mut self, cpu: u32) {
        if self.jiffies() >= self.rqs[cpu as usize].next_balance {
            let idle = if self.cpu_idle(cpu) { IdleType::Idle } else { IdleType::NotIdle };
            self.pull_rt(cpu);
            // sched_balance_softirq: the CPU's blocked load decays before it balances.
            self.update_blocked_averages(cpu);
            self.rebalance_domains(cpu, idle);
        }
        self.nohz_balancer_kick(cpu);
    }

    /// `sched_balance_domains` (was `rebalance_domains`): each domain of `cpu` bottom-up
    /// whose interval has passed is balanced, until one says a sibling CPU balances for
    /// the group; the CPU's next balance is the earliest next one.
    fn rebalance_domains(&mut self, cpu: u32, mut idle: IdleType) {
        let jiffies = self.jiffies();
        let mut busy = idle == IdleType::NotIdle;
        let mut next_balance = jiffies + 60 * self.t.hz;
        for level in 0..self.dom.per_cpu[cpu as usize].len() {
            let cd = &self.dom.per_cpu[cpu as usize][level];
            let mut interval = self.balance_interval(cd.interval_ms, busy);
            let mut last = cd.last_balance;
            if jiffies >= last + interval {
                let (moved, go_on) = self.load_balance(cpu, level, idle);
                if moved {
                    idle = if self.cpu_idle(cpu) { IdleType::Idle } else { IdleType::NotIdle };
                    busy = idle == IdleType::NotIdle;
                }
                let cd = &mut self.dom.per_cpu[cpu as usize][level];
                cd.last_balance = jiffies;
                let interval_ms = cd.interval_ms;
                last = jiffies;
                interval = self.balance_interval(interval_ms, busy);
                next_balance = next_balance.min(last + interval);
                if !go_on {
                    break;
                }
            } else {
                next_balance = next_balance.min(last + interval);
            }
        }
        self.rqs[cpu as usize].next_balance = next_balance;
        if idle == IdleType::Idle {
            self.nohz_next_balance = self.nohz_next_balance.min(next_balance);
        }
    }

    /// `nohz_balancer_kick`: a busy CPU's tick wakes the first idle CPU to work for every
    /// idle CPU (whose ticks are stopped): to balance (`NOHZ_BALANCE_KICK`) when the idle
    /// balance is due and this CPU has a task to spare or its LLC more than one busy
    /// CPU; to decay their blocked load (`NOHZ_STATS_KICK`) when some may have some and
    /// the last decay is more than 32 ms old (`nohz.next_blocked`).
    fn nohz_balancer_kick(&mut self, cpu: u32) {
        if self.cpu_idle(cpu) || self.idle.is_empty() {
            return;
        }
        let jiffies = self.jiffies();
        let stats = self.nohz_has_blocked && jiffies > self.nohz_next_blocked;
        let llc = self.dom.llc[cpu as usize];
        let balance = jiffies >= self.nohz_next_balance
            && (self.rqs[cpu as usize].nr_running >= 2 || self.llc_busy[llc as usize] > 1);
        if stats || balance {
            let ilb = self.idle.first().expect("not empty");
            self.nohz_idle_balance(ilb, stats, balance);
        }
    }

    /// `_nohz_idle_balance`: `ilb` works for each idle CPU from the one after it (itself
    /// last): with `stats` it decays the CPU's blocked load ([`Self::update_nohz_stats`]);
    /// with `balance`, when the CPU's balance is due, it balances the CPU's domains as if
    /// the CPU were balancing, and a CPU that pulled a task is rescheduled.
    fn nohz_idle_balance(&mut self, ilb: u32, stats: bool, balance: bool) {
        let jiffies = self.jiffies();
        let mut next = None;
        let mut has_blocked = false;
        if stats {
            self.nohz_has_blocked = false;
        }
        let idle: Vec<u32> = self.idle.iter().collect();
        let start = idle.partition_point(|&c| c <= ilb);
        for i in 0..idle.len() {
            let c = idle[(start + i) % idle.len()];
            if !self.cpu_idle(c) {
                continue;
            }
            if stats {
                has_blocked |= self.update_nohz_stats(c);
            }
            if balance && jiffies >= self.rqs[c as usize].next_balance {
                self.pull_rt(c);
                self.rebalance_domains(c, IdleType::Idle);
                if !self.cpu_idle(c) {
                    self.resched(c);
                }
            }
            let due = self.rqs[c as usize].next_balance;
            next = Some(next.map_or(due, |n: u64| n.min(due)));
        }
        if let Some(n) = next {
            self.nohz_next_balance = n;
        }
        if stats {
            // msecs_to_jiffies(LOAD_AVG_PERIOD), rounded up.
            self.nohz_next_blocked = jiffies + (LOAD_AVG_PERIOD * self.t.hz).div_ceil(1000);
        }
        if has_blocked {
            self.nohz_has_blocked = true;
        }
    }

    /// `update_nohz_stats`: decays the idle `cpu`'s blocked load unless it has none or it
    /// was decayed this jiffy; returns whether some is left.
    fn update_nohz_stats(&mut self, cpu: u32) -> bool {
        let rq = &self.rqs[cpu as usize];
        if !rq.has_blocked_load {
            return false;
        }
        if self.jiffies() <= rq.last_blocked_load_update_tick {
            return true;
        }
        self.update_blocked_averages(cpu);
        self.rqs[cpu as usize].has_blocked_load
    }

    /// `nohz_newidle_balance`: a CPU going idle for a while (`avg_idle` at least the
    /// migration cost) decays the idle CPUs' blocked load on its way, when that is due
    /// (`nohz_run_idle_balance`).
    fn nohz_newidle_balance(&mut self, cpu: u32) {
        if self.rqs[cpu as usize].avg_idle >= self.t.migration_cost_ns
            && self.nohz_has_blocked
            && self.jiffies() >= self.nohz_next_blocked
        {
            self.nohz_idle_balance(cpu, true, false);
        }
    }

    /// `sched_balance_newidle`: `cpu` found nothing to run. Real-time tasks are pulled
    /// first; then, when some CPU has more than one task (the root domain's overload
    /// flag) and the CPU expects to stay idle (`avg_idle`) longer than balancing its
    /// lowest domain costs, its blocked load decays and the domains are balanced
    /// bottom-up for as long as that holds, until a task is pulled. A CPU that pulls
    /// nothing decays the idle CPUs' blocked load when due ([`Self::nohz_newidle_balance`]).
    pub(super) fn newidle_balance(&mut self, cpu: u32) -> bool {
        let now = self.now;
        self.rqs[cpu as usize].idle_stamp = now;
        if self.pull_rt(cpu) {
            return true;
        }
        // update_next_balance with the idle intervals, so the idle balancer sees it.
        let jiffies_next = self.dom.per_cpu[cpu as usize]
            .iter()
            .map(|cd| cd.last_balance + self.balance_interval(cd.interval_ms, false))
            .min();
        if let Some(n) = jiffies_next {
            let rq = &mut self.rqs[cpu as usize];
            rq.next_balance = rq.next_balance.min(n);
            self.nohz_next_balance = self.nohz_next_balance.min(rq.next_balance);
        }
        let avg_idle = self.rqs[cpu as usize].avg_idle;
        let first_cost = self.dom.per_cpu[cpu as usize]
            .first()
            .map(|cd| NEWIDLE_COST_PER_CPU_NS * u64::from(self.dom.domains[cd.domain as usize].weight));
        if self.overloaded_cpus == 0 || first_cost.is_none_or(|c| avg_idle < c) {
            self.nohz_newidle_balance(cpu);
            return false;
        }
        self.update_blocked_averages(cpu);
        let mut cost = 0;
        for level in 0..self.dom.per_cpu[cpu as usize].len() {
            let d = self.dom.per_cpu[cpu as usize][level].domain;
            cost += NEWIDLE_COST_PER_CPU_NS * u64::from(self.dom.domains[d as usize].weight);
            if avg_idle < cost {
                break;
            }
            let (moved, go_on) = self.load_balance(cpu, level, IdleType::NewlyIdle);
            if moved {
                self.rqs[cpu as usize].idle_stamp = 0;
                return true;
            }
            if !go_on {
                break;
            }
        }
        self.nohz_newidle_balance(cpu);
        false
    }

    /// The host time `sched_balance_newidle` may spend on all of `cpu`'s domains: twice
    /// it bounds `avg_idle` (`max_idle_balance_cost`, at least the migration cost).
    pub(super) fn max_idle_balance_cost(&self, cpu: u32) -> Ns {
        let cost: Ns = self.dom.per_cpu[cpu as usize]
            .iter()
            .map(|cd| NEWIDLE_COST_PER_CPU_NS * u64::from(self.dom.domains[cd.domain as usize].weight))
            .sum();
        cost.max(self.t.migration_cost_ns)
    }

    /// `should_we_balance`: a newly idle CPU always may; otherwise only the first idle
    /// CPU of the local group (or its first CPU when none is idle) balances the domain.
    fn should_we_balance(&self, cpu: u32, group: &[u32], idle: IdleType) -> bool {
        if idle == IdleType::NewlyIdle {
            return self.cpu_idle(cpu);
        }
        group.iter().copied().find(|&c| self.cpu_idle(c)).unwrap_or(group[0]) == cpu
    }

    /// `sched_balance_rq` (was `load_balance`) of `cpu`'s domain at `level`: find the
    /// busiest group and its busiest CPU, pull tasks from it, and adapt the domain's
    /// interval and failure count. A periodic balance of the LLC domain also sets the
    /// LLC's SIS_UTIL scan depth (`update_idle_cpu_scan`). Returns whether tasks moved
    /// and whether upper domains should be balanced too.
    fn load_balance(&mut self, cpu: u32, level: usize, idle: IdleType) -> (bool, bool) {
        let cd = self.dom.per_cpu[cpu as usize][level].clone();
        let d = &self.dom.domains[cd.domain as usize];
        let has_parent = level + 1 < self.dom.per_cpu[cpu as usize].len();
        if !self.should_we_balance(cpu, &d.groups[cd.local as usize].cpus, idle) {
            return (false, false);
        }
        let sds = self.update_sd_lb_stats(d, cd.local as usize);
        let llc = self.dom.llc[cpu as usize] as usize;
        if idle != IdleType::NewlyIdle && d.weight as usize == self.dom.llc_cpus[llc].len() {
            self.nr_idle_scan[llc] = idle_cpu_scan(sds.sum_util, d.weight, d.imbalance_pct);
        }
        let found = self.find_busiest_group(d, &sds, idle).and_then(|imb| {
            let src = self.find_busiest_queue(&d.groups[imb.group].cpus, imb.migration, imb.amount)?;
            Some((imb, src))
        });
        let unit = d.unit as usize;
        let min_interval = d.min_interval_ms();
        let Some((imb, src)) = found else {
            // Balanced: the parent's view of this span is no longer imbalanced.
            if has_parent {
                self.group_imbalance[unit] = false;
            }
            self.balanced(cpu, level, idle, false);
            return (false, true);
        };
        let (moved, all_pinned, some_pinned) = if self.rqs[src as usize].nr_running > 1 {
            self.detach_tasks(src, cpu, level, idle, imb)
        } else {
            (0, false, false)
        };
        if some_pinned && has_parent {
            self.group_imbalance[unit] = true;
        }
        if all_pinned {
            self.balanced(cpu, level, idle, true);
            return (false, true);
        }
        let cd = &mut self.dom.per_cpu[cpu as usize][level];
        if moved == 0 {
            if idle != IdleType::NewlyIdle {
                cd.nr_balance_failed += 1;
            }
        } else {
            cd.nr_balance_failed = 0;
        }
        cd.interval_ms = min_interval;
        (moved > 0, true)
    }

    /// The end of a balance that found nothing to move (`out_balanced`,
    /// `out_all_pinned`): failures reset, and unless newly idle the interval doubles, up
    /// to `max_interval` (twice the weight) or, when everything was pinned, 512 ms.
    fn balanced(&mut self, cpu: u32, level: usize, idle: IdleType, all_pinned: bool) {
        let cd = &mut self.dom.per_cpu[cpu as usize][level];
        let max_interval = 2 * self.dom.domains[cd.domain as usize].min_interval_ms();
        cd.nr_balance_failed = 0;
        if idle != IdleType::NewlyIdle
            && ((all_pinned && cd.interval_ms < MAX_PINNED_INTERVAL_MS) || cd.interval_ms < max_interval)
        {
            cd.interval_ms *= 2;
        }
    }

    /// `update_sd_lb_stats`: the statistics of every group of `d`, keeping the local
    /// group's (the one at `local_idx`) and the busiest other's, and the domain's totals.
    fn update_sd_lb_stats(&self, d: &Domain, local_idx: usize) -> DomainStats {
        let mut sds = DomainStats {
            local: GroupStats::default(),
            busiest: None,
            total_load: 0,
            total_capacity: 0,
            sum_util: 0,
        };
        for (i, g) in d.groups.iter().enumerate() {
            let s = self.group_stats(g, d.imbalance_pct, self.group_imbalance[g.unit as usize], None);
            sds.total_load += s.load;
            sds.total_capacity += s.capacity();
            sds.sum_util += s.util;
            if i == local_idx {
                sds.local = s;
            } else if self.pick_busiest(d, &s, sds.busiest.as_ref()) {
                sds.busiest = Some((i, s));
            }
        }
        sds
    }

    /// `sched_balance_find_src_group` (was `find_busiest_group`) with
    /// `calculate_imbalance`: the busiest group other than the local one, and how much
    /// to move from it, or `None` when the domain is balanced enough.
    fn find_busiest_group(&self, d: &Domain, sds: &DomainStats, idle: IdleType) -> Option<Imbalance> {
        let pct = d.imbalance_pct;
        let local = sds.local;
        let (group, busiest) = sds.busiest?;
        let avg_load = sds.total_load * CAPACITY / sds.total_capacity.max(1);
        let force = |migration, amount| Some(Imbalance { group, migration, amount });
        if busiest.group_type != GroupType::Imbalanced {
            if local.group_type > busiest.group_type {
                return None;
            }
            if local.group_type == GroupType::Overloaded
                && (local.avg_load >= busiest.avg_load
                    || local.avg_load >= avg_load
                    || 100 * busiest.avg_load <= pct * local.avg_load)
            {
                return None;
            }
            let sibling = d.prefer_sibling
                && local.group_type == GroupType::HasSpare
                && sibling_imbalance(idle, &busiest, &local) > 1;
            if !sibling && busiest.group_type != GroupType::Overloaded {
                if idle == IdleType::NotIdle {
                    return None;
                }
                if busiest.weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                    return None;
                }
                if busiest.h_nr_running == 1 {
                    return None;
                }
            }
        }
        // calculate_imbalance
        if busiest.group_type == GroupType::Imbalanced {
            return force(Migration::Task, 1);
        }
        if local.group_type == GroupType::HasSpare {
            if busiest.group_type > GroupType::FullyBusy && !d.shares_llc() {
                let spare = local.capacity().max(local.util) - local.util;
                if idle != IdleType::NotIdle && spare == 0 {
                    return force(Migration::Task, 1);
                }
                return (spare > 0).then_some(Imbalance { group, migration: Migration::Util, amount: spare });
            }
            let mut imbalance = if busiest.weight == 1 || d.prefer_sibling {
                sibling_imbalance(idle, &busiest, &local)
            } else {
                local.idle_cpus.saturating_sub(busiest.idle_cpus)
            };
            if d.numa() {
                imbalance = adjust_numa_imbalance(imbalance, local.nr_running + 1, d.imb_numa_nr);
            }
            imbalance >>= 1;
            return (imbalance > 0).then(|| Imbalance {
                group,
                migration: Migration::Task,
                amount: u64::from(imbalance),
            });
        }
        let local_avg = if local.group_type < GroupType::Overloaded {
            let local_avg = local.load_per_capacity();
            if local_avg >= busiest.avg_load || local_avg >= avg_load {
                return None;
            }
            local_avg
        } else {
            local.avg_load
        };
        let amount = ((busiest.avg_load.saturating_sub(avg_load)) * busiest.capacity())
            .min(avg_load.saturating_sub(local_avg) * local.capacity())
            / CAPACITY;
        (amount > 0).then_some(Imbalance { group, migration: Migration::Load, amount })
    }

    /// `update_sd_pick_busiest`: whether `s` is busier than the busiest so far. A group
    /// without fair tasks never is; a worse group type wins; within a type, overloaded
    /// groups compare their average load, fully busy ones too (an SMT group keeps a tie),
    /// groups with spare capacity their idle CPUs, then their tasks; the first
    /// imbalanced group stays.
    fn pick_busiest(&self, d: &Domain, s: &GroupStats, busiest: Option<&(usize, GroupStats)>) -> bool {
        if s.h_nr_running == 0 {
            return false;
        }
        let Some((bi, b)) = busiest else { return true };
        if s.group_type != b.group_type {
            return s.group_type > b.group_type;
        }
        match s.group_type {
            GroupType::Overloaded => s.avg_load > b.avg_load,
            GroupType::Imbalanced => false,
            GroupType::FullyBusy => {
                s.avg_load > b.avg_load
                    || (s.avg_load == b.avg_load && d.groups[*bi].cores == d.groups[*bi].cpus.len() as u32)
            }
            GroupType::HasSpare => {
                s.idle_cpus < b.idle_cpus || (s.idle_cpus == b.idle_cpus && s.nr_running > b.nr_running)
            }
        }
    }

    /// `sched_balance_find_src_rq` (was `find_busiest_queue`): among the group's CPUs with
    /// runnable (not delayed) fair tasks, the busiest in what the imbalance counts: the
    /// most load (`cpu_load`; a CPU whose single task outweighs the imbalance is
    /// skipped), the most utilization (`cpu_util_cfs_boost`, among CPUs with more than
    /// one task), or the most tasks. A CPU of zero load or utilization is never the
    /// busiest.
    fn find_busiest_queue(&self, cpus: &[u32], migration: Migration, imbalance: u64) -> Option<u32> {
        let (mut busiest, mut most) = (None, 0);
        for &c in cpus {
            let nr = self.h_nr_runnable(c);
            if nr == 0 {
                continue;
            }
            let key = match migration {
                Migration::Load => {
                    let load = self.cpu_load(c);
                    if nr == 1 && load > imbalance {
                        continue;
                    }
                    load
                }
                Migration::Util => {
                    if nr <= 1 {
                        continue;
                    }
                    self.cpu_util(c, true)
                }
                Migration::Task => u64::from(nr),
            };
            if key > most {
                (busiest, most) = (Some(c), key);
            }
        }
        busiest
    }

    /// `detach_tasks` + `attach_tasks`: moves queued fair tasks of `src`, least recently
    /// queued first, to `dst` while the imbalance lasts (one task when newly idle; at
    /// most `sysctl_sched_nr_migrate`; never the last task of `src` when `dst` is idle).
    /// A task counts its load (`task_h_load`, at least 1) or its utilization
    /// (`task_util_est`), shifted right by the failures so far (`shr_bound`) when compared
    /// with what is left to move, or one task. Returns how many moved, whether every task
    /// was pinned away from `dst`, and whether some were.
    fn detach_tasks(
        &mut self,
        src: u32,
        dst: u32,
        level: usize,
        idle: IdleType,
        imb: Imbalance,
    ) -> (u32, bool, bool) {
        let failed = self.dom.per_cpu[dst as usize][level].nr_balance_failed;
        let domain = self.dom.per_cpu[dst as usize][level].domain;
        let mut left = imb.amount;
        let (mut moved, mut all_pinned, mut some_pinned) = (0, true, false);
        let candidates = self.queued_tasks(src, NR_MIGRATE.min(self.rqs[src as usize].nr_running as usize));
        for p in candidates {
            if idle != IdleType::NotIdle && self.rqs[src as usize].nr_running <= 1 {
                break;
            }
            if !self.tasks[p as usize].allowed(dst) {
                some_pinned = true;
                continue;
            }
            all_pinned = false;
            if !self.can_migrate(p, domain, failed) {
                continue;
            }
            let cost = match imb.migration {
                Migration::Load => self.task_h_load(p).max(1),
                Migration::Util => self.ents[p].avg.task_util_est(),
                Migration::Task => 1,
            };
            let shifted = if imb.migration == Migration::Task { cost } else { cost >> failed.min(63) };
            if shifted > left {
                continue;
            }
            self.migrate_queued(p, dst);
            moved += 1;
            left -= cost.min(left);
            if idle == IdleType::NewlyIdle || left == 0 {
                break;
            }
        }
        (moved, all_pinned, some_pinned)
    }

    /// `can_migrate_task` for an allowed queued task: it waits for the CPU (not a blocked
    /// task kept queued by SWAP), and it is not cache-hot — it last ran more than
    /// `migration_cost_ns` ago, or it is SCHED_IDLE, or the domain is an SMT core's — unless
    /// balancing failed more than `cache_nice_tries` times.
    fn can_migrate(&self, pid: u32, domain: u32, failed: u32) -> bool {
        let t = &self.tasks[pid as usize];
        if t.state != State::Runnable {
            return false;
        }
        let d = &self.dom.domains[domain as usize];
        let hot = !d.shares_capacity()
            && !self.ents[pid].is_idle_policy()
            && t.last_ran > 0
            && self.now.saturating_sub(t.last_ran) < self.t.migration_cost_ns;
        !hot || failed > d.cache_nice_tries
    }

    /// `pull_rt_task`: takes the highest-priority queued RT task elsewhere that would
    /// run here ahead of what this CPU runs (nothing to scan without runnable RT tasks).
    /// A CPU whose real-time tasks may not run (throttled, or its fair server running)
    /// neither pulls nor is pulled from: the kernel pulls only a task that waits behind a
    /// higher-priority one running (`p->prio < src_rq->curr->prio` is skipped), and a
    /// throttled CPU's balancing after its real-time task stops finds that task still
    /// queued (`balance_rt` pulls only when it left).
    fn pull_rt(&mut self, cpu: u32) -> bool {
        if self.rt_runnable == 0 || !self.rt_may_run(cpu) {
            return false;
        }
        let here = self.cpu_prio(cpu);
        let mut best: Option<(u32, u8)> = None;
        for c in (0..self.cpus).filter(|&c| c != cpu && self.rt_may_run(c)) {
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
        let target = self.tasks[p as usize]
            .affinity
            .iter()
            .filter(|&c| c != cpu && self.cpu_prio(c) < 1 + u32::from(prio))
            .min_by_key(|&c| self.cpu_prio(c));
        if let Some(c) = target {
            self.migrate_queued(p, c);
        }
    }
}

/// Whether group `s` is idler than `best` (`update_pick_idlest`): a lower group type;
/// within one, less average load when busy, more idle CPUs (then less utilization)
/// with spare capacity.
fn idlier(s: &GroupStats, best: &GroupStats) -> bool {
    if s.group_type != best.group_type {
        return s.group_type < best.group_type;
    }
    match s.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load < best.avg_load,
        GroupType::Imbalanced => false,
        GroupType::HasSpare => {
            s.idle_cpus > best.idle_cpus || (s.idle_cpus == best.idle_cpus && s.util < best.util)
        }
    }
}

/// `update_idle_cpu_scan`: SIS_UTIL's scan depth for an LLC of `weight` CPUs whose
/// utilization sums to `sum_util`. With x the utilization per CPU (of 1024), the share
/// of the CPUs to scan is `1 − x²·pct²/10⁴` (in units of 1024): all of them when idle,
/// none from `100/pct` busy (85 % at the LLC's `imbalance_pct` 117, where a group counts
/// as overloaded).
fn idle_cpu_scan(sum_util: u64, weight: u32, pct: u64) -> u32 {
    let x = sum_util / u64::from(weight);
    let tmp = (x * x * pct * pct / (10_000 * CAPACITY)).min(CAPACITY);
    ((CAPACITY - tmp) * u64::from(weight) / CAPACITY) as u32
}

/// `sibling_imbalance`: tasks to move so that both groups run as many tasks per core
/// (or simply as many tasks with equally many cores); 2 to fill an empty local group.
fn sibling_imbalance(idle: IdleType, busiest: &GroupStats, local: &GroupStats) -> u32 {
    if idle == IdleType::NotIdle || busiest.nr_running == 0 {
        return 0;
    }
    let (nb, nl) = (busiest.cores, local.cores);
    if nb == nl {
        return busiest.nr_running.saturating_sub(local.nr_running);
    }
    let imbalance = (nl * busiest.nr_running).saturating_sub(nb * local.nr_running);
    let imbalance = (2 * imbalance + nl + nb) / (nl + nb);
    if imbalance <= 1 && local.nr_running == 0 && busiest.nr_running > 1 {
        2
    } else {
        imbalance
    }
}

/// `adjust_numa_imbalance`: below `imb_numa_nr` tasks on the destination, an imbalance
/// of up to two tasks is allowed (communicating pairs stay on one node).
fn adjust_numa_imbalance(imbalance: u32, dst_running: u32, imb_numa_nr: u32) -> u32 {
    if dst_running > imb_numa_nr || imbalance > NUMA_IMBALANCE_MIN {
        imbalance
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::Eevdf;
    use crate::{tunable_scale, FairFlavor, Hooks, Op, Program, SimConfig, TaskSpec, Workload};

    const MS: u64 = 1_000_000;

    #[test]
    fn a_cpu_of_sleepers_keeps_their_load_while_nothing_is_queued() {
        // CPU 0: two hogs. CPU 1: four tasks that run 0.2 ms and sleep 1.8 ms, one after
        // the other (they settle 0.2 ms apart): CPU 1 runs 0.8 ms of every 2 ms and is
        // idle from about 201.0 to 202.2 ms. All pinned.
        let mut w = Workload::default();
        let hog = w.add_program(Program::new("hog").op(Op::Compute(1000 * MS)));
        let sleeper = w.add_program(
            Program::new("sleeper").repeat(0, |p| p.op(Op::Compute(MS / 5)).op(Op::Sleep(9 * MS / 5))),
        );
        for _ in 0..2 {
            w.tasks.push(TaskSpec { affinity: Some(vec![0]), ..TaskSpec::new("hog", hog) });
        }
        for _ in 0..4 {
            w.tasks.push(TaskSpec { affinity: Some(vec![1]), ..TaskSpec::new("sleeper", sleeper) });
        }
        w.duration_ns = Some(201 * MS + MS / 2);
        let config = SimConfig::new(2, FairFlavor::Eevdf);
        let mut e =
            Engine::new(&w, &config, Eevdf::new(&config.tunables, tunable_scale(2)), Hooks::default())
                .expect("a valid workload");
        e.advance().expect("runs");

        // Instantaneously CPU 1 is empty: no task, no queued weight.
        assert_eq!((e.rqs[1].nr_running, e.cfs[1].fair.load), (0, 0));
        // Its averages still hold the sleepers: each was queued (and ran) 10 % of the
        // time, 0.1 × 1024 = 102 (a little more with its system calls), four of them.
        for p in 3..=6 {
            let a = &e.ents[p as u32].avg;
            assert!((100..=125).contains(&a.load_avg), "sleeper {p}: {a:?}");
        }
        assert!((400..=500).contains(&e.cpu_load(1)), "load {}", e.cpu_load(1));
        assert!((400..=450).contains(&e.cpu_util(1, false)), "util {}", e.cpu_util(1, false));
        // CPU 0's two hogs: a load of two nice-0 tasks, always runnable, one running.
        assert_eq!(e.cpu_load(0), 2048);
        assert!(e.cpu_util(0, false) >= 1000 && e.cpu_runnable(0) >= 2000);

        // The balancer of the machine's one domain sees CPU 1's group with that load and
        // utilization, not an empty CPU.
        let d = &e.dom.domains[0];
        let sds = e.update_sd_lb_stats(d, 1);
        assert_eq!(
            (sds.local.load, sds.local.util, sds.local.nr_running),
            (e.cpu_load(1), e.cpu_util(1, false), 0)
        );
        assert_eq!(sds.total_load, 2048 + e.cpu_load(1));
        // And SIS_UTIL scans nothing: about (1019 + 419)/2 = 719 per CPU leaves
        // (1024 − 691)/1024 of the 2 CPUs to scan, none once rounded down
        // (`idle_cpu_scan`), where one busy CPU of two (512 per CPU), as the instantaneous
        // view had it, would scan one.
        assert!(sds.sum_util > 1400, "{}", sds.sum_util);
        assert_eq!(e.nr_idle_scan[0], 0);
    }

    #[test]
    fn sis_util_scans_fewer_cpus_as_the_llc_fills() {
        // x = util per CPU; share scanned = 1 − x²·117²/(10⁴·1024²).
        assert_eq!(idle_cpu_scan(0, 16, 117), 16);
        // x = 512: 512²·13689/10240000 = 350 → (1024 − 350)·2/1024 = 1.3.
        assert_eq!(idle_cpu_scan(1024, 2, 117), 1);
        // x = 719: 691 → (1024 − 691)·2/1024 = 0.65.
        assert_eq!(idle_cpu_scan(1438, 2, 117), 0);
        // 85 % busy (x = 875 > 1024·100/117) scans nothing, even on a big LLC; 68 %
        // (x = 700: 655) scans (1024 − 655)·64/1024 = 23 CPUs.
        assert_eq!(idle_cpu_scan(875 * 64, 64, 117), 0);
        assert_eq!(idle_cpu_scan(700 * 64, 64, 117), 23);
    }
}

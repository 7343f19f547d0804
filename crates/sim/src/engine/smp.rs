//! SMP: where a task goes when it wakes or starts, and load balancing over the sched
//! domains (periodic, on behalf of idle CPUs by one of them, and when a CPU is about to
//! go idle), as Linux 6.18's `kernel/sched/fair.c` does it. Affinity is always
//! respected.
//!
//! The kernel's per-entity load tracking (PELT) is not modelled: where it reads a
//! decayed average, this reads the instantaneous value — a CPU's load is the sum of its
//! queued fair weights, its utilization is full while it runs something and zero while
//! idle, its runnable sum is its task count times full capacity. Capacities are all
//! equal (`SCHED_CAPACITY_SCALE`); there is no energy-aware placement, asymmetric
//! packing, misfit or SMT-balance group type, NUMA balancing or active balancing.

use schedlab_model::Ns;

use super::domains::Domain;
use super::task::State;
use super::Engine;
use crate::class::FairClass;

/// `SCHED_CAPACITY_SCALE`: the capacity of one CPU, and a busy CPU's utilization.
const CAPACITY: u64 = 1024;
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
    /// Fair load (weights).
    Load,
    /// Utilization (a task counts as one full CPU).
    Util,
    /// Tasks.
    Task,
}

/// `struct sg_lb_stats`, from instantaneous values.
#[derive(Clone, Copy, Debug, Default)]
struct GroupStats {
    load: u64,
    nr_running: u32,
    h_nr_running: u32,
    idle_cpus: u32,
    busy_cpus: u32,
    weight: u32,
    cores: u32,
    group_type: GroupType,
    avg_load: u64,
}

impl GroupStats {
    fn capacity(&self) -> u64 {
        u64::from(self.weight) * CAPACITY
    }

    fn util(&self) -> u64 {
        u64::from(self.busy_cpus) * CAPACITY
    }

    fn runnable(&self) -> u64 {
        u64::from(self.nr_running) * CAPACITY
    }

    /// `group_is_overloaded`: more tasks than CPUs, and the CPUs are (nearly) full.
    fn overloaded(&self, pct: u64) -> bool {
        self.nr_running > self.weight
            && (self.capacity() * 100 < self.util() * pct || self.capacity() * pct < self.runnable() * 100)
    }

    /// `group_has_capacity`.
    fn has_capacity(&self, pct: u64) -> bool {
        self.nr_running < self.weight
            || (self.capacity() * pct >= self.runnable() * 100 && self.capacity() * 100 > self.util() * pct)
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
            self.avg_load = self.load * CAPACITY / self.capacity();
        }
    }
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

    fn jiffies(&self) -> u64 {
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
        let fair = u32::from(rq.fair.nr_running > 0);
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
            if let Some(d) = shared {
                target = self.wake_affine(d, this, prev, sync);
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
    /// whose waker is alone on `this` gives `this`; an idle `prev` gives `prev`.
    /// WA_WEIGHT compares the loads: `this` (less the waker's weight when sync) against
    /// `prev`, biased to `prev` by half the domain's imbalance percentage. The wakee's own
    /// weight is in neither instantaneous load, so it is not subtracted from `prev`'s.
    fn wake_affine(&self, d: &Domain, this: u32, prev: u32, sync: bool) -> u32 {
        let idle = |c: u32| self.cpu_idle(c);
        let wa_idle = if idle(this) && self.dom.share_cache(this, prev) {
            Some(if idle(prev) { prev } else { this })
        } else if sync && self.rqs[this as usize].nr_running == 1 {
            Some(this)
        } else if idle(prev) {
            Some(prev)
        } else {
            None
        };
        let target = wa_idle.unwrap_or_else(|| {
            let mut this_load = self.rqs[this as usize].fair.load as i128;
            if sync {
                let current = self.rqs[this as usize].curr;
                let current_load =
                    if current == 0 { 0 } else { self.ents[current as usize].load.weight as i128 };
                if current_load > this_load {
                    return this;
                }
                this_load -= current_load;
            }
            let this_eff = this_load * 100;
            let mut prev_eff =
                self.rqs[prev as usize].fair.load as i128 * (100 + (d.imbalance_pct as i128 - 100) / 2);
            if sync {
                prev_eff += 1;
            }
            if this_eff < prev_eff {
                this
            } else {
                prev
            }
        });
        if target == this {
            this
        } else {
            prev
        }
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

    /// `select_idle_cpu`: scans the LLC's allowed CPUs after `target` (wrapping). When
    /// the LLC may have an idle core, the first core whose threads are all idle wins (an
    /// idle thread of a busy core is kept as the fallback) and the scan is unbounded; if
    /// no core was idle the LLC's hint is cleared. Otherwise the first idle CPU wins,
    /// within the SIS_UTIL bound ([`Self::nr_idle_scan`]).
    fn select_idle_cpu(&mut self, pid: u32, llc: u32, has_idle_core: bool, target: u32) -> Option<u32> {
        let mut nr = if has_idle_core { u32::MAX } else { self.nr_idle_scan(llc) + 1 };
        if nr == 1 {
            return None;
        }
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

    /// SIS_UTIL's `nr_idle_scan` for an LLC: with x its utilization per CPU, the share
    /// of its CPUs to scan is `1 − x²·pct²/10⁴` (pct = 117), nothing at 85 % busy. The
    /// kernel computes it at each periodic balance of the LLC domain; this computes it
    /// from the LLC's busy CPUs now.
    fn nr_idle_scan(&self, llc: u32) -> u32 {
        let weight = self.dom.llc_cpus[llc as usize].len() as u64;
        let x = u64::from(self.llc_busy[llc as usize]) * CAPACITY / weight;
        let tmp = (x * x * 117 * 117 / (10_000 * CAPACITY)).min(CAPACITY);
        ((CAPACITY - tmp) * weight / CAPACITY) as u32
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

    /// The statistics of the CPUs `cpus` (`update_sg_lb_stats`), classified.
    fn group_stats(&self, cpus: &[u32], cores: u32, pct: u64, imbalanced: bool) -> GroupStats {
        let mut s = GroupStats { weight: cpus.len() as u32, cores, ..GroupStats::default() };
        for &c in cpus {
            let rq = &self.rqs[c as usize];
            s.load += rq.fair.load;
            s.nr_running += rq.nr_running;
            s.h_nr_running += rq.fair.nr_running;
            if rq.nr_running == 0 {
                s.idle_cpus += 1;
            } else {
                s.busy_cpus += 1;
            }
        }
        s.classify(pct, imbalanced);
        s
    }

    /// `sched_balance_find_dst_group` (was `find_idlest_group`): the least busy group
    /// holding an allowed CPU, or `None` when the local group (holding `this`) should
    /// keep the task.
    fn find_idlest_group(&self, d: &Domain, pid: u32, this: u32) -> Option<usize> {
        let aff = &self.tasks[pid as usize].affinity;
        let mut local: Option<GroupStats> = None;
        let mut idlest: Option<(usize, GroupStats)> = None;
        for (i, g) in d.groups.iter().enumerate() {
            if !g.cpus.iter().any(|&c| aff.contains(c)) {
                continue;
            }
            let s = self.group_stats(&g.cpus, g.cores, d.imbalance_pct, false);
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
                let local_avg = local.load * CAPACITY / local.capacity();
                let idlest_avg = idlest.load * CAPACITY / idlest.capacity();
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
    /// shallow here, and CPUs that never ran tie, the lowest winning), else the least
    /// loaded allowed CPU, else `this`.
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
            } else if idle.is_none() && least.is_none_or(|(_, load)| rq.fair.load < load) {
                least = Some((c, rq.fair.load));
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

    /// `nohz_balancer_kick`: a busy CPU's tick wakes the first idle CPU to balance for
    /// every idle CPU (whose ticks are stopped) when the idle balance is due and this CPU
    /// has a task to spare or its LLC more than one busy CPU.
    fn nohz_balancer_kick(&mut self, cpu: u32) {
        if self.cpu_idle(cpu) || self.idle.is_empty() || self.jiffies() < self.nohz_next_balance {
            return;
        }
        let llc = self.dom.llc[cpu as usize];
        if self.rqs[cpu as usize].nr_running >= 2 || self.llc_busy[llc as usize] > 1 {
            let ilb = self.idle.first().expect("not empty");
            self.nohz_idle_balance(ilb);
        }
    }

    /// `_nohz_idle_balance`: `ilb` balances, for each idle CPU from the one after it
    /// (itself last) whose balance is due, that CPU's domains as if it were balancing;
    /// a CPU that pulled a task is rescheduled.
    fn nohz_idle_balance(&mut self, ilb: u32) {
        let jiffies = self.jiffies();
        let mut next = jiffies + 60 * self.t.hz;
        let idle: Vec<u32> = self.idle.iter().collect();
        let start = idle.partition_point(|&c| c <= ilb);
        for i in 0..idle.len() {
            let c = idle[(start + i) % idle.len()];
            if !self.cpu_idle(c) {
                continue;
            }
            if jiffies >= self.rqs[c as usize].next_balance {
                self.pull_rt(c);
                self.rebalance_domains(c, IdleType::Idle);
                if !self.cpu_idle(c) {
                    self.resched(c);
                }
            }
            next = next.min(self.rqs[c as usize].next_balance);
        }
        self.nohz_next_balance = next;
    }

    /// `sched_balance_newidle`: `cpu` found nothing to run. Real-time tasks are pulled
    /// first; then, when some CPU has more than one task (the root domain's overload
    /// flag), the domains bottom-up for as long as the CPU expects to stay idle
    /// (`avg_idle`) longer than their balancing costs, until a task is pulled.
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
        if self.overloaded_cpus == 0 {
            return false;
        }
        let avg_idle = self.rqs[cpu as usize].avg_idle;
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
    /// interval and failure count. Returns whether tasks moved and whether upper domains
    /// should be balanced too.
    fn load_balance(&mut self, cpu: u32, level: usize, idle: IdleType) -> (bool, bool) {
        let cd = self.dom.per_cpu[cpu as usize][level].clone();
        let d = &self.dom.domains[cd.domain as usize];
        let has_parent = level + 1 < self.dom.per_cpu[cpu as usize].len();
        if !self.should_we_balance(cpu, &d.groups[cd.local as usize].cpus, idle) {
            return (false, false);
        }
        let found = self.find_busiest_group(d, cd.local as usize, idle).and_then(|imb| {
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

    /// `sched_balance_find_src_group` (was `find_busiest_group`) with
    /// `calculate_imbalance`: the busiest group other than the local one, and how much
    /// to move from it, or `None` when the domain is balanced enough.
    fn find_busiest_group(&self, d: &Domain, local_idx: usize, idle: IdleType) -> Option<Imbalance> {
        let pct = d.imbalance_pct;
        let mut local = GroupStats::default();
        let mut busiest: Option<(usize, GroupStats)> = None;
        let (mut total_load, mut total_capacity) = (0u64, 0u64);
        for (i, g) in d.groups.iter().enumerate() {
            let s = self.group_stats(&g.cpus, g.cores, pct, self.group_imbalance[g.unit as usize]);
            total_load += s.load;
            total_capacity += s.capacity();
            if i == local_idx {
                local = s;
                continue;
            }
            if self.pick_busiest(d, &s, busiest.as_ref()) {
                busiest = Some((i, s));
            }
        }
        let (group, busiest) = busiest?;
        let avg_load = total_load * CAPACITY / total_capacity.max(1);
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
                let spare = local.capacity().max(local.util()) - local.util();
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
            let local_avg = local.load * CAPACITY / local.capacity();
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

    /// `sched_balance_find_src_rq` (was `find_busiest_queue`): the CPU of the group with
    /// fair tasks that is busiest in what the imbalance counts — the most load (a CPU
    /// whose single task outweighs the imbalance is skipped), the most tasks, or (for
    /// utilization) the first with more than one task.
    fn find_busiest_queue(&self, cpus: &[u32], migration: Migration, imbalance: u64) -> Option<u32> {
        let mut best: Option<(u32, u64)> = None;
        for &c in cpus {
            let rq = &self.rqs[c as usize];
            if rq.fair.nr_running == 0 {
                continue;
            }
            let key = match migration {
                Migration::Load => {
                    if rq.nr_running == 1 && rq.fair.load > imbalance {
                        continue;
                    }
                    rq.fair.load
                }
                Migration::Util => {
                    if rq.nr_running <= 1 {
                        continue;
                    }
                    CAPACITY
                }
                Migration::Task => u64::from(rq.fair.nr_running),
            };
            if best.is_none_or(|(_, k)| key > k) {
                best = Some((c, key));
            }
        }
        best.map(|(c, _)| c)
    }

    /// `detach_tasks` + `attach_tasks`: moves queued fair tasks of `src`, least recently
    /// queued first, to `dst` while the imbalance lasts (one task when newly idle; at
    /// most `sysctl_sched_nr_migrate`; never the last task of `src` when `dst` is idle).
    /// A task's load counts shifted right by the failures so far (`shr_bound`), its
    /// utilization as one full CPU. Returns how many moved, whether every task was pinned
    /// away from `dst`, and whether some were.
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
        let candidates: Vec<u32> = self.rqs[src as usize]
            .fair
            .queued()
            .rev()
            .take(NR_MIGRATE.min(self.rqs[src as usize].nr_running as usize))
            .collect();
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
                Migration::Load => self.ents[p as usize].load.weight,
                Migration::Util => CAPACITY,
                Migration::Task => 1,
            };
            let shifted = if imb.migration == Migration::Load { cost >> failed.min(63) } else { cost };
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
            && !self.ents[pid as usize].is_idle_policy()
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
/// within one, less average load when busy, more idle CPUs (then fewer tasks) with
/// spare capacity.
fn idlier(s: &GroupStats, best: &GroupStats) -> bool {
    if s.group_type != best.group_type {
        return s.group_type < best.group_type;
    }
    match s.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => {
            s.load * CAPACITY / s.capacity() < best.load * CAPACITY / best.capacity()
        }
        GroupType::Imbalanced => false,
        GroupType::HasSpare => {
            s.idle_cpus > best.idle_cpus || (s.idle_cpus == best.idle_cpus && s.busy_cpus < best.busy_cpus)
        }
    }
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

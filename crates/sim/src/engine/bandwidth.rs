//! What keeps real-time tasks from starving the rest, as Linux 6.18 does it with
//! `CONFIG_RT_GROUP_SCHED` (this machine): RT throttling of each CPU's root `rt_rq`
//! ([`crate::class::RtRq::charge`]) with one period timer for all CPUs, and the
//! deferred fair server of each CPU ([`crate::class::FairServer`]).
//!
//! Both only matter where real-time tasks run: a workload that has none (no task starts
//! real-time and no program sets a real-time policy) gets neither, and pays nothing for
//! them. The server's zero-laxity timer is queued only while a real-time task runs on
//! its CPU, the only time its instant can come closer.

use schedlab_model::Ns;

use super::task::State;
use super::{Engine, Item};
use crate::class::{Charge, FairClass, Fire, ServerParams, ServerState};

/// The throttling and server settings of a run.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Bandwidth {
    /// Real-time runtime per period, when throttling applies (`sched_rt_runtime_ns`
    /// below the period, not -1).
    pub rt_runtime: Option<Ns>,
    pub rt_period: Ns,
    /// The period timer is queued (`rt_b->rt_period_active`).
    pub rt_period_active: bool,
    /// The fair server's budget and period, when it applies (a runtime above 0).
    pub server: Option<ServerParams>,
}

impl Bandwidth {
    /// The settings for a run whose tasks may (`rt`) or may not become real-time.
    pub fn new(t: &crate::config::Tunables, rt: bool) -> Self {
        let rt_runtime = t.sched_rt_runtime_ns.filter(|&r| rt && r < t.sched_rt_period_ns);
        let server = (rt && t.fair_server_runtime_ns > 0)
            .then_some(ServerParams { runtime: t.fair_server_runtime_ns, period: t.fair_server_period_ns });
        Bandwidth { rt_runtime, rt_period: t.sched_rt_period_ns, rt_period_active: false, server }
    }
}

impl<F: FairClass> Engine<'_, F> {
    /// Whether the real-time tasks of `cpu` may be picked: neither throttled nor held back
    /// by a running fair server.
    pub(super) fn rt_may_run(&self, cpu: u32) -> bool {
        let rq = &self.rqs[cpu as usize];
        !rq.rt.throttled && rq.server.state != ServerState::Running
    }

    /// A real-time task is queued: the period timer starts if it was idle
    /// (`start_rt_bandwidth`), its periods counted from now.
    pub(super) fn rt_task_queued(&mut self) {
        let bw = &mut self.bw;
        if bw.rt_runtime.is_some() && !bw.rt_period_active {
            bw.rt_period_active = true;
            let at = self.now + bw.rt_period;
            self.push(at, Item::RtPeriod);
        }
    }

    /// Real-time tasks ran `delta` ns on `cpu`: throttled past the runtime.
    pub(super) fn charge_rt(&mut self, cpu: u32, delta: Ns) {
        if let Some(runtime) = self.bw.rt_runtime {
            if self.rqs[cpu as usize].rt.charge(delta, runtime) {
                self.resched(cpu);
            }
        }
    }

    /// `sched_rt_period_timer`: every CPU pays a period's runtime back and the throttled
    /// ones whose debt fits run again. The timer stops when no CPU owes runtime and no
    /// real-time task is runnable.
    pub(super) fn on_rt_period(&mut self) {
        let Some(runtime) = self.bw.rt_runtime else { return };
        let mut busy = self.rt_runnable > 0;
        for cpu in 0..self.cpus {
            let rt = &mut self.rqs[cpu as usize].rt;
            if rt.replenish(runtime) && rt.nr_queued > 0 {
                self.resched(cpu);
            }
            busy |= self.rqs[cpu as usize].rt.owes();
        }
        self.bw.rt_period_active = busy;
        if busy {
            let at = self.now + self.bw.rt_period;
            self.push(at, Item::RtPeriod);
        }
    }

    /// Fair tasks ran `delta` ns on `cpu`: charged to its server.
    pub(super) fn charge_server(&mut self, cpu: u32, delta: Ns) {
        let Some(p) = self.bw.server else { return };
        if self.rqs[cpu as usize].server.charge(self.now, delta, p) == Charge::Spent {
            self.resched(cpu);
        }
    }

    /// `cpu` was idle for `delta` ns (`dl_server_update_idle_time`).
    pub(super) fn server_idle(&mut self, cpu: u32, delta: Ns) {
        if self.bw.server.is_some() {
            self.rqs[cpu as usize].server.idle(delta);
        }
    }

    /// The first fair task was queued on `cpu` (`dl_server_start`); a server that runs at
    /// once takes the CPU from its real-time task.
    pub(super) fn server_start(&mut self, cpu: u32) {
        let Some(p) = self.bw.server else { return };
        let now = self.now;
        if self.rqs[cpu as usize].server.start(now, p) {
            self.resched(cpu);
        } else if self.rt_runs(cpu) {
            self.server_arm(cpu);
        }
    }

    /// The last fair task left `cpu` (`dl_server_stop`).
    pub(super) fn server_stop(&mut self, cpu: u32) {
        if self.bw.server.is_some() {
            self.rqs[cpu as usize].server.stop();
        }
    }

    /// Whether the task the classes picked on `cpu` is a real-time one that is running.
    fn rt_runs(&self, cpu: u32) -> bool {
        let donor = self.rqs[cpu as usize].donor;
        donor != 0 && self.is_rt(donor) && self.tasks[donor as usize].state == State::Running
    }

    /// A real-time task runs on `cpu`: a deferred server's zero-laxity timer is queued.
    pub(super) fn server_arm(&mut self, cpu: u32) {
        let s = &mut self.rqs[cpu as usize].server;
        if s.state == ServerState::Deferred && s.timer.is_none() {
            let at = s.zero_laxity().max(self.now);
            let gen = s.arm();
            self.push(at, Item::ServerTimer { cpu, gen });
        }
    }

    /// `dl_server_timer` on `cpu`: the server runs, or waits for its new instant.
    pub(super) fn on_server_timer(&mut self, cpu: u32, gen: u32) {
        let Some(p) = self.bw.server else { return };
        // Charge the fair work done until now before judging the budget.
        self.account(cpu);
        match self.rqs[cpu as usize].server.fire(self.now, gen, p) {
            Some(Fire::Run) => self.resched(cpu),
            Some(Fire::Later(at)) => {
                let gen = self.rqs[cpu as usize].server.arm();
                self.push(at, Item::ServerTimer { cpu, gen });
            }
            None => {}
        }
    }
}

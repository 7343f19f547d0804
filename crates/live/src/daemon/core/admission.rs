//! Taking processes in: those running at start, new ones (exec, fork) once they have
//! lived `min_age_ms`, classified by the rules; the threads watched for boosts; exits.

use std::time::{Duration, Instant};

use schedlab_model::Pid;

use super::{Arrival, Core, Decision, Machine, Outcome, Proc, State};
use crate::daemon::boost::{Ended, Rank};
use crate::daemon::classes::{self, ClassReason};
use crate::daemon::kernel::Kernel;
use crate::daemon::stats;
use crate::process::ProcInfo;

/// The most of one turn of the daemon's loop spent taking in new processes. A boost
/// waits for the turn in progress, and each process taken in costs a few /proc reads
/// (a few hundred µs on a VM), so a burst of them (a build, a benchmark starting its
/// workers) is taken in over several turns rather than in one of many milliseconds.
pub const ADMIT_BUDGET: Duration = Duration::from_micros(300);

impl Core {
    /// Takes in the processes running at start (`pids`): the rules classify them now,
    /// the model later; those that may need their providers boosted are watched. Then
    /// plans.
    pub fn running(&mut self, pids: &[u32], m: &mut dyn Machine) {
        self.wake_at_known_execs(m);
        for &pid in pids {
            self.classify_new(pid, false, m);
            self.watch_if_high(pid, m);
        }
        self.replan(m);
    }

    /// Takes in the new processes (execs and forks) that have lived `min_age_ms`: only
    /// then is /proc read and a class looked up, so that the hundreds of short programs
    /// a build or a shell loop runs a second cost one queue entry each. A process that
    /// exited by then was dropped at its exit
    /// ([`Arrivals`](super::arrivals::Arrivals)); one gone unseen (a lost
    /// record) is dropped at the read; a pid reused since is read as the process it is
    /// now (and waits for its own age before any change). At most [`ADMIT_BUDGET`] of a turn
    /// goes to it; the rest waits for the next turns ([`Core::next_wait`]).
    pub(super) fn admit(&mut self, m: &mut dyn Machine) {
        let now = m.now();
        let min_age = self.min_age();
        while m.now().saturating_duration_since(now) < ADMIT_BUDGET {
            let Some(Arrival { pid, parent, .. }) = self.arrivals.pop_due(now, min_age) else { break };
            match parent {
                Some(parent) => {
                    if let Some(info) = m.process(pid).filter(|i| i.ppid == parent) {
                        self.forked(parent, info, m);
                    }
                }
                None => self.classify_new(pid, true, m),
            }
        }
    }

    /// Whether the oldest new process has lived `min_age_ms` at `now`.
    pub(super) fn admission_due(&self, now: Instant) -> bool {
        self.arrivals.due(now, self.min_age())
    }

    fn min_age(&self) -> Duration {
        Duration::from_millis(self.config.daemon.min_age_ms)
    }

    /// The process of thread `tid`: known, or from the observer, or from /proc.
    pub(super) fn tgid(&mut self, tid: u32, k: &dyn Kernel) -> u32 {
        if let Some(&t) = self.tgids.get(&tid) {
            return t;
        }
        let t = k.task(tid).map(|t| t.tgid).filter(|&t| t != 0).or_else(|| k.tgid(tid)).unwrap_or(tid);
        self.tgids.insert(tid, t);
        t
    }

    /// A process to know of: a new one (exec) or one running at start. Rules classify
    /// it now; the model later.
    pub(super) fn classify_new(&mut self, pid: u32, exec: bool, m: &mut dyn Machine) {
        let Some(info) = m.process(pid) else { return };
        if self.habits.is_some() && !info.exe.is_empty() {
            // Known from its exec already, or (running at start) from /proc: its exit
            // teaches its program.
            self.programs.entry(pid).or_insert_with(|| info.exe.clone());
        }
        // The parent's name, read only when a rule asks for it: a build's jobs arrive by
        // the hundred a second, and the parent's /proc is as many reads again.
        let parent_comm = match self.config.rules.iter().any(|r| r.matches.parent.is_some()) {
            true => m.process(info.ppid).map(|p| p.comm).unwrap_or_default(),
            false => String::new(),
        };
        let matched = classes::by_rules(&self.config, &info, &parent_comm);
        let existing = self.procs.remove(&pid).filter(|p| p.info.start_time == info.start_time);
        let mut p = existing.unwrap_or_else(|| Proc::new(info.clone(), m.now()));
        p.info = info;
        let ours = self.ours_or_init(pid, &p.info);
        if ours || (p.info.kthread && matched.is_none()) {
            p.reason = ClassReason::KernelThread;
            p.state =
                State::Left(if p.info.kthread { "kernel thread" } else { "init or schedlab's own" }.into());
            if !p.info.kthread {
                p.reason = ClassReason::Unclassified { why: p.state_text() };
            }
            self.procs.insert(pid, p);
            return;
        }
        let rule_changed = match (&matched, &p.reason) {
            (Some((_, r)), old) => r != old,
            (None, ClassReason::Rule { .. }) => true,
            _ => false,
        };
        match matched {
            Some((class, reason)) => {
                p.class = Some(class);
                p.reason = reason;
            }
            None if exec || p.class.is_none() => {
                p.first_seen = m.now();
                // The program as its exec named it (the habits' key), else as /proc does.
                let program = self.programs.get(&pid).unwrap_or(&p.info.exe);
                match self.learned_class(program) {
                    Some((class, reason)) => {
                        p.class = Some(class);
                        p.reason = reason;
                    }
                    None => {
                        p.class = None;
                        p.reason = self.unclassified();
                        p.state = State::Left(stats::reason_text(&stats::reason_json(&p.reason)));
                    }
                }
            }
            None => {}
        }
        let unclassified = p.class.is_none() && matched_none(&p.reason);
        self.procs.insert(pid, p);
        // A new process (or one running at start) that runs CPU-bound already is
        // classed now, with learning on.
        if unclassified && self.may_learn(pid) {
            if let Some((class, reason)) = self.busy_class(pid, super::learning::BUSY_WINDOW, m) {
                let p = self.procs.get_mut(&pid).expect("inserted above");
                (p.class, p.reason) = (Some(class), reason);
                self.apply_class(pid, m);
                return;
            }
        }
        if rule_changed || exec {
            // Applied now if it is old enough (a process running at start, a rule
            // that changed), else at the first planning after `min_age_ms`; placed at
            // the next planning, not per exec (a build runs hundreds a second).
            self.apply_class(pid, m);
        }
    }

    /// Why a process no rule matches has no class yet.
    fn unclassified(&self) -> ClassReason {
        match self.model {
            Some(_) => ClassReason::Watching,
            None => ClassReason::Unclassified { why: "no rule matches and the model is off".into() },
        }
    }

    /// A new process above nice 0 (or real time) may need its providers boosted from
    /// its first block: its main thread is watched at once (two system calls, no /proc
    /// read, unlike taking it in).
    /// Kernel threads (kworker/*H run at nice −20), pid 1 and the daemon are not.
    pub(super) fn watch_if_high(&mut self, pid: u32, m: &mut dyn Machine) {
        if self.booster.is_none() || pid == 1 || pid == self.self_pid {
            return;
        }
        if m.rank(Pid(pid)).is_some_and(|r| r.outranks(Rank::Fair { nice: 0 }))
            && m.process(pid).is_some_and(|i| !i.kthread)
        {
            self.mark_urgent(pid, m);
        }
    }

    pub(super) fn mark_urgent(&mut self, tid: u32, m: &mut dyn Machine) {
        if self.urgent.insert(tid) {
            m.enforce(&Decision::Watch { tid, on: true });
        }
    }

    /// A forked child (`info`, not exec'd since) of process `parent`: the child of a
    /// process with a class keeps that class.
    fn forked(&mut self, parent: u32, info: ProcInfo, m: &mut dyn Machine) {
        let child = info.pid;
        let mut p = Proc::new(info, m.now());
        let parent_proc = self.procs.get(&parent);
        let inherit = parent_proc
            .filter(|pp| matches!(pp.state, State::Managed | State::Young))
            .map(|pp| (pp.class.clone(), pp.info.key()));
        match inherit {
            Some((class, parent_key)) => {
                p.class = class;
                p.reason = ClassReason::Inherited { parent };
                p.state = State::Managed;
                let adopt = Decision::Adopt { child: p.info.key(), parent: parent_key };
                if let Outcome::Failed(e) = m.enforce(&adopt) {
                    p.state = State::Left(format!("cannot take over from its parent: {e}"));
                }
                // What it has is what the kernel copied at the fork, which may be from
                // before the parent's own change (a fork right after its exec): the
                // class is applied again below (no-op changes are skipped) and the plan
                // binds it.
            }
            None => {
                p.reason = self.unclassified();
                p.state = State::Left(stats::reason_text(&stats::reason_json(&p.reason)));
            }
        }
        let managed = p.state == State::Managed;
        self.procs.insert(child, p);
        if managed {
            self.apply_class(child, m);
        }
    }

    /// Thread `tid` exited: its boosts end, and if it was a process's main thread, the
    /// process is forgotten.
    pub(super) fn exited(&mut self, tid: Pid, m: &mut dyn Machine) {
        self.blocked.remove(&tid);
        self.lingering.remove(&tid);
        self.end_boost(tid, Ended::Wakeup, m);
        if self.urgent.remove(&tid.0) {
            m.enforce(&Decision::Watch { tid: tid.0, on: false });
        }
        let tgid = self.tgids.remove(&tid.0).unwrap_or(tid.0);
        self.activity.remove(tid);
        self.deps.forget(tid);
        if tgid != tid.0 {
            return;
        }
        self.arrivals.gone(tgid);
        self.programs.remove(&tgid);
        self.forget(tgid, m);
        if let Some(b) = &mut self.booster {
            b.provider_gone(tgid);
        }
        self.raised.remove(&tgid);
        if let Some(s) = &mut self.slices {
            s.forget(tgid);
        }
    }
}

/// Whether `reason` says no rule, habit or model gave the process a class (yet).
fn matched_none(reason: &ClassReason) -> bool {
    matches!(reason, ClassReason::Unclassified { .. } | ClassReason::Watching)
}

impl Core {
    /// Puts right what lost events left wrong (an exit or an exec the ring buffer had no
    /// room for): every thread the core knows that is gone is taken as exited, so that
    /// nothing it held stays; every process of `pids` (all there are) it does not know
    /// arrives now. Returns how many threads were found gone.
    pub fn rescan(&mut self, pids: &[u32], m: &mut dyn Machine) -> usize {
        let mut known: Vec<u32> =
            self.tgids.keys().chain(self.procs.keys()).chain(&self.urgent).copied().collect();
        known.extend(self.blocked.keys().chain(self.lingering.keys()).map(|p| p.0));
        known.sort_unstable();
        known.dedup();
        let gone: Vec<u32> = known
            .into_iter()
            .filter(|&t| match self.procs.get(&t) {
                // A process is gone if its pid is another's now.
                Some(p) => m.start_time(t) != Some(p.info.start_time),
                None => !m.alive(t),
            })
            .collect();
        for &tid in &gone {
            self.exited(Pid(tid), m);
        }
        let now = m.now();
        for &pid in pids {
            if !self.procs.contains_key(&pid) && !self.arrivals.waiting(pid) {
                self.arrivals.push(Arrival { pid, parent: None, seen: now });
            }
        }
        gone.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use schedlab_model::{EventKind, Pid, Policy};

    use super::ADMIT_BUDGET;
    use crate::daemon::core::fake::{FakeMachine, SELF_EXE};
    use crate::daemon::core::{Change, Decision};
    use crate::daemon::kernel::Kernel;
    use crate::daemon::stats::reason_text;

    const MS: Duration = Duration::from_millis(1);
    const S: Duration = Duration::from_secs(1);

    /// The configuration: `my-batch-job` gets nice 10; taken in at once.
    const BATCH: &str = "[[rule]]\nmatch = { comm = \"my-batch-job\" }\nclass = \"batch\"\n\
                         [class.batch]\nnice = 10\n\
                         [daemon]\nmodel = false\nboost = false\nmin_age_ms = 0\n";

    #[test]
    fn the_rules_classify_a_process_at_its_exec() {
        let mut m = FakeMachine::new();
        let mut core = m.core(BATCH, None);
        core.running(&[], &mut m);
        m.spawn(100, "my-batch-job", Duration::ZERO);
        core.events(&[m.exec(100)], &mut m);
        assert_eq!(m.take(), vec![], "taken in at the loop's next turn, not per event");
        core.tick(&mut m);
        assert_eq!(m.take(), vec![m.set(100, Change::Nice(10))]);
        let row = core.explain(100, &m).unwrap().process;
        assert_eq!((row.class.as_deref(), row.state.as_str()), (Some("batch"), "managed"));
        assert_eq!(reason_text(&row.reason), "rule 1: comm=my-batch-job");
    }

    #[test]
    fn a_class_slice_comes_with_its_policy_or_alone_under_the_policy_held() {
        let config = "[[rule]]\nmatch = { comm = \"cc1\" }\nclass = \"build\"\n\
                      [[rule]]\nmatch = { comm = \"game\" }\nclass = \"quick\"\n\
                      [class.build]\nnice = 19\npolicy = \"batch\"\nslice_ms = 100\n\
                      [class.quick]\nslice_ms = 0.5\n[daemon]\nmin_age_ms = 0\nboost = false\n";
        let mut m = FakeMachine::new();
        let mut core = m.core(config, None);
        core.running(&[], &mut m);
        m.spawn(100, "cc1", Duration::ZERO);
        m.spawn(101, "game", Duration::ZERO);
        core.events(&[m.exec(100), m.exec(101)], &mut m);
        core.tick(&mut m);
        let build = Decision::SetClass {
            process: m.key(100),
            nice: 19,
            policy: Policy::Batch,
            priority: 0,
            slice_ns: 100_000_000,
        };
        assert_eq!(m.take(), vec![build, m.set(101, Change::Slice(500_000))]);
        // A nice-19 batch process with the kernel's slice does not hold the class: its
        // slice is set, and only that.
        let settings = &mut m.spawn(102, "cc1", Duration::ZERO).settings;
        (settings.nice, settings.policy) = (19, Policy::Batch);
        core.events(&[m.exec(102)], &mut m);
        core.tick(&mut m);
        let policy = Change::Policy { policy: Policy::Batch, priority: 0, slice_ns: 100_000_000 };
        assert_eq!(m.take(), vec![m.set(102, policy)]);
    }

    #[test]
    fn a_rescan_forgets_what_exited_unseen_and_takes_in_what_started_unseen() {
        let mut m = FakeMachine::new();
        let mut core = m.core(BATCH, None);
        m.spawn(100, "my-batch-job", 10 * S);
        m.spawn(101, "my-batch-job", 10 * S);
        core.running(&[100, 101], &mut m);
        m.take();
        // 101 exits and 102 starts, both events lost; 100's pid stays its own.
        let lost = m.key(101);
        m.processes.remove(&101);
        m.spawn(102, "my-batch-job", Duration::ZERO);
        assert_eq!(core.rescan(&[100, 102], &mut m), 1);
        assert!(core.explain(101, &m).is_none(), "forgotten");
        assert!(m.take().contains(&Decision::Forget { process: lost }));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![m.set(102, Change::Nice(10))], "taken in as if its exec had been seen");
        assert_eq!(core.rescan(&[100, 102], &mut m), 0, "nothing more to put right");
        assert!(m.take().is_empty());
    }

    #[test]
    fn a_process_is_taken_in_only_once_it_has_lived_min_age_ms() {
        let mut m = FakeMachine::new();
        let mut core = m.core(&BATCH.replace("min_age_ms = 0", "min_age_ms = 1000"), None);
        core.running(&[], &mut m);
        m.spawn(100, "my-batch-job", Duration::ZERO);
        m.spawn(101, "my-batch-job", Duration::ZERO);
        core.events(&[m.exec(100), m.exec(101)], &mut m);
        m.advance(300 * MS);
        let exit = m.exit(101);
        core.events(&[exit], &mut m);
        core.tick(&mut m);
        let row = core.explain(100, &m).unwrap().process;
        assert_eq!(row.state, "left alone: new: taken in once it has lived min_age_ms (1000 ms)");
        m.advance(699 * MS);
        core.tick(&mut m);
        assert_eq!(m.take(), vec![], "999 ms old: not yet");
        m.advance(MS);
        core.tick(&mut m);
        assert_eq!(m.take(), vec![m.set(100, Change::Nice(10))], "1 s old: changed; 101 never was");
    }

    #[test]
    fn a_burst_of_new_processes_is_taken_in_over_several_short_turns() {
        let mut m = FakeMachine::new();
        let mut core = m.core(BATCH, None);
        core.running(&[], &mut m);
        // Each process costs one /proc read of 150 µs (itself: no rule asks for its
        // parent's name).
        m.read_cost = Duration::from_micros(150);
        let pids: Vec<u32> = (100..106).collect();
        for &pid in &pids {
            m.spawn(pid, "my-batch-job", Duration::ZERO);
        }
        let execs: Vec<_> = pids.iter().map(|&p| m.exec(p)).collect();
        core.events(&execs, &mut m);
        assert_eq!(core.next_wait(&m), Duration::from_millis(1), "due now: the loop turns at once");
        let mut turns = 0;
        let mut changed = Vec::new();
        while changed.len() < pids.len() {
            let before = m.now();
            core.tick(&mut m);
            let spent = m.now() - before;
            assert!(spent <= ADMIT_BUDGET + Duration::from_micros(200), "turn {turns} took {spent:?}");
            changed.extend(m.take());
            turns += 1;
            assert!(turns <= pids.len(), "no progress");
        }
        assert_eq!(turns, 3, "two processes of 150 µs per turn of 300 µs");
        assert_eq!(changed, pids.iter().map(|&p| m.set(p, Change::Nice(10))).collect::<Vec<_>>());
        assert_eq!(core.next_wait(&m), Duration::from_millis(200), "nothing left to do");
    }

    #[test]
    fn a_child_is_watched_when_the_thread_that_forked_it_is() {
        let mut m = FakeMachine::new();
        let mut core = m.core(
            "[daemon]
model = false
boost = true
min_age_ms = 0
",
            None,
        );
        m.spawn(10, "client", 10 * S).settings.nice = -20;
        m.spawn(20, "server", 10 * S);
        core.running(&[10, 20], &mut m);
        assert_eq!(m.take(), vec![Decision::Watch { tid: 10, on: true }]);
        let fork = |parent, child| EventKind::Fork { parent: Pid(parent), child: Pid(child), thread: false };
        m.spawn(11, "client", Duration::ZERO).settings.nice = -20;
        m.spawn(21, "server", Duration::ZERO);
        m.read_cost = Duration::from_micros(100);
        let before = m.now();
        core.events(&[m.event(fork(10, 11)), m.event(fork(20, 21))], &mut m);
        assert_eq!(m.take(), vec![Decision::Watch { tid: 11, on: true }], "only the watched parent's child");
        assert_eq!(m.now(), before, "no /proc read for either");
    }

    #[test]
    fn schedlab_itself_pid_1_and_kernel_threads_get_no_class() {
        let mut m = FakeMachine::new();
        // A catch-all rule, and boosting on: no watch either.
        let mut core = m.core(
            "[[rule]]\nmatch = { comm = \"*\" }\nclass = \"all\"\n[class.all]\nnice = 1\n\
             [daemon]\nmodel = false\nboost = true\nmin_age_ms = 0\n",
            None,
        );
        m.spawn(1, "systemd", 10 * S).settings.nice = -20;
        let kworker = m.spawn(3, "kworker/0:1H", 10 * S);
        (kworker.info.kthread, kworker.info.exe, kworker.settings.nice) = (true, String::new(), -20);
        m.spawn(300, "schedlab-bench", 10 * S).info.exe = SELF_EXE.into();
        m.spawn(400, "sd-job", 10 * S);
        core.running(&[1, 3, 300, 400], &mut m);
        assert_eq!(m.take(), vec![m.set(400, Change::Nice(1))]);
        let state = |pid| core.explain(pid, &m).unwrap().process.state;
        assert_eq!(state(1), "left alone: init or schedlab's own");
        assert_eq!(state(3), "left alone: kernel thread");
        assert_eq!(state(300), "left alone: init or schedlab's own");
    }

    #[test]
    fn a_forked_child_of_a_managed_parent_keeps_its_class() {
        let mut m = FakeMachine::new();
        let mut core = m.core(BATCH, None);
        m.spawn(500, "my-batch-job", 10 * S);
        m.spawn(600, "bash", 10 * S);
        core.running(&[500, 600], &mut m);
        assert_eq!(m.take(), vec![m.set(500, Change::Nice(10))]);
        // Forked before the parent's change reached it: nice 0.
        m.spawn(501, "my-batch-job", Duration::ZERO).info.ppid = 500;
        m.spawn(601, "bash", Duration::ZERO).info.ppid = 600;
        let fork = |parent, child| EventKind::Fork { parent: Pid(parent), child: Pid(child), thread: false };
        core.events(&[m.event(fork(500, 501)), m.event(fork(600, 601))], &mut m);
        core.tick(&mut m);
        let adopt = Decision::Adopt { child: m.key(501), parent: m.key(500) };
        assert_eq!(m.take(), vec![adopt, m.set(501, Change::Nice(10))]);
        let child = core.explain(501, &m).unwrap().process;
        assert_eq!(
            (child.class.as_deref(), reason_text(&child.reason)),
            (Some("batch"), "parent 500's class".into())
        );
        assert_eq!(core.explain(601, &m).unwrap().process.class, None, "bash has no class to pass on");
    }
}

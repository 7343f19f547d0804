//! Each program's habits learned from its processes' lives (`behavior::habits`), and a
//! program known to run CPU-bound classed `background` at its exec: a build's thousand
//! short jobs are lowered each from its start, as a person's `renice` of the whole build
//! would have them, where the profiling windows and `min_age_ms` would never reach them.

use schedlab_model::Life;

use super::{Core, Machine};
use crate::daemon::classes::ClassReason;

/// The class a program known to run CPU-bound gets (the model's BACKGROUND, lowercased).
pub const LEARNED_CLASS: &str = "background";

impl Core {
    /// Thread `tid` exited having lived `life`: if it was a process's main thread, its
    /// program learns from it.
    pub(super) fn learn_life(&mut self, tid: u32, life: &Life) {
        let Some(habits) = &mut self.habits else { return };
        if self.tgids.get(&tid).is_some_and(|&tgid| tgid != tid) {
            return;
        }
        if let Some(program) = self.programs.get(&tid) {
            habits.record(program, life);
        }
    }

    /// Process `tgid` exec'd `program`: remembered for its exit; if the program is known
    /// to run CPU-bound, it is taken in at once (its class applied now, whatever its
    /// age), unless it runs at or below the class already (a build a person reniced:
    /// a system call tells, where taking it in reads /proc). Whether it was.
    pub(super) fn exec_learned(&mut self, tgid: u32, program: &str, m: &mut dyn Machine) -> bool {
        if self.habits.is_none() {
            return false;
        }
        self.programs.insert(tgid, program.to_string());
        let Some((class, _)) = self.learned_class(program) else { return false };
        if self.already_low(tgid, &class, m) {
            return false;
        }
        self.classify_new(tgid, true, m);
        true
    }

    /// The class of a process of `program` that no rule matches, by its program's
    /// habits, and why: `None` unless learning is on, the program is known to run
    /// CPU-bound, and the configuration has the class.
    pub(super) fn learned_class(&self, program: &str) -> Option<(String, ClassReason)> {
        let habits = self.habits.as_ref()?;
        let known = habits.cpu_bound(program, self.config.daemon.learn_confidence)?;
        self.config.classes.contains_key(LEARNED_CLASS).then(|| {
            let reason = ClassReason::Learned {
                program: program.to_string(),
                confidence: known.confidence,
                runs: known.lives,
            };
            (LEARNED_CLASS.to_string(), reason)
        })
    }

    /// The habits learned so far, to keep.
    pub fn habits(&self) -> Option<&schedlab_behavior::habits::Habits> {
        self.habits.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use schedlab_model::{Life, Policy};

    use crate::daemon::core::fake::FakeMachine;
    use crate::daemon::core::{Change, Decision};
    use crate::daemon::stats::reason_text;

    const MS: u64 = 1_000_000;
    const CONFIG: &str = "[class.background]\nnice = 5\npolicy = \"batch\"\n\
                          [daemon]\nlearn = true\nboost = false\nmin_age_ms = 1000\n";

    /// A compressor job beside seven others on two CPUs: 35 ms running, 100 waiting.
    fn hog() -> Option<Life> {
        Some(Life { runtime_ns: 35 * MS, wait_ns: 100 * MS, lived_ns: 136 * MS, nvcsw: 0, nivcsw: 30 })
    }

    /// An editor's life: 30 ms of CPU in 9 s.
    fn sleeper() -> Option<Life> {
        Some(Life { runtime_ns: 30 * MS, wait_ns: MS, lived_ns: 9_000 * MS, nvcsw: 400, nivcsw: 2 })
    }

    #[test]
    fn a_program_learned_cpu_bound_is_classed_at_its_next_exec_and_a_sleeper_never() {
        let mut m = FakeMachine::new();
        let mut core = m.core(CONFIG, None);
        // Four xz jobs and four vim sessions come and go, each exec'd and gone before
        // min_age_ms: nothing is changed, but their programs learn.
        for (i, pid) in (200..208).enumerate() {
            let (comm, life) = if i % 2 == 0 { ("xz", hog()) } else { ("vim", sleeper()) };
            m.spawn(pid, comm, Duration::ZERO);
            core.events(&[m.exec(pid)], &mut m);
            let exit = m.exit_having_lived(pid, life);
            core.events(&[exit], &mut m);
        }
        assert_eq!(m.take(), vec![], "young processes are not changed");
        // The fifth xz is classed at its exec, before it has lived min_age_ms.
        m.spawn(210, "xz", Duration::ZERO);
        core.events(&[m.exec(210)], &mut m);
        let batch = Change::Policy { policy: Policy::Batch, priority: 0, slice_ns: 0 };
        assert_eq!(m.take(), vec![m.set(210, Change::Nice(5)), m.set(210, batch)]);
        let why = reason_text(&core.explain(210, &m).unwrap().process.reason);
        assert_eq!(why, "learned: /usr/bin/xz runs CPU-bound (82 % sure over 3.5 runs)");
        // vim is not, and waits to be taken in as any unknown program.
        m.spawn(211, "vim", Duration::ZERO);
        core.events(&[m.exec(211)], &mut m);
        m.advance(Duration::from_secs(2));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![], "an unknown program with no rule is left alone");
        let kept = core.habits().unwrap();
        assert!(
            kept.cpu_bound("/usr/bin/xz", 0.8).is_some() && kept.cpu_bound("/usr/bin/vim", 0.5).is_none()
        );
    }

    #[test]
    fn a_learned_class_never_raises_a_process_already_lower() {
        let mut m = FakeMachine::new();
        let mut core = m.core(CONFIG, None);
        for pid in 400..404 {
            m.spawn(pid, "xz", Duration::ZERO);
            core.events(&[m.exec(pid)], &mut m);
            let exit = m.exit_having_lived(pid, hog());
            core.events(&[exit], &mut m);
        }
        // A person's `nice -n 19` build: its xz is born at 19 and stays there; one at
        // SCHED_IDLE stays idle; one at nice 0 is lowered.
        m.spawn(410, "xz", Duration::ZERO).settings.nice = 19;
        m.spawn(411, "xz", Duration::ZERO).settings.policy = Policy::Idle;
        m.spawn(412, "xz", Duration::ZERO);
        for pid in 410..413 {
            core.events(&[m.exec(pid)], &mut m);
        }
        let touched: Vec<u32> = m
            .take()
            .iter()
            .filter_map(|d| match d {
                Decision::Set { process, .. } => Some(process.pid.0),
                _ => None,
            })
            .collect();
        assert_eq!(touched, [412, 412], "only the one at nice 0, its nice and policy");
        // The other two are taken in as any new process, after min_age_ms, and left.
        m.advance(Duration::from_secs(2));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![]);
        let why = |pid| core.explain(pid, &m).unwrap().process.state.clone();
        assert_eq!(
            why(410),
            "left alone: class background: it runs at or below that already, which it keeps"
        );
        assert_eq!(why(411), why(410));
    }

    #[test]
    fn rules_come_first_and_without_learning_nothing_is_learned() {
        let mut m = FakeMachine::new();
        // A rule gives xz a class that changes nothing: its habits do not override it.
        let ruled =
            format!("[[rule]]\nmatch = {{ comm = \"xz\" }}\nclass = \"mine\"\n[class.mine]\n{CONFIG}");
        let mut core = m.core(&ruled, None);
        let mut off = m.core(&CONFIG.replace("learn = true", "learn = false"), None);
        for pid in 300..305 {
            m.spawn(pid, "xz", Duration::ZERO);
            for c in [&mut core, &mut off] {
                c.events(&[m.exec(pid)], &mut m);
            }
            let exit = m.exit_having_lived(pid, hog());
            for c in [&mut core, &mut off] {
                c.events(std::slice::from_ref(&exit), &mut m);
            }
        }
        m.spawn(310, "xz", Duration::ZERO);
        for c in [&mut core, &mut off] {
            c.events(&[m.exec(310)], &mut m);
        }
        assert!(!m.take().iter().any(|d| matches!(d, Decision::Set { .. })), "no change at the exec");
        assert!(off.habits().is_none());
        let why = reason_text(&core.explain(310, &m).unwrap().process.reason);
        assert_eq!(why, "rule 1: comm=xz");
    }
}

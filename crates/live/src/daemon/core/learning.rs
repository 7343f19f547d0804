//! Each program's habits learned from its processes' lives (`behavior::habits`), and
//! what the daemon does with them:
//!
//! - a program known to run CPU-bound is classed `background` **at its exec**: a build's
//!   thousand short jobs are lowered each from its start, as a person's `renice` of the
//!   whole build would have them, where the profiling windows and `min_age_ms` would
//!   never reach them; its execs wake the daemon at once ([`Decision::WakeAtExec`]);
//! - a process no rule names that **runs CPU-bound now** (its main thread runnable for
//!   at least [`CPU_BOUND_SHARE`] of its life when it is taken in, or of the last
//!   [`BUSY_LOOK_EVERY`] after) gets the same class: a new hog of a program never seen
//!   before is lowered when taken in, `min_age_ms` after its exec, and one that stops
//!   running CPU-bound (runnable under [`RELEASE_SHARE`] of the [`BUSY_WINDOW`] or more
//!   since it was last read, at a planning) gets back what it had;
//! - a process that **draws for a person** (a display library mapped) is never lowered
//!   on its habits or its busyness, and its program never again: an uncapped game runs
//!   as CPU-bound as a compressor. A process classed at its exec is looked at once it
//!   has lived `min_age_ms` (its libraries are mapped by then), and given back what it
//!   had if it draws.

use std::time::{Duration, Instant};

use schedlab_behavior::habits::{CPU_BOUND_SHARE, MIN_EVIDENCE_CPU_NS};
use schedlab_model::{Life, Ns};

use super::{Core, Decision, Machine, State};
use crate::daemon::classes::ClassReason;
use crate::daemon::stats;

/// Why a process that draws is left alone.
const DRAWS: &str = "it draws for a person (a display library mapped): never lowered on its habits";

/// The class a program known to run CPU-bound gets (the model's BACKGROUND, lowercased).
pub const LEARNED_CLASS: &str = "background";
/// The least time over which a process is judged to run CPU-bound now: long enough that
/// a burst of a program that then waits (a page load, a search) is not taken for a hog.
pub const BUSY_WINDOW: Duration = Duration::from_millis(400);
/// How often a process no rule names, taken in and not running CPU-bound then, is
/// looked at again: a long-lived program that turns into a hog is rarer than a new one
/// (looked at when taken in), and each look reads its schedstat from the daemon's
/// real-time thread, which preempts whatever runs on its CPU.
pub const BUSY_LOOK_EVERY: Duration = Duration::from_secs(5);
/// A process classed for running CPU-bound gets back what it had once it is runnable
/// for less than this share of a planning period: well under [`CPU_BOUND_SHARE`], so
/// that a hog that reads a file now and then is not changed back and forth.
pub const RELEASE_SHARE: f64 = 0.5;

impl Core {
    /// Thread `tid` exited having lived `life`: if it was a process's main thread, its
    /// program learns from it; a program that becomes known to run CPU-bound (or stops)
    /// has its execs reported at once (or no longer).
    pub(super) fn learn_life(&mut self, tid: u32, life: &Life, m: &mut dyn Machine) {
        let min = self.config.daemon.learn_confidence;
        let Some(habits) = &mut self.habits else { return };
        if self.tgids.get(&tid).is_some_and(|&tgid| tgid != tid) {
            return;
        }
        let Some(program) = self.programs.get(&tid) else { return };
        let known = habits.cpu_bound(program, min).is_some();
        habits.record(program, life);
        if habits.cpu_bound(program, min).is_some() != known {
            m.enforce(&Decision::WakeAtExec { program: program.clone(), on: !known });
        }
    }

    /// At the daemon's start: the execs of the programs known to run CPU-bound from
    /// earlier runs are reported at once.
    pub(super) fn wake_at_known_execs(&mut self, m: &mut dyn Machine) {
        let Some(habits) = &self.habits else { return };
        let min = self.config.daemon.learn_confidence;
        let known: Vec<String> = habits
            .iter()
            .filter(|(p, _)| habits.cpu_bound(p, min).is_some())
            .map(|(p, _)| p.clone())
            .collect();
        for program in known {
            m.enforce(&Decision::WakeAtExec { program, on: true });
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

    /// The class of process `pid` (no rule names it) if it runs CPU-bound now and does
    /// not draw, and why: `None` unless learning is on and the configuration has the
    /// class. Takes a new reading of its schedstat if the last is `least` old.
    pub(super) fn busy_class(
        &mut self,
        pid: u32,
        least: Duration,
        m: &mut dyn Machine,
    ) -> Option<(String, ClassReason)> {
        if self.habits.is_none() || !self.config.classes.contains_key(LEARNED_CLASS) {
            return None;
        }
        let (share, window, ran) = self.runnable_since(pid, least, m)?;
        if ran < MIN_EVIDENCE_CPU_NS || share < CPU_BOUND_SHARE {
            return None;
        }
        if self.drawing(pid, m) {
            let p = self.procs.get_mut(&pid)?;
            p.reason = ClassReason::Unclassified { why: DRAWS.into() };
            p.state = State::Left(format!("runs CPU-bound, but {DRAWS}"));
            return None;
        }
        let reason = ClassReason::Busy { runnable: share, over_ms: window.as_millis() as u64 };
        Some((LEARNED_CLASS.to_string(), reason))
    }

    /// How much of the time since its last reading (its whole life at the first) the
    /// main thread of process `pid` was runnable, over how long, and the CPU time it
    /// ran in it: `None` until that time is `least` or more; the reading is then kept
    /// for the next.
    fn runnable_since(&mut self, pid: u32, least: Duration, m: &dyn Machine) -> Option<(f64, Duration, Ns)> {
        let now: Instant = m.now();
        let p = self.procs.get_mut(&pid)?;
        let (run0, wait0, window) = match p.sched_seen {
            Some((run0, wait0, at)) => (run0, wait0, now.saturating_duration_since(at)),
            None => (0, 0, m.age(p.info.start_time)),
        };
        if window < least {
            return None;
        }
        let (run, wait) = m.schedstat(pid)?;
        p.sched_seen = Some((run, wait, now));
        let ran = run.saturating_sub(run0);
        let runnable = ran + wait.saturating_sub(wait0);
        let share = match window.as_nanos() {
            0 => 0.0,
            w => (runnable as f64 / w as f64).min(1.0),
        };
        Some((share, window, ran))
    }

    /// Whether process `pid` draws for a person, looked at once per process; its
    /// program is then never lowered on its habits.
    pub(super) fn drawing(&mut self, pid: u32, m: &mut dyn Machine) -> bool {
        let Some(p) = self.procs.get(&pid) else { return false };
        if let Some(draws) = p.draws {
            return draws;
        }
        let draws = m.draws(pid);
        let program = self.programs.get(&pid).cloned().unwrap_or_else(|| p.info.exe.clone());
        if let Some(p) = self.procs.get_mut(&pid) {
            p.draws = Some(draws);
        }
        if let Some(habits) = self.habits.as_mut().filter(|_| draws && !program.is_empty()) {
            let min = self.config.daemon.learn_confidence;
            let known = habits.cpu_bound(&program, min).is_some();
            if habits.mark_draws(&program) && known {
                m.enforce(&Decision::WakeAtExec { program, on: false });
            }
        }
        draws
    }

    /// At each planning, with learning on: a process classed at its exec that draws
    /// gets back what it had; one classed for running CPU-bound that no longer does,
    /// too; one no rule names that runs CPU-bound now is classed so.
    pub(super) fn relearn(&mut self, m: &mut dyn Machine) {
        if self.habits.is_none() {
            return;
        }
        let min_age = Duration::from_millis(self.config.daemon.min_age_ms);
        let pids: Vec<u32> = self.procs.keys().copied().collect();
        for pid in pids {
            let Some(p) = self.procs.get(&pid) else { continue };
            if matches!(p.state, State::Released(_)) {
                continue;
            }
            let (reason, old_enough) = (p.reason.clone(), m.age(p.info.start_time) >= min_age);
            let unclassed = p.class.is_none();
            match reason {
                ClassReason::Learned { .. } if old_enough && self.drawing(pid, m) => {
                    self.give_back(pid, DRAWS.into(), m);
                }
                ClassReason::Busy { .. } => {
                    if let Some((share, window, _)) = self.runnable_since(pid, BUSY_WINDOW, m) {
                        if share < RELEASE_SHARE {
                            let why = format!(
                                "no longer runs CPU-bound (runnable {:.0} % of its last {} ms)",
                                share * 100.0,
                                window.as_millis()
                            );
                            self.give_back(pid, why, m);
                        }
                    }
                }
                ClassReason::Unclassified { .. } | ClassReason::Watching
                    if unclassed && self.may_learn(pid) =>
                {
                    if let Some((class, reason)) = self.busy_class(pid, BUSY_LOOK_EVERY, m) {
                        let p = self.procs.get_mut(&pid).expect("looked up above");
                        (p.class, p.reason) = (Some(class), reason);
                        self.apply_class(pid, m);
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether the habits may class process `pid`: not a kernel thread, init or
    /// schedlab's own.
    pub(super) fn may_learn(&self, pid: u32) -> bool {
        self.procs.get(&pid).is_some_and(|p| !p.info.kthread && !self.ours_or_init(pid, &p.info))
    }

    /// Process `pid`'s class was found wrong for it (`why`): it gets back what it had
    /// and is left alone.
    fn give_back(&mut self, pid: u32, why: String, m: &mut dyn Machine) {
        let Some(p) = self.procs.get_mut(&pid) else { return };
        let process = p.info.key();
        p.class = None;
        p.reason = ClassReason::Unclassified { why: why.clone() };
        p.state = State::Left(why.clone());
        (p.nice, p.policy, p.cpus) = (None, None, None);
        m.enforce(&Decision::Restore { process });
        let name = self.name(pid, m);
        let reason = stats::reason_text(&stats::reason_json(&ClassReason::Unclassified { why }));
        self.note(Some(pid), format!("gave back what it had to {name}: {reason}"), m);
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
    use crate::daemon::core::Decision;
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
        // Only the news that xz is known: its execs are reported at once from now on.
        let xz = Decision::WakeAtExec { program: "/usr/bin/xz".into(), on: true };
        assert_eq!(m.take(), vec![xz], "young processes are not changed");
        // The fifth xz is classed at its exec, before it has lived min_age_ms.
        m.spawn(210, "xz", Duration::ZERO);
        core.events(&[m.exec(210)], &mut m);
        assert_eq!(m.take(), vec![m.set_class(210, 5, Policy::Batch)], "its nice and policy at once");
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
                Decision::Set { process, .. } | Decision::SetClass { process, .. } => Some(process.pid.0),
                _ => None,
            })
            .collect();
        assert_eq!(touched, [412], "only the one at nice 0");
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
        assert!(
            !m.take().iter().any(|d| matches!(d, Decision::Set { .. } | Decision::SetClass { .. })),
            "no change at the exec"
        );
        assert!(off.habits().is_none());
        let why = reason_text(&core.explain(310, &m).unwrap().process.reason);
        assert_eq!(why, "rule 1: comm=xz");
    }

    /// Learning on, processes taken in from 500 ms.
    const QUICK: &str = "[class.background]\nnice = 5\npolicy = \"batch\"\n\
                         [daemon]\nlearn = true\nboost = false\nmin_age_ms = 500\n";

    #[test]
    fn a_new_hog_is_classed_when_taken_in_and_given_back_when_it_stops() {
        let mut m = FakeMachine::new();
        let mut core = m.core(QUICK, None);
        // A program never seen, and an editor: both exec'd now.
        m.spawn(500, "crunch", Duration::ZERO);
        m.spawn(501, "vim", Duration::ZERO);
        core.events(&[m.exec(500), m.exec(501)], &mut m);
        // 600 ms on: crunch ran 150 ms and waited 440 (runnable 98 %), vim ran 10 ms.
        m.advance(Duration::from_millis(600));
        m.processes.get_mut(&500).unwrap().schedstat = (150 * MS, 440 * MS);
        m.processes.get_mut(&501).unwrap().schedstat = (10 * MS, 0);
        core.tick(&mut m);
        assert_eq!(m.take(), vec![m.set_class(500, 5, Policy::Batch)], "only the hog");
        let why = reason_text(&core.explain(500, &m).unwrap().process.reason);
        assert_eq!(why, "runs CPU-bound now (runnable 98 % of its last 600 ms)");
        // A planning 1 s later: it still runs CPU-bound (runnable 100 %), nothing changes.
        m.advance(Duration::from_secs(1));
        m.processes.get_mut(&500).unwrap().schedstat = (400 * MS, 1200 * MS);
        core.replan(&mut m);
        assert!(!m.take().iter().any(|d| matches!(
            d,
            Decision::Set { .. } | Decision::SetClass { .. } | Decision::Restore { .. }
        )));
        // Then it waits for input: runnable 30 % of the next second. A planning 200 ms
        // in reads nothing (too short a time to judge) and the time adds up to the next:
        // it gets back what it had.
        m.advance(Duration::from_millis(200));
        core.replan(&mut m);
        assert_eq!(m.take(), vec![]);
        m.advance(Duration::from_millis(800));
        m.processes.get_mut(&500).unwrap().schedstat = (600 * MS, 1300 * MS);
        core.replan(&mut m);
        assert!(m.take().contains(&Decision::Restore { process: m.key(500) }));
        assert_eq!(m.settings_of(500).nice, 0);
        assert_eq!(m.settings_of(500).policy, Policy::Other);
        let state = core.explain(500, &m).unwrap().process.state.clone();
        assert_eq!(state, "left alone: no longer runs CPU-bound (runnable 30 % of its last 1000 ms)");
        // A sleeper that starts running CPU-bound later is classed at the first planning
        // BUSY_LOOK_EVERY (5 s) after it was last looked at (when taken in, at 0.6 s):
        // runnable 95 % of those 5 s.
        m.advance(Duration::from_secs(1));
        m.processes.get_mut(&501).unwrap().schedstat = (1_000 * MS, 1_000 * MS);
        core.replan(&mut m);
        assert_eq!(m.take(), vec![], "3 s since it was looked at");
        m.advance(Duration::from_secs(2));
        m.processes.get_mut(&501).unwrap().schedstat = (2_500 * MS, 2_250 * MS);
        core.replan(&mut m);
        assert!(m.take().contains(&m.set_class(501, 5, Policy::Batch)), "vim's runaway plugin");
        let why = reason_text(&core.explain(501, &m).unwrap().process.reason);
        assert_eq!(why, "runs CPU-bound now (runnable 95 % of its last 5000 ms)");
    }

    #[test]
    fn a_hog_at_real_time_or_idle_is_never_changed_for_running_cpu_bound() {
        let mut m = FakeMachine::new();
        let mut core = m.core(QUICK, None);
        // A person's `chrt -f 10` number cruncher and their `chrt -i 0` one: both CPU-bound.
        m.spawn(800, "crunch-rt", Duration::ZERO).settings.policy = Policy::Fifo;
        m.processes.get_mut(&800).unwrap().settings.priority = 10;
        m.spawn(801, "crunch-idle", Duration::ZERO).settings.policy = Policy::Idle;
        core.events(&[m.exec(800), m.exec(801)], &mut m);
        m.advance(Duration::from_millis(600));
        for pid in [800, 801] {
            m.processes.get_mut(&pid).unwrap().schedstat = (590 * MS, 0);
        }
        core.tick(&mut m);
        assert!(
            !m.take().iter().any(|d| matches!(d, Decision::Set { .. } | Decision::SetClass { .. })),
            "neither is demoted nor raised"
        );
        assert_eq!((m.settings_of(800).policy, m.settings_of(801).policy), (Policy::Fifo, Policy::Idle));
        let state = core.explain(800, &m).unwrap().process.state.clone();
        assert_eq!(state, "left alone: class background: it runs at or below that already, which it keeps");
    }

    #[test]
    fn a_process_that_draws_is_never_lowered_and_its_program_never_again() {
        let mut m = FakeMachine::new();
        let mut core = m.core(QUICK, None);
        // An uncapped game: CPU-bound, with a display library mapped. Not lowered.
        m.spawn(600, "game", Duration::ZERO).draws = true;
        core.events(&[m.exec(600)], &mut m);
        m.advance(Duration::from_millis(600));
        m.processes.get_mut(&600).unwrap().schedstat = (300 * MS, 290 * MS);
        core.tick(&mut m);
        core.replan(&mut m);
        assert!(
            !m.take().iter().any(|d| matches!(d, Decision::Set { .. } | Decision::SetClass { .. })),
            "a person looks at it"
        );
        let state = core.explain(600, &m).unwrap().process.state.clone();
        assert_eq!(
            state,
            "left alone: runs CPU-bound, but it draws for a person (a display library mapped): never lowered \
             on its habits"
        );
        // Its lives say CPU-bound, but its program is known to draw: never known a hog.
        let game =
            Some(Life { runtime_ns: 900 * MS, wait_ns: 80 * MS, lived_ns: 1_000 * MS, ..Life::default() });
        let exit = m.exit_having_lived(600, game);
        core.events(&[exit], &mut m);
        for pid in 601..606 {
            m.spawn(pid, "game", Duration::ZERO);
            core.events(&[m.exec(pid)], &mut m);
            let exit = m.exit_having_lived(pid, game);
            core.events(&[exit], &mut m);
        }
        assert!(core.habits().unwrap().cpu_bound("/usr/bin/game", 0.5).is_none());
        assert!(m.exec_wakes.is_empty());
        // A program learned CPU-bound from short lives, lowered at its exec, that turns
        // out to draw once it has lived min_age_ms: it gets back what it had, and its
        // program is no longer lowered at its exec.
        for pid in 700..705 {
            m.spawn(pid, "viewer", Duration::ZERO);
            core.events(&[m.exec(pid)], &mut m);
            let exit = m.exit_having_lived(pid, hog());
            core.events(&[exit], &mut m);
        }
        assert!(m.exec_wakes.contains("/usr/bin/viewer"));
        m.spawn(710, "viewer", Duration::ZERO).draws = true;
        core.events(&[m.exec(710)], &mut m);
        assert_eq!(m.settings_of(710).nice, 5, "lowered at its exec");
        m.advance(Duration::from_millis(600));
        m.take();
        core.replan(&mut m);
        let wake_off = Decision::WakeAtExec { program: "/usr/bin/viewer".into(), on: false };
        assert_eq!(m.take()[..2], [wake_off, Decision::Restore { process: m.key(710) }]);
        assert_eq!(m.settings_of(710).nice, 0);
        assert!(m.exec_wakes.is_empty() && core.habits().unwrap().get("/usr/bin/viewer").unwrap().draws);
        m.spawn(711, "viewer", Duration::ZERO);
        core.events(&[m.exec(711)], &mut m);
        assert_eq!(m.settings_of(711).nice, 0, "not at its next exec");
    }

    #[test]
    fn the_programs_known_from_earlier_runs_wake_at_their_exec_from_the_start() {
        let mut m = FakeMachine::new();
        let mut habits = schedlab_behavior::habits::Habits::default();
        for _ in 0..5 {
            habits.record("/usr/bin/xz", &hog().unwrap());
            habits.record("/usr/bin/vim", &sleeper().unwrap());
        }
        let mut core = m.core_knowing(QUICK, None, habits);
        core.running(&[], &mut m);
        assert_eq!(m.exec_wakes.iter().collect::<Vec<_>>(), ["/usr/bin/xz"]);
    }
}

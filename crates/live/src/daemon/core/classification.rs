//! A class applied (its nice value and policy; CPUs come from the plan), and the model:
//! processes no rule matches are profiled in windows ([`crate::daemon::windows`]) and
//! classified from what they did in one they lived through (profiled as `schedlab
//! observe` profiles, [`crate::profile`]), when the model is sure enough.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use schedlab_behavior::learn::{Classifier, ProcessProfile};
use schedlab_model::{Ns, Pid, Policy};

use super::{Change, Core, Decision, Machine, Outcome, State};
use crate::activity::Activity;
use crate::config::ClassPolicy;
use crate::daemon::boost::Rank;
use crate::daemon::classes::ClassReason;
use crate::daemon::stats;
use crate::daemon::windows::Turn;
use crate::profile;

/// What classifies a profiled process: a label and its confidence, and the confidence
/// from which a label is acted on. The daemon uses the shipped [`Classifier`]; the
/// core's tests give fixed answers, so that they check the core's rule (act at or above
/// the confidence, on a label that names a class) and not what a trained model happens
/// to say of a made-up profile.
pub trait Predictor {
    fn predict(&self, profile: &ProcessProfile) -> (String, f64);
    fn min_confidence(&self) -> f64;
}

impl Predictor for Classifier {
    fn predict(&self, profile: &ProcessProfile) -> (String, f64) {
        Classifier::predict(self, &profile.features())
    }

    fn min_confidence(&self) -> f64 {
        Classifier::min_confidence(self)
    }
}

impl Core {
    /// Applies the class's nice value and policy to process `pid` (CPUs come from the
    /// plan), once it has lived `min_age_ms`.
    pub(super) fn apply_class(&mut self, pid: u32, m: &mut dyn Machine) {
        let Some(p) = self.procs.get(&pid) else { return };
        let Some(class_name) = p.class.clone() else { return };
        let why = format!("class {class_name} ({})", stats::reason_text(&stats::reason_json(&p.reason)));
        let Some(class) = self.config.classes.get(&class_name).cloned() else { return };
        if !class.manage {
            self.set_state(pid, State::Left(format!("class {class_name} has manage = false")));
            return;
        }
        if matches!(p.state, State::Released(_)) {
            return;
        }
        // A program known to run CPU-bound is changed at its exec: its jobs may be
        // short, and each repays the change from its first slice.
        let learned = matches!(p.reason, ClassReason::Learned { .. });
        if !learned && m.age(p.info.start_time) < Duration::from_millis(self.config.daemon.min_age_ms) {
            self.set_state(pid, State::Young);
            return;
        }
        // A class the habits, the busyness or the model gave only ever lowers: a process
        // already at or below it (a person's `nice -n 19 make`, SCHED_IDLE) or real time
        // (set so on purpose) keeps what it has.
        if p.reason.only_lowers() && self.already_low(pid, &class_name, m) {
            let why = format!("class {class_name}: it runs at or below that already, which it keeps");
            self.set_state(pid, State::Left(why));
            return;
        }
        self.set_state(pid, State::Managed);
        let policy = class.policy.map(|policy| {
            let (policy, priority) = match policy {
                ClassPolicy::Other => (Policy::Other, 0),
                ClassPolicy::Batch => (Policy::Batch, 0),
                ClassPolicy::Idle => (Policy::Idle, 0),
                ClassPolicy::Fifo { priority, .. } => (Policy::Fifo, u32::from(priority)),
                ClassPolicy::Rr { priority, .. } => (Policy::Rr, u32::from(priority)),
            };
            let mut change = self.policy_change(pid, policy, priority);
            if let (Change::Policy { slice_ns, .. }, Some(ns)) = (&mut change, class.slice_ns) {
                *slice_ns = ns;
            }
            change
        });
        // A slice and no policy: the slice, under the policy the process has.
        let slice = class.slice_ns.filter(|_| class.policy.is_none()).map(Change::Slice);
        match (class.nice.map(i32::from), policy) {
            (Some(nice), Some(policy)) => self.change_class(pid, nice, policy, &why, m),
            (nice, policy) => {
                for change in nice.map(Change::Nice).into_iter().chain(policy).chain(slice) {
                    self.change(pid, change, &why, m);
                }
            }
        }
    }

    /// Whether process `pid` runs at or below class `class` already (its nice at or
    /// above the class's, SCHED_IDLE), or real time: what a class the habits or the
    /// model gave leaves as it is.
    pub(super) fn already_low(&self, pid: u32, class: &str, m: &dyn Machine) -> bool {
        let nice = self.config.classes.get(class).and_then(|c| c.nice);
        match m.rank(Pid(pid)) {
            Some(Rank::Fair { nice: now }) => nice.is_some_and(|n| now >= i32::from(n)),
            Some(Rank::Rt { .. } | Rank::Idle) => true,
            None => false,
        }
    }

    /// Opens and closes the profiling windows; at a window's end, the model classifies
    /// the processes that lived through it.
    pub(super) fn profile(&mut self, m: &mut dyn Machine) {
        if self.model.is_none() {
            return;
        }
        let min_age = Duration::from_millis(self.config.daemon.min_age_ms);
        let wanted = self
            .procs
            .values()
            .any(|p| p.reason == ClassReason::Watching && m.age(p.info.start_time) >= min_age);
        let on = match self.windows.tick(m.now(), wanted) {
            Some(Turn::Open) => {
                self.window_counts = m.syscall_counts();
                self.activity = Activity::default();
                true
            }
            Some(Turn::Close(since)) => {
                self.classify_by_model(since, m);
                false
            }
            None => return,
        };
        if let Outcome::Failed(e) = m.enforce(&Decision::Profile { on }) {
            self.note(None, format!("profiling window: {e}"), m);
        }
    }

    /// Classifies with the model the processes still watched that lived through the
    /// window that began at `since`, from what they did in it.
    fn classify_by_model(&mut self, since: Instant, m: &mut dyn Machine) {
        let Some(model) = &self.model else { return };
        let due: Vec<u32> = self
            .procs
            .iter()
            .filter(|(_, p)| p.reason == ClassReason::Watching && p.first_seen <= since)
            .map(|(&pid, _)| pid)
            .collect();
        if due.is_empty() {
            return;
        }
        let counts = m.syscall_counts();
        let window = profile::Window {
            length_ns: m.now().saturating_duration_since(since).as_nanos() as Ns,
            counts: &counts,
            baseline: &self.window_counts,
            activity: &self.activity,
        };
        let tgid_of = |tid: u32| self.tgids.get(&tid).copied().unwrap_or(tid);
        let wanted: HashSet<u32> = due.iter().copied().collect();
        let mut by_tgid = profile::profiles(&window, tgid_of, |tgid| wanted.contains(&tgid));
        // One that made no call and never ran in the window is profiled as such.
        let idle = || ProcessProfile { window_secs: window.length_ns as f64 / 1e9, ..Default::default() };
        let mut predicted = Vec::new();
        for pid in due {
            let Some(p) = self.procs.get(&pid) else { continue };
            let mut profile = by_tgid.remove(&pid).unwrap_or_else(idle);
            profile.name = p.info.comm.clone();
            predicted.push((pid, model.predict(&profile)));
        }
        let least = self.config.daemon.model_confidence.unwrap_or_else(|| model.min_confidence());
        for (pid, (label, confidence)) in predicted {
            let class = label.to_lowercase();
            let known = self.config.classes.contains_key(&class);
            let Some(p) = self.procs.get_mut(&pid) else { continue };
            if confidence < least {
                p.reason = ClassReason::Unclassified {
                    why: format!(
                        "the model says {label} with confidence {confidence:.2}, below model_confidence {least:.2}"
                    ),
                };
                p.state = State::Left("the model is not sure enough".into());
            } else if known {
                p.class = Some(class);
                p.reason = ClassReason::Model { label, confidence };
                self.apply_class(pid, m);
            } else {
                p.reason = ClassReason::Unclassified {
                    why: format!("the model says {label}, which names no class"),
                };
                p.state = State::Left("no class".into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use schedlab_behavior::learn::ProcessProfile;

    use super::Predictor;
    use crate::daemon::core::fake::FakeMachine;
    use crate::daemon::core::{Change, Decision};
    use crate::daemon::stats::reason_text;

    /// Says BACKGROUND of `sure` at 0.8 and of `unsure` at 0.79, GAMES of anything else;
    /// acts from 0.8.
    struct Fixed;

    impl Predictor for Fixed {
        fn predict(&self, profile: &ProcessProfile) -> (String, f64) {
            match profile.name.as_str() {
                "sure" => ("BACKGROUND".into(), 0.8),
                "unsure" => ("BACKGROUND".into(), 0.79),
                _ => ("GAMES".into(), 0.99),
            }
        }

        fn min_confidence(&self) -> f64 {
            0.8
        }
    }

    #[test]
    fn the_model_acts_from_its_confidence_on_and_only_on_a_label_that_names_a_class() {
        let mut m = FakeMachine::new();
        let mut core = m.core(
            "[class.background]\nnice = 10\n\
             [daemon]\nmodel = true\nboost = false\nmin_age_ms = 0\nmodel_after_ms = 2000\n",
            Some(Box::new(Fixed)),
        );
        for (pid, comm) in [(100, "sure"), (101, "unsure"), (102, "game")] {
            m.spawn(pid, comm, Duration::from_secs(10));
        }
        core.running(&[100, 101, 102], &mut m);
        assert_eq!(m.take(), vec![], "no rule: watched");
        core.tick(&mut m);
        assert_eq!(m.take(), vec![Decision::Profile { on: true }]);
        m.advance(Duration::from_millis(1999));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![]);
        m.advance(Duration::from_millis(1));
        core.tick(&mut m);
        assert_eq!(m.take(), vec![m.set(100, Change::Nice(10)), Decision::Profile { on: false }]);
        let reason = |pid| reason_text(&core.explain(pid, &m).unwrap().process.reason);
        assert_eq!(reason(100), "model: BACKGROUND (80 %)");
        assert_eq!(
            reason(101),
            "unclassified: the model says BACKGROUND with confidence 0.79, below model_confidence 0.80"
        );
        assert_eq!(reason(102), "unclassified: the model says GAMES, which names no class");
    }
}

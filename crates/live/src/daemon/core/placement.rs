//! The planning period: loads, young processes come of age, users' own changes,
//! real-time bounds, and the CPU plan (paper 000's distribution, with the dependency
//! graph keeping communicating processes together when asked).

use schedlab_behavior::distribution::{self, ClassPlan, Edge, PlanInput, PlanTask};
use schedlab_model::Policy;

use super::{Change, Core, Decision, Kept, Machine, Outcome, State};
use crate::config::ClassPolicy;

/// Dependency edges this strong (wakeups seen) keep two processes on one CPU.
const STRONG_EDGE_WAKEUPS: f64 = 10.0;

impl Core {
    /// Every planning period: loads, the young processes, users' own changes,
    /// real-time bounds, and the CPU plan.
    pub fn replan(&mut self, m: &mut dyn Machine) {
        let period = self.config.daemon.replan_ms as f64 * 1e6;
        // Load from /proc, not from events: the observer sends no switch of a thread it
        // does not watch. Only processes schedlab may act on are read.
        for (&pid, p) in &mut self.procs {
            if p.class.is_none() && !self.raised.contains_key(&pid) {
                continue;
            }
            let (r, threads) = m.usage(pid).unwrap_or((p.runtime_prev, p.threads));
            // The first reading is the baseline: what it used before is no load now.
            p.load = if p.runtime_prev == 0 { 0.0 } else { r.saturating_sub(p.runtime_prev) as f64 / period };
            p.runtime_prev = r;
            p.threads = threads;
        }
        self.relearn(m);
        let young: Vec<u32> =
            self.procs.iter().filter(|(_, p)| p.state == State::Young).map(|(&pid, _)| pid).collect();
        for pid in young {
            self.apply_class(pid, m);
        }
        self.check_users_changes(m);
        self.bound_realtime(m);
        self.place(m);
    }

    /// Releases processes whose settings someone else changed; forgets those gone.
    fn check_users_changes(&mut self, m: &mut dyn Machine) {
        let mut gone = Vec::new();
        let mut released = Vec::new();
        for (&pid, p) in &self.procs {
            if self.raised.contains_key(&pid) {
                continue;
            }
            match m.kept(p.info.key()) {
                Kept::Yes => {}
                Kept::Changed => released.push(pid),
                Kept::Gone => gone.push(pid),
            }
        }
        for pid in gone {
            self.forget(pid, m);
        }
        for pid in released {
            let Some(p) = self.procs.get_mut(&pid) else { continue };
            m.enforce(&Decision::Release { process: p.info.key() });
            let why = format!(
                "someone else changed it (nice now {}, CPUs {}); schedlab stops managing it",
                m.nice(pid).map_or("?".into(), |n| n.to_string()),
                m.affinity(pid).map_or("?".into(), |c| c.to_string())
            );
            p.state = State::Released(why.clone());
            (p.cpus, p.nice, p.policy) = (None, None, None);
            let name = self.name(pid, m);
            self.note(Some(pid), format!("{name}: {why}"), m);
        }
    }

    /// Takes a real-time policy back from a process that used more CPU than its class
    /// allows per second (`rt_max_ms`, measured over the planning period); gives it back
    /// once a period under SCHED_OTHER shows it within the bound again. A runaway
    /// real-time process thus holds the CPU for one planning period at most (and the
    /// kernel's own throttling, 95 %, still applies within it).
    fn bound_realtime(&mut self, m: &mut dyn Machine) {
        let mut over = Vec::new();
        let mut back = Vec::new();
        for (&pid, p) in &self.procs {
            let Some(class) = p.class.as_ref().and_then(|c| self.config.classes.get(c)) else { continue };
            let (
                Some(ClassPolicy::Fifo { max_ms_per_s, .. } | ClassPolicy::Rr { max_ms_per_s, .. }),
                State::Managed,
            ) = (class.policy, &p.state)
            else {
                continue;
            };
            let over_bound = p.load * 1000.0 > f64::from(max_ms_per_s);
            if p.rt_demoted && !over_bound {
                back.push(pid);
            } else if !p.rt_demoted && over_bound {
                over.push((pid, max_ms_per_s));
            }
        }
        for (pid, max) in over {
            let why = format!("used more than its bound of {max} ms of CPU per second");
            let change = self.policy_change(pid, Policy::Other, 0);
            self.change(pid, change, &why, m);
            if let Some(p) = self.procs.get_mut(&pid) {
                p.rt_demoted = true;
            }
        }
        for pid in back {
            if let Some(p) = self.procs.get_mut(&pid) {
                p.rt_demoted = false;
            }
            self.apply_class(pid, m);
        }
    }

    /// Computes the CPU plan and binds the processes whose CPUs change.
    /// Only classes with a plan take part: an unbound class's processes are placed by
    /// the kernel (and an `isolate` class keeps only bound classes off its CPUs).
    fn place(&mut self, m: &mut dyn Machine) {
        let classes: Vec<ClassPlan> = self
            .config
            .classes
            .values()
            .filter(|c| c.manage)
            .filter_map(|c| {
                Some(ClassPlan { name: c.name.clone(), cpus: c.cpus.clone(), plan: c.plan.clone()? })
            })
            .collect();
        if classes.is_empty() {
            return;
        }
        let tasks: Vec<PlanTask> = self
            .procs
            .values()
            .filter(|p| p.state == State::Managed)
            .filter_map(|p| {
                Some(PlanTask { id: p.info.pid, class: p.class.clone()?, load: p.load, threads: p.threads })
            })
            .filter(|t| classes.iter().any(|c| c.name == t.class))
            .collect();
        let edges: Vec<Edge> = if self.config.daemon.colocate {
            let tgid_of = |t: u32| self.tgids.get(&t).copied().unwrap_or(t);
            self.deps
                .dependencies()
                .into_iter()
                .map(|d| Edge {
                    a: tgid_of(d.requester.0),
                    b: tgid_of(d.provider.0),
                    strength: d.wakeups as f64,
                })
                .filter(|e| e.a != e.b)
                .collect()
        } else {
            Vec::new()
        };
        let input = PlanInput {
            cpus: &self.cpus,
            classes: &classes,
            tasks: &tasks,
            edges: &edges,
            min_edge_strength: STRONG_EDGE_WAKEUPS,
            max_cpu_load: 1.0,
        };
        let placements = match distribution::plan(&input) {
            Ok(p) => p,
            Err(e) => {
                self.note(None, format!("no CPU plan: {e}"), m);
                return;
            }
        };
        for pl in placements {
            if !self.confine(pl.id, &pl.class, m) {
                continue;
            }
            let why = format!(
                "{} plan of class {}: {}",
                plan_name(&pl.reason),
                pl.class,
                describe_placement(&pl.reason)
            );
            let Some(p) = self.procs.get_mut(&pl.id) else { continue };
            if let Some((cpus, reason)) = &mut p.cpus {
                if *cpus == pl.cpus {
                    // The same CPUs, perhaps for another reason now (a new dependency):
                    // `explain` gives the current one.
                    *reason = why;
                    continue;
                }
            }
            if self.change(pl.id, Change::Cpus(pl.cpus.clone()), &why, m) {
                if let Some(p) = self.procs.get_mut(&pl.id) {
                    p.cpus = Some((pl.cpus, why));
                }
            }
        }
    }

    /// For a class with `cpuset = true`, moves the process into the class's cpuset
    /// cgroup (made on first use with the class's CPUs). True if the process may be
    /// bound now (no cpuset wanted, it is in the group, or no group can be had: then
    /// `sched_setaffinity` binds it, as it does without `cpuset`).
    fn confine(&mut self, pid: u32, class_name: &str, m: &mut dyn Machine) -> bool {
        let Some(class) = self.config.classes.get(class_name) else { return false };
        if !class.cpuset || self.no_group.contains(class_name) {
            return true;
        }
        let path = match m.group_path(class_name) {
            Some(path) => path,
            None => {
                let cpus = class.cpus.clone().unwrap_or_else(|| self.cpus.clone());
                if let Outcome::Failed(e) = m.enforce(&Decision::MakeGroup { class: class_name.into(), cpus })
                {
                    let text = format!(
                        "class {class_name}: no cpuset cgroup ({e}); its processes are bound with \
                         sched_setaffinity instead"
                    );
                    self.note(None, text, m);
                    self.no_group.insert(class_name.to_string());
                    return true;
                }
                // A dry run makes none and names the path it would have.
                m.group_path(class_name).unwrap_or_else(|| format!("/schedlab/{class_name}"))
            }
        };
        if self.procs.get(&pid).is_some_and(|p| p.cgroup.as_deref() == Some(path.as_str())) {
            return true;
        }
        let why = format!("class {class_name} asks for a cpuset cgroup");
        if self.change(pid, Change::Cgroup(path.clone()), &why, m) {
            if let Some(p) = self.procs.get_mut(&pid) {
                p.cgroup = Some(path);
                // Joining a cpuset resets the affinity (cgroup v1): bind again.
                p.cpus = None;
            }
            return true;
        }
        false
    }
}

fn plan_name(r: &distribution::PlacementReason) -> &'static str {
    match r {
        distribution::PlacementReason::FairShare { .. } => "fair-share",
        distribution::PlacementReason::Weighted { .. } => "weighted",
        distribution::PlacementReason::Isolated => "isolate",
        distribution::PlacementReason::CoLocated { .. } => "communication-aware",
    }
}

/// ", N threads" for a process the plan gave a CPU per thread.
fn threads_text(threads: u32) -> String {
    if threads > 1 {
        format!(", {threads} threads")
    } else {
        String::new()
    }
}

fn describe_placement(r: &distribution::PlacementReason) -> String {
    use distribution::PlacementReason as R;
    match r {
        R::FairShare { index_in_class, class_size, threads } => {
            format!("process {} of {class_size}{}", index_in_class + 1, threads_text(*threads))
        }
        R::Weighted { index_in_class, class_size, share, total_shares, threads } => {
            format!(
                "process {} of {class_size}, share {share}/{total_shares}{}",
                index_in_class + 1,
                threads_text(*threads)
            )
        }
        R::Isolated => "the class's own CPUs".into(),
        R::CoLocated { with, strength, group_size } => {
            format!("with {with} ({strength:.0} wakeups; a group of {group_size})")
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use schedlab_model::Policy;

    use crate::daemon::core::fake::FakeMachine;
    use crate::daemon::core::{Change, Decision};

    const S: Duration = Duration::from_secs(1);

    /// `job` gets nice 10.
    const JOB: &str = "[[rule]]\nmatch = { comm = \"job\" }\nclass = \"batch\"\n[class.batch]\nnice = 10\n\
                       [daemon]\nmodel = false\nboost = false\nmin_age_ms = 0\n";

    #[test]
    fn a_fair_share_class_binds_its_processes_and_a_class_without_plan_binds_none() {
        let mut m = FakeMachine::new();
        let mut core = m.core(
            "[[rule]]\nmatch = { comm = \"batch\" }\nclass = \"batch\"\n\
             [[rule]]\nmatch = { comm = \"quiet\" }\nclass = \"quiet\"\n\
             [class.batch]\ncpus = \"1\"\nnice = 10\n[class.quiet]\nnice = 5\n\
             [daemon]\nmodel = false\nboost = false\nmin_age_ms = 0\n",
            None,
        );
        for (pid, comm) in [(100, "batch"), (101, "batch"), (102, "quiet")] {
            m.spawn(pid, comm, 10 * S);
        }
        core.running(&[100, 101, 102], &mut m);
        assert_eq!(
            m.take(),
            vec![
                m.set(100, Change::Nice(10)),
                m.set(101, Change::Nice(10)),
                m.set(102, Change::Nice(5)),
                m.set(100, Change::Cpus(vec![1])),
                m.set(101, Change::Cpus(vec![1])),
            ]
        );
        let row = core.explain(101, &m).unwrap().process;
        assert_eq!(row.cpus.as_deref(), Some("1"));
        assert_eq!(row.placement.as_deref(), Some("fair-share plan of class batch: process 2 of 2"));
        core.replan(&mut m);
        assert_eq!(m.take(), vec![], "bound already");
    }

    #[test]
    fn a_multi_threaded_process_gets_a_cpu_per_thread() {
        let mut m = FakeMachine::new();
        let mut core = m.core(
            "[[rule]]\nmatch = { comm = \"xz\" }\nclass = \"batch\"\n\
             [class.batch]\ncpus = \"0-1\"\n[daemon]\nmodel = false\nboost = false\nmin_age_ms = 0\n",
            None,
        );
        m.spawn(100, "xz", 10 * S).threads = 2;
        m.spawn(101, "xz", 10 * S);
        core.running(&[100, 101], &mut m);
        // 100 may run on both CPUs already (nothing to change), 101 gets one of them.
        assert_eq!(
            m.take(),
            vec![m.set(101, Change::Cpus(vec![0]))],
            "never fewer CPUs than threads: two threads bound to one CPU run half as fast"
        );
        let row = core.explain(100, &m).unwrap().process;
        assert_eq!(
            row.placement.as_deref(),
            Some("fair-share plan of class batch: process 1 of 2, 2 threads")
        );
    }

    #[test]
    fn a_cpuset_class_makes_its_group_and_binds_its_processes_in_it() {
        let mut m = FakeMachine::new();
        let mut core = m.core(
            "[[rule]]\nmatch = { comm = \"job\" }\nclass = \"batch\"\n[class.batch]\ncpus = \"1\"\ncpuset = true\n\
             [daemon]\nmodel = false\nboost = false\nmin_age_ms = 0\n",
            None,
        );
        m.spawn(100, "job", 10 * S);
        core.running(&[100], &mut m);
        assert_eq!(
            m.take(),
            vec![
                Decision::MakeGroup { class: "batch".into(), cpus: vec![1] },
                m.set(100, Change::Cgroup("/schedlab/batch".into())),
                m.set(100, Change::Cpus(vec![1])),
            ]
        );
    }

    #[test]
    fn without_a_cpuset_group_a_cpuset_class_is_bound_with_affinity() {
        let mut m = FakeMachine::new();
        m.no_groups = Some("cgroup v2: processes would leave their units".into());
        let mut core = m.core(
            "[[rule]]\nmatch = { comm = \"job\" }\nclass = \"batch\"\n[class.batch]\ncpus = \"1\"\ncpuset = true\n\
             [daemon]\nmodel = false\nboost = false\nmin_age_ms = 0\n",
            None,
        );
        m.spawn(100, "job", 10 * S);
        m.spawn(101, "job", 10 * S);
        core.running(&[100, 101], &mut m);
        assert_eq!(
            m.take(),
            vec![
                Decision::MakeGroup { class: "batch".into(), cpus: vec![1] },
                m.set(100, Change::Cpus(vec![1])),
                m.set(101, Change::Cpus(vec![1])),
            ],
            "no process moved out of its cgroup; the group is asked for once"
        );
        let why = core.explain(100, &m).unwrap().process.placement;
        assert!(why.is_some_and(|w| w.contains("class batch")));
    }

    #[test]
    fn a_users_own_change_releases_the_process_for_good() {
        let mut m = FakeMachine::new();
        let mut core = m.core(JOB, None);
        m.spawn(100, "job", 10 * S);
        core.running(&[100], &mut m);
        assert_eq!(m.take(), vec![m.set(100, Change::Nice(10))]);
        // renice -n 3 -p 100
        m.processes.get_mut(&100).unwrap().settings.nice = 3;
        m.changed_by_user.insert(100);
        core.replan(&mut m);
        assert_eq!(m.take(), vec![Decision::Release { process: m.key(100) }]);
        let row = core.explain(100, &m).unwrap().process;
        assert_eq!(
            row.state,
            "released: someone else changed it (nice now 3, CPUs 0-1); schedlab stops managing it"
        );
        assert_eq!(row.nice, None, "schedlab holds no setting of it");
        // Not at the next planning, not at its next exec.
        core.replan(&mut m);
        core.events(&[m.exec(100)], &mut m);
        core.tick(&mut m);
        assert_eq!(m.take(), vec![]);
        assert_eq!(core.stats(&m).released, 1);
    }

    #[test]
    fn a_real_time_process_over_its_bound_is_demoted_until_it_is_within_it() {
        let mut m = FakeMachine::new();
        let mut core = m.core(
            "[[rule]]\nmatch = { comm = \"hog\" }\nclass = \"rt\"\n\
             [class.rt]\npolicy = \"fifo\"\nrt_priority = 5\nrt_max_ms = 100\n\
             [daemon]\nmodel = false\nboost = false\nmin_age_ms = 0\nreplan_ms = 1000\n",
            None,
        );
        m.spawn(100, "hog", 10 * S).cpu_time_ns = 1_000_000_000;
        let policy = |policy, priority| Change::Policy { policy, priority, slice_ns: 0 };
        core.running(&[100], &mut m);
        assert_eq!(m.take(), vec![m.set(100, policy(Policy::Fifo, 5))], "its first period is the baseline");
        let run = |m: &mut FakeMachine, ms: u64| {
            m.advance(S);
            m.processes.get_mut(&100).unwrap().cpu_time_ns += ms * 1_000_000;
        };
        run(&mut m, 500);
        core.replan(&mut m);
        assert_eq!(m.take(), vec![m.set(100, policy(Policy::Other, 0))], "500 ms in a second: over 100");
        let last = core.explain(100, &m).unwrap().decisions.pop().unwrap();
        assert!(last.ends_with("used more than its bound of 100 ms of CPU per second"), "{last}");
        run(&mut m, 500);
        core.replan(&mut m);
        assert_eq!(m.take(), vec![], "still over: stays SCHED_OTHER");
        run(&mut m, 50);
        core.replan(&mut m);
        assert_eq!(m.take(), vec![m.set(100, policy(Policy::Fifo, 5))], "within the bound: given back");
    }
}

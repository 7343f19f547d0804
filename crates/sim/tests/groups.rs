//! Fair group scheduling: cases a person can work out by hand from the kernel's rules
//! (Linux 6.18's `calc_group_shares`, `find_matching_se` and EEVDF at each level).

mod common;

use common::*;
use schedlab_model::{EventKind, Pid};
use schedlab_sim::{FairFlavor, Op, Program, Report, SimError, TaskGroup, TaskSpec, Workload};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

/// Each named task's share of the CPU time all of them got.
fn shares(r: &Report, names: &[&str]) -> Vec<f64> {
    let total: u64 = names.iter().map(|n| runtime(r, n)).sum();
    names.iter().map(|n| runtime(r, n) as f64 / total as f64).collect()
}

/// Asserts that each share is within half a percentage point of what it should be.
fn assert_shares(got: &[f64], want: &[f64], what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 0.005, "{what}: task {i} got {g:.4}, should get {w:.4} (all: {got:?})");
    }
}

/// A hog in group `group` (`None`: the root group), optionally pinned to `cpu`.
fn hog_in(w: &mut Workload, name: &str, group: Option<u32>, cpu: Option<u32>) {
    let p = hog(w, name, 100 * SEC);
    w.tasks.push(TaskSpec { group, affinity: cpu.map(|c| vec![c]), ..TaskSpec::new(name, p) });
}

/// Ten seconds on one CPU: tick-sized rounding is far below half a percent.
fn ten_seconds() -> Workload {
    Workload { duration_ns: Some(10 * SEC), ..Default::default() }
}

#[test]
fn equal_shares_split_the_cpu_by_group_however_many_tasks_each_has() {
    // Two groups of cpu.weight 100 (shares 1024): on one CPU each group's entity weighs
    // all of its shares (its queue's load is all of the group's), so the groups get
    // half each, and within the second its four tasks an eighth each.
    let mut w = ten_seconds();
    let a = w.add_group(TaskGroup::cpu_weight("/a", None, 100));
    let b = w.add_group(TaskGroup::cpu_weight("/b", None, 100));
    hog_in(&mut w, "a0", Some(a), None);
    for i in 0..4 {
        hog_in(&mut w, &format!("b{i}"), Some(b), None);
    }
    let (r, _) = run(&w, 1, FairFlavor::Eevdf, &[]);
    let names = ["a0", "b0", "b1", "b2", "b3"];
    assert_shares(&shares(&r, &names), &[0.5, 0.125, 0.125, 0.125, 0.125], "1 vs 4 tasks");
    // Without groups, five tasks share alike.
    for t in &mut w.tasks {
        t.group = None;
    }
    let (r, _) = run(&w, 1, FairFlavor::Eevdf, &[]);
    assert_shares(&shares(&r, &names), &[0.2; 5], "no groups");
}

#[test]
fn shares_2048_against_1024_get_two_thirds() {
    // cpu.shares 2048 (cgroup v1) against cpu.weight 100 (1024): 2/3 and 1/3, one hog
    // each; the second group's two hogs split its third.
    let mut w = ten_seconds();
    let a = w.add_group(TaskGroup::cpu_shares("/a", None, 2048));
    let b = w.add_group(TaskGroup::cpu_weight("/b", None, 100));
    hog_in(&mut w, "a0", Some(a), None);
    hog_in(&mut w, "b0", Some(b), None);
    hog_in(&mut w, "b1", Some(b), None);
    let (r, _) = run(&w, 1, FairFlavor::Eevdf, &[]);
    assert_shares(&shares(&r, &["a0", "b0", "b1"]), &[2.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0], "2048 vs 1024");
    // cpu.weight converts as the kernel does: 200 is 2048, 50 is 512.
    assert_eq!(TaskGroup::cpu_weight("/x", None, 200).shares, 2048);
    assert_eq!(TaskGroup::cpu_weight("/x", None, 50).shares, 512);
    assert_eq!(TaskGroup::cpu_weight("/x", None, 1).shares, 10);
    assert_eq!(TaskGroup::cpu_shares("/x", None, 1).shares, 2);
    assert_eq!(TaskGroup::autogroup("autogroup-1", 5).shares, 335);
}

#[test]
fn nested_groups_split_at_each_level() {
    // The root holds /a and /b (1024 each) and a nice-0 hog r: a third each. /a holds a
    // hog and the groups /a/x and /a/y (1024 each): a ninth each; /a/y's two hogs split
    // its ninth; /b's hog gets its third.
    let mut w = ten_seconds();
    let a = w.add_group(TaskGroup::cpu_weight("/a", None, 100));
    let x = w.add_group(TaskGroup::cpu_weight("/a/x", Some(a), 100));
    let y = w.add_group(TaskGroup::cpu_weight("/a/y", Some(a), 100));
    let b = w.add_group(TaskGroup::cpu_weight("/b", None, 100));
    hog_in(&mut w, "r", None, None);
    hog_in(&mut w, "a0", Some(a), None);
    hog_in(&mut w, "x0", Some(x), None);
    hog_in(&mut w, "y0", Some(y), None);
    hog_in(&mut w, "y1", Some(y), None);
    hog_in(&mut w, "b0", Some(b), None);
    let (r, _) = run(&w, 1, FairFlavor::Eevdf, &[]);
    let names = ["r", "a0", "x0", "y0", "y1", "b0"];
    let want = [1.0 / 3.0, 1.0 / 9.0, 1.0 / 9.0, 1.0 / 18.0, 1.0 / 18.0, 1.0 / 3.0];
    assert_shares(&shares(&r, &names), &want, "nested");
}

#[test]
fn a_group_on_two_cpus_splits_its_shares_by_its_load_there() {
    // /g (shares 1024) has one hog pinned to CPU 0 and three to CPU 1; a root hog runs on
    // each CPU. The group's queues carry loads 1024 and 3072 (always runnable nice-0
    // tasks), its total is 4096, so calc_group_shares gives its entity 1024 × 1024/4096 =
    // 256 on CPU 0 and 768 on CPU 1. CPU 0: the group gets 256/(256 + 1024) = 20 % and
    // the root hog 80 %; CPU 1: the group 768/1792 = 3/7, 1/7 for each of its hogs, the
    // root hog 4/7.
    let mut w = ten_seconds();
    let g = w.add_group(TaskGroup::cpu_weight("/g", None, 100));
    hog_in(&mut w, "g0", Some(g), Some(0));
    for i in 1..=3 {
        hog_in(&mut w, &format!("g{i}"), Some(g), Some(1));
    }
    hog_in(&mut w, "r0", None, Some(0));
    hog_in(&mut w, "r1", None, Some(1));
    let (r, _) = run(&w, 2, FairFlavor::Eevdf, &[]);
    assert_shares(&shares(&r, &["g0", "r0"]), &[0.2, 0.8], "CPU 0");
    let (g, r1) = (1.0 / 7.0, 4.0 / 7.0);
    assert_shares(&shares(&r, &["g1", "g2", "g3", "r1"]), &[g, g, g, r1], "CPU 1");
}

/// When `w`'s task `name` first runs, from the switch events.
fn first_run(events: &[schedlab_model::Event], pid: u32) -> u64 {
    events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::Switch { next: Pid(p), .. } if p == pid => Some(e.time),
            _ => None,
        })
        .expect("it ran")
}

#[test]
fn a_new_task_preempts_through_its_group_entity() {
    // One CPU (base slice 0.7 ms, ticks every 4 ms). A hog h runs alone from 0; at the
    // tick at 100 ms its deadline became 100 + 0.7 ms = 100.7 ms (vruntime = CPU time,
    // weight 1024). Task n starts at 100.3 ms.
    // - Same queue as h (no groups, or both in one group): n is placed at V = 100.3 ms
    //   with half a slice for its first deadline (PLACE_DEADLINE_INITIAL): 100.65 ms,
    //   before h's: n preempts h at once.
    // - h in /a and n in /b: find_matching_se compares their groups' entities at the
    //   root. /b's is queued (not new: ENQUEUE_WAKEUP) at V = 100.3 ms with a whole
    //   slice: deadline 101.0 ms, after /a's 100.7 ms: no preemption. n waits for the
    //   tick at 104 ms, where /a's entity, past its deadline and no longer eligible,
    //   gives way.
    let build = |h_group: Option<u32>, n_group: Option<u32>, groups: usize| {
        let mut w = Workload::default();
        for i in 0..groups {
            w.add_group(TaskGroup::cpu_weight(format!("/{i}"), None, 100));
        }
        let p = hog(&mut w, "h", 200 * MS);
        w.tasks.push(TaskSpec { group: h_group, ..TaskSpec::new("h", p) });
        let p = hog(&mut w, "n", MS);
        w.tasks.push(TaskSpec { group: n_group, start_ns: 100 * MS + 300_000, ..TaskSpec::new("n", p) });
        w
    };
    let start = 100 * MS + 300_000;
    for (what, w) in [
        ("no groups", build(None, None, 0)),
        ("one group", build(Some(0), Some(0), 1)),
        ("two groups", build(Some(0), Some(1), 2)),
    ] {
        let (_, events) = run(&w, 1, FairFlavor::Eevdf, &[]);
        let want = if what == "two groups" { 104 * MS } else { start };
        assert_eq!(first_run(&events, 2), want, "{what}");
    }
}

#[test]
fn only_eevdf_schedules_groups() {
    let mut w = Workload::default();
    let g = w.add_group(TaskGroup::cpu_weight("/g", None, 100));
    hog_in(&mut w, "h", Some(g), None);
    for fair in [FairFlavor::Cfs, FairFlavor::Timeshare] {
        let e = schedlab_sim::simulate(&w, &schedlab_sim::SimConfig::new(1, fair), None).unwrap_err();
        assert!(matches!(e, SimError::GroupsNeedEevdf { .. }), "{fair:?}: {e}");
        assert!(e.to_string().contains("--fair eevdf"), "{e}");
    }
}

#[test]
fn groups_must_be_declared_before_use() {
    let mut w = Workload::default();
    let p = w.add_program(Program::new("p").op(Op::SetGroup { group: Some(1) }));
    w.add_group(TaskGroup { name: "/a".into(), parent: Some(0), shares: 1024 });
    w.tasks.push(TaskSpec { group: Some(3), ..TaskSpec::new("t", p) });
    let cfg = schedlab_sim::SimConfig::new(1, FairFlavor::Eevdf);
    let err = |w: &Workload| schedlab_sim::simulate(w, &cfg, None).unwrap_err().to_string();
    assert_eq!(err(&w), "invalid workload: p: move to unknown task group 1");
    w.programs[0].ops[0] = Op::SetGroup { group: None };
    assert_eq!(err(&w), "invalid workload: task group 0 (/a): its parent must be an earlier group");
    w.groups[0].parent = None;
    w.groups[0].shares = 1;
    assert_eq!(err(&w), "invalid workload: task group 0 (/a): shares 1 are outside 2..=262144");
    w.groups[0].shares = 1024;
    assert_eq!(err(&w), "invalid workload: task 0 (t): unknown task group 3");
    w.tasks[0].group = Some(0);
    assert!(schedlab_sim::simulate(&w, &cfg, None).is_ok());
}

#[test]
fn an_rt_app_thread_moves_between_groups_when_its_phase_says_so() {
    // One CPU for 2 s. /a holds hog a, /b hog b; t spins 1 s of wall time in /a, then 1 s
    // in /b. First second: /a's half is shared by t and a (1/4 each), b gets 1/2; second
    // second: a has /a's half, t and b a quarter each. CPU time: t 0.5 s, a 0.75 s,
    // b 0.75 s.
    let doc = r#"{"global": {"duration": 2}, "tasks": {
        "a": {"taskgroup": "/a", "loop": 1, "phases": {"p": {"run": 5000000}}},
        "b": {"taskgroup": "/b", "loop": 1, "phases": {"p": {"run": 5000000}}},
        "t": {"loop": 1, "phases": {"in_a": {"taskgroup": "/a", "runtime": 1000000},
                                     "in_b": {"taskgroup": "/b", "runtime": 1000000}}}}}"#;
    let w = schedlab_sim::workloads::rtapp::parse(doc, "move.json").unwrap();
    let (r, _) = run(&w, 1, FairFlavor::Eevdf, &[]);
    let ms = |n: &str| runtime(&r, n) as f64 / 1e6;
    for (name, want) in [("a-0", 750.0), ("b-1", 750.0), ("t-2", 500.0)] {
        assert!((ms(name) - want).abs() < 10.0, "{name}: {} ms of CPU, should be {want}", ms(name));
    }
}

//! RT, round robin, timeshare and CFS-period cases a person can work out by hand.

mod common;

use common::*;
use schedlab_model::{EventKind, Pid};
use schedlab_sim::{FairFlavor, Op, Policy, Program, TaskSpec, Workload};

const MS: u64 = 1_000_000;

/// Times of switches between two real tasks (not from or to idle).
fn task_switches(events: &[schedlab_model::Event]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Switch { prev, next, .. } if prev != Pid::IDLE && next != Pid::IDLE => Some(e.time),
            _ => None,
        })
        .collect()
}

#[test]
fn fifo_runs_the_higher_priority_to_completion() {
    let mut w = Workload::default();
    let p = hog(&mut w, "work", 100 * MS);
    w.tasks.push(task("low", p, Policy::Fifo, 0, 10));
    w.tasks.push(task("high", p, Policy::Fifo, 0, 20));
    w.tasks.push(task("fair", p, Policy::Other, -20, 0));
    let (r, ev) = run(&w, 1, FairFlavor::Eevdf, &[("context_switch_ns", "0")]);
    assert_eq!(turnaround(&r, "high"), 100 * MS);
    assert_eq!(turnaround(&r, "low"), 200 * MS);
    assert_eq!(turnaround(&r, "fair"), 300 * MS);
    assert_eq!(
        task_switches(&ev),
        vec![0, 100 * MS, 200 * MS],
        "low is preempted at once, then each runs whole"
    );
}

#[test]
fn rr_switches_exactly_at_its_quantum() {
    let mut w = Workload::default();
    let p = hog(&mut w, "work", 300 * MS);
    w.tasks.push(task("a", p, Policy::Rr, 0, 50));
    w.tasks.push(task("b", p, Policy::Rr, 0, 50));
    let (r, ev) = run(&w, 1, FairFlavor::Eevdf, &[("context_switch_ns", "0")]);
    let s = task_switches(&ev);
    assert_eq!(&s[..5], &[100 * MS, 200 * MS, 300 * MS, 400 * MS, 500 * MS], "{s:?}");
    assert_eq!(r.makespan_ns, 600 * MS);
    // With nobody else at its priority, an RR task keeps the CPU past its quantum.
    let mut w = Workload::default();
    let p = hog(&mut w, "work", 300 * MS);
    w.tasks.push(task("alone", p, Policy::Rr, 0, 50));
    w.tasks.push(task("lower", p, Policy::Rr, 0, 40));
    let (_, ev) = run(&w, 1, FairFlavor::Eevdf, &[("context_switch_ns", "0")]);
    assert_eq!(task_switches(&ev), vec![300 * MS]);
}

#[test]
fn timeshare_switches_exactly_at_its_quantum() {
    let mut w = Workload::default();
    let p = hog(&mut w, "work", 250 * MS);
    w.tasks.push(task("a", p, Policy::Other, 0, 0));
    w.tasks.push(task("b", p, Policy::Other, 0, 0));
    let sets = [("context_switch_ns", "0"), ("timeshare_quantum_ns", "100ms")];
    let (r, ev) = run(&w, 1, FairFlavor::Timeshare, &sets);
    assert_eq!(
        task_switches(&ev),
        vec![100 * MS, 200 * MS, 300 * MS, 400 * MS, 450 * MS],
        "a b a b a (exits) b"
    );
    assert_eq!(turnaround(&r, "a"), 450 * MS);
    assert_eq!(turnaround(&r, "b"), 500 * MS);
    // A quantum that is not a multiple of the tick still ends exactly.
    let (_, ev) =
        run(&w, 1, FairFlavor::Timeshare, &[("context_switch_ns", "0"), ("timeshare_quantum_ns", "7ms")]);
    assert_eq!(&task_switches(&ev)[..3], &[7 * MS, 14 * MS, 21 * MS]);
}

#[test]
fn cfs_period_grows_past_nr_latency() {
    // One CPU: latency 6 ms, min_granularity 0.75 ms, nr_latency 8. With exact slices
    // (HRTICK) each of n hogs runs period/n at a time: 1.5 ms for 4 hogs (period 6 ms),
    // 0.75 ms for 16 (period 16 x 0.75 = 12 ms, not 6 ms).
    for (n, slice) in [(4u32, 1_500_000u64), (16, 750_000)] {
        let mut w = Workload { duration_ns: Some(120 * MS), ..Default::default() };
        let p = hog(&mut w, "work", 10_000 * MS);
        for i in 0..n {
            w.tasks.push(task(&format!("h{i}"), p, Policy::Other, 0, 0));
        }
        let sets = [("context_switch_ns", "0"), ("hrtick", "1")];
        let (_, ev) = run(&w, 1, FairFlavor::Cfs, &sets);
        let s = task_switches(&ev);
        let steady: Vec<u64> = s.windows(2).skip(2 * n as usize).map(|p| p[1] - p[0]).collect();
        let mean = steady.iter().sum::<u64>() / steady.len() as u64;
        assert!(mean.abs_diff(slice) <= slice / 50, "{n} hogs: mean run {mean} ns, want {slice}");
    }
}

#[test]
fn idle_policy_takes_its_weight_3_share() {
    // 100 s, so that the idle task's ~0.3 % (in whole ticks) is measured within 5 %.
    let mut w = Workload { duration_ns: Some(100_000 * MS), ..Default::default() };
    let p = hog(&mut w, "work", 1_000_000 * MS);
    w.tasks.push(task("normal", p, Policy::Other, 0, 0));
    w.tasks.push(task("idle", p, Policy::Idle, 0, 0));
    let (r, _) = run(&w, 1, FairFlavor::Eevdf, &[]);
    let ratio = runtime(&r, "normal") as f64 / runtime(&r, "idle") as f64;
    assert!((ratio / (1024.0 / 3.0) - 1.0).abs() < 0.05, "SCHED_IDLE weight 3: ratio {ratio}");
}

/// How long task `pid` runs each time it is switched in.
fn runs_of(events: &[schedlab_model::Event], pid: u32) -> Vec<u64> {
    events
        .windows(2)
        .filter_map(|p| match (&p[0].kind, &p[1].kind) {
            (EventKind::Switch { next, .. }, EventKind::Switch { prev, .. })
                if next.0 == pid && prev.0 == pid =>
            {
                Some(p[1].time - p[0].time)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn eevdf_custom_slice_sets_run_length() {
    // Two hogs that both ask for 10 ms slices: with exact slices each runs 10 ms at a time.
    let mut w = Workload { duration_ns: Some(200 * MS), ..Default::default() };
    let p = hog(&mut w, "work", 10_000 * MS);
    for name in ["a", "b"] {
        w.tasks.push(TaskSpec { slice_ns: Some(10 * MS), ..task(name, p, Policy::Other, 0, 0) });
    }
    let (r, ev) = run(&w, 1, FairFlavor::Eevdf, &[("context_switch_ns", "0"), ("hrtick", "1")]);
    let (a, b) = (runtime(&r, "a") as f64, runtime(&r, "b") as f64);
    assert!((a / (a + b) - 0.5).abs() < 0.05, "equal weights share evenly: {a} {b}");
    let runs = runs_of(&ev, 1);
    assert!(runs[1..].iter().all(|r| (9 * MS..=11 * MS).contains(r)), "runs of a: {runs:?}");
}

#[test]
fn eevdf_protects_a_long_slice_only_for_the_shortest_queued_one() {
    // 6.17's RUN_TO_PARITY: queued with a task of the default 0.7 ms slice, the 10 ms
    // task is protected for 0.7 ms only; the next tick (4 ms at HZ=250) ends its run
    // when the other task is the pick by then.
    let mut w = Workload { duration_ns: Some(200 * MS), ..Default::default() };
    let p = hog(&mut w, "work", 10_000 * MS);
    w.tasks.push(TaskSpec { slice_ns: Some(10 * MS), ..task("long", p, Policy::Other, 0, 0) });
    w.tasks.push(task("short", p, Policy::Other, 0, 0));
    let (r, ev) = run(&w, 1, FairFlavor::Eevdf, &[("context_switch_ns", "0"), ("hrtick", "1")]);
    let (a, b) = (runtime(&r, "long") as f64, runtime(&r, "short") as f64);
    assert!((a / (a + b) - 0.5).abs() < 0.05, "equal weights still share evenly: {a} {b}");
    let runs = runs_of(&ev, 1);
    let max = *runs.iter().max().unwrap();
    assert!(max <= 4 * MS, "runs of the 10 ms task end by the first tick after 0.7 ms: {runs:?}");
}

#[test]
fn affinity_and_balance_on_two_cpus() {
    // Four hogs pinned to CPU 1 never run on CPU 0, and leave CPU 0 to the free one.
    let mut w = Workload { duration_ns: Some(1_000 * MS), ..Default::default() };
    let p = w.add_program(Program::new("work").op(Op::Compute(10_000 * MS)));
    for i in 0..4 {
        w.tasks.push(TaskSpec {
            affinity: Some(vec![1]),
            ..task(&format!("pinned{i}"), p, Policy::Other, 0, 0)
        });
    }
    w.tasks.push(task("free", p, Policy::Other, 0, 0));
    let (r, ev) = run(&w, 2, FairFlavor::Eevdf, &[]);
    for e in &ev {
        if let EventKind::Switch { cpu, next, .. } = e.kind {
            assert!(
                !(cpu == 0 && (1..=4).contains(&next.0)),
                "pinned task {next} ran on CPU 0 at {}",
                e.time
            );
        }
    }
    assert!(runtime(&r, "free") > 950 * MS, "the free hog has CPU 0 to itself: {}", runtime(&r, "free"));
}

#[test]
fn an_exit_carries_the_life_the_task_lived() {
    // On one CPU, no costs: two 10 ms hogs under EEVDF, and a task that computes 1 ms,
    // sleeps 9 ms and computes 1 ms more. Each hog is runnable all its life (running or
    // waiting for the CPU); the sleeper is runnable only while it computes, or waits to.
    let mut w = Workload::default();
    let p = hog(&mut w, "work", 10 * MS);
    let s =
        w.add_program(Program::new("sleeper").op(Op::Compute(MS)).op(Op::Sleep(9 * MS)).op(Op::Compute(MS)));
    w.tasks.push(task("a", p, Policy::Other, 0, 0));
    w.tasks.push(task("b", p, Policy::Other, 0, 0));
    w.tasks.push(TaskSpec::new("sleeper", s));
    let (r, ev) = run(&w, 1, FairFlavor::Eevdf, &[("context_switch_ns", "0"), ("syscall_ns", "0")]);
    let lives: Vec<(u32, schedlab_model::Life)> = ev
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Exit { pid, life: Some(life), .. } => Some((pid.0, life)),
            _ => None,
        })
        .collect();
    assert_eq!(lives.len(), 3, "every exit carries its life: {lives:?}");
    for (pid, life) in &lives {
        let t = &r.tasks[*pid as usize - 1];
        assert_eq!(
            (life.runtime_ns, life.nvcsw, life.nivcsw),
            (t.runtime_ns, t.nvcsw, t.nivcsw),
            "{}",
            t.name
        );
        assert_eq!(life.lived_ns, t.turnaround_ns, "{}", t.name);
        assert_eq!(life.wait_ns, t.wait_ns, "{}", t.name);
        if t.name == "sleeper" {
            assert_eq!(life.runtime_ns, 2 * MS);
            assert_eq!(
                life.runtime_ns + life.wait_ns + 9 * MS,
                life.lived_ns,
                "asleep 9 ms, runnable the rest"
            );
            // It waited 8 ms behind the hogs: runnable 10 of its 19 ms.
            assert_eq!((life.wait_ns, life.lived_ns), (8 * MS, 19 * MS));
            assert_eq!(life.runnable_share(), 10.0 / 19.0);
        } else {
            assert_eq!(life.runtime_ns, 10 * MS);
            assert_eq!(life.runtime_ns + life.wait_ns, life.lived_ns, "{}: never asleep", t.name);
            assert_eq!(life.runnable_share(), 1.0);
        }
    }
}

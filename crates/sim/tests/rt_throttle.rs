//! Real-time hogs next to fair tasks, worked out by hand from the rules of Linux 6.18
//! (README, "The simulated kernel"): RT throttling (950 ms of real-time CPU time per 1 s
//! period on each CPU, counted from the first real-time task's arrival, checked at the
//! ticks, every 4 ms) and the deferred fair server (50 ms per 1 s, run at its zero-laxity
//! instant, 950 ms of real-time running after its period began; its window lasts until a
//! tick finds the budget overdrawn, 54 ms when it began 2 ms after a tick). Context
//! switches cost nothing here, so the times are exact.

mod common;

use common::*;
use schedlab_model::{Event, EventKind, Pid};
use schedlab_sim::{FairFlavor, Policy, SimConfig, SimError, Workload};

const MS: u64 = 1_000_000;

/// The stretches `(from, to)` in ms in which task `pid` ran (`to` is `None` while it
/// still runs at the end).
fn runs(events: &[Event], pid: u32) -> Vec<(u64, Option<u64>)> {
    let mut out = Vec::new();
    let mut since = None;
    for e in events {
        if let EventKind::Switch { prev, next, .. } = e.kind {
            if prev == Pid(pid) {
                out.extend(since.take().map(|s| (s / MS, Some(e.time / MS))));
            }
            if next == Pid(pid) {
                since = Some(e.time);
            }
        }
    }
    out.extend(since.map(|s| (s / MS, None)));
    out
}

/// A 3 s run on `cpus` CPUs, free context switches, and `sets`.
fn run3s(w: Workload, cpus: u32, sets: &[(&str, &str)]) -> (schedlab_sim::Report, Vec<Event>) {
    let w = Workload { duration_ns: Some(3_000 * MS), ..w };
    let mut all = vec![("context_switch_ns", "0"), ("migration_ns", "0")];
    all.extend_from_slice(sets);
    run(&w, cpus, FairFlavor::Eevdf, &all)
}

/// A real-time hog of `policy` (pid 1) and a fair hog (pid 2) starting at `fair_ms`.
fn rt_and_fair(policy: Policy, fair_ms: u64) -> Workload {
    let mut w = Workload::default();
    let p = hog(&mut w, "work", 10_000 * MS);
    w.tasks.push(task("rt", p, policy, 0, 10));
    let mut fair = task("fair", p, Policy::Other, 0, 0);
    fair.start_ns = fair_ms * MS;
    w.tasks.push(fair);
    w
}

#[test]
fn an_rt_hog_leaves_a_fair_hog_the_fair_servers_windows() {
    for policy in [Policy::Fifo, Policy::Rr] {
        let (r, ev) = run3s(rt_and_fair(policy, 0), 1, &[]);
        // The server starts with the fair task at 0: deadline 1000, budget 50, so it runs
        // at 950. At the tick of 1000 its 50 ms are spent but not overdrawn; the tick of
        // 1004 ends the window and starts a new period there: the next window at
        // 1004 + 950. The real-time task uses 950 ms of each RT period (1000, 2000, ...)
        // at most, never more: RT throttling never comes into it.
        assert_eq!(runs(&ev, 2), [(950, Some(1004)), (1954, Some(2008)), (2958, None)], "{policy:?}");
        assert_eq!(runtime(&r, "fair"), 150 * MS);
        assert_eq!(runtime(&r, "rt"), 2_850 * MS);
    }
}

#[test]
fn without_rt_throttling_the_fair_server_still_runs_and_without_both_fair_starves() {
    // sched_rt_runtime_us = -1 leaves the fair server (its own debugfs knobs) as it is.
    let (r, ev) = run3s(rt_and_fair(Policy::Fifo, 0), 1, &[("sched_rt_runtime_ns", "-1")]);
    assert_eq!(runs(&ev, 2), [(950, Some(1004)), (1954, Some(2008)), (2958, None)]);
    assert_eq!(runtime(&r, "fair"), 150 * MS);
    let (r, ev) = run3s(
        rt_and_fair(Policy::Fifo, 0),
        1,
        &[("sched_rt_runtime_ns", "-1"), ("fair_server_runtime_ns", "0")],
    );
    assert_eq!(runs(&ev, 2), []);
    assert_eq!(runtime(&r, "fair"), 0);
    assert_eq!(runtime(&r, "rt"), 3_000 * MS);
}

#[test]
fn rt_throttling_alone_gives_the_rest_of_each_period() {
    // Without the server, the tick that finds more than 950 ms used (952: 952 ms; then
    // 2 ms are carried over, 1952: 954; 4 carried, 2948: 952) throttles the real-time
    // task until the period ends (at 3000 it takes the CPU back).
    let (r, ev) = run3s(rt_and_fair(Policy::Fifo, 0), 1, &[("fair_server_runtime_ns", "0")]);
    assert_eq!(runs(&ev, 2), [(952, Some(1000)), (1952, Some(2000)), (2948, Some(3000))]);
    assert_eq!(runtime(&r, "fair"), 148 * MS);
}

#[test]
fn an_rt_hog_alone_is_throttled_and_its_cpu_idles() {
    let mut w = Workload::default();
    let p = hog(&mut w, "work", 10_000 * MS);
    w.tasks.push(task("rt", p, Policy::Fifo, 0, 10));
    let (r, ev) = run3s(w, 1, &[]);
    assert_eq!(runs(&ev, 1), [(0, Some(952)), (1000, Some(1952)), (2000, Some(2948)), (3000, None)]);
    assert_eq!(runtime(&r, "rt"), 2_852 * MS);
    assert_eq!(r.cpu_busy_ns, [2_852 * MS]);
}

#[test]
fn a_cpu_borrows_no_runtime_from_an_idle_one() {
    // RT_RUNTIME_SHARE is off: CPU 1's unused runtime does not keep CPU 0 running, and
    // the one real-time task stays on CPU 0 while throttled (a CPU with a single
    // real-time task is not RT-overloaded, nothing pushes it, and nothing pulls from a
    // throttled CPU), whether pinned there or not.
    for pinned in [true, false] {
        let mut w = Workload::default();
        let p = hog(&mut w, "work", 10_000 * MS);
        let mut rt = task("rt", p, Policy::Fifo, 0, 10);
        rt.affinity = pinned.then(|| vec![0]);
        w.tasks.push(rt);
        let (r, ev) = run3s(w, 2, &[]);
        assert_eq!(runs(&ev, 1), [(0, Some(952)), (1000, Some(1952)), (2000, Some(2948)), (3000, None)]);
        assert_eq!(r.cpu_busy_ns, [2_852 * MS, 0], "pinned: {pinned}");
        assert_eq!(r.tasks[0].migrations, 0);
    }
}

#[test]
fn the_fair_servers_window_does_not_push_a_lone_rt_task_away() {
    // CPU 0: an unpinned real-time hog and a fair hog; CPU 1: a fair hog. In CPU 0's
    // server windows the real-time task waits there; it does not take CPU 1.
    let mut w = rt_and_fair(Policy::Fifo, 0);
    w.tasks[1].affinity = Some(vec![0]);
    let p = w.tasks[1].program;
    let mut other = task("other", p, Policy::Other, 0, 0);
    other.affinity = Some(vec![1]);
    w.tasks.push(other);
    let (r, ev) = run3s(w, 2, &[]);
    assert_eq!(runs(&ev, 2), [(950, Some(1004)), (1954, Some(2008)), (2958, None)]);
    assert_eq!(runtime(&r, "other"), 3_000 * MS);
    assert_eq!(r.tasks[0].migrations, 0);
}

#[test]
fn a_fair_task_arriving_later_runs_in_the_throttling_then_at_its_servers_instant() {
    // The real-time hog runs alone from 0: throttled at the tick of 952 until its period
    // ends at 1000. The fair task, arrived at 500 (its server's deadline 1500, budget 50,
    // zero-laxity 1450), runs in that gap: 48 ms charged to its server in the
    // background, 2 ms left, so its timer at 1450 finds the zero-laxity instant moved to
    // 1498 and waits until then. From 1498 a new period: the window until the tick of
    // 1552 (1548 spends it exactly), then 1552 + 950 = 2502 to 2556. RT periods: 498 +
    // 448 ms in [1000, 2000), 502 + 444 in [2000, 3000): never throttled again.
    let (r, ev) = run3s(rt_and_fair(Policy::Fifo, 500), 1, &[]);
    assert_eq!(runs(&ev, 2), [(952, Some(1000)), (1498, Some(1552)), (2502, Some(2556))]);
    assert_eq!(runtime(&r, "fair"), 156 * MS);
    assert_eq!(runtime(&r, "rt"), 2_844 * MS);
}

#[test]
fn two_rr_hogs_share_the_rt_time_the_server_leaves() {
    // Both count against the CPU's RT runtime and its server's starvation alike: the
    // fair windows are those of one hog, and the two alternate every 100 ms quantum in
    // between.
    let mut w = rt_and_fair(Policy::Rr, 0);
    let p = w.tasks[0].program;
    w.tasks.push(task("rt2", p, Policy::Rr, 0, 10));
    let (r, ev) = run3s(w, 1, &[]);
    assert_eq!(runs(&ev, 2), [(950, Some(1004)), (1954, Some(2008)), (2958, None)]);
    assert_eq!(runtime(&r, "rt") + runtime(&r, "rt2"), 2_850 * MS);
    assert_eq!(runs(&ev, 1)[..3], [(0, Some(100)), (200, Some(300)), (400, Some(500))]);
}

#[test]
fn no_rt_runtime_refuses_real_time_tasks() {
    let mut cfg = SimConfig::new(1, FairFlavor::Eevdf);
    cfg.tunables.set("sched_rt_runtime_ns", "0").unwrap();
    let w = rt_and_fair(Policy::Fifo, 0);
    let e = schedlab_sim::simulate(&w, &cfg, None).unwrap_err();
    assert!(matches!(e, SimError::NoRtRuntime), "{e}");
    // Without real-time tasks it changes nothing.
    let mut fair_only = rt_and_fair(Policy::Other, 0);
    fair_only.duration_ns = Some(100 * MS);
    schedlab_sim::simulate(&fair_only, &cfg, None).unwrap();
    // A runtime longer than its period is refused.
    cfg.tunables.set("sched_rt_runtime_ns", "2s").unwrap();
    let e = schedlab_sim::simulate(&fair_only, &cfg, None).unwrap_err();
    assert!(e.to_string().contains("sched_rt_period_ns"), "{e}");
}

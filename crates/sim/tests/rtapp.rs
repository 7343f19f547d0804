//! rt-app files in the simulator, each with an answer worked out by hand. System calls,
//! context switches and migrations cost nothing here, so the times are exact; the same
//! files (or their kind) run on the real rt-app in `crates/lab/tests/rtapp_semantics.rs`.

use schedlab_sim::workloads::rtapp;
use schedlab_sim::{FairFlavor, Report, SimConfig};

const MS: u64 = 1_000_000;

/// Simulates the rt-app document `text` on `cpus` CPUs without overheads.
fn run(text: &str, cpus: u32) -> Report {
    let w = rtapp::parse(text, "t.json").unwrap_or_else(|e| panic!("{e}"));
    let mut cfg = SimConfig::new(cpus, FairFlavor::Eevdf);
    for k in ["syscall_ns", "context_switch_ns", "migration_ns"] {
        cfg.tunables.set(k, "0").unwrap();
    }
    schedlab_sim::simulate(&w, &cfg, None).unwrap()
}

/// When the task named `name` exited (its start plus its turnaround), in ms.
fn end_ms(r: &Report, name: &str, start_ms: u64) -> f64 {
    let t = r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"));
    assert!(t.exited, "{name} did not exit");
    (start_ms * MS + t.turnaround_ns) as f64 / MS as f64
}

#[test]
fn a_task_without_phases_runs_until_the_duration_whatever_its_loop() {
    // Issue 14: rt-app 1.0 runs this until killed; it used to run 3 times (303 ms).
    let r =
        run(r#"{"global": {"duration": 1}, "tasks": {"t": {"loop": 3, "run": 1000, "sleep": 100000}}}"#, 1);
    let t = &r.tasks[0];
    assert!(!t.exited);
    assert_eq!(r.makespan_ns, 1_000 * MS);
    // Iterations start every 101 ms: at 0, 101, ..., 909.
    assert_eq!(t.runtime_ns, 10 * MS);
}

#[test]
fn timers_start_at_the_task_start_and_a_late_relative_timer_restarts() {
    let r = run(
        r#"{"global": {"duration": 1}, "tasks": {
          "first": {"cpus": [0], "loop": 1, "phases": {"p": {"loop": 3, "run": 10000, "timer": {"ref": "unique", "period": 30000}}}},
          "rel": {"cpus": [1], "loop": 1, "phases": {"a": {"run": 40000, "timer": {"ref": "uniqueR", "period": 30000}},
                  "b": {"loop": 3, "run": 5000, "timer": {"ref": "uniqueR", "period": 30000}}}},
          "abs": {"cpus": [2], "loop": 1, "phases": {"a": {"run": 40000, "timer": {"ref": "uniqueA", "period": 30000, "mode": "absolute"}},
                  "b": {"loop": 3, "run": 5000, "timer": {"ref": "uniqueA", "period": 30000}}}},
          "del": {"cpus": [3], "delay": 100000, "loop": 1, "phases": {"p": {"loop": 2, "run": 1000, "timer": {"ref": "unique", "period": 50000}}}}}}"#,
        4,
    );
    // The first activation is one period after the start, not after the first run.
    assert_eq!(end_ms(&r, "first-0", 0), 90.0);
    // Late at 40: relative restarts there (70, 100, 130); absolute keeps 60, 90, 120.
    assert_eq!(end_ms(&r, "rel-1", 0), 130.0);
    assert_eq!(end_ms(&r, "abs-2", 0), 120.0);
    // A delayed task's timer starts at its start: 150, 200.
    assert_eq!(end_ms(&r, "del-3", 100), 200.0);
}

#[test]
fn threads_with_the_same_timer_ref_share_it() {
    let r = run(
        r#"{"global": {"duration": 1}, "tasks": {
          "sh": {"instance": 2, "loop": 1, "phases": {"p": {"loop": 3, "run": 2000, "timer": {"ref": "shared", "period": 40000}}}}}}"#,
        2,
    );
    // Each use advances the one timer by 40 ms: the threads wake alternately, each every 80 ms.
    assert_eq!(end_ms(&r, "sh-0", 0), 200.0);
    assert_eq!(end_ms(&r, "sh-1", 0), 240.0);
}

#[test]
fn a_mutex_serializes_its_critical_sections() {
    let r = run(
        r#"{"global": {"duration": 1}, "tasks": {
          "a": {"loop": 1, "phases": {"p": {"loop": 2, "lock": "m", "run": 20000, "unlock": "m", "sleep": 1000}}},
          "b": {"loop": 1, "phases": {"p": {"loop": 2, "lock": "m", "run": 5000, "unlock": "m", "sleep": 1000}}}}}"#,
        2,
    );
    // a holds m 0–20 and (after b's 20–25) 25–45; b waits for it again until 45.
    assert_eq!(end_ms(&r, "a-0", 0), 46.0);
    assert_eq!(end_ms(&r, "b-1", 0), 51.0);
}

/// Low holds the mutex high wants; middle arrives and, without priority inheritance,
/// keeps low (and so high) waiting: the unbounded priority inversion PI exists for.
fn inversion(pi: bool) -> Report {
    run(
        &format!(
            r#"{{"global": {{"duration": 1, "pi_enabled": {pi}, "default_policy": "SCHED_FIFO"}}, "tasks": {{
              "low": {{"priority": 10, "loop": 1, "phases": {{"p": {{"lock": "m", "run": 10000, "unlock": "m"}}}}}},
              "high": {{"priority": 30, "delay": 1000, "loop": 1, "phases": {{"p": {{"lock": "m", "run": 1000, "unlock": "m"}}}}}},
              "mid": {{"priority": 20, "delay": 2000, "loop": 1, "phases": {{"p": {{"run": 20000}}}}}}}}}}"#
        ),
        1,
    )
}

#[test]
fn priority_inheritance_lends_the_waiters_priority_to_the_holder() {
    let r = inversion(false);
    // low 0–2, mid 2–22, low 22–30, high 30–31 (preempting low as its unlock returns),
    // low's exit 31.
    assert_eq!(end_ms(&r, "high-1", 1), 31.0);
    assert_eq!(end_ms(&r, "mid-2", 2), 22.0);
    assert_eq!(end_ms(&r, "low-0", 0), 31.0);
    let r = inversion(true);
    // low runs at high's priority from 1 to its unlock at 10; high 10–11; mid 11–31;
    // low, back at its own priority, exits last.
    assert_eq!(end_ms(&r, "low-0", 0), 31.0);
    assert_eq!(end_ms(&r, "high-1", 1), 11.0);
    assert_eq!(end_ms(&r, "mid-2", 2), 31.0);
    let low = r.tasks.iter().find(|t| t.name == "low-0").unwrap();
    assert_eq!((low.policy, low.rt_priority), ("SCHED_FIFO", 10), "the boost ends with the lock");
}

#[test]
fn wait_signal_suspend_resume_and_barrier() {
    let r = run(
        r#"{"global": {"duration": 1}, "tasks": {
          "w": {"loop": 1, "phases": {"p": {"loop": 3, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 1000}}},
          "s": {"loop": 1, "phases": {"p": {"loop": 3, "sleep": 50000, "lock": "m", "signal": "c", "unlock": "m"}}},
          "b1": {"loop": 1, "phases": {"p": {"loop": 2, "run": 10000, "barrier": "B"}}},
          "b2": {"loop": 1, "phases": {"p": {"loop": 2, "sleep": 30000, "barrier": "B"}}},
          "su": {"loop": 1, "phases": {"p": {"loop": 2, "suspend": "su", "run": 1000}}},
          "re": {"loop": 1, "phases": {"p": {"loop": 2, "sleep": 70000, "resume": "su"}}}}}"#,
        6,
    );
    // Signalled at 50, 100, 150; each wake-up runs 1 ms.
    assert_eq!(end_ms(&r, "w-0", 0), 151.0);
    // The barrier lets both through when the sleeper arrives: at 30 and 60.
    assert_eq!(end_ms(&r, "b1-2", 0), 60.0);
    assert_eq!(end_ms(&r, "b2-3", 0), 60.0);
    // Resumed at 70 and 140.
    assert_eq!(end_ms(&r, "su-4", 0), 141.0);
}

#[test]
fn broadcast_wakes_every_waiter_and_a_signal_one() {
    let r = run(
        r#"{"global": {"duration": 1}, "tasks": {
          "w": {"instance": 3, "loop": 1, "phases": {"p": {"lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 1000}}},
          "s": {"loop": 1, "phases": {"a": {"sleep": 10000, "lock": "m", "signal": "c", "unlock": "m"},
                                      "b": {"sleep": 10000, "lock": "m", "broad": "c", "unlock": "m"}}}}}"#,
        4,
    );
    // The longest waiter (w-0) wakes at 10, the other two at 20.
    assert_eq!(end_ms(&r, "w-0", 0), 11.0);
    assert_eq!(end_ms(&r, "w-1", 0), 21.0);
    assert_eq!(end_ms(&r, "w-2", 0), 21.0);
}

#[test]
fn phases_change_affinity_and_priority_when_they_start() {
    // hog holds CPU 0 for 30 ms at a real-time priority; t's second phase needs CPU 0.
    let r = run(
        r#"{"global": {"duration": 1}, "tasks": {
          "hog": {"policy": "SCHED_FIFO", "cpus": [0], "loop": 1, "phases": {"p": {"run": 30000}}},
          "t": {"loop": 1, "phases": {"a": {"cpus": [1], "run": 10000}, "b": {"cpus": [0], "run": 10000}}}}}"#,
        2,
    );
    assert_eq!(end_ms(&r, "t-1", 0), 40.0);
    // t drops below hog's priority when its second phase starts.
    let r = run(
        r#"{"global": {"duration": 1, "default_policy": "SCHED_FIFO"}, "tasks": {
          "t": {"loop": 1, "phases": {"a": {"priority": 60, "run": 10000}, "b": {"priority": 40, "run": 10000}}},
          "hog": {"priority": 50, "delay": 5000, "loop": 1, "phases": {"p": {"run": 20000}}}}}"#,
        1,
    );
    assert_eq!(end_ms(&r, "hog-1", 5), 30.0);
    assert_eq!(end_ms(&r, "t-0", 0), 40.0);
}

#[test]
fn fork_starts_threads_of_a_template() {
    let r = run(
        r#"{"global": {"duration": 1}, "tasks": {
          "main": {"loop": 1, "phases": {"p": {"loop": 2, "fork": "worker", "sleep": 10000}}},
          "worker": {"instance": 0, "loop": 1, "phases": {"p": {"run": 5000}}}}}"#,
        2,
    );
    let workers: Vec<_> = r.tasks.iter().filter(|t| t.name == "worker").collect();
    assert_eq!(workers.len(), 2);
    assert!(workers.iter().all(|w| w.exited && w.runtime_ns == 5 * MS && w.turnaround_ns == 5 * MS));
    assert_eq!(r.makespan_ns, 20 * MS);
}

#[test]
fn mem_is_cpu_time_at_the_machines_rate_and_one_group_changes_nothing() {
    // 1 MiB of memset (and 1000 bytes to /dev/null, which copy nothing): 1024 KiB at the
    // `mem_ns_per_kib` given, 10.24 µs at 10 ns and twice that at 20.
    let text = r#"{"global": {"duration": 1}, "tasks": {"m": {"taskgroup": "/g", "loop": 1, "phases": {"p": {"mem": 1048576, "iorun": 1000}}}}}"#;
    let w = rtapp::parse(text, "t.json").unwrap_or_else(|e| panic!("{e}"));
    for (rate, want_ns) in [("10", 10_240), ("20", 20_480)] {
        let mut cfg = SimConfig::new(1, FairFlavor::Eevdf);
        for (k, v) in
            [("syscall_ns", "0"), ("context_switch_ns", "0"), ("migration_ns", "0"), ("mem_ns_per_kib", rate)]
        {
            cfg.tunables.set(k, v).unwrap();
        }
        let r = schedlab_sim::simulate(&w, &cfg, None).unwrap();
        let m = r.tasks.iter().find(|t| t.name == "m-0").expect("the task m-0");
        assert_eq!(m.runtime_ns, want_ns, "at {rate} ns per KiB");
    }
}

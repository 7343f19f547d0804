//! One rt-app file, two worlds: each test runs a small file with the real rt-app (Debian's
//! 1.0, on this machine; it needs root for its real-time threads) and in the simulator,
//! and compares when each thread finished (rt-app's per-thread logs against the
//! simulated tasks' exits), or, for a real-time hog next to a fair one, how much CPU time
//! each got. A test that cannot run rt-app fails and says why.
//!
//! **Tolerance: 3 ms + 5 % of the simulated time.** The machine is shared (2 CPUs, other
//! builds running), so the files run their threads `SCHED_FIFO`, which ordinary
//! processes cannot delay, and let sleeps, timers and synchronization set the times,
//! with little CPU work (never more than 40 ms spinning). The CPU work is mostly
//! `runtime` (spin for a wall time): this machine is a virtual one whose busy loop runs
//! up to 20 % slower from one run to the next (a 30 ms `run` measured 36 ms), which
//! would blur the times that show the semantics; `run` itself is compared by
//! `schedlab validate` and here in the loop test. What remains is: the start
//! barrier's skew between threads (0.1–1 ms), wake-up latencies after timers and
//! futexes (tens of µs, a millisecond under interrupt load), rt-app's own work per event
//! (clock reads, log lines: µs), and the busy loop's speed, calibrated once but slower
//! when the other CPU's work shares the caches (a few %). 3 ms covers the first three
//! summed over a test's events; 5 % covers the last. A semantic difference is far
//! larger: a timer that starts at first use instead of at the task's start is off by a
//! whole `run` (10 ms), a missing priority inheritance by 20 ms, a task that loops three
//! times instead of for ever by 700 ms.
//!
//! **Measured spread** (this machine, 2026-11-27; six runs of this file, four on a quiet
//! machine and two beside two busy loops): the worst |real − simulated| of a test held to
//! 3 ms + 5 % was 0.5 ms of its 5.5 ms quiet (b-1) and 2.2 ms of its 4.5 ms loaded (mid-2,
//! high-1: wake-up latencies after a futex); the memset test's 6.2 ms of its 12.3 ms;
//! the real-time hog test's 10.1 ms (fair, its own tolerance: see the test) and 8.0 ms of
//! 146 ms (rt).
//!
//! The real runs take turns (one at a time) so that they do not compete for the CPUs.
//!
//! **Task groups.** rt-app 1.0 ignores `taskgroup` (a key of rt-app ≥ 1.1), so the tests
//! of group scheduling make the cgroups themselves, in the hierarchy of this machine's
//! `cpu` controller (read from its mounts: cgroup v1's `cpu.shares`, as on this project's
//! hybrid machines, or v2's `cpu.weight`), and start one rt-app process in each; every
//! cgroup they make is removed when the test ends, passes or fails. They compare each
//! thread's share of the CPU time the test's threads got together, which other tasks on
//! the CPU (in other groups) do not change.
//!
//! **The host is read, not assumed**: rt-app's version (the simulator's reference is
//! 1.0: a file means what 1.0 makes of it), the kernel's RT throttling and fair server
//! (the real-time hog test's answer by hand is for the kernel's defaults), the `cpu`
//! controller. A host that differs fails the test that depends on it, saying how.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::Duration;

use schedlab_lab::validate::calibrate;
use schedlab_lab::validate::rtapp::{
    calibrate_loop, run, run_logs, run_placed, Placement, RtAppRun, ThreadLog,
};
use schedlab_live::host::{self, CpuController};
use schedlab_sim::workloads::rtapp;
use schedlab_sim::{FairFlavor, Report, SimConfig};

/// The CPUs rt-app's threads may run on (this test's own, which they inherit), as many as
/// the simulator is given: CPUs 0 and 1 (the files pin threads to them), and any more this
/// test may use. A test run with fewer (`taskset -c 0`) fails with the reason.
fn cpus() -> u32 {
    let allowed = schedlab_live::settings::get_affinity(schedlab_model::Pid(0)).expect("this test's CPUs");
    let n = allowed.cpus().len();
    assert!(
        allowed.cpus().iter().copied().eq(0..n) && n >= 2,
        "these tests pin rt-app's threads to CPUs 0 and 1 and simulate the CPUs they may use, 0 to n-1; \
         this test may use {allowed}"
    );
    n as u32
}
const LIMIT: Duration = Duration::from_secs(10);

/// One real run at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// rt-app's busy loop, measured once: `run` events must last as long as simulated.
fn ns_per_loop() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| calibrate_loop(2, LIMIT).unwrap_or_else(|e| panic!("cannot calibrate rt-app: {e}")))
}

/// Fails with the reason when rt-app cannot run its real-time threads here.
fn require_rt_app() {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("rt-app").is_file()));
    assert!(found, "rt-app is not installed (Debian package rt-app): these tests run it");
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let euid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|l| l.split_whitespace().nth(1));
    assert_eq!(euid, Some("0"), "these tests run rt-app's SCHED_FIFO threads, which needs root");
    let version = schedlab_lab::validate::rtapp::installed_version();
    assert_eq!(
        version,
        Some((1, 0)),
        "the simulator reads rt-app files as rt-app 1.0 (Debian 12's) runs them; this machine's rt-app is {version:?} \
         (dpkg-query -W rt-app)"
    );
}

/// A file run both ways.
struct Both {
    real: Vec<ThreadLog>,
    sim: Report,
    /// Each simulated thread's start (its `delay`), by name, in ms.
    starts: Vec<(String, f64)>,
}

impl Both {
    /// Runs `doc` (JSON) with rt-app and simulates it on `cpus` CPUs.
    fn run(doc: &str, cpus: u32) -> Both {
        Both::run_with(doc, cpus, &[])
    }

    /// [`Both::run`], simulated with the tunables `set` (name, value).
    fn run_with(doc: &str, cpus: u32, set: &[(&str, String)]) -> Both {
        require_rt_app();
        let w = rtapp::parse(doc, "test.json").unwrap_or_else(|e| panic!("{e}"));
        let mut config = SimConfig::new(cpus, FairFlavor::Eevdf);
        for (name, value) in set {
            config.tunables.set(name, value).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let sim = schedlab_sim::simulate(&w, &config, None).unwrap();
        let starts = w.tasks.iter().map(|t| (t.name.clone(), t.start_ns as f64 / 1e6)).collect();
        let rate = ns_per_loop();
        let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let real = run_logs(doc, rate, LIMIT).unwrap_or_else(|e| panic!("rt-app: {e}"));
        assert!(real.iter().any(|l| !l.rows.is_empty()), "rt-app wrote no log rows");
        Both { real, sim, starts }
    }

    /// The real thread the simulator names `name` (`<key>-<n>`), matched by key and by
    /// its rank among the threads of that key.
    fn log(&self, name: &str) -> &ThreadLog {
        let (key, _) = name.rsplit_once('-').unwrap_or_else(|| panic!("{name} is not <key>-<n>"));
        let rank = self
            .sim
            .tasks
            .iter()
            .filter(|t| t.name.rsplit_once('-').is_some_and(|(k, _)| k == key))
            .position(|t| t.name == name);
        let rank = rank.unwrap_or_else(|| panic!("no simulated {name}"));
        self.real
            .iter()
            .filter(|l| l.key == key)
            .nth(rank)
            .unwrap_or_else(|| panic!("rt-app has no thread {name}"))
    }

    /// How long the real thread `name` ran, from its start (rt-app's time zero, taken as
    /// the earliest first phase of the threads without `delay`, plus its own `delay`) to
    /// the end of its last phase, in ms. (Its first phase may start later: when it first
    /// gets a CPU.)
    fn real_ms(&self, name: &str) -> f64 {
        let start = |n: &str| self.starts.iter().find(|(s, _)| s == n).map_or(0.0, |s| s.1);
        let origin = self
            .sim
            .tasks
            .iter()
            .filter(|t| start(&t.name) == 0.0)
            .filter_map(|t| self.log(&t.name).rows.first())
            .map(|r| r.start_us)
            .min()
            .expect("a thread without delay logged");
        let last = self.log(name).rows.last().unwrap_or_else(|| panic!("{name} logged nothing"));
        (last.end_us as f64 - origin as f64) / 1e3 - start(name)
    }

    /// How long the simulated thread `name` ran, from its start to its exit, in ms.
    fn sim_ms(&self, name: &str) -> f64 {
        let t =
            self.sim.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no simulated {name}"));
        assert!(t.exited, "simulated {name} did not exit");
        t.turnaround_ns as f64 / 1e6
    }

    /// Asserts that `name` took as long in both worlds, within the tolerance, and as long
    /// as worked out by hand (`expected_ms`, also within it).
    fn same(&self, name: &str, expected_ms: f64) {
        self.same_within(name, expected_ms, 3.0, 0.05);
    }

    /// [`Both::same`] for threads whose order among themselves is a race in rt-app:
    /// their sorted times are compared.
    fn same_sorted(&self, names: &[&str], expected_ms: &[f64]) {
        let sorted = |f: &dyn Fn(&str) -> f64| {
            let mut v: Vec<f64> = names.iter().map(|n| f(n)).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (real, sim) = (sorted(&|n| self.real_ms(n)), sorted(&|n| self.sim_ms(n)));
        eprintln!("{names:?}: real {real:?} ms, simulated {sim:?} ms, by hand {expected_ms:?} ms");
        for ((r, s), e) in real.iter().zip(&sim).zip(expected_ms) {
            let tolerance = 3.0 + 0.05 * s;
            assert!(
                (r - s).abs() <= tolerance && (s - e).abs() <= tolerance,
                "{names:?}: real {real:?}, simulated {sim:?}, by hand {expected_ms:?}"
            );
        }
    }

    /// [`Both::same`] with a tolerance of `abs_ms` + `rel` of the simulated time.
    fn same_within(&self, name: &str, expected_ms: f64, abs_ms: f64, rel: f64) {
        let (real, sim) = (self.real_ms(name), self.sim_ms(name));
        let tolerance = abs_ms + rel * sim;
        eprintln!("{name}: real {real:.2} ms, simulated {sim:.2} ms, by hand {expected_ms} ms");
        assert!(
            (real - sim).abs() <= tolerance,
            "{name}: real {real:.2} ms, simulated {sim:.2} ms (±{tolerance:.1})"
        );
        assert!(
            (sim - expected_ms).abs() <= tolerance,
            "{name}: simulated {sim:.2} ms, by hand {expected_ms} ms"
        );
    }
}

/// A file whose threads are `SCHED_FIFO` (priority 10 unless a task says otherwise) and
/// which ends when they do. `lock_pages` is off: rt-app's `mlockall` for real-time
/// threads runs before its start barrier but after it reads its time zero, and can take
/// milliseconds, which would shift every `delay`.
fn fifo(tasks: &str) -> String {
    format!(
        r#"{{"global": {{"duration": -1, "default_policy": "SCHED_FIFO", "lock_pages": false}}, "tasks": {{{tasks}}}}}"#
    )
}

#[test]
fn a_task_without_phases_runs_until_the_duration() {
    // Issue 14's file: three times in the simulator before, until killed by rt-app 1.0.
    let b = Both::run(
        r#"{"global": {"duration": 1}, "tasks": {"t": {"loop": 3, "run": 1000, "sleep": 100000}}}"#,
        cpus(),
    );
    let t = &b.sim.tasks[0];
    assert!(!t.exited, "the simulated task must still run at the duration");
    // Iterations of 101 ms: 10 begun in a second, the last cut short (rt-app logs the 9
    // it completed).
    let begun = t.runtime_ns / 1_000_000;
    let logged = b.log("t-0").rows.len() as u64;
    eprintln!("t-0: real {logged} iterations logged, simulated {begun} begun");
    assert_eq!(begun, 10);
    assert!(
        (logged + 1).abs_diff(begun) <= 1,
        "rt-app logged {logged} iterations, the simulator began {begun}"
    );
}

#[test]
fn timers_start_with_the_task_and_count_from_its_delay() {
    let b = Both::run(
        &fifo(
            r#""first": {"cpus": [0], "loop": 1, "phases": {"p": {"loop": 3, "runtime": 10000, "timer": {"ref": "unique", "period": 30000}}}},
               "del": {"cpus": [1], "delay": 100000, "loop": 1, "phases": {"p": {"loop": 2, "runtime": 1000, "timer": {"ref": "unique", "period": 50000}}}}"#,
        ),
        cpus(),
    );
    b.same("first-0", 90.0);
    b.same("del-1", 100.0);
}

#[test]
fn a_late_timer_restarts_if_relative_and_keeps_its_phase_if_absolute() {
    let b = Both::run(
        &fifo(
            r#""rel": {"cpus": [0], "loop": 1, "phases": {"a": {"runtime": 40000, "timer": {"ref": "uniqueR", "period": 30000}},
                       "b": {"loop": 3, "runtime": 5000, "timer": {"ref": "uniqueR", "period": 30000}}}},
               "abs": {"cpus": [1], "loop": 1, "phases": {"a": {"runtime": 40000, "timer": {"ref": "uniqueA", "period": 30000, "mode": "absolute"}},
                       "b": {"loop": 3, "runtime": 5000, "timer": {"ref": "uniqueA", "period": 30000}}}}"#,
        ),
        cpus(),
    );
    b.same("rel-0", 130.0);
    b.same("abs-1", 120.0);
}

#[test]
fn threads_with_one_timer_ref_share_the_timer() {
    let b = Both::run(
        &fifo(
            r#""sh": {"instance": 2, "loop": 1, "phases": {"p": {"loop": 3, "runtime": 2000, "timer": {"ref": "shared", "period": 40000}}}}"#,
        ),
        cpus(),
    );
    // Each thread runs every 80 ms: one ends at 200 ms, the other at 240 (which one is a
    // race in rt-app: compare the sorted times).
    b.same_sorted(&["sh-0", "sh-1"], &[200.0, 240.0]);
}

#[test]
fn a_mutex_serializes_critical_sections() {
    let b = Both::run(
        &fifo(
            r#""a": {"loop": 1, "phases": {"p": {"loop": 2, "lock": "m", "runtime": 20000, "unlock": "m", "sleep": 1000}}},
               "b": {"delay": 1000, "loop": 1, "phases": {"p": {"loop": 2, "lock": "m", "runtime": 5000, "unlock": "m", "sleep": 1000}}}"#,
        ),
        cpus(),
    );
    b.same("a-0", 46.0);
    b.same("b-1", 50.0);
}

/// Low holds the mutex high wants, and middle keeps low from running, unless priority
/// inheritance lends low high's priority. All on CPU 0; the delays (5 and 10 ms) leave
/// low time to take the mutex whatever the threads' start-up order.
fn inversion(pi: bool) -> Both {
    Both::run(
        &format!(
            r#"{{"global": {{"duration": -1, "pi_enabled": {pi}, "default_policy": "SCHED_FIFO", "lock_pages": false}}, "tasks": {{
              "low": {{"priority": 10, "cpus": [0], "loop": 1, "phases": {{"p": {{"lock": "m", "runtime": 20000, "unlock": "m"}}}}}},
              "high": {{"priority": 30, "cpus": [0], "delay": 5000, "loop": 1, "phases": {{"p": {{"lock": "m", "runtime": 1000, "unlock": "m"}}}}}},
              "mid": {{"priority": 20, "cpus": [0], "delay": 10000, "loop": 1, "phases": {{"p": {{"runtime": 30000}}}}}}}}}}"#
        ),
        cpus(),
    )
}

#[test]
fn lock_without_priority_inheritance_lets_the_middle_task_in() {
    let b = inversion(false);
    // low 0–10 (high blocks on the mutex at 5), mid 10–40; low, whose 20 ms of wall
    // time have passed, unlocks at 40; high runs 40–41: 36 ms after its start. (When
    // low, which then has nothing left to do, logs its end is a race in the real kernel:
    // it was measured both before and after high ran.)
    b.same("high-1", 36.0);
    b.same("mid-2", 30.0);
}

#[test]
fn lock_with_priority_inheritance_lends_the_waiters_priority() {
    let b = inversion(true);
    // low runs at high's priority from 5 until its unlock at 20; high 20–21; mid, there
    // since 10, runs 21–51. (low's logged end is a race: see above.)
    b.same("high-1", 16.0);
    b.same("mid-2", 41.0);
}

#[test]
fn wait_signal_barrier_suspend_and_resume() {
    let b = Both::run(
        &fifo(
            r#""w": {"loop": 1, "phases": {"p": {"loop": 3, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "runtime": 1000}}},
               "s": {"loop": 1, "phases": {"p": {"loop": 3, "sleep": 50000, "lock": "m", "signal": "c", "unlock": "m"}}},
               "b1": {"loop": 1, "phases": {"p": {"loop": 2, "runtime": 10000, "barrier": "B"}}},
               "b2": {"loop": 1, "phases": {"p": {"loop": 2, "sleep": 30000, "barrier": "B"}}},
               "su": {"loop": 1, "phases": {"p": {"loop": 2, "suspend": "su", "runtime": 1000}}},
               "re": {"loop": 1, "phases": {"p": {"loop": 2, "sleep": 70000, "resume": "su"}}}"#,
        ),
        cpus(),
    );
    b.same("w-0", 151.0);
    b.same("s-1", 150.0);
    b.same("b1-2", 60.0);
    b.same("b2-3", 60.0);
    b.same("su-4", 141.0);
    b.same("re-5", 140.0);
}

#[test]
fn broadcast_wakes_every_waiter_and_signal_one() {
    let b = Both::run(
        &fifo(
            r#""s": {"loop": 1, "phases": {"a": {"sleep": 10000, "lock": "m", "signal": "c", "unlock": "m"},
                                          "b": {"sleep": 10000, "lock": "m", "broad": "c", "unlock": "m"}}},
               "w": {"instance": 3, "loop": 1, "phases": {"p": {"lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "runtime": 1000}}}"#,
        ),
        cpus(),
    );
    // One waiter leaves at 10 ms, the other two at 20 (which one first is a race in
    // rt-app: compare the sorted times).
    b.same_sorted(&["w-1", "w-2", "w-3"], &[11.0, 21.0, 21.0]);
}

#[test]
fn a_phase_sets_its_cpus_when_it_starts() {
    // hog holds CPU 0 for 30 ms; t's second phase needs CPU 0, at a lower priority: it
    // runs there from 30 to 40 (without the phase's cpus it would end at 20).
    let b = Both::run(
        &fifo(
            r#""hog": {"cpus": [0], "loop": 1, "phases": {"p": {"runtime": 30000}}},
               "t": {"priority": 5, "loop": 1, "phases": {"a": {"cpus": [1], "runtime": 10000}, "b": {"cpus": [0], "runtime": 10000}}}"#,
        ),
        cpus(),
    );
    b.same("hog-0", 30.0);
    b.same("t-1", 40.0);
}

#[test]
fn mem_and_iorun_take_the_time_they_are_given() {
    // mem: 5 × 200 MB of memset, simulated at this machine's memset rate, measured here
    // as `schedlab validate` measures it (rt-app's 4 MiB buffer, the fastest of three
    // measurements: other load only slows a memset down). The buffer's first touch (page
    // faults, about 1.4 ms for rt-app's 4 MiB) is not modelled, and rt-app's memset is
    // glibc's where the rate is Rust's `write_bytes` (the same libc memset underneath):
    // 2 ms + 30 %.
    let rate = (0..3)
        .map(|_| calibrate::mem_ns_per_kib(calibrate::RTAPP_MEM_BUFFER, 100))
        .fold(f64::INFINITY, f64::min);
    let b = Both::run_with(
        &fifo(
            r#""m": {"loop": 1, "phases": {"p": {"loop": 5, "mem": 200000000}}},
               "io": {"loop": 1, "phases": {"p": {"loop": 5, "iorun": 200000000}}}"#,
        ),
        cpus(),
        &[("mem_ns_per_kib", format!("{}", rate.round().max(1.0)))],
    );
    let mem = 5.0 * 200e6 / 1024.0 * rate.round().max(1.0) / 1e6;
    eprintln!("memset: {rate:.2} ns per KiB here");
    b.same_within("m-0", mem, 2.0, 0.3);
    // iorun to /dev/null: 48 writes of 4 MiB that copy nothing, five times.
    b.same("io-1", 0.0);
}

#[test]
fn rt_app_1_0_ignores_the_keys_of_later_versions() {
    // fork and per-phase priority exist from rt-app 1.1; 1.0 silently ignores them,
    // while the simulator gives them their later meaning (README: rt-app support).
    let b = Both::run(
        &fifo(
            r#""main": {"loop": 1, "phases": {"p": {"priority": 20, "fork": "worker", "sleep": 10000}}},
               "worker": {"instance": 0, "loop": 1, "phases": {"p": {"run": 1000}}}"#,
        ),
        cpus(),
    );
    assert_eq!(b.real.len(), 1, "rt-app 1.0 forked a thread: the README's rt-app table is out of date");
    assert_eq!(b.sim.tasks.len(), 2, "the simulator forks");
}

#[test]
fn a_fifo_hog_leaves_a_fair_hog_what_the_fair_server_gives_it() {
    // On CPU 1, from a barrier that both threads pass at once (rt-app may start them
    // tens of ms apart on a loaded machine): a SCHED_OTHER thread spins for 2.99 s of wall
    // time, then sleeps; a SCHED_FIFO one sleeps 10 ms (so that the fair one starts its
    // spin: rt-app's spin counts from its own first instruction) and spins for 3 s. The
    // kernel (6.18, as the README's "The simulated kernel" says) runs the fair thread in
    // its CPU's fair server's windows: the first at the zero-laxity instant 10 + 950 ms,
    // for the 50 ms budget and up to the next tick (w1 ms); the real-time thread then
    // gets exactly 950 ms before each next window (w2 ms from 1910 + w1, the third from
    // 2860 + w1 + w2), in which the fair thread's spin ends at 2990. So the fair thread
    // runs 10 ms alone, then w1 + w2 + (2990 - (2860 + w1 + w2)) = 130 ms whatever the
    // windows' phase to the ticks: 140 ms. The real-time thread runs the rest of its
    // 3 s, less what RT throttling takes once a period's 950 ms are used up, which
    // depends on the periods' phase (simulated, the periods counted from its arrival at
    // 0: in [2000, 3000) it runs 2016 to 2966 and 2990 to 2992, throttled from that tick
    // to 3000: 2862 ms; on this machine kernel threads such as watchdogd keep the period
    // timer running with a phase of its own, and other tasks and interrupts take
    // slivers: 2850 to 2864 ms measured).
    //
    // CPU times are compared (sampled by `run` every 5 ms; the fair thread sleeps after
    // its spin so that its last sample is its total). Other fair tasks on CPU 1 (another
    // test's, a build's beside `make test`) would share the fair thread's time: measured
    // beside two busy loops, it got 128.6 ms instead of 140. So rt-app runs in a session
    // of its own whose autogroup has nice -20 (88761 against a busy session's 1024), and
    // the fair thread at nice -20 for a machine without autogroups; the real-time thread
    // is not weighed (autogroups leave it in the root group's real-time queue).
    let doc = r#"{"global": {"duration": -1, "lock_pages": false}, "tasks": {
        "fair": {"policy": "SCHED_OTHER", "priority": -20, "cpus": [1], "loop": 1,
                 "phases": {"go": {"barrier": "go"}, "spin": {"runtime": 2990000}, "rest": {"sleep": 500000}}},
        "rt": {"policy": "SCHED_FIFO", "priority": 10, "cpus": [1], "loop": 1,
               "phases": {"go": {"barrier": "go"}, "wait": {"sleep": 10000}, "spin": {"runtime": 3000000}}}}}"#;
    require_rt_app();
    // The answer by hand is for the kernel's defaults, which the simulator's are too.
    let throttling = host::rt_throttling().expect("read sched_rt_runtime_us and sched_rt_period_us");
    assert_eq!(
        throttling,
        (Some(950_000_000), 1_000_000_000),
        "the answer by hand is for RT throttling of 950 ms per 1 s; this kernel's is {throttling:?} (ns)"
    );
    let server = host::fair_server();
    assert!(
        server.as_ref().is_some_and(|s| (s.runtime_ns, s.period_ns) == (50_000_000, 1_000_000_000)),
        "the answer by hand is for Linux ≥ 6.12's deferred fair server of 50 ms per 1 s; this kernel ({}) has {server:?}",
        schedlab_ext::kernel::release()
    );
    let w = rtapp::parse(doc, "hogs.json").unwrap_or_else(|e| panic!("{e}"));
    let sim = schedlab_sim::simulate(&w, &SimConfig::new(cpus(), FairFlavor::Eevdf), None).unwrap();
    let rate = ns_per_loop();
    let file = std::env::temp_dir().join(format!("schedlab-rt-throttle-{}.json", std::process::id()));
    std::fs::write(&file, doc).expect("write the rt-app file");
    let real = {
        let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        run_placed(&file, rate, LIMIT, Placement::Session { autogroup_nice: -20 })
    };
    let _ = std::fs::remove_file(&file);
    let real = real.unwrap_or_else(|e| panic!("rt-app: {e}"));
    // The fair thread's tolerance is its measured spread: 135.3 to 150.1 ms over 20 runs
    // on this machine (8 quiet, 12 beside two busy loops; the 150 ms run had the kernel's
    // RT period out of phase with the fair server's windows, so that RT throttling gave
    // the fair thread time besides the windows), held to 15 ms; a kernel without a fair
    // server, or one that does not defer it, gives it 160 ms or more.
    for (key, by_hand, tolerance) in [("fair", 140.0, 15.0), ("rt", 2_862.0, 3.0 + 0.05 * 2_862.0)] {
        let r =
            real.tasks.iter().find(|t| t.key == key).unwrap_or_else(|| panic!("rt-app has no thread {key}"));
        let s = sim
            .tasks
            .iter()
            .find(|t| t.name.starts_with(key))
            .unwrap_or_else(|| panic!("no simulated {key}"));
        let (r, s) = (r.runtime_ns as f64 / 1e6, s.runtime_ns as f64 / 1e6);
        eprintln!("{key}: real {r:.2} ms, simulated {s:.2} ms of CPU, by hand {by_hand} ms");
        assert!(
            (r - s).abs() <= tolerance,
            "{key}: real {r:.2} ms, simulated {s:.2} ms of CPU (±{tolerance:.1})"
        );
        assert!((s - by_hand).abs() <= tolerance, "{key}: simulated {s:.2} ms, by hand {by_hand} ms");
    }
}

/// This machine's `cpu` controller (cgroup v1, v2 or a hybrid of both), read from its
/// mounts: the group tests fail with the reason where there is none.
fn cpu_controller() -> CpuController {
    host::cpu_controller().unwrap_or_else(|e| panic!("these tests put rt-app in cpu cgroups: {e}"))
}

/// Cgroups this test makes in the `cpu` hierarchy, in `schedlab-test-<pid>-<n>`: removed
/// when dropped (a test that fails too), their processes moved back to the root cgroup
/// first. A run killed before that leaves its directory, which the next run removes.
struct TestCgroups {
    controller: CpuController,
    top: PathBuf,
    /// Each made, parents first.
    made: Vec<PathBuf>,
}

impl TestCgroups {
    fn new() -> TestCgroups {
        let controller = cpu_controller();
        let root = controller.mount_point().to_path_buf();
        if let CpuController::V2(_) = controller {
            let delegated = std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
            assert!(
                delegated.split_whitespace().any(|c| c == "cpu"),
                "the cgroup v2 root {} does not give its children the cpu controller \
                 (cgroup.subtree_control: {delegated:?}): these tests weigh groups with cpu.weight",
                root.display()
            );
        }
        // Leftovers of runs that were killed: their process is gone.
        for entry in std::fs::read_dir(&root).expect("read the cpu cgroups").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let owner =
                name.strip_prefix("schedlab-test-").and_then(|p| p.split('-').next()?.parse::<u32>().ok());
            if owner.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                drop(TestCgroups {
                    controller: controller.clone(),
                    made: walk(&entry.path()),
                    top: entry.path(),
                });
            }
        }
        // Tests run in parallel in one process: each gets its own.
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let top = root.join(format!("schedlab-test-{}-{n}", std::process::id()));
        let mut cg = TestCgroups { controller, top: top.clone(), made: Vec::new() };
        cg.make(&top);
        if let CpuController::V2(_) = cg.controller {
            std::fs::write(top.join("cgroup.subtree_control"), "+cpu").expect("give the test's groups cpu");
        }
        cg
    }

    /// Makes the cgroup `name` (inside the test's) weighing `shares` (cgroup v1's unit:
    /// 1024 is the default; `cpu.weight` in v2).
    fn group(&mut self, name: &str, shares: u64) -> PathBuf {
        let dir = self.top.join(name);
        self.make(&dir);
        let (file, value) = self.controller.weight(shares);
        std::fs::write(dir.join(file), value.to_string()).unwrap_or_else(|e| panic!("set {file}: {e}"));
        dir
    }

    fn make(&mut self, dir: &Path) {
        std::fs::create_dir(dir).unwrap_or_else(|e| panic!("cannot make the cgroup {}: {e}", dir.display()));
        self.made.push(dir.to_path_buf());
    }
}

/// A cgroup and the ones inside it, parents first.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&entry.path()));
        }
    }
    out
}

impl Drop for TestCgroups {
    fn drop(&mut self) {
        let root = self.controller.mount_point().join("cgroup.procs");
        for dir in self.made.iter().rev() {
            // Processes still there (a run cut short) go back to the root cgroup.
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.split_whitespace() {
                let _ = std::fs::write(&root, pid);
            }
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if dir.exists() {
                eprintln!("could not remove the cgroup {}", dir.display());
            }
        }
    }
}

/// Runs each `(doc, cgroup)` as one rt-app process in its cgroup (joined before rt-app's
/// exec, so every thread it makes starts there), all at once.
fn run_in_cgroups(runs: &[(&str, &Path)]) -> Vec<RtAppRun> {
    require_rt_app();
    let rate = ns_per_loop();
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let start = Barrier::new(runs.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .iter()
            .enumerate()
            .map(|(i, &(doc, cgroup))| {
                let start = &start;
                scope.spawn(move || {
                    let file =
                        std::env::temp_dir().join(format!("schedlab-cgroup-{}-{i}.json", std::process::id()));
                    std::fs::write(&file, doc).expect("write the rt-app file");
                    start.wait();
                    let real = run_placed(&file, rate, LIMIT, Placement::Cgroup(cgroup));
                    let _ = std::fs::remove_file(&file);
                    real.unwrap_or_else(|e| panic!("rt-app: {e}"))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("an rt-app run")).collect()
    })
}

/// rt-app task members: `threads` threads of task `key` spinning on CPU 1 from a barrier
/// all the file's threads pass together (rt-app starts a task's threads one after the
/// other, and a loaded machine spreads that over tens of ms), in `taskgroup` (which
/// rt-app 1.0 ignores; the simulator makes it a group), longer than [`spin_for_two_seconds`]
/// lets them.
fn spinners(key: &str, threads: u32, taskgroup: &str) -> String {
    format!(
        r#""{key}": {{"instance": {threads}, "taskgroup": "{taskgroup}", "cpus": [1], "loop": 1,
                     "phases": {{"go": {{"barrier": "go"}}, "p": {{"runtime": 5000000}}}}}}"#
    )
}

/// `tasks` (rt-app task members) as a whole file of fair threads that all stop after 2 s
/// (`global.duration`). Two rt-app processes started together may start spinning some
/// tens of ms apart on a loaded machine: over 2 s that moves a share by about a hundredth.
fn spin_for_two_seconds(tasks: &str) -> String {
    format!(r#"{{"global": {{"duration": 2, "lock_pages": false}}, "tasks": {{{tasks}}}}}"#)
}

/// Threads' keys (or simulated names) and CPU times in ns.
type Times = Vec<(String, u64)>;

/// Each thread's share of the CPU time of all `threads`.
fn fractions(threads: &[(String, u64)]) -> Vec<(String, f64)> {
    let total: u64 = threads.iter().map(|t| t.1).sum();
    threads.iter().map(|(k, ns)| (k.clone(), *ns as f64 / total as f64)).collect()
}

/// Compares the real threads' shares with the simulated threads' (of the same keys, in
/// order) within `tolerance`, and the simulated ones with the shares worked out by hand
/// within a hundredth.
fn same_shares(real: &[(String, u64)], sim: &[(String, u64)], by_hand: &[f64], tolerance: f64) {
    let (real, sim) = (fractions(real), fractions(sim));
    eprintln!("shares: real {real:?}\n        simulated {sim:?}\n        by hand {by_hand:?}");
    assert_eq!(real.len(), sim.len(), "real {real:?}, simulated {sim:?}");
    for ((r, s), h) in real.iter().zip(&sim).zip(by_hand) {
        assert!(r.0.starts_with(s.0.rsplit_once('-').map_or(&*s.0, |k| k.0)), "{r:?} vs {s:?}");
        assert!((r.1 - s.1).abs() <= tolerance, "{}: real {:.3}, simulated {:.3}", r.0, r.1, s.1);
        assert!((s.1 - h).abs() <= 0.01, "{}: simulated {:.3}, by hand {h:.3}", s.0, s.1);
    }
}

/// Two cgroups on CPU 1, each with its own rt-app process spinning for 2 s: `a` with one
/// thread and `a_shares`, `b` with four threads and 1024. Returns the real and the
/// simulated threads' CPU times, `a`'s first.
fn two_groups_on_one_cpu(a_shares: u64) -> (Times, Times) {
    let mut cg = TestCgroups::new();
    let (a, b) = (cg.group("a", a_shares), cg.group("b", 1024));
    let (doc_a, doc_b) =
        (spin_for_two_seconds(&spinners("a", 1, "/a")), spin_for_two_seconds(&spinners("b", 4, "/b")));
    let real = run_in_cgroups(&[(&doc_a, &a), (&doc_b, &b)]);
    drop(cg);
    let real: Times = real.iter().flat_map(|r| &r.tasks).map(|t| (t.key.clone(), t.runtime_ns)).collect();
    // Simulated: one file with both tasks in their taskgroups, /a given its shares.
    let doc = spin_for_two_seconds(&format!("{}, {}", spinners("a", 1, "/a"), spinners("b", 4, "/b")));
    let mut w = rtapp::parse(&doc, "groups.json").unwrap_or_else(|e| panic!("{e}"));
    let g = w.groups.iter_mut().find(|g| g.name == "/a").expect("the group /a");
    g.shares = a_shares;
    let sim = schedlab_sim::simulate(&w, &SimConfig::new(cpus(), FairFlavor::Eevdf), None).unwrap();
    let sim = sim.tasks.iter().map(|t| (t.name.clone(), t.runtime_ns)).collect();
    (real, sim)
}

#[test]
fn cgroups_of_equal_shares_split_a_cpu_by_group() {
    // cpu.shares 1024 each: /a's one thread gets half of what the five get, /b's four an
    // eighth each (the simulator: `equal_shares_split_the_cpu_by_group_however_many_tasks_each_has`).
    let (real, sim) = two_groups_on_one_cpu(1024);
    same_shares(&real, &sim, &[0.5, 0.125, 0.125, 0.125, 0.125], 0.04);
}

#[test]
fn cgroup_shares_2048_against_1024_get_two_thirds() {
    // /a (2048) against /b (1024): its thread 2/3, /b's four 1/12 each. (Measured here,
    // 2026-11-27: 0.640 to 0.659 for /a's thread over four runs, three beside two busy
    // loops; with equal shares 0.496 to 0.499 for 1/2.)
    let (real, sim) = two_groups_on_one_cpu(2048);
    let b = 1.0 / 12.0;
    same_shares(&real, &sim, &[2.0 / 3.0, b, b, b, b], 0.04);
}

#[test]
fn rt_app_1_0_ignores_taskgroup() {
    // The same two tasks in one rt-app process: rt-app 1.0 leaves its threads in its own
    // group, where the five share alike; the simulator, as rt-app ≥ 1.1, puts them in
    // their cgroups (README: rt-app support).
    let doc = spin_for_two_seconds(&format!("{}, {}", spinners("a", 1, "/a"), spinners("b", 4, "/b")));
    require_rt_app();
    let w = rtapp::parse(&doc, "groups.json").unwrap_or_else(|e| panic!("{e}"));
    let sim = schedlab_sim::simulate(&w, &SimConfig::new(cpus(), FairFlavor::Eevdf), None).unwrap();
    let rate = ns_per_loop();
    let file = std::env::temp_dir().join(format!("schedlab-taskgroup-{}.json", std::process::id()));
    std::fs::write(&file, &doc).expect("write the rt-app file");
    let real = {
        let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        run(&file, rate, LIMIT)
    };
    let _ = std::fs::remove_file(&file);
    let real = real.unwrap_or_else(|e| panic!("rt-app: {e}"));
    let real: Times = real.tasks.iter().map(|t| (t.key.clone(), t.runtime_ns)).collect();
    let sim: Times = sim.tasks.iter().map(|t| (t.name.clone(), t.runtime_ns)).collect();
    let (real, sim) = (fractions(&real), fractions(&sim));
    eprintln!("real {real:?}, simulated {sim:?}");
    assert!(real.iter().all(|t| (t.1 - 0.2).abs() < 0.03), "rt-app 1.0 put its threads in groups: {real:?}");
    assert!((sim[0].1 - 0.5).abs() < 0.01, "the simulated /a: {sim:?}");
}

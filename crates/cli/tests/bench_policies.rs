//! `schedlab bench policies` end to end: pi and rw, SCHED_OTHER and SCHED_FIFO, two
//! processes, one repetition, small work; sane numbers and no worker left behind.

use std::process::Command;
use std::sync::Mutex;

/// The tests look for each other's workers: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Our workers still running.
fn leftover_workers() -> Vec<String> {
    let ps = Command::new("ps").args(["-e", "-o", "comm="]).output().expect("ps");
    String::from_utf8_lossy(&ps.stdout)
        .lines()
        .filter(|l| ["sl-pi", "sl-rw", "sl-mixed"].contains(&l.trim()))
        .map(str::to_string)
        .collect()
}

#[test]
fn bench_policies_of_pi_and_rw_gives_sane_numbers() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "bench policies needs root: its workers run SCHED_FIFO");
    // Its real-time workers get one CPU and its runner another, so that the system keeps
    // a CPU: this test needs two it may use.
    let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(allowed >= 2, "bench policies keeps its runner off the workers' CPU: it needs 2 CPUs this test may use, not {allowed}");
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["bench", "policies", "--programs", "pi,rw", "--policies", "other,fifo", "--sizes", "2"])
        .args(["--reps", "1", "--iterations", "200000", "--bytes", "16384", "--cell-limit", "30s", "--json"])
        .output()
        .expect("schedlab runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!((report["reps"].as_u64(), report["iterations"].as_u64()), (Some(1), Some(200_000)));
    assert_eq!((report["bytes"].as_u64(), report["block"].as_u64()), (Some(16_384), Some(1024)));
    let cpus = report["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 1, "one CPU for the workers by default: {report}");
    let runner = report["runner_cpus"].as_array().unwrap();
    if !runner.is_empty() {
        assert!(!runner.contains(&cpus[0]), "the runner keeps off the workers' CPU: {report}");
    }
    let cells = report["cells"].as_array().unwrap();
    let names: Vec<(String, String)> = cells
        .iter()
        .map(|c| (c["program"].as_str().unwrap().into(), c["policy"].as_str().unwrap().into()))
        .collect();
    let want = [("pi", "other"), ("pi", "fifo"), ("rw", "other"), ("rw", "fifo")];
    assert_eq!(names, want.map(|(a, b)| (a.to_string(), b.to_string())));
    for c in cells {
        assert_eq!((c["size"].as_u64(), c["timed_out"].as_bool()), (Some(2), Some(false)), "{c}");
        assert_eq!(c["priority"].as_i64(), (c["policy"] == "fifo").then_some(99), "{c}");
        let reps = c["reps"].as_array().unwrap();
        assert_eq!(reps.len(), 1, "{c}");
        let m = &reps[0];
        let f = |k: &str| m[k].as_f64().unwrap();
        // Work on one CPU (the cell limit, 30 s, guards against a hang): it took CPU time
        // (the split between user and system time is sampled at ticks, their sum is
        // exact), and no more than one CPU gives in the time it took.
        assert!(f("real_s") > 0.0, "{c}");
        assert!(f("user_s") + f("sys_s") > 0.0, "{c}");
        assert!(f("user_s") + f("sys_s") <= f("real_s") * 1.1 + 0.02, "one CPU: {c}");
        assert!(f("cpu_pct") <= 115.0, "{c}");
        if c["program"] == "rw" {
            // 16 O_SYNC writes each: they block.
            assert!(f("nvcsw") >= 2.0, "{c}");
        } else {
            assert!(f("user_s") > 0.0, "{c}");
        }
        assert_eq!(c["stats"]["real_s"]["mean"].as_f64(), Some(f("real_s")), "{c}");
    }
    assert!(leftover_workers().is_empty(), "{:?}", leftover_workers());
}

#[test]
fn a_cell_past_its_limit_is_killed_and_reported() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["bench", "policies", "--programs", "pi", "--policies", "other", "--sizes", "2"])
        .args(["--reps", "2", "--iterations", "2000000000", "--cell-limit", "300ms", "--json"])
        .output()
        .expect("schedlab runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let c = &report["cells"][0];
    assert_eq!(c["timed_out"], true, "{c}");
    assert!(c["reps"].as_array().unwrap().is_empty() && c["stats"].is_null(), "{c}");
    assert!(leftover_workers().is_empty(), "{:?}", leftover_workers());
}

//! `schedlab bench slices` end to end: the test program only, short bursts, two runs
//! per series, the daemon started and stopped for real.

use std::process::Command;

#[test]
fn bench_slices_of_the_test_program_completes_with_sane_numbers() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "bench slices needs root: it runs the daemon");
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["bench", "slices", "--programs", "test", "--work-ms", "2", "--loops", "3"])
        .args(["--sleep-ms", "10", "--runs", "2", "--time-limit", "60s", "--json"])
        .output()
        .expect("schedlab runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["runs"], 2);
    assert_eq!(report["loops"], 3);
    assert_eq!(report["sleep_ms"], 10.0);
    assert!(report["skipped"].as_array().unwrap().is_empty());
    let programs = report["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 1);
    let p = &programs[0];
    assert_eq!(
        (&p["program"], &p["label"], &p["work_ms"]),
        (&"test".into(), &"test 2ms".into(), &2.0.into())
    );
    assert!(p["exe"].as_str().unwrap().ends_with("/sl-pfs-test-2ms"), "{p}");
    for series in [&p["without"], &p["with_daemon"]] {
        let runs: Vec<f64> =
            series["runs_ms"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(runs.len(), 2, "{series}");
        // 3 × (2 ms of CPU + 10 ms asleep) is at least 36 ms (the time limit, 60 s,
        // guards the other side).
        assert!(runs.iter().all(|&t| t >= 36.0), "{series}");
        // The mean leaves the first run out (the daemon learns the program in it): of two
        // runs, it is the second's time.
        assert_eq!(series["mean_ms"].as_f64().unwrap(), runs[1], "{series}");
    }
    assert!(p["without"].get("daemon").is_none());
    let d = &p["with_daemon"]["daemon"];
    assert!(d["stats_error"].is_null(), "{d}");
    assert_eq!(d["slices_set_per_run"].as_array().unwrap().len(), 2, "{d}");
    assert!(d["programs_with_pfs"].as_u64().unwrap() >= 1, "the first run taught a PFS: {d}");
    assert_eq!(d["killed"], false, "{d}");
    let mean = |series: &str| p[series]["mean_ms"].as_f64().unwrap();
    let ratio = mean("with_daemon") / mean("without");
    assert!((p["ratio"].as_f64().unwrap() - ratio).abs() < 1e-9 * ratio, "the ratio of the means: {p}");
    // No worker outlives the run, and the scratch directory is gone.
    let ps = Command::new("ps").args(["-e", "-o", "comm="]).output().expect("ps");
    let left = String::from_utf8_lossy(&ps.stdout);
    assert!(!left.lines().any(|l| l.starts_with("sl-")), "{left}");
    assert!(!std::path::Path::new(p["exe"].as_str().unwrap()).exists());
}

//! `schedlab bench deps` end to end: real worker processes, a small load, few rounds.

use std::process::Command;

#[test]
fn bench_deps_over_a_pipe_completes_with_sane_numbers() {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["bench", "deps", "--ipc", "pipe", "--load", "1", "--iterations", "3", "--sort-len", "400"])
        .args(["--time-limit", "60s", "--json"])
        .output()
        .expect("schedlab runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("cannot set nice") {
        eprintln!("skipped: needs root for nice -20");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let kinds = report["kinds"].as_array().unwrap();
    assert_eq!(kinds.len(), 1);
    assert_eq!(kinds[0]["kind"], "pipe");
    let cells = kinds[0]["cells"].as_array().unwrap();
    let names: Vec<&str> = cells.iter().map(|c| c["scenario"].as_str().unwrap()).collect();
    assert_eq!(names, ["unloaded", "loaded", "reniced"]);
    for c in cells {
        let s = &c["stats"];
        assert_eq!(s["count"], 3);
        assert_eq!(c["samples_ms"].as_array().unwrap().len(), 3);
        let (median, p90, min) =
            (s["median_ms"].as_f64().unwrap(), s["p90_ms"].as_f64().unwrap(), s["min_ms"].as_f64().unwrap());
        assert!(min > 0.0 && min <= median && median <= p90 && p90 < 10_000.0, "{c}");
        assert!(c["ratio_to_unloaded"].as_f64().unwrap() > 0.0, "{c}");
    }
    assert_eq!(cells[0]["ratio_to_unloaded"], 1.0);
    // No worker outlives the run.
    let ps = Command::new("ps").args(["-e", "-o", "comm="]).output().expect("ps");
    let left = String::from_utf8_lossy(&ps.stdout);
    assert!(!left.lines().any(|l| l.starts_with("sl-")), "{left}");
}

//! `schedlab bench overhead` end to end: a tiny hackbench, bare, under the observer in
//! both of its views and under the daemon.
//! Needs root (BPF) and hackbench; fails with the reason otherwise.

use std::process::Command;

#[test]
fn overhead_compares_the_observer_and_the_daemon_with_bare() {
    // SAFETY: no arguments.
    assert_eq!(unsafe { libc::geteuid() }, 0, "bench overhead needs root: the observer loads BPF programs");
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args([
            "bench",
            "overhead",
            "--groups",
            "1",
            "--loops",
            "20",
            "--rounds",
            "2",
            "--modes",
            "observer,watched,daemon",
        ])
        .arg("--json")
        .output()
        .expect("schedlab runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["command"], "hackbench -g 1 -l 20 -p");
    let modes = report["modes"].as_array().unwrap();
    let names: Vec<&str> = modes.iter().map(|m| m["mode"].as_str().unwrap()).collect();
    assert_eq!(names, ["bare", "observer", "watched", "daemon"]);
    for m in modes {
        // Each mode's median is that of its own rounds (hackbench's `Time:`, whose
        // milliseconds a fast machine may round to 0 for so small a run): the lower
        // middle, of two rounds the faster.
        let times: Vec<f64> = m["times_s"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
        assert_eq!(times.len(), 2, "{m}");
        assert_eq!(m["median_s"].as_f64(), Some(times[0].min(times[1])), "{m}");
    }
    assert_eq!(modes[0]["vs_bare_pct"], 0.0);
    for m in &modes[1..] {
        assert!(m["lost_events"].is_u64(), "the observer reports its losses: {m}");
    }
    assert!(
        report["notes"].as_array().unwrap().is_empty(),
        "the daemon stopped on SIGINT: {}",
        report["notes"]
    );
}

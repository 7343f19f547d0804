//! Results carry their provenance, end to end: a tiny `schedlab tune --json` and a
//! `schedlab reproduce` of one experiment (simulator only: no root, about a second).

use std::process::Command;

use serde_json::Value;

/// Runs schedlab with `args`; its standard output, which must be a JSON report whose
/// first member is `provenance`.
fn report_of(args: &[&str]) -> (Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("schedlab runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(text.starts_with("{\n  \"provenance\": {"), "provenance comes first: {text}");
    (serde_json::from_str(&text).expect("JSON"), text)
}

/// Checks the facts of a provenance that this test can know: this build, this machine,
/// this command.
fn check(p: &Value, command_tail: &str) {
    let commit = p["commit"].as_str().unwrap();
    let hex = commit.strip_suffix("-dirty").unwrap_or(commit);
    assert!(
        commit == "unknown" || (hex.len() == 40 && hex.chars().all(|c| c.is_ascii_hexdigit())),
        "commit: {commit}"
    );
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    assert_eq!(p["profile"], profile, "built with the tests' profile");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(p["kernel"], kernel.trim());
    assert!(!p["cpu_model"].as_str().unwrap().is_empty());
    assert!(p["cpus"].as_u64().unwrap() >= 1);
    let date = p["date"].as_str().unwrap();
    let b = date.as_bytes();
    assert!(
        date.len() == 20
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && date.ends_with('Z'),
        "RFC 3339 UTC: {date}"
    );
    let command = p["command"].as_str().unwrap();
    assert!(command.contains("schedlab") && command.ends_with(command_tail), "{command}");
    assert_eq!(p.as_object().unwrap().len(), 7, "{p}");
}

#[test]
fn tune_json_records_its_provenance() {
    let args = [
        "tune",
        "--method",
        "pso",
        "--particles",
        "2",
        "--iterations",
        "1",
        "--workload",
        "hackbench:groups=1,loops=1",
        "--json",
    ];
    let (report, _) = report_of(&args);
    check(&report["provenance"], &format!(" {}", args.join(" ")));
    assert_eq!(report["method"], "pso", "the outcome follows: {report}");
    assert!(report["best"]["makespan_ns"].as_f64().is_some(), "{report}");
}

#[test]
fn reproduce_writes_the_same_report_to_its_file() {
    let dir = std::env::temp_dir().join(format!("schedlab-provenance-{}", std::process::id()));
    let dir_arg = dir.to_str().unwrap();
    let (report, text) = report_of(&["reproduce", "--only", "pfs_fig1", "--out", dir_arg, "--json"]);
    check(&report["provenance"], &format!(" reproduce --only pfs_fig1 --out {dir_arg} --json"));
    assert!(report["pfs_fig1"]["results"].is_object(), "{report}");
    assert_eq!(std::fs::read_to_string(dir.join("results.json")).unwrap(), text);
    std::fs::remove_dir_all(&dir).unwrap();
}

//! `schedlab bench deps` end to end: real worker processes, a small load, few rounds.

//! Needs root (a client at nice -20, the daemon); fails with the reason otherwise.

use std::process::Command;
use std::sync::Mutex;

/// One benchmark at a time: each checks that it left no worker behind.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `bench deps` over a pipe with `sort_len` integers sorted per request.
fn bench_deps(sort_len: &str, args: &[&str]) -> serde_json::Value {
    // SAFETY: no arguments.
    assert_eq!(unsafe { libc::geteuid() }, 0, "bench deps needs root: its client runs at nice -20");
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["bench", "deps", "--ipc", "pipe", "--sort-len", sort_len, "--time-limit", "60s", "--json"])
        .args(args)
        .output()
        .expect("schedlab runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// A sort length whose bubble sort takes about `ms` on this machine, in this build (the
/// workers are this build's `schedlab`): the time of 800 integers, measured, scaled by
/// the square of the length (the sort is quadratic).
fn sort_len_taking(ms: f64) -> usize {
    let t800 = schedlab_lab::bench::workers::sort_time(800).as_secs_f64() * 1e3;
    ((800.0 * (ms / t800.max(1e-3)).sqrt()) as usize).clamp(400, 20_000)
}

/// No worker outlives the run: every `sl-*` process left has a running `schedlab` as
/// its parent (another benchmark's), none is an orphan.
fn no_worker_left() {
    let ps = Command::new("ps").args(["-e", "-o", "pid=,ppid=,comm="]).output().expect("ps");
    let table = String::from_utf8_lossy(&ps.stdout);
    let rows: Vec<(&str, &str, &str)> = table
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?, f.next()?, f.next()?))
        })
        .collect();
    let comm_of = |pid: &str| rows.iter().find(|r| r.0 == pid).map_or("", |r| r.2);
    let orphans: Vec<_> =
        rows.iter().filter(|r| r.2.starts_with("sl-") && comm_of(r.1) != "schedlab").collect();
    assert!(orphans.is_empty(), "workers left behind: {orphans:?}");
}

#[test]
fn with_the_daemon_the_server_is_boosted() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Sorts long enough (40 ms here, in the build that runs the test) that the client
    // stays blocked past the daemon's reaction.
    let len = sort_len_taking(40.0).to_string();
    let report = bench_deps(&len, &["--load", "2", "--iterations", "5", "--with-daemon", "--no-reference"]);
    let cells = report["kinds"][0]["cells"].as_array().unwrap();
    let daemon = cells.iter().find(|c| c["scenario"] == "daemon").expect("a daemon cell");
    let reaction = &daemon["daemon"]["boost_reaction_us"];
    // Some replies may still come before the daemon has read the block; it does not
    // boost a requester already woken. Some boosts must happen.
    assert!(reaction["count"].as_u64().unwrap() >= 1, "the server was boosted: {daemon}");
    assert!(reaction["p50"].as_f64().unwrap() > 0.0, "{daemon}");
    no_worker_left();
}

#[test]
fn bench_deps_over_a_pipe_completes_with_sane_numbers() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let report = bench_deps("400", &["--load", "1", "--iterations", "3"]);
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
    no_worker_left();
}

#[test]
fn the_multi_server_variant_gives_per_iteration_times() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let report = bench_deps("400", &["--multi-server", "--load", "1", "--iterations", "4", "--warmup", "0"]);
    let kinds = report["kinds"].as_array().unwrap();
    assert_eq!((kinds.len(), &kinds[0]["kind"]), (1, &serde_json::json!("sem")), "{report}");
    for c in kinds[0]["cells"].as_array().unwrap() {
        let samples: Vec<f64> =
            c["samples_ms"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).collect();
        assert_eq!(samples.len(), 4, "one time per iteration: {c}");
        // Each iteration is a round of requests served: it takes time, and the cell's
        // statistics are those of its samples.
        assert!(samples.iter().all(|&s| s > 0.0), "{c}");
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(c["stats"]["min_ms"].as_f64(), Some(min), "{c}");
    }
    no_worker_left();
}

//! schedlab's sched_ext scheduler on a kernel that has sched_ext: Debian's 7.3 kernel
//! booted under qemu by `scripts/vm-run.sh` (this machine's kernel has no sched_ext), with
//! this build's `schedlab`. One boot runs `tests/scripts/vm_ext.sh`, which prints one
//! `key: value` line per fact; each test below asserts one point of it. A VM that cannot
//! boot fails every test with vm-run.sh's reason.
//!
//! These tests check that the scheduler loads, decides and unloads: the kernel names it,
//! workloads complete under it, its counters show its decisions (a lent turn, an extended
//! slice), the watchdog ejects it. Whether it makes anything faster is the benchmarks'
//! question (`bench suite --enforcer sched-ext`, `bench deps`, `bench slices` in the VM),
//! never asserted here: a TCG VM's speed varies ±20 % between runs.

use std::collections::HashMap;
use std::process::Command;
use std::sync::OnceLock;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scripts/vm_ext.sh");
const SCHEDLAB: &str = env!("CARGO_BIN_EXE_schedlab");

/// The facts the VM printed (the last value of each key; `*-log` keys joined), or why
/// there are none.
fn facts() -> &'static Result<HashMap<String, String>, String> {
    static FACTS: OnceLock<Result<HashMap<String, String>, String>> = OnceLock::new();
    FACTS.get_or_init(|| {
        let hackbench =
            which("hackbench").ok_or("no hackbench on PATH: install rt-tests (scripts/setup.sh)")?;
        let trial = passing_trial()?;
        let out = Command::new(format!("{ROOT}/scripts/vm-run.sh"))
            .env("SCHEDLAB_BIN", SCHEDLAB)
            .env("VM_TIMEOUT", "540")
            .args(["--file", &hackbench, "--file", SCRIPT, "--file", &trial, "--", "sh /files/vm_ext.sh"])
            .output()
            .map_err(|e| format!("cannot run scripts/vm-run.sh: {e}"));
        // The VM has its copy: the store's directory goes, whatever the run came to.
        if let Some(dir) = std::path::Path::new(&trial).parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
        let out = out?;
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        if !out.status.success() {
            return Err(format!(
                "the VM run failed ({}): {}\n{stdout}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let mut facts: HashMap<String, String> = HashMap::new();
        for line in stdout.lines() {
            let Some((key, value)) = line.split_once(": ") else { continue };
            let value = value.trim().to_string();
            if key.ends_with("-log") {
                let joined = facts.remove(key).map(|old| format!("{old}\n{value}")).unwrap_or(value);
                facts.insert(key.to_string(), joined);
            } else {
                facts.insert(key.to_string(), value);
            }
        }
        Ok(facts)
    })
}

/// A store (`trial.db` in a directory of its own) holding a trial of the sched_ext
/// scheduler without a loss on the VM's kernel (the release scripts/vm.sh fetched, or
/// SCHEDLAB_VM_KERNEL's), so that `--enforcer auto` loads it there.
fn passing_trial() -> Result<String, String> {
    let kernel_dir = match std::env::var("SCHEDLAB_VM_KERNEL") {
        Ok(dir) => dir,
        Err(_) => {
            let out = Command::new(format!("{ROOT}/scripts/vm.sh"))
                .output()
                .map_err(|e| format!("cannot run scripts/vm.sh: {e}"))?;
            if !out.status.success() {
                return Err(format!("scripts/vm.sh failed: {}", String::from_utf8_lossy(&out.stderr)));
            }
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        }
    };
    let kernel = std::fs::read_to_string(format!("{kernel_dir}/version"))
        .map_err(|e| format!("no kernel version in {kernel_dir}: {e}"))?;
    let dir = std::env::temp_dir().join(format!("schedlab-vm-trial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("trial.db");
    let store = schedlab_store::Store::open(&path).map_err(|e| e.to_string())?;
    store
        .record_enforcer_trial(&schedlab_store::EnforcerTrial {
            kernel: kernel.trim().to_string(),
            enforcer: "sched-ext".into(),
            at_unix_s: 0,
            complete: true,
            losses: 0,
            summary: "kept by the VM test".into(),
        })
        .map_err(|e| e.to_string())?;
    // Only trial.db goes into the VM: nothing may stay in the write-ahead log.
    store.checkpoint().map_err(|e| e.to_string())?;
    drop(store);
    Ok(path.display().to_string())
}

fn which(program: &str) -> Option<String> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| format!("{dir}/{program}"))
        .find(|path| std::path::Path::new(path).is_file())
}

fn fact(key: &str) -> String {
    match facts() {
        Ok(f) => {
            f.get(key).cloned().unwrap_or_else(|| panic!("the VM printed no {key:?}; it printed {f:#?}"))
        }
        Err(why) => panic!("{why}"),
    }
}

/// "N of M" → (N, M).
fn count_of(key: &str) -> (u32, u32) {
    let text = fact(key);
    let mut parts =
        text.split(" of ").map(|n| n.trim().parse::<u32>().unwrap_or_else(|_| panic!("{key}: {text:?}")));
    (parts.next().unwrap(), parts.next().unwrap())
}

#[test]
fn the_scheduler_loads_and_the_kernel_names_it() {
    assert_eq!(fact("state-before"), "disabled");
    assert_eq!(fact("state-loaded"), "enabled");
    assert_eq!(fact("ops"), "schedlab");
    let (ext, all) = count_of("ext-tasks-loaded");
    assert!(ext > 0 && ext <= all, "tasks in the sched_ext class while loaded: {ext} of {all}");
}

#[test]
fn hackbench_and_the_six_ipc_kinds_complete_under_it() {
    assert_eq!(fact("hackbench-rc"), "0");
    assert_eq!(fact("deps-rc"), "0");
    assert_eq!(fact("deps-kinds"), "flock msg pipe sem sig sock");
}

#[test]
fn unloading_returns_every_task_to_the_fair_class() {
    assert_eq!(fact("ext-rc"), "0", "ext run: {}", fact("ext-log"));
    assert!(fact("ext-log").contains("unloaded: unregistered from user space"), "{}", fact("ext-log"));
    assert_eq!(fact("state-unloaded"), "disabled");
    assert_eq!(count_of("ext-tasks-unloaded").0, 0);
}

#[test]
fn a_stalled_scheduler_is_ejected_by_the_watchdog_with_the_kernels_reason() {
    assert_ne!(fact("stall-rc"), "0", "ext run must fail when ejected: {}", fact("stall-log"));
    let log = fact("stall-log");
    assert!(log.contains("stall"), "the kernel's reason is reported: {log}");
    assert_eq!(fact("state-after-stall"), "disabled");
    assert_eq!(count_of("ext-tasks-after-stall").0, 0);
}

#[test]
fn auto_loads_the_scheduler_only_after_a_trial_without_a_loss() {
    assert_eq!(fact("untried-rc"), "0");
    let untried = fact("untried-enforcer");
    assert!(
        untried.starts_with("system calls (schedlab's sched_ext scheduler was never judged on kernel"),
        "{untried}"
    );
    // The daemon below ran with `auto` and a store holding a passing trial.
    assert_eq!(fact("daemon-state"), "enabled schedlab", "{}", fact("daemon-log"));
}

#[test]
fn the_daemon_falls_back_to_the_system_calls_when_the_kernel_ends_the_scheduler() {
    assert_eq!(fact("daemon-state"), "enabled schedlab", "{}", fact("daemon-log"));
    assert_eq!(fact("daemon-alive-after-sysrq"), "yes", "{}", fact("daemon-log"));
    assert_eq!(fact("daemon-rc"), "0", "{}", fact("daemon-log"));
    let log = fact("daemon-log");
    assert!(
        log.contains("the kernel ended the sched_ext scheduler")
            && log.contains("going on with the system calls"),
        "{log}"
    );
}

#[test]
fn a_requesters_provider_runs_in_its_turn() {
    assert_eq!(fact("swap-rc"), "0", "bench deps: {}", fact("swap-log"));
    let report: serde_json::Value = serde_json::from_str(&fact("swap-json")).expect("the report is JSON");
    let kinds = report["kinds"].as_array().expect("kinds");
    assert_eq!(kinds.len(), 1, "{report}");
    for kind in kinds {
        let name = &kind["kind"];
        let cell = |scenario: &str| {
            kind["cells"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["scenario"] == scenario))
                .unwrap_or_else(|| panic!("{name}: no {scenario} cell in {kind}"))
        };
        let counters = &cell("daemon")["daemon"]["sched_ext"];
        let count = |key: &str| counters[key].as_u64().unwrap_or_else(|| panic!("{name}: no {key}: {kind}"));
        assert!(count("lends") > 0, "{name}: the server was never given its client's turn: {counters}");
        assert!(count("handoffs") > 0, "{name}: the client never handed its CPU to the server: {counters}");
    }
}

/// One burst length of the PFS run: involuntary switches per run without the daemon's
/// slices and with them, and the slices extended per run.
fn pfs(work_ms: f64) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    assert_eq!(fact("pfs-rc"), "0", "bench slices: {}", fact("pfs-log"));
    let report: serde_json::Value = serde_json::from_str(&fact("pfs-json")).expect("the report is JSON");
    let program = report["programs"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["work_ms"].as_f64() == Some(work_ms)))
        .unwrap_or_else(|| panic!("no {work_ms} ms program in {report}"));
    let numbers = |v: &serde_json::Value| -> Vec<u64> {
        v.as_array().map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect()).unwrap_or_default()
    };
    (
        numbers(&program["without"]["involuntary_per_run"]),
        numbers(&program["with_daemon"]["involuntary_per_run"]),
        numbers(&program["with_daemon"]["daemon"]["extensions_per_run"]),
    )
}

#[test]
fn pfs_delays_the_switch_exactly_where_the_burst_ends_within_t_m() {
    // 125 ms against 100 ms slices, T_m 40: once the daemon knows the flow (runs 2..),
    // the scheduler keeps the program on at its slice's end instead of switching to the
    // hog, so fewer switches are forced on it. (Whether it finishes sooner is `bench
    // slices`'s question.)
    let (without, with, extended) = pfs(125.0);
    assert!(extended[1..].iter().all(|&e| e > 0), "no slice extended in runs 2..: {extended:?}");
    let forced = |v: &[u64]| v[1..].iter().sum::<u64>();
    assert!(forced(&with) < forced(&without), "switches forced: {without:?} without, {with:?} with");
    // 150 ms: 50 ms past the slice, beyond T_m: the switch happens as without. (The
    // extension counter is the scheduler's, over every task: another program the
    // daemon follows may be extended meanwhile, so the program's own forced switches
    // tell.)
    let (without, with, _) = pfs(150.0);
    assert!(
        forced(&with) * 4 >= forced(&without) * 3,
        "150 ms bursts were switched less: {without:?} without, {with:?} with"
    );
}

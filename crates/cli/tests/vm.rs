//! schedlab's sched_ext scheduler on a kernel that has sched_ext: Debian's 7.3 kernel
//! booted under qemu by `scripts/vm-run.sh` (this machine's kernel has no sched_ext), with
//! this build's `schedlab`. One boot runs `tests/scripts/vm_ext.sh`, which prints one
//! `key: value` line per fact; each test below asserts one point of it. A VM that cannot
//! boot fails every test with vm-run.sh's reason.

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
        let out = Command::new(format!("{ROOT}/scripts/vm-run.sh"))
            .env("SCHEDLAB_BIN", SCHEDLAB)
            .env("VM_TIMEOUT", "480")
            .args(["--file", &hackbench, "--file", SCRIPT, "--", "sh /files/vm_ext.sh"])
            .output()
            .map_err(|e| format!("cannot run scripts/vm-run.sh: {e}"))?;
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

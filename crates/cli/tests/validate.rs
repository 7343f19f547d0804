//! `schedlab validate` end to end, tiny: hackbench with 1 and 2 groups of 5 loops, once,
//! and one small rt-app file. Needs hackbench (rt-tests) and rt-app (scripts/setup.sh
//! installs both); fails with the reason when one is missing.

use std::path::Path;
use std::process::Command;

fn fit_slope_through_origin(h: &serde_json::Value) -> f64 {
    h["fit"]["slope_through_origin"].as_f64().unwrap()
}

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| Path::new(&d).join(program).is_file()))
}

#[test]
fn a_tiny_validate_pairs_real_and_simulated_runs() {
    assert!(installed("hackbench"), "validate needs hackbench (Debian package rt-tests)");
    assert!(installed("rt-app"), "validate's rt-app half needs rt-app (Debian package rt-app)");
    let dir = std::env::temp_dir().join(format!("schedlab-validate-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("two.json"),
        r#"{"global": {"duration": -1, "calibration": "CPU0"},
            "tasks": {"hog": {"instance": 2, "loop": 1, "phases": {"p": {"loop": 1, "run": 50000}}}}}"#,
    )
    .unwrap();
    let chart = dir.join("chart.svg");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    let traces = dir.join("traces");
    cmd.args(["validate", "--groups", "1-2", "--loops", "5", "--reps", "1", "--json", "--chart"]).arg(&chart);
    cmd.args(["--trace-groups", "2", "--trace"]).arg(&traces);
    cmd.arg("--rtapp").arg(&dir);
    let out = cmd.output().expect("schedlab runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");

    let c = &r["calibration"];
    for key in
        ["null_syscall_ns", "pipe_syscall_ns", "copy_ns_per_kib", "mem_ns_per_kib", "context_switch_ns"]
    {
        assert!(c[key].as_f64().is_some_and(|v| (0.0..1e6).contains(&v)), "{key}: {c}");
    }
    let names: Vec<&str> =
        r["tunables"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    // What crosses CPUs is measured when this test may use two (not under `taskset -c 0`).
    let two_cpus = !c["other_cpu"].is_null();
    let across: &[&str] = if two_cpus { &["wakeup_remote_ns", "idle_exit_ns"] } else { &[] };
    let on_one = [
        "syscall_ns",
        "copy_ns_per_kib",
        "mem_ns_per_kib",
        "wakeup_ns",
        "context_switch_ns",
        "fork_ns",
        "exit_ns",
    ];
    assert_eq!(names, [&on_one[..], across, &["jitter_pct"]].concat(), "{c}");
    for key in ["fork_ns", "exit_ns"].iter().chain(across) {
        assert!(c[key].as_f64().is_some_and(|v| (1_000.0..10_000_000.0).contains(&v)), "{key}: {c}");
    }
    assert_eq!(r["fair"], "eevdf");

    let h = &r["hackbench"];
    assert_eq!(h["command"], "hackbench -g G -f 20 -l 5 -s 100 -p");
    let rows = h["rows"].as_array().unwrap();
    assert_eq!(rows.iter().map(|row| row["groups"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    for row in rows {
        assert!(row["real_ns"].as_u64().unwrap() > 0, "{row}");
        assert!(row["sim_ns"].as_u64().unwrap() > 0, "{row}");
        assert_eq!(row["real_runs_ns"].as_array().unwrap().len(), 1, "{row}");
        assert_eq!(row["sim_runs_ns"].as_array().unwrap().len(), 1, "one seed per run: {row}");
        assert!(row["real_nvcsw"].as_u64().unwrap() > 0, "hackbench's workers block: {row}");
        let (sim, real) = (row["sim_ns"].as_f64().unwrap(), row["real_ns"].as_f64().unwrap());
        let err = row["makespan_error"].as_f64().unwrap();
        assert!((err - (sim / real - 1.0)).abs() < 1e-9, "the error is simulated / real - 1: {row}");
    }
    // One verdict per fidelity target: three on hackbench, two more on rt-app.
    let verdicts = r["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 5, "{verdicts:?}");
    let slope = &verdicts[0];
    let off = (fit_slope_through_origin(h) - 1.0).abs();
    assert!((slope["worst"].as_f64().unwrap() - off).abs() < 1e-9, "{slope}");
    assert_eq!(slope["met"].as_bool().unwrap(), off <= 0.10, "{slope}");
    // Each simulated run did its groups' work at the measured costs: every group's 20
    // senders write 20 receivers 5 messages each, which the receivers read (4,000 system
    // calls), and its 40 workers are forked and exit. That is a floor under the simulated
    // CPU time (the ±10 % spread of the costs taken off); above it are the wake-ups and
    // switches, whose number depends on how the run interleaves (a single seed's CPU time
    // varies by half from one run to the next here), so the floor is what a row must
    // hold: two groups above twice one group's floor.
    let tunable = |name: &str| {
        r["tunables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .and_then(|t| t["value"].as_str()?.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no tunable {name}: {}", r["tunables"]))
    };
    let per_group = 4_000.0 * tunable("syscall_ns") + 40.0 * (tunable("fork_ns") + tunable("exit_ns"));
    for row in rows {
        let (groups, sim_cpu) = (row["groups"].as_f64().unwrap(), row["sim_cpu_ns"].as_f64().unwrap());
        assert!(sim_cpu >= 0.9 * groups * per_group, "{groups} group(s) at {per_group} ns each: {row}");
    }
    assert!(h["other_load"].as_f64().is_some_and(|l| (0.0..=1.0).contains(&l)), "{h}");
    let fit = &h["fit"];
    assert_eq!(fit["n"], 2);
    assert!((fit["r2"].as_f64().unwrap() - 1.0).abs() < 1e-9, "two points fit exactly: {fit}");

    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("real = sim"), "{svg:.200}");

    // The traced run: hackbench -g 2 here and simulated, 1 parent + 80 workers each.
    let tr = &r["trace"];
    assert_eq!(tr["groups"], 2);
    for side in ["real", "sim"] {
        let s = &tr[side];
        assert_eq!(s["tasks"], 81, "{side}: {s}");
        let (vol, wakeups) = (s["voluntary_switches"].as_u64().unwrap(), s["wakeups"].as_u64().unwrap());
        assert!(vol >= 80, "every worker blocks in poll at least: {side}: {s}");
        assert!(wakeups >= 80 && s["runs"].as_u64().unwrap() > vol, "{side}: {s}");
        let file = tr[format!("{side}_file")].as_str().unwrap();
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let slices = json["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").count();
        assert!(slices as u64 >= s["runs"].as_u64().unwrap(), "{file}: every run is a slice");
    }
    assert_eq!(tr["sim"]["other_ns"], 0, "the simulation runs the workload alone");

    let files = r["rtapp"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    let f = &files[0];
    assert!(f["error"].is_null(), "{f}");
    assert!(r["rtapp"]["ns_per_loop"].as_f64().unwrap() > 0.0);
    // Two 50 ms hogs on the CPUs validate may use (this process's: one each on two CPUs,
    // one after the other on one), simulated at the speed the real loop ran.
    let slowdown = f["slowdown"].as_f64().unwrap();
    assert!((0.5..3.0).contains(&slowdown), "{f}");
    let cpus = r["cpus"].as_u64().unwrap();
    let by_hand = 50.0 * 2u64.div_ceil(cpus) as f64 * slowdown;
    let sim_ms = f["sim_makespan_ns"].as_u64().unwrap() as f64 / 1e6;
    assert!((sim_ms - by_hand).abs() < 5.0, "two 50 ms hogs on {cpus} CPU(s), ×{slowdown}: {f}");
    let tasks = f["tasks"].as_array().unwrap();
    let names: Vec<&str> = tasks.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["hog-0", "hog-1"]);
    for t in tasks {
        let (real, sim) = (t["real_share"].as_f64().unwrap(), t["sim_share"].as_f64().unwrap());
        assert!((sim - 0.5).abs() < 0.01 && (real - 0.5).abs() < 0.15, "{t}");
        let points = t["share_error_points"].as_f64().unwrap();
        assert!((points - (sim - real) * 100.0).abs() < 1e-9, "{t}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

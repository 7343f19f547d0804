//! The systemd unit in `dist/` is one systemd accepts, with sandboxing that leaves the
//! daemon what it needs and not much more, and a command line this schedlab takes.
//! Needs `systemd-analyze` (the `systemd` package, which setup installs).

use std::process::Command;

const UNIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../dist/schedlab.service");
const SCHEDLAB: &str = env!("CARGO_BIN_EXE_schedlab");

/// The unit with this build's binary in place of /usr/local/bin/schedlab.
fn unit_here(dir: &std::path::Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(UNIT).unwrap().replace("/usr/local/bin/schedlab", SCHEDLAB);
    let path = dir.join("schedlab.service");
    std::fs::write(&path, text).unwrap();
    path
}

fn analyze(args: &[&str]) -> std::process::Output {
    Command::new("systemd-analyze")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("systemd-analyze cannot run ({e}): install the systemd package"))
}

#[test]
fn the_unit_verifies_is_sandboxed_and_runs_a_command_line_schedlab_takes() {
    let dir = std::env::temp_dir().join(format!("schedlab-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let unit = unit_here(&dir);
    let verify = analyze(&["verify", unit.to_str().unwrap()]);
    assert!(
        verify.status.success() && verify.stderr.is_empty(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let security = analyze(&["security", "--offline=yes", unit.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&security.stdout).to_string();
    let exposure: f64 = text
        .lines()
        .find_map(|l| l.split("exposure level for schedlab.service: ").nth(1))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in {text}"));
    assert!(exposure <= 5.0, "the unit's exposure is {exposure}: {text}");

    // Every command the unit runs parses (clap refuses an unknown option before --help).
    let units = std::fs::read_to_string(&unit).unwrap();
    for key in ["ExecStart=", "ExecStopPost="] {
        let line = units.lines().find_map(|l| l.strip_prefix(key)).unwrap();
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some(SCHEDLAB));
        let out = Command::new(SCHEDLAB).args(words).arg("--help").output().unwrap();
        assert!(out.status.success(), "{key}{line}: {}", String::from_utf8_lossy(&out.stderr));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

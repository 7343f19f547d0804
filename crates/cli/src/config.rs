//! `schedlab config`: print the daemon's built-in configuration, or check a file.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use schedlab_behavior::distribution::Plan;
use schedlab_live::config::{Class, ClassPolicy, Config, DEFAULT};
use schedlab_live::daemon::classes;
use schedlab_live::settings::CpuSet;

/// Print the daemon's built-in configuration (`--default`), or check a configuration
/// file and say what it means (`--check FILE`).
///
/// The file is TOML: `[[rule]]` entries (`match` on comm, exe, cmdline, cgroup, uid or
/// parent, and the `class` they give) and `[class.NAME]` tables (cpus, plan, nice,
/// policy, …); `--default` prints the built-in one with every key explained. A bad file
/// is reported with its line and column and what is wrong.
#[derive(Debug, Args)]
#[command(
    after_long_help = "Examples:\n  schedlab config --default > schedlab.toml\n  schedlab config --check schedlab.toml"
)]
pub struct ConfigOpts {
    /// Print the built-in configuration.
    #[arg(long, conflicts_with = "check")]
    default: bool,
    /// Check FILE and print its rules and classes.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
}

pub fn run(opts: &ConfigOpts) -> Result<()> {
    let mut out = io::stdout().lock();
    if opts.default {
        out.write_all(DEFAULT.as_bytes())?;
        return Ok(());
    }
    let Some(path) = &opts.check else {
        bail!("say --default or --check FILE (see 'schedlab config --help')")
    };
    let config = Config::load(path)?;
    writeln!(out, "{}: {} rule(s), {} class(es)", path.display(), config.rules.len(), config.classes.len())?;
    for (i, r) in config.rules.iter().enumerate() {
        writeln!(out, "  rule {}: {} -> class {}", i + 1, classes::describe(&r.matches), r.class)?;
    }
    for c in config.classes.values() {
        writeln!(out, "  class {}: {}", c.name, describe_class(c))?;
    }
    Ok(())
}

/// What a class does, in words: `nice 19, policy batch, slice 100 ms; not bound`.
fn describe_class(c: &Class) -> String {
    if !c.manage {
        return "left alone (manage = false)".into();
    }
    let mut sets = Vec::new();
    if let Some(n) = c.nice {
        sets.push(format!("nice {n}"));
    }
    sets.extend(c.policy.map(|p| match p {
        ClassPolicy::Other => "policy other".to_string(),
        ClassPolicy::Batch => "policy batch".into(),
        ClassPolicy::Idle => "policy idle".into(),
        ClassPolicy::Fifo { priority, max_ms_per_s } => {
            format!("policy fifo {priority} (at most {max_ms_per_s} ms of CPU per s)")
        }
        ClassPolicy::Rr { priority, max_ms_per_s } => {
            format!("policy rr {priority} (at most {max_ms_per_s} ms of CPU per s)")
        }
    }));
    if let Some(ns) = c.slice_ns {
        sets.push(format!("slice {} ms", ns as f64 / 1e6));
    }
    let cpus = c.cpus.as_ref().map_or("all CPUs".to_string(), |v| {
        format!("CPUs {}", CpuSet::new(v.iter().map(|&cpu| cpu as usize)))
    });
    let placed = match &c.plan {
        None => "not bound".to_string(),
        Some(Plan::FairShare) => format!("bound over {cpus}, the same number on each"),
        Some(Plan::Weighted(shares)) => format!("bound over {cpus} by shares {shares:?}"),
        Some(Plan::Isolate) => format!("on {cpus}, other classes kept off them"),
    };
    let by = if c.cpuset && c.plan.is_some() { " (a cpuset cgroup)" } else { "" };
    match sets.is_empty() {
        true => format!("changes no setting; {placed}{by}"),
        false => format!("{}; {placed}{by}", sets.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::parse;
    use crate::Command;

    #[test]
    fn check_reports_bad_files_with_their_position() {
        let path = std::env::temp_dir().join(format!("schedlab-config-{}.toml", std::process::id()));
        std::fs::write(&path, "[class.batch]\nnice = 99\n").unwrap();
        let Command::Config(o) = parse(&["config", "--check", path.to_str().unwrap()]).unwrap().command
        else {
            panic!("not config")
        };
        let e = run(&o).unwrap_err().to_string();
        assert!(e.ends_with(":2:8: nice 99 is outside -20..19"), "{e}");
        std::fs::write(&path, DEFAULT).unwrap();
        run(&o).unwrap();
        let background = &Config::builtin().classes["background"];
        assert_eq!(describe_class(background), "nice 19, policy batch; not bound");
        let c = Config::parse("[class.b]\ncpus = \"0,1\"\nslice_ms = 0.5\n", "x.toml").unwrap();
        assert_eq!(
            describe_class(&c.classes["b"]),
            "slice 0.5 ms; bound over CPUs 0-1, the same number on each"
        );
        std::fs::remove_file(&path).unwrap();
    }
}

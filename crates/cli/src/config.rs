//! `schedlab config`: print the daemon's built-in configuration, or check a file.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use schedlab_live::config::{Config, DEFAULT};

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
        writeln!(out, "  rule {}: {:?} -> class {}", i + 1, r.matches, r.class)?;
    }
    for c in config.classes.values() {
        let cpus = c.cpus.as_ref().map_or("all".to_string(), |v| format!("{v:?}"));
        writeln!(
            out,
            "  class {}: cpus {cpus}, plan {:?}, nice {:?}, policy {:?}{}",
            c.name,
            c.plan,
            c.nice,
            c.policy,
            if c.manage { "" } else { " (left alone)" }
        )?;
    }
    Ok(())
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
        std::fs::remove_file(&path).unwrap();
    }
}

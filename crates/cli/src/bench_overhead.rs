//! `schedlab bench overhead`: what observing, and the daemon, cost a system-call heavy
//! workload.

use std::io::{self, Write};

use anyhow::{Context, Result};
use clap::Args;
use schedlab_lab::bench::overhead::{run_overhead, Mode, OverheadConfig};

use crate::provenance::{write_json, Provenance};
use crate::table::{Align, Table};

const EXAMPLES: &str = "\
Examples:
  # hackbench -g 10 -l 100 -p, 7 interleaved rounds of each mode
  sudo schedlab bench overhead

  # the observer against bare only, 3 rounds, as JSON
  sudo schedlab bench overhead --modes observer --rounds 3 --json

  # what schedlab run costs in its steady state, with your configuration
  sudo schedlab bench overhead --modes watched,daemon --config schedlab.toml";

/// What observing costs: hackbench bare, under schedlab's observer, under bpftrace
/// counting system calls as the thesis's DTrace script did, and under `schedlab run`.
///
/// rt-tests' `hackbench -g G -l L -p` (processes talking through pipes: hundreds of
/// thousands of system calls and context switches a second) runs bare and beside each
/// mode:
///
/// - floor: a bpftrace program on `raw_syscalls:sys_enter` whose filter never holds
///   (`/pid == 0/`), what attaching anything to every system call costs;
/// - observer: schedlab's eBPF observer as `schedlab observe` runs it (every switch and
///   waking, the system-call hook attached; in this process, with observe's sinks);
/// - watched: the observer as the daemon keeps it (watched mode, no system-call hook,
///   nothing marked);
/// - daemon: `schedlab run` (the built-in configuration, or --config) in its steady
///   state: started for the round, measured once its start-up profiling window closed;
/// - bpftrace: `bpftrace -e 'tracepoint:raw_syscalls:sys_enter { @[pid, comm,
///   args->id] = count(); }'`.
///
/// Rounds are interleaved (bare, floor, observer, watched, daemon, bpftrace, bare, …);
/// the table gives each mode's median of hackbench's own times and its difference from
/// bare, and the records the observer lost.
///
/// Needs root (BPF), hackbench (apt-get install rt-tests) and, for its mode, bpftrace.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct OverheadOpts {
    /// hackbench's groups (-g).
    #[arg(long, default_value_t = 10)]
    groups: u32,
    /// hackbench's loops (-l).
    #[arg(long, default_value_t = 100)]
    loops: u32,
    /// Runs of each mode.
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// The modes besides bare (which is always run), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "floor,observer,watched,daemon,bpftrace")]
    modes: Vec<Mode>,
    /// The daemon's configuration (TOML) in daemon mode [default: the built-in one].
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(opts: &OverheadOpts) -> Result<()> {
    let (daemon_config, _) = crate::bench_suite::daemon_config(opts.config.as_deref())?;
    let cfg = OverheadConfig {
        groups: opts.groups,
        loops: opts.loops,
        rounds: opts.rounds.max(1),
        modes: opts.modes.clone(),
        exe: std::env::current_exe().context("cannot find this program's path to start the daemon")?,
        daemon_config,
        ..OverheadConfig::default()
    };
    let report = run_overhead(&cfg, &mut |round, mode, secs| {
        eprintln!("round {} {}: {secs:.3} s", round + 1, mode.name());
    })?;
    let mut out = io::stdout().lock();
    if opts.json {
        write_json(&mut out, &Provenance::of_this_run(), &report)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}, {} interleaved rounds per mode, medians of hackbench's times",
        report.command, report.rounds
    )?;
    let mut t = Table::new(&[
        ("MODE", Align::Left),
        ("MEDIAN", Align::Right),
        ("VS BARE", Align::Right),
        ("MIN", Align::Right),
        ("MAX", Align::Right),
        ("LOST", Align::Right),
    ]);
    for m in &report.modes {
        let (min, max) = m.times_s.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &t| (lo.min(t), hi.max(t)));
        t.row(vec![
            m.mode.name().into(),
            format!("{:.3} s", m.median_s),
            format!("{:+.1} %", m.vs_bare_pct),
            format!("{min:.3} s"),
            format!("{max:.3} s"),
            m.lost_events.map_or("-".into(), |n| n.to_string()),
        ]);
    }
    t.write(&mut out)?;
    for note in &report.notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}

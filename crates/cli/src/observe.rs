//! `schedlab observe`: watch the live machine through eBPF for a while and report what
//! the processes did (system-call mix, CPU time, context switches, run bursts) and whom
//! they waited for (SWAP's dependencies).

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use schedlab_behavior::learn::{long_to_arff, Dataset, FeatureVector, LongRecord};
use schedlab_live::observation::{self, Observation};
use schedlab_model::Ns;
use schedlab_store::Store;

use crate::human::{count, duration};
use crate::table::{Align, Table};

const EXAMPLES: &str = "\
Examples:
  # the whole machine for 30 seconds (needs root)
  sudo schedlab observe

  # two processes for 10 seconds, the report as JSON
  sudo schedlab observe --duration 10s --pid 1234 --pid 5678 --json | jq '.processes[0].syscalls'";

/// Watch the live machine through eBPF and report what processes did and whom they
/// waited for.
///
/// System calls are counted in the kernel per process and call; context switches,
/// wakeups, exec, fork and exit, and the calls on pipes, sockets, FIFOs, locks, SysV
/// IPC and signals go through a ring buffer read every 100 ms. The report lists the
/// busiest processes (by CPU time) with their three most frequent calls, CPU time,
/// voluntary and involuntary context switches, and run bursts (CPU time from being
/// switched in until blocking, preemptions merged, as PFS measures them), then the
/// dependencies SWAP's resource model found: a blocked requester, the provider that
/// woke it, the resource, and the provider's confidence.
///
/// Needs root and a kernel with BTF (/sys/kernel/btf/vmlinux); says which is missing
/// otherwise.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct ObserveOpts {
    /// How long to observe (with a unit: 500ms, 30s, 2m).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = crate::args::duration)]
    pub duration: Ns,
    /// Report only these processes (thread group ids); repeatable. All by default.
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
    /// How many of the busiest processes the table shows.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write each process's profile to FILE as ARFF (Weka's format), for
    /// `schedlab learn`: one row per process (`wide`: a `process` column, then the
    /// features) or the thesis's rows of (syscall, process, count) (`long`).
    #[arg(long, value_name = "FILE")]
    pub arff: Option<PathBuf>,
    /// The shape of the ARFF file.
    #[arg(long, value_name = "FORMAT", default_value = "wide", value_parser = ["wide", "long"])]
    pub arff_format: String,
    /// Keep the window in this SQLite store [default: /var/lib/schedlab/schedlab.db as
    /// root, else the XDG data directory].
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// Do not keep the window in the store.
    #[arg(long, conflicts_with = "store")]
    pub no_store: bool,
}

/// Runs `schedlab observe`.
pub fn run(opts: &ObserveOpts) -> Result<()> {
    let report = observe_window(opts.duration, &opts.pids)?;
    if let Some(path) = &opts.arff {
        let arff = if opts.arff_format == "long" {
            let records: Vec<LongRecord> = report
                .processes
                .iter()
                .flat_map(|p| {
                    p.ranked.iter().map(|(call, n)| LongRecord {
                        syscall: call.clone(),
                        process: p.comm.clone(),
                        count: *n as f64,
                        class: None,
                    })
                })
                .collect();
            long_to_arff("schedlab-observe", &records)
        } else {
            let rows: Vec<(String, FeatureVector, Option<String>)> =
                report.processes.iter().map(|p| (p.comm.clone(), p.profile().features(), None)).collect();
            Dataset::from_vectors("schedlab-observe", &rows).to_arff()
        };
        std::fs::write(path, arff.write()).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !opts.no_store {
        let path = opts.store.clone().unwrap_or_else(Store::default_path);
        observation::keep(&Store::open(&path)?, &report)
            .with_context(|| format!("cannot keep the window in {}", path.display()))?;
    }
    let mut out = io::stdout().lock();
    if opts.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write_human(&mut out, &report, opts.top)?;
    }
    Ok(())
}

/// Observes the machine for `window_ns` (restricted to `pids` when not empty), with a
/// progress bar.
#[cfg(target_os = "linux")]
pub(crate) fn observe_window(window_ns: Ns, pids: &[u32]) -> Result<Observation> {
    use indicatif::{ProgressBar, ProgressStyle};

    let bar = ProgressBar::new(window_ns / 1_000_000);
    bar.set_style(
        ProgressStyle::with_template("observing {bar:30} {elapsed}/{duration} {msg}")
            .expect("a valid progress template"),
    );
    let observed = observation::observe(window_ns, pids, &mut |elapsed, events| {
        bar.set_position(elapsed.as_millis() as u64);
        bar.set_message(format!("{} events", count(events as f64)));
    });
    bar.finish_and_clear();
    observed.context("cannot observe (the live observer)")
}

/// Observing needs Linux (eBPF tracepoints).
#[cfg(not(target_os = "linux"))]
pub(crate) fn observe_window(_window_ns: Ns, _pids: &[u32]) -> Result<Observation> {
    anyhow::bail!("schedlab observe needs Linux (eBPF tracepoints)")
}

fn write_human(out: &mut impl Write, r: &Observation, top: usize) -> io::Result<()> {
    writeln!(
        out,
        "observed {} : {} events, {} lost, {} processes",
        duration(r.duration_ns),
        count(r.events as f64),
        r.lost_events,
        r.processes.len()
    )?;
    writeln!(out)?;
    let mut t = Table::new(&[
        ("pid", Align::Right),
        ("comm", Align::Left),
        ("syscalls (top 3)", Align::Left),
        ("runtime", Align::Right),
        ("nvcsw", Align::Right),
        ("nivcsw", Align::Right),
        ("bursts", Align::Right),
        ("mean", Align::Right),
        ("p90", Align::Right),
    ]);
    for p in r.processes.iter().take(top) {
        let mix: Vec<String> =
            p.ranked.iter().take(3).map(|(name, n)| format!("{name} {}", count(*n as f64))).collect();
        t.row(vec![
            p.pid.to_string(),
            p.comm.clone(),
            mix.join(", "),
            duration(p.runtime_ns),
            count(p.nvcsw as f64),
            count(p.nivcsw as f64),
            count(p.bursts.count as f64),
            duration(p.bursts.mean_ns),
            duration(p.bursts.p90_ns),
        ]);
    }
    t.write(out)?;
    if r.processes.len() > top {
        writeln!(out, "({} more processes; --top N or --json for all)", r.processes.len() - top)?;
    }
    writeln!(out)?;
    if r.dependencies.is_empty() {
        writeln!(out, "dependencies: none found")?;
        return Ok(());
    }
    writeln!(out, "dependencies (requester waits for provider):")?;
    let mut t = Table::new(&[
        ("requester", Align::Left),
        ("provider", Align::Left),
        ("resource", Align::Left),
        ("confidence", Align::Right),
        ("wakeups", Align::Right),
    ]);
    for d in r.dependencies.iter().take(top) {
        t.row(vec![
            format!("{} {}", d.requester.pid, d.requester.comm),
            format!("{} {}", d.provider.pid, d.provider.comm),
            d.resource.name.clone(),
            d.confidence.to_string(),
            count(d.wakeups as f64),
        ]);
    }
    t.write(out)?;
    if r.dependencies.len() > top {
        writeln!(out, "({} more dependencies; --json for all)", r.dependencies.len() - top)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn observe_parses_its_options() {
        let o = crate::tests::parse(&["observe", "--duration", "2s", "--pid", "1", "--pid", "7", "--json"])
            .unwrap();
        let crate::Command::Observe(o) = o.command else { panic!("not observe") };
        assert_eq!((o.duration, o.pids.as_slice(), o.json), (2_000_000_000, &[1, 7][..], true));
        assert!(crate::tests::parse(&["observe", "--duration", "0s"]).is_err());
    }
}

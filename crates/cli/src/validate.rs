//! `schedlab validate`: the same workloads on this machine and in the simulator (EEVDF,
//! this machine's CPU count) with costs measured here, paired, and related by a
//! least-squares line as paper 003's Figure 1 relates LinSched to hackbench.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use crate::tunables::{self, Setting};

const EXAMPLES: &str = "\
Examples:
  # the defaults: calibration, hackbench -g 1..10 -l 100 -p five times each, the rt-app
  # files of data/validate, and a chart of the hackbench pairs
  schedlab validate --chart validate.svg

  # a quick look, no rt-app, as JSON
  schedlab validate --groups 1-4 --loops 20 --reps 1 --no-rtapp --json | jq .hackbench.fit

  # the simulator's default costs instead of the measured ones, and one more tunable
  schedlab validate --no-calibrate --set base_slice_ns=3ms";

/// Run the same workloads on this machine and in the simulator, and compare them.
///
/// First the simulator's cost tunables are measured here (median of --reps): a pipe
/// system call (syscall_ns: a 1-byte write or read that does not block), the copy per
/// KiB through a pipe (copy_ns_per_kib), a memset per KiB of rt-app's 4 MiB buffer
/// (mem_ns_per_kib: rt-app's mem event), a wake-up (wakeup_ns: the waker's extra time for
/// a write that wakes a blocked reader), a context switch (context_switch_ns: half a
/// ping-pong round trip between two processes on one CPU, less a write, a read and a
/// wake-up), a wake-up onto another CPU and an idle CPU's exit (wakeup_remote_ns,
/// idle_exit_ns), and a small process's fork and exit (fork_ns, exit_ns).
///
/// Then rt-tests `hackbench -g G -f FDS -l L -s 100 -p` runs for each G, --reps times
/// (interleaved; the median of hackbench's own `Time:` is kept, with the context
/// switches of hackbench and its workers), and the same workload is simulated under
/// EEVDF with this machine's CPU count and the measured costs. The pairs (simulated,
/// real) get a least-squares line real = a * sim + b with its R², and the slope through
/// the origin.
///
/// Then each rt-app JSON file of --rtapp runs with rt-app (its busy loop calibrated
/// here first) and in the simulator: makespan, each thread's share of the threads' CPU
/// time, and context switches.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct ValidateOpts {
    /// hackbench group counts: FIRST-LAST or one N.
    #[arg(long, value_name = "FIRST-LAST", default_value = "1-10", value_parser = parse_groups)]
    pub groups: Groups,

    /// hackbench loops: messages from each sender to each receiver (-l).
    #[arg(long, value_name = "L", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub loops: u32,

    /// hackbench senders and receivers per group (-f).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub fds: u32,

    /// Runs of each real workload (and of each calibration measurement), and seeds of
    /// each simulated hackbench; the medians are kept.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub reps: u32,

    /// Directory of rt-app JSON files (plain JSON, no comments) to run
    /// [default: data/validate, when it exists].
    #[arg(long, value_name = "DIR", conflicts_with = "no_rtapp")]
    pub rtapp: Option<PathBuf>,

    /// Skip the rt-app workloads.
    #[arg(long)]
    pub no_rtapp: bool,

    /// Use the simulator's default costs instead of measuring them.
    #[arg(long)]
    pub no_calibrate: bool,

    /// Spread of the simulated hackbench runs' system calls, ± percent: each group count
    /// is simulated with --reps seeds and the median kept, as the real runs' is, since
    /// hackbench's switches and time vary widely from run to run on the kernel too
    /// (`--set jitter_pct=N` overrides it).
    #[arg(long, value_name = "PCT", default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub sim_jitter: u64,

    /// Simulated CPUs [default: the CPUs this process may use here].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cpus: Option<u32>,

    /// Set a simulator tunable after the calibration, e.g. `--set base_slice_ns=3ms`;
    /// repeat for several.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = tunables::parse_setting)]
    pub set: Vec<Setting>,

    /// Time limit of each real run, in seconds; past it the run is killed.
    #[arg(long, value_name = "S", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,

    /// Write the hackbench pairs and their fitted line to FILE as an SVG chart.
    #[arg(long, value_name = "FILE.svg")]
    pub chart: Option<PathBuf>,

    /// Also trace one hackbench run (of --trace-groups groups) here, through the
    /// observer (root, BPF), and in the simulator: both Perfetto timelines go to DIR
    /// (hackbench-gG-real.json, hackbench-gG-sim.json; open them side by side in
    /// ui.perfetto.dev), and the report compares what the two show: switches, run
    /// lengths, where wake-ups land and whether they preempt, idle time.
    #[arg(long, value_name = "DIR")]
    pub trace: Option<PathBuf>,

    /// hackbench's group count for --trace [default: the first of --groups].
    #[arg(long, value_name = "G", requires = "trace", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub trace_groups: Option<u32>,

    /// Print the results as one JSON object instead of tables (times in nanoseconds).
    #[arg(long)]
    pub json: bool,
}

/// A range of hackbench group counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups {
    pub first: u32,
    pub last: u32,
}

fn parse_groups(s: &str) -> Result<Groups, String> {
    let num = |t: &str| -> Result<u32, String> {
        match t.trim().parse::<u32>() {
            Ok(n) if (1..=10_000).contains(&n) => Ok(n),
            _ => Err(format!("'{t}' is not a group count in 1..=10000")),
        }
    };
    let (first, last) = match s.split_once('-') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => (num(s)?, num(s)?),
    };
    if first > last {
        return Err(format!("the range {first}-{last} is empty: give FIRST-LAST with FIRST <= LAST"));
    }
    Ok(Groups { first, last })
}

#[cfg(target_os = "linux")]
use schedlab_lab::validate::pairs::ValidateReport;

/// Runs `schedlab validate`.
#[cfg(not(target_os = "linux"))]
pub fn run(_: &ValidateOpts) -> Result<()> {
    anyhow::bail!("validate runs hackbench and rt-app on Linux only")
}

/// Runs `schedlab validate`.
#[cfg(target_os = "linux")]
pub fn run(opts: &ValidateOpts) -> Result<()> {
    use schedlab_lab::validate::pairs::{validate, ValidateConfig};

    use crate::provenance::{write_json, Provenance};

    let cfg = ValidateConfig {
        cpus: opts.cpus.unwrap_or_else(crate::simulate::host_cpus),
        reps: opts.reps,
        calibrate: !opts.no_calibrate,
        sets: opts
            .set
            .iter()
            .filter_map(|s| match s {
                Setting::Assign { name, value } => Some((name.clone(), value.clone())),
                Setting::Help => None,
            })
            .collect(),
        groups: (opts.groups.first, opts.groups.last),
        fds: opts.fds,
        loops: opts.loops,
        rtapp: (!opts.no_rtapp).then(|| match &opts.rtapp {
            Some(dir) => (dir.clone(), true),
            None => (PathBuf::from("data/validate"), false),
        }),
        limit: std::time::Duration::from_secs(opts.timeout),
        exe: std::env::current_exe().context("cannot find this program's path to start its fork probe")?,
        trace: opts.trace.clone().map(|dir| (dir, opts.trace_groups.unwrap_or(opts.groups.first))),
        sim_jitter_pct: opts.sim_jitter,
    };
    let report = validate(&cfg, &mut |msg| {
        if !opts.json {
            eprintln!("{msg}");
        }
    })?;
    if let Some(path) = &opts.chart {
        let svg = chart(&report)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write the chart {}", path.display()))?;
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let written = if opts.json {
        write_json(&mut out, &Provenance::of_this_run(), &report)
    } else {
        write_text(&mut out, &report, opts.chart.as_deref())
    };
    written.context("cannot write to standard output")
}

/// What the other processes' load means for the real side.
fn other_load_note(load: f64) -> String {
    format!(
        "other processes kept {:.0}% of the CPUs busy meanwhile{}",
        load * 100.0,
        if load > 0.1 { ": the real times are inflated, rerun on a quiet machine" } else { "" }
    )
}

/// A time in microseconds with one decimal.
fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1e3)
}

/// A time in milliseconds with two decimals.
fn ms(ns: u64) -> String {
    format!("{:.2} ms", ns as f64 / 1e6)
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

/// The human report.
#[cfg(target_os = "linux")]
fn write_text(out: &mut impl Write, r: &ValidateReport, chart: Option<&Path>) -> io::Result<()> {
    use crate::table::{Align, Table};
    if let Some(c) = &r.calibration {
        writeln!(out, "calibration (CPU {}, median of {}):", c.cpu, c.reps)?;
        let mut t = Table::new(&[("", Align::Left), ("", Align::Right), ("", Align::Left)]).headless();
        t.row(vec![
            "  null system call (getppid)".into(),
            format!("{:.0} ns", c.null_syscall_ns),
            String::new(),
        ]);
        t.row(vec![
            "  pipe system call (1 B)".into(),
            format!("{:.0} ns", c.pipe_syscall_ns),
            "syscall_ns".into(),
        ]);
        t.row(vec![
            "  pipe copy per KiB".into(),
            format!("{:.1} ns", c.copy_ns_per_kib),
            "copy_ns_per_kib".into(),
        ]);
        t.row(vec![
            "  memset per KiB (4 MiB buffer)".into(),
            format!("{:.1} ns", c.mem_ns_per_kib),
            "mem_ns_per_kib".into(),
        ]);
        t.row(vec!["  ping-pong round trip".into(), format!("{:.0} ns", c.round_trip_ns), String::new()]);
        t.row(vec!["  wake-up (waker's side)".into(), format!("{:.0} ns", c.wakeup_ns), "wakeup_ns".into()]);
        t.row(vec![
            "  context switch".into(),
            format!("{:.0} ns", c.context_switch_ns),
            "context_switch_ns".into(),
        ]);
        t.row(vec!["  fork (small process)".into(), us(c.fork_ns), "fork_ns (less a system call)".into()]);
        t.row(vec!["  a forked child's life".into(), us(c.exit_ns), "exit_ns".into()]);
        let idle = match (c.other_cpu, c.idle_exit_ns) {
            (Some(other), Some(idle)) => (format!("  idle CPU exit (CPU {other})"), us(idle)),
            _ => ("  idle CPU exit".into(), "one CPU: not measured".into()),
        };
        t.row(vec![idle.0, idle.1, "idle_exit_ns".into()]);
        let remote = c.wakeup_remote_ns.map_or_else(|| "one CPU: not measured".into(), us);
        t.row(vec!["  wake-up onto another CPU, extra".into(), remote, "wakeup_remote_ns".into()]);
        t.write(out)?;
    } else {
        writeln!(out, "calibration: skipped (--no-calibrate): the simulator's default costs")?;
    }
    let set: Vec<String> = r.tunables.iter().map(|t| format!("{}={}", t.name, t.value)).collect();
    writeln!(
        out,
        "simulator: {} on {} CPU(s){}{}",
        r.fair,
        r.cpus,
        if set.is_empty() { "" } else { ", " },
        set.join(" ")
    )?;
    writeln!(out)?;

    let h = &r.hackbench;
    writeln!(out, "hackbench: {} (median of {}) vs {}", h.command, r.reps, h.sim_spec)?;
    let mut t = Table::new(&[
        ("GROUPS", Align::Right),
        ("REAL", Align::Right),
        ("SIMULATED", Align::Right),
        ("ERROR", Align::Right),
        ("REAL CPU", Align::Right),
        ("SIM CPU", Align::Right),
        ("ERROR", Align::Right),
        ("REAL VCSW", Align::Right),
        ("SIM VCSW", Align::Right),
        ("ERROR", Align::Right),
    ]);
    for row in &h.rows {
        t.row(vec![
            row.groups.to_string(),
            ms(row.real_ns),
            ms(row.sim_ns),
            opt(row.makespan_error, signed_pct),
            ms(row.real_cpu_ns),
            ms(row.sim_cpu_ns),
            opt(row.cpu_error, signed_pct),
            row.real_nvcsw.to_string(),
            row.sim_nvcsw.to_string(),
            opt(row.voluntary_switch_error, signed_pct),
        ]);
    }
    writeln!(out, "(ERROR: simulated / real - 1; VCSW: voluntary context switches)")?;
    t.write(out)?;
    match &h.fit {
        Some(f) => writeln!(
            out,
            "makespan fit: real = {:.3} x sim {} {:.2} ms, R² = {:.4}; through the origin real = {:.3} x sim",
            f.slope,
            if f.intercept < 0.0 { "-" } else { "+" },
            f.intercept.abs() / 1e6,
            f.r2,
            f.slope_through_origin
        )?,
        None => writeln!(out, "makespan fit: needs at least two group counts")?,
    }
    if let Some(f) = &h.context_switch_fit {
        writeln!(
            out,
            "context-switch fit: real = {:.3} x sim {} {:.0}, R² = {:.4}",
            f.slope,
            if f.intercept < 0.0 { "-" } else { "+" },
            f.intercept.abs(),
            f.r2
        )?;
    }
    if let Some(load) = h.other_load {
        writeln!(out, "{}", other_load_note(load))?;
    }
    if let Some(path) = chart {
        writeln!(out, "chart: {}", path.display())?;
    }

    if let Some(rt) = &r.rtapp {
        write_rtapp(out, rt, r.reps)?;
    }
    if let Some(tr) = &r.trace {
        write_trace(out, tr)?;
    }
    write_verdicts(out, &r.verdicts)
}

/// The rt-app files, real beside simulated.
#[cfg(target_os = "linux")]
fn write_rtapp(
    out: &mut impl Write,
    rt: &schedlab_lab::validate::pairs::RtAppSection,
    reps: u32,
) -> io::Result<()> {
    use crate::table::{Align, Table};
    writeln!(out)?;
    if let Some(why) = &rt.skipped {
        return writeln!(out, "rt-app: skipped: {why}");
    }
    {
        writeln!(
            out,
            "rt-app: {} (busy loop {} ns per loop, ×: how much slower it ran in the real runs, \
             which the simulated runs follow; median of {})",
            rt.dir,
            opt(rt.ns_per_loop, |n| format!("{n:.2}")),
            reps
        )?;
        let mut t = Table::new(&[
            ("FILE / THREAD", Align::Left),
            ("REAL MAKESPAN", Align::Right),
            ("SIM MAKESPAN", Align::Right),
            ("ERROR", Align::Right),
            ("REAL SHARE", Align::Right),
            ("SIM SHARE", Align::Right),
            ("POINTS", Align::Right),
            ("REAL CPU", Align::Right),
            ("SIM CPU", Align::Right),
            ("ERROR", Align::Right),
            ("REAL CSW", Align::Right),
            ("SIM CSW", Align::Right),
        ]);
        let pct = |v: f64| format!("{:.1}%", v * 100.0);
        for f in &rt.files {
            let name =
                Path::new(&f.file).file_name().map_or(f.file.clone(), |n| n.to_string_lossy().into_owned());
            let name = match f.slowdown {
                Some(x) => format!("{name} (loop ×{x:.3})"),
                None => name,
            };
            let blank = String::new;
            t.row(vec![
                name,
                opt(f.real_makespan_ns, ms),
                opt(f.sim_makespan_ns, ms),
                opt(f.makespan_error, signed_pct),
                blank(),
                blank(),
                blank(),
                blank(),
                blank(),
                blank(),
                opt(f.real_csw, |n| n.to_string()),
                opt(f.sim_csw, |n| n.to_string()),
            ]);
            for task in &f.tasks {
                t.row(vec![
                    format!("  {}", task.name),
                    blank(),
                    blank(),
                    blank(),
                    opt(task.real_share, pct),
                    opt(task.sim_share, pct),
                    opt(task.share_error_points, |p| format!("{p:+.1}")),
                    opt(task.real_runtime_ns, ms),
                    opt(task.sim_runtime_ns, ms),
                    opt(task.runtime_error, signed_pct),
                    opt(task.real_csw, |n| n.to_string()),
                    opt(task.sim_csw, |n| n.to_string()),
                ]);
            }
        }
        t.write(out)?;
        if let Some(load) = rt.other_load {
            writeln!(out, "{}", other_load_note(load))?;
        }
        for f in rt.files.iter().filter(|f| f.error.is_some()) {
            writeln!(out, "{}: {}", f.file, f.error.as_deref().unwrap_or_default())?;
        }
    }
    Ok(())
}

/// The traced run: what the two timelines show, side by side.
#[cfg(target_os = "linux")]
fn write_trace(out: &mut impl Write, tr: &schedlab_lab::validate::pairs::TraceSection) -> io::Result<()> {
    use crate::table::{Align, Table};
    use schedlab_lab::validate::trace::TraceStats;
    writeln!(out)?;
    writeln!(
        out,
        "one run of {} groups traced: {} (real), {} (simulated)",
        tr.groups, tr.real_file, tr.sim_file
    )?;
    let mut t = Table::new(&[("", Align::Left), ("REAL", Align::Right), ("SIMULATED", Align::Right)]);
    type Cell = fn(&TraceStats) -> String;
    let rows: [(&str, Cell); 15] = [
        ("tasks", |s| s.tasks.to_string()),
        ("span", |s| ms(s.span_ns)),
        ("voluntary switches", |s| s.voluntary_switches.to_string()),
        ("involuntary switches", |s| s.involuntary_switches.to_string()),
        ("runs", |s| s.runs.to_string()),
        ("run, median", |s| us(s.run_median_ns as f64)),
        ("CPU time", |s| ms(s.run_ns)),
        ("wake-ups", |s| s.wakeups.to_string()),
        ("  onto the waker's CPU", |s| s.wakeups_on_wakers_cpu.to_string()),
        ("  onto an idle CPU", |s| s.wakeups_to_idle_cpu.to_string()),
        ("  moving the wakee", |s| s.wakeups_migrating.to_string()),
        ("  preempting on arrival", |s| s.wakeups_preempting.to_string()),
        ("wake-up to run, median", |s| us(s.wake_to_run_median_ns as f64)),
        ("CPUs going idle / idle time", |s| format!("{} / {}", s.idle_periods, ms(s.idle_ns))),
        ("other tasks' CPU time", |s| ms(s.other_ns)),
    ];
    for (name, f) in rows {
        t.row(vec![name.to_string(), f(&tr.real), f(&tr.sim)]);
    }
    t.write(out)
}

/// The fidelity targets, each met or missed with its worst error.
#[cfg(target_os = "linux")]
fn write_verdicts(
    out: &mut impl Write,
    verdicts: &[schedlab_lab::validate::fidelity::Verdict],
) -> io::Result<()> {
    use crate::table::{Align, Table};
    writeln!(out)?;
    writeln!(out, "fidelity targets:")?;
    let mut t = Table::new(&[
        ("TARGET", Align::Left),
        ("LIMIT", Align::Right),
        ("WORST", Align::Right),
        ("AT", Align::Left),
        ("", Align::Left),
    ]);
    for v in verdicts {
        let show = |x: f64| match v.unit {
            "ratio" => format!("{:.1}%", x * 100.0),
            "points" => format!("{x:.1} pt"),
            _ => format!("{x:.3}"),
        };
        t.row(vec![
            v.target.to_string(),
            show(v.limit),
            opt(v.worst, show),
            v.at.clone().unwrap_or_default(),
            if v.met { "met" } else { "MISSED" }.to_string(),
        ]);
    }
    t.write(out)
}

/// A relative error as a signed percentage.
fn signed_pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

#[cfg(not(target_os = "linux"))]
fn write_text(_: &mut impl Write, _: &ValidateReport, _: Option<&Path>) -> io::Result<()> {
    Ok(())
}

/// The hackbench pairs as an SVG scatter chart with the fitted line, like paper 003's
/// Figure 1 (simulated on x, real on y, both in milliseconds).
#[cfg(target_os = "linux")]
fn chart(r: &ValidateReport) -> Result<String> {
    use plotters::prelude::*;
    let h = &r.hackbench;
    let pts: Vec<(f64, f64, u32)> =
        h.rows.iter().map(|row| (row.sim_ns as f64 / 1e6, row.real_ns as f64 / 1e6, row.groups)).collect();
    let max = |f: fn(&(f64, f64, u32)) -> f64| pts.iter().map(f).fold(0.0_f64, f64::max);
    let (x1, y1) = (max(|p| p.0) * 1.1 + 1e-3, max(|p| p.1) * 1.15 + 1e-3);
    let mut out = String::new();
    let draw = |out: &mut String| -> std::result::Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(out, (640, 480)).into_drawing_area();
        root.fill(&WHITE)?;
        let title = format!("hackbench makespan: real vs simulated ({}, {} CPUs)", r.fair, r.cpus);
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x1, 0.0..y1)?;
        c.configure_mesh().x_desc("simulated makespan (ms)").y_desc("real hackbench Time (ms)").draw()?;
        let blue = RGBColor(31, 119, 180);
        let orange = RGBColor(255, 127, 14);
        c.draw_series(pts.iter().map(|&(x, y, _)| Circle::new((x, y), 4, blue.filled())))?
            .label("groups 1..N (median of runs)")
            .legend(move |(x, y)| Circle::new((x + 9, y), 4, blue.filled()));
        c.draw_series(pts.iter().map(|&(x, y, g)| {
            Text::new(format!("{g}"), (x, y), ("sans-serif", 11).into_font().color(&BLACK))
        }))?;
        if let Some(f) = &h.fit {
            let line = |x: f64| f.slope * x + f.intercept / 1e6;
            let label =
                format!("real = {:.3} x sim + {:.2} ms, R² = {:.4}", f.slope, f.intercept / 1e6, f.r2);
            c.draw_series(LineSeries::new([(0.0, line(0.0)), (x1, line(x1))], orange.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], orange.stroke_width(2)));
        }
        c.draw_series(LineSeries::new([(0.0, 0.0), (x1.min(y1), x1.min(y1))], BLACK.mix(0.3)))?
            .label("real = sim")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.mix(0.3)));
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    };
    draw(&mut out).map_err(|e| anyhow::anyhow!("cannot draw the chart: {e}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_ranges_parse() {
        assert_eq!(parse_groups("1-10"), Ok(Groups { first: 1, last: 10 }));
        assert_eq!(parse_groups("4"), Ok(Groups { first: 4, last: 4 }));
        assert!(parse_groups("5-2").unwrap_err().contains("empty"));
        assert!(parse_groups("0-2").unwrap_err().contains("1..=10000"));
        assert!(parse_groups("a").is_err());
    }

    #[test]
    fn milliseconds_for_people() {
        assert_eq!(ms(226_000_000), "226.00 ms");
        assert_eq!(opt(None::<u64>, ms), "-");
    }
}

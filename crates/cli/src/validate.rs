//! `schedlab validate`: the same workloads on this machine and in the simulator (EEVDF,
//! this machine's CPU count) with costs measured here, paired, and related by a
//! least-squares line as paper 003's Figure 1 relates LinSched to hackbench.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

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
/// KiB through a pipe (copy_ns_per_kib), and a context switch (context_switch_ns: half a
/// ping-pong round trip between two processes on one CPU, less a write and a read; the
/// wake-up is included, as the simulator has no separate wake-up cost).
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

    /// Runs of each real workload (and of each calibration measurement); the median is
    /// kept. The simulator is deterministic and runs once.
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

    /// Simulated CPUs, 1 to 64 [default: the CPUs this process may use here].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=schedlab_sim::MAX_CPUS as i64))]
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

/// One tunable set from the calibration or `--set`.
#[derive(Debug, Serialize)]
struct TunableSet {
    name: String,
    value: String,
}

/// One hackbench group count: real (medians) beside simulated.
#[derive(Debug, Serialize)]
struct HackbenchRow {
    groups: u32,
    /// hackbench's `Time:`, median of the runs.
    real_ns: u64,
    /// Every run's `Time:`.
    real_runs_ns: Vec<u64>,
    /// The whole hackbench process (fork and setup included), median.
    real_wall_ns: u64,
    /// CPU time of hackbench and its workers, median.
    real_cpu_ns: u64,
    real_nvcsw: u64,
    real_nivcsw: u64,
    sim_ns: u64,
    /// Simulated CPU time of the tasks.
    sim_cpu_ns: u64,
    sim_nvcsw: u64,
    sim_nivcsw: u64,
}

#[derive(Debug, Serialize)]
struct HackbenchSection {
    command: String,
    sim_spec: String,
    rows: Vec<HackbenchRow>,
    /// The share of the machine's CPU time that other processes used during the real
    /// runs (from /proc/stat, 10 ms resolution): the real times are that much slower.
    other_load: Option<f64>,
    /// real_ns = slope * sim_ns + intercept.
    fit: Option<schedlab_live_fit::LinearFit>,
    /// The same over context switches (nvcsw + nivcsw).
    context_switch_fit: Option<schedlab_live_fit::LinearFit>,
}

/// One rt-app thread: real (medians) beside simulated.
#[derive(Debug, Serialize)]
struct RtAppTaskRow {
    name: String,
    real_runtime_ns: Option<u64>,
    sim_runtime_ns: Option<u64>,
    /// Share of all the file's threads' CPU time.
    real_share: Option<f64>,
    sim_share: Option<f64>,
    real_csw: Option<u64>,
    sim_csw: Option<u64>,
}

/// One rt-app file.
#[derive(Debug, Serialize)]
struct RtAppRow {
    file: String,
    real_makespan_ns: Option<u64>,
    sim_makespan_ns: Option<u64>,
    /// Context switches of the worker threads (nvcsw + nivcsw), median.
    real_csw: Option<u64>,
    sim_csw: Option<u64>,
    tasks: Vec<RtAppTaskRow>,
    /// Why the file could not be run or simulated.
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct RtAppSection {
    dir: String,
    /// rt-app's busy loop here, ns per loop.
    ns_per_loop: Option<f64>,
    /// As in the hackbench section, during the rt-app runs.
    other_load: Option<f64>,
    files: Vec<RtAppRow>,
    /// Why no file ran.
    skipped: Option<String>,
}

/// Everything `validate` found.
#[derive(Debug, Serialize)]
struct ValidateReport {
    cpus: u32,
    fair: &'static str,
    reps: u32,
    calibration: Option<CalibrationOut>,
    tunables: Vec<TunableSet>,
    hackbench: HackbenchSection,
    rtapp: Option<RtAppSection>,
}

#[cfg(target_os = "linux")]
type CalibrationOut = schedlab_live::validate::calibrate::Calibration;
#[cfg(not(target_os = "linux"))]
type CalibrationOut = ();

#[cfg(target_os = "linux")]
use schedlab_live::validate::fit as schedlab_live_fit;

#[cfg(not(target_os = "linux"))]
mod schedlab_live_fit {
    pub type LinearFit = ();
}

/// Runs `schedlab validate`.
#[cfg(not(target_os = "linux"))]
pub fn run(_: &ValidateOpts) -> Result<()> {
    anyhow::bail!("validate runs hackbench and rt-app on Linux only")
}

/// Runs `schedlab validate`.
#[cfg(target_os = "linux")]
pub fn run(opts: &ValidateOpts) -> Result<()> {
    let report = linux::validate(opts)?;
    if let Some(path) = &opts.chart {
        let svg = chart(&report)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write the chart {}", path.display()))?;
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let written = if opts.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::from).and_then(|()| writeln!(out))
    } else {
        write_text(&mut out, &report, opts.chart.as_deref())
    };
    written.context("cannot write to standard output")
}

#[cfg(target_os = "linux")]
mod linux {
    use std::time::Duration;

    use anyhow::{Context, Result};
    use schedlab_live::validate::fit::{linear_fit, median};
    use schedlab_live::validate::hackbench::{self, HackbenchParams};
    use schedlab_live::validate::{calibrate, rtapp};
    use schedlab_sim::{FairFlavor, Report, SimConfig};

    use super::*;

    /// The median of whole numbers.
    fn med(v: &[u64]) -> u64 {
        median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>()).unwrap_or(0.0).round() as u64
    }

    fn progress(opts: &ValidateOpts, msg: &str) {
        if !opts.json {
            eprintln!("{msg}");
        }
    }

    pub(super) fn validate(opts: &ValidateOpts) -> Result<ValidateReport> {
        let cpus = opts.cpus.unwrap_or_else(crate::simulate::host_cpus);
        let mut config = SimConfig::new(cpus, FairFlavor::Eevdf);
        let mut set = Vec::new();
        let calibration = if opts.no_calibrate {
            None
        } else {
            progress(opts, "measuring the system call, copy and context switch costs...");
            let c = calibrate::measure(opts.reps).context("the calibration failed")?;
            for (name, value) in c.tunables() {
                config.tunables.set(name, &value.to_string())?;
                set.push(TunableSet { name: name.to_string(), value: value.to_string() });
            }
            Some(c)
        };
        tunables::apply(&mut config.tunables, &opts.set).map_err(|e| anyhow::anyhow!("--set {e}"))?;
        for s in &opts.set {
            if let Setting::Assign { name, value } = s {
                set.push(TunableSet { name: name.clone(), value: value.clone() });
            }
        }
        let limit = Duration::from_secs(opts.timeout);
        let hackbench = hackbench_section(opts, &config, limit)?;
        let rtapp = rtapp_section(opts, &config, limit)?;
        Ok(ValidateReport {
            cpus,
            fair: FairFlavor::Eevdf.name(),
            reps: opts.reps,
            calibration,
            tunables: set,
            hackbench,
            rtapp,
        })
    }

    fn simulate(spec: &str, config: &SimConfig) -> Result<Report> {
        let w =
            schedlab_sim::workloads::load(spec).with_context(|| format!("cannot load workload '{spec}'"))?;
        schedlab_sim::simulate(&w, config, None).with_context(|| format!("simulating '{spec}' failed"))
    }

    fn hackbench_section(
        opts: &ValidateOpts,
        config: &SimConfig,
        limit: Duration,
    ) -> Result<HackbenchSection> {
        let params = |groups| HackbenchParams { groups, fds: opts.fds, loops: opts.loops, size: 100 };
        let groups: Vec<u32> = (opts.groups.first..=opts.groups.last).collect();
        let mut runs: BTreeMap<u32, Vec<hackbench::HackbenchRun>> = BTreeMap::new();
        let before = hackbench::cpu_time_ns();
        // Interleaved, so that a drift of the machine's load spreads over every G.
        for rep in 1..=opts.reps {
            progress(opts, &format!("hackbench run {rep} of {} for groups {:?}...", opts.reps, opts.groups));
            for &g in &groups {
                let p = params(g);
                let run =
                    hackbench::run(&p, limit).with_context(|| format!("{} failed", p.command().join(" ")))?;
                runs.entry(g).or_default().push(run);
            }
        }
        let ours: u64 = runs.values().flatten().map(|r| r.cpu_ns).sum();
        let other_load =
            before.zip(hackbench::cpu_time_ns()).and_then(|(b, a)| hackbench::other_load(b, a, ours));
        progress(opts, "simulating hackbench...");
        let mut rows = Vec::new();
        for &g in &groups {
            let r = simulate(&params(g).sim_spec(), config)?;
            let real = &runs[&g];
            let pick = |f: fn(&hackbench::HackbenchRun) -> u64| med(&real.iter().map(f).collect::<Vec<_>>());
            rows.push(HackbenchRow {
                groups: g,
                real_ns: pick(|r| r.time_ns),
                real_runs_ns: real.iter().map(|r| r.time_ns).collect(),
                real_wall_ns: pick(|r| r.wall_ns),
                real_cpu_ns: pick(|r| r.cpu_ns),
                real_nvcsw: pick(|r| r.nvcsw),
                real_nivcsw: pick(|r| r.nivcsw),
                sim_ns: r.makespan_ns,
                sim_cpu_ns: r.tasks.iter().map(|t| t.runtime_ns).sum(),
                sim_nvcsw: r.tasks.iter().map(|t| t.nvcsw).sum(),
                sim_nivcsw: r.tasks.iter().map(|t| t.nivcsw).sum(),
            });
        }
        let fit = linear_fit(&rows.iter().map(|r| (r.sim_ns as f64, r.real_ns as f64)).collect::<Vec<_>>());
        let csw: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| ((r.sim_nvcsw + r.sim_nivcsw) as f64, (r.real_nvcsw + r.real_nivcsw) as f64))
            .collect();
        let p = params(0);
        Ok(HackbenchSection {
            command: p.command().join(" ").replace("-g 0", "-g G"),
            sim_spec: p.sim_spec().replace("groups=0", "groups=G"),
            rows,
            other_load,
            fit,
            context_switch_fit: linear_fit(&csw),
        })
    }

    fn rtapp_section(
        opts: &ValidateOpts,
        config: &SimConfig,
        limit: Duration,
    ) -> Result<Option<RtAppSection>> {
        if opts.no_rtapp {
            return Ok(None);
        }
        let (dir, explicit) = match &opts.rtapp {
            Some(d) => (d.clone(), true),
            None => (PathBuf::from("data/validate"), false),
        };
        let section = |files, ns_per_loop, other_load, skipped: Option<String>| {
            Ok(Some(RtAppSection { dir: dir.display().to_string(), ns_per_loop, other_load, files, skipped }))
        };
        if !dir.is_dir() {
            if explicit {
                anyhow::bail!("--rtapp {}: not a directory", dir.display());
            }
            return section(vec![], None, None, Some(format!("{} does not exist", dir.display())));
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| format!("cannot list {}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            return section(vec![], None, None, Some(format!("no .json file in {}", dir.display())));
        }
        progress(opts, "calibrating rt-app's busy loop...");
        let ns_per_loop = match rtapp::calibrate_loop(opts.reps.min(3), limit) {
            Ok(n) => n,
            Err(e) if !explicit => {
                return section(vec![], None, None, Some(format!("rt-app cannot run: {e}")))
            }
            Err(e) => return Err(e).context("cannot calibrate rt-app's busy loop"),
        };
        let before = hackbench::cpu_time_ns();
        let mut ours = 0;
        let rows = files
            .iter()
            .map(|f| {
                progress(opts, &format!("rt-app {}...", f.display()));
                rtapp_file(f, ns_per_loop, opts.reps, config, limit, &mut ours)
            })
            .collect();
        let other_load =
            before.zip(hackbench::cpu_time_ns()).and_then(|(b, a)| hackbench::other_load(b, a, ours));
        section(rows, Some(ns_per_loop), other_load, None)
    }

    /// Runs and simulates one rt-app file; adds the real runs' CPU time to `cpu_ns`.
    fn rtapp_file(
        file: &Path,
        ns_per_loop: f64,
        reps: u32,
        config: &SimConfig,
        limit: Duration,
        cpu_ns: &mut u64,
    ) -> RtAppRow {
        let name = file.display().to_string();
        let mut row = RtAppRow {
            file: name.clone(),
            real_makespan_ns: None,
            sim_makespan_ns: None,
            real_csw: None,
            sim_csw: None,
            tasks: vec![],
            error: None,
        };
        let sim = simulate(&name, config);
        let mut real = Vec::new();
        let mut error = None;
        for _ in 0..reps {
            match rtapp::run(file, ns_per_loop, limit) {
                Ok(r) => {
                    *cpu_ns += r.cpu_ns;
                    real.push(r)
                }
                Err(e) => {
                    error = Some(format!("rt-app: {e}"));
                    break;
                }
            }
        }
        // The simulator's name of each (key, instance): its tasks are `<key>-<n>`, `n`
        // counting all threads of the file in order; the kernel keeps 15 bytes of a name.
        let mut sim_names: BTreeMap<(String, usize), String> = BTreeMap::new();
        if let Ok(s) = &sim {
            let mut seen: BTreeMap<String, usize> = BTreeMap::new();
            for t in &s.tasks {
                let key = t.name.rsplit_once('-').map_or(t.name.as_str(), |(k, _)| k);
                let key: String = key.bytes().take(15).map(char::from).collect();
                let n = seen.entry(key.clone()).or_default();
                sim_names.insert((key, *n), t.name.clone());
                *n += 1;
            }
        }
        // Per thread name: the medians over the runs.
        let mut by_name: BTreeMap<String, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
        for r in &real {
            for t in &r.tasks {
                let name = sim_names
                    .get(&(t.key.clone(), t.instance))
                    .cloned()
                    .unwrap_or_else(|| format!("{}[{}]", t.key, t.instance));
                let e = by_name.entry(name).or_default();
                e.0.push(t.runtime_ns);
                e.1.push(t.nvcsw + t.nivcsw);
            }
        }
        if !real.is_empty() {
            row.real_makespan_ns = Some(med(&real.iter().map(|r| r.makespan_ns).collect::<Vec<_>>()));
            let csw: Vec<u64> =
                real.iter().map(|r| r.tasks.iter().map(|t| t.nvcsw + t.nivcsw).sum()).collect();
            row.real_csw = Some(med(&csw));
        }
        let real_med: BTreeMap<&str, (u64, u64)> =
            by_name.iter().map(|(n, (rt, cs))| (n.as_str(), (med(rt), med(cs)))).collect();
        let real_total: u64 = real_med.values().map(|v| v.0).sum();
        let mut names: Vec<String> = Vec::new();
        let sim = match sim {
            Ok(s) => Some(s),
            Err(e) => {
                error = Some(format!("{}{e:#}", error.map(|e| e + "; ").unwrap_or_default()));
                None
            }
        };
        if let Some(s) = &sim {
            row.sim_makespan_ns = Some(s.makespan_ns);
            row.sim_csw = Some(s.tasks.iter().map(|t| t.nvcsw + t.nivcsw).sum());
            names.extend(s.tasks.iter().map(|t| t.name.clone()));
        }
        for n in real_med.keys() {
            if !names.iter().any(|m| m == n) {
                names.push(n.to_string());
            }
        }
        let sim_total: u64 = sim.as_ref().map_or(0, |s| s.tasks.iter().map(|t| t.runtime_ns).sum());
        let share = |part: u64, total: u64| (total > 0).then(|| part as f64 / total as f64);
        for n in names {
            let st = sim.as_ref().and_then(|s| s.tasks.iter().find(|t| t.name == n));
            let rt = real_med.get(n.as_str());
            row.tasks.push(RtAppTaskRow {
                real_runtime_ns: rt.map(|v| v.0),
                sim_runtime_ns: st.map(|t| t.runtime_ns),
                real_share: rt.and_then(|v| share(v.0, real_total)),
                sim_share: st.and_then(|t| share(t.runtime_ns, sim_total)),
                real_csw: rt.map(|v| v.1),
                sim_csw: st.map(|t| t.nvcsw + t.nivcsw),
                name: n,
            });
        }
        row.error = error;
        row
    }
}

/// What the other processes' load means for the real side.
fn other_load_note(load: f64) -> String {
    format!(
        "other processes kept {:.0}% of the CPUs busy meanwhile{}",
        load * 100.0,
        if load > 0.1 { ": the real times are inflated, rerun on a quiet machine" } else { "" }
    )
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
        t.row(vec!["  ping-pong round trip".into(), format!("{:.0} ns", c.round_trip_ns), String::new()]);
        t.row(vec![
            "  context switch".into(),
            format!("{:.0} ns", c.context_switch_ns),
            "context_switch_ns".into(),
        ]);
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
        ("REAL/SIM", Align::Right),
        ("REAL CPU", Align::Right),
        ("SIM CPU", Align::Right),
        ("REAL CSW", Align::Right),
        ("SIM CSW", Align::Right),
    ]);
    for row in &h.rows {
        t.row(vec![
            row.groups.to_string(),
            ms(row.real_ns),
            ms(row.sim_ns),
            format!("{:.2}", row.real_ns as f64 / row.sim_ns.max(1) as f64),
            ms(row.real_cpu_ns),
            ms(row.sim_cpu_ns),
            (row.real_nvcsw + row.real_nivcsw).to_string(),
            (row.sim_nvcsw + row.sim_nivcsw).to_string(),
        ]);
    }
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
        writeln!(out)?;
        if let Some(why) = &rt.skipped {
            writeln!(out, "rt-app: skipped: {why}")?;
            return Ok(());
        }
        writeln!(
            out,
            "rt-app: {} (busy loop {} ns per loop; median of {})",
            rt.dir,
            opt(rt.ns_per_loop, |n| format!("{n:.2}")),
            r.reps
        )?;
        let mut t = Table::new(&[
            ("FILE / THREAD", Align::Left),
            ("REAL MAKESPAN", Align::Right),
            ("SIM MAKESPAN", Align::Right),
            ("REAL SHARE", Align::Right),
            ("SIM SHARE", Align::Right),
            ("REAL CPU", Align::Right),
            ("SIM CPU", Align::Right),
            ("REAL CSW", Align::Right),
            ("SIM CSW", Align::Right),
        ]);
        let pct = |v: f64| format!("{:.1}%", v * 100.0);
        for f in &rt.files {
            let name =
                Path::new(&f.file).file_name().map_or(f.file.clone(), |n| n.to_string_lossy().into_owned());
            t.row(vec![
                name,
                opt(f.real_makespan_ns, ms),
                opt(f.sim_makespan_ns, ms),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                opt(f.real_csw, |n| n.to_string()),
                opt(f.sim_csw, |n| n.to_string()),
            ]);
            for task in &f.tasks {
                t.row(vec![
                    format!("  {}", task.name),
                    String::new(),
                    String::new(),
                    opt(task.real_share, pct),
                    opt(task.sim_share, pct),
                    opt(task.real_runtime_ns, ms),
                    opt(task.sim_runtime_ns, ms),
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

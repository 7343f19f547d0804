//! `schedlab bench`: benchmarks on the live machine. `bench deps` is SWAP's
//! client-server microbenchmark: does a high-priority client waiting on a low-priority
//! server get its answers on a loaded machine? `bench slices` is PFS's processing-time
//! experiment: do burst-aware slices shorten programs whose bursts end just past the
//! default slice?

use std::io::{self, Write};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use schedlab_model::Ns;

use crate::human::duration;
use crate::table::{Align, Table};

#[path = "bench_policies.rs"]
mod bench_policies;

const DEPS_EXAMPLES: &str = "\
Examples:
  # all six IPC kinds, 8 hogs per CPU, without and with the server reniced by hand
  sudo schedlab bench deps

  # the pipe only, with schedlab run boosting the server, as JSON
  sudo schedlab bench deps --ipc pipe --with-daemon --json | jq '.kinds[0].cells'";

const SLICES_EXAMPLES: &str = "\
Examples:
  # the test program at five burst lengths around the default slice, gzip and sort
  sudo schedlab bench slices

  # the test program only, bursts of 4 and 10 ms, 10 runs per series, as JSON
  sudo schedlab bench slices --programs test --work-ms 4,10 --runs 10 --json

  # paper 001's Figure 6 live, one T_m (needs a kernel with sched_ext)
  sudo schedlab bench slices --sched-ext --ext-slice-ms 100 --ext-timeshare --tm-ms 40 \\
      --programs test --work-ms 75,125,150,200 --sleep-ms 1000 --loops 5";

/// Benchmarks on the live machine.
#[derive(Debug, Args)]
pub struct BenchOpts {
    #[command(subcommand)]
    pub command: BenchCommand,
}

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    Deps(DepsOpts),
    Slices(SlicesOpts),
    Overhead(crate::bench_overhead::OverheadOpts),
    Policies(bench_policies::PoliciesOpts),
    Suite(crate::bench_suite::SuiteOpts),
    /// One process of a benchmark (the runner starts these itself).
    #[command(hide = true)]
    Worker(WorkerOpts),
    /// A benchmark's daemon: what `schedlab run` runs, from a launch the benchmark
    /// gives (the runner starts these itself).
    #[command(hide = true)]
    Daemon(DaemonOpts),
}

/// SWAP's client-server microbenchmark: a client at nice -20 waits on a server at nice
/// 0, per IPC kind, unloaded, loaded, with the server reniced by hand and with
/// `schedlab run`.
///
/// The client ("sl-client", nice -20) sends a request and blocks until the server
/// ("sl-server", nice 0) has bubble-sorted an array of random integers (about 12 ms
/// unloaded) and answered, through one of six IPC kinds: a UNIX socketpair (sock), a
/// pipe, a SysV message queue (msg), SysV semaphores (sem), signals (sig: SIGUSR1 asks,
/// the client waits in sigtimedwait for SIGUSR2) or flock (the server holds a lock on a
/// file while it works; the client blocks in flock). The client records each round
/// trip's completion time with CLOCK_MONOTONIC.
///
/// Each kind is measured unloaded; loaded with --load busy loops ("sl-hog", nice 0)
/// pinned to each CPU; loaded with the server reniced to -20 by hand (the reference:
/// what a user who knew the dependency would do; --no-reference skips it); and, with
/// --with-daemon, loaded while `schedlab run` boosts providers (started with a
/// configuration that disables the model, so only boosting acts; its boost reaction
/// time is read from its socket's stats). The table gives per cell the median, mean and
/// 90th percentile completion time and the median's ratio to the unloaded one. The
/// paper's point: loaded, plain Linux is an order of magnitude slower; with the
/// dependency accounted for, the client is about as fast as unloaded.
///
/// Needs root (nice -20). Workers are this binary re-executed; every process is in its
/// own process group and killed when the benchmark ends, fails or is interrupted.
#[derive(Debug, Args)]
#[command(after_long_help = DEPS_EXAMPLES)]
pub struct DepsOpts {
    /// The IPC kinds to measure, comma-separated.
    #[arg(long, value_name = "KINDS", value_delimiter = ',', default_value = "sock,pipe,msg,sem,sig,flock")]
    pub ipc: Vec<schedlab_live_kind::IpcKind>,
    /// CPU hogs per CPU in the loaded scenarios.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub load: u32,
    /// Measured round trips per cell.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,
    /// Round trips before those, not counted.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub warmup: u32,
    /// Integers the server sorts per request [default: 4800, about 12 ms on the development VM in a release build].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..))]
    pub sort_len: Option<u64>,
    /// Also measure with `schedlab run` boosting providers.
    #[arg(long)]
    pub with_daemon: bool,
    /// The daemon's --enforcer (`schedlab run --help`) [default: the daemon's, auto].
    #[arg(long, value_enum, requires = "with_daemon")]
    pub enforcer: Option<EnforcerName>,
    /// Skip the reference cell (the server reniced to -20 by hand).
    #[arg(long)]
    pub no_reference: bool,
    /// Stop (and fail) if the whole run takes longer than this (with a unit: 90s, 900s).
    #[arg(long, value_name = "DURATION", default_value = "900s", value_parser = crate::args::duration)]
    pub time_limit: Ns,
    /// Paper 004's multi-server variant (implies --ipc sem): five servers post a
    /// semaphore after 2, 5, 5, 10 and 10 sorts each, the client takes it once per
    /// iteration from whichever server posts first; the per-iteration completion times
    /// are listed (the paper used 15 iterations: --iterations 15 --warmup 0).
    #[arg(long)]
    pub multi_server: bool,
    /// Print the results as JSON (every sample included).
    #[arg(long)]
    pub json: bool,
}

/// `--enforcer`'s values, as `schedlab run` spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EnforcerName {
    Auto,
    SchedExt,
    Syscalls,
}

/// PFS's processing-time experiment (paper 001, section 5): programs beside a CPU hog,
/// timed start to exit, without and with `schedlab run` giving burst-aware slices.
///
/// The daemon learns each program's PFS (its flow of CPU bursts and waits, keyed by the
/// executable's path) when a process of it exits; in later runs, when a process blocks
/// and its next burst is predicted to end past the kernel's default slice but within
/// slice + T_m, it gives the process a slice that long (sched_attr.sched_runtime), so
/// that EEVDF does not switch to the hog just before the burst ends.
///
/// The programs: the test program ("sl-pfs-test") loops --loops times through work A
/// (counting until the thread has used W ms of CPU time, CLOCK_THREAD_CPUTIME_ID) and
/// work B (sleeping --sleep-ms), once per W of --work-ms, each W from its own path (a
/// link to a copy of this binary in a scratch directory, so each gets its own PFS);
/// `gzip -2 -c` of 200,000 random integers, one per line; `sort file2 file3 -o out` of
/// 100,000 integers each (a program whose binary is not in PATH is skipped). Each runs
/// beside one busy loop ("sl-hog"), both pinned to --cpu.
///
/// Each program gets two series of --runs runs: without the daemon, then with
/// `schedlab run` (slices only: no model, no boosting; --tm-ms as T_m) running for the
/// whole series, with one store for the whole benchmark: run 1 teaches the PFS, runs
/// 2.. use it. The report gives every run's processing time, the mean and standard
/// deviation of runs 2.., the ratio of the means (daemon/without) and how many slices
/// the daemon set. The paper predicts a gain only for bursts between the default slice
/// and slice + T_m (the "zone" column): shorter ones finish within the default slice,
/// longer ones keep it.
///
/// With --sched-ext (paper 001's Figure 6 live, on a kernel with sched_ext), both series
/// run under the daemon on schedlab's sched_ext scheduler with its slice
/// (--ext-slice-ms): first without slices (the scheduler's plain time sharing, the
/// figure's reference), then with them: the daemon hands each program's flow to the
/// scheduler at the exec, and the scheduler, at a slice's end, keeps the task on when
/// its burst is predicted to end within T_m (EXTENDED counts how often).
///
/// Needs root (the daemon). Every process is in its own process group and killed when
/// the benchmark ends, fails or is interrupted; the scratch directory is removed.
#[derive(Debug, Args)]
#[command(after_long_help = SLICES_EXAMPLES)]
pub struct SlicesOpts {
    /// The test program's CPU bursts (work A) in ms, comma-separated [default: the
    /// default slice / 2, + 1, + 5, + 15 and + 40 ms, rounded to 0.1 ms].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = positive_ms)]
    pub work_ms: Vec<f64>,
    /// The test program's loops (a burst and a sleep each).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub loops: u32,
    /// The test program's sleep per loop (work B), in ms.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    pub sleep_ms: u64,
    /// Runs per series (the first one teaches the daemon and is left out of the means).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..))]
    pub runs: u32,
    /// The programs to measure, comma-separated.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "test,gzip,sort",
        value_parser = ["test", "gzip", "sort"]
    )]
    pub programs: Vec<String>,
    /// The daemon's T_m (slice_tm_ms): how far past the default slice a burst may end
    /// and still get a slice, in ms.
    #[arg(long, value_name = "MS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub tm_ms: u64,
    /// Both series under schedlab's sched_ext scheduler: without slices, then with.
    #[arg(long)]
    pub sched_ext: bool,
    /// The sched_ext scheduler's slice, in ms (ext_slice_ms) [default: 5].
    #[arg(long, value_name = "MS", requires = "sched_ext", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub ext_slice_ms: Option<u64>,
    /// The sched_ext scheduler runs round robin (ext_timeshare), the time sharing paper
    /// 001 measured PFS against, rather than by vtime: a sleeper's vtime credit often
    /// lets a burst run past its slice anyway.
    #[arg(long, requires = "sched_ext")]
    pub ext_timeshare: bool,
    /// The CPU the programs and the hog share [default: 1 if allowed, else the last
    /// allowed one].
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<usize>,
    /// Stop (and fail) if the whole run takes longer than this (with a unit: 90s, 900s).
    #[arg(long, value_name = "DURATION", default_value = "900s", value_parser = crate::args::duration)]
    pub time_limit: Ns,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A positive number of milliseconds.
fn positive_ms(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number of milliseconds")),
    }
}

/// The arguments of a worker process.
#[derive(Debug, Args)]
pub struct WorkerOpts {
    /// The worker's arguments (its role, then its options).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub args: Vec<String>,
}

/// The arguments of a benchmark's daemon.
#[derive(Debug, Args)]
pub struct DaemonOpts {
    /// The launch, as JSON (`schedlab_live::daemon::launch::Launch`).
    #[arg(long, value_name = "JSON")]
    pub launch: String,
}

/// The IPC kind type, or a stand-in where the live side does not exist.
#[cfg(target_os = "linux")]
mod schedlab_live_kind {
    pub use schedlab_lab::bench::ipc::IpcKind;
}

#[cfg(not(target_os = "linux"))]
mod schedlab_live_kind {
    pub type IpcKind = String;
}

pub fn run(opts: &BenchOpts) -> Result<()> {
    match &opts.command {
        BenchCommand::Deps(o) => deps(o),
        BenchCommand::Slices(o) => slices(o),
        BenchCommand::Overhead(o) => crate::bench_overhead::run(o),
        BenchCommand::Policies(o) => bench_policies::run(o),
        BenchCommand::Suite(o) => crate::bench_suite::run(o),
        BenchCommand::Worker(o) => worker(o),
        BenchCommand::Daemon(o) => daemon(o),
    }
}

#[cfg(not(target_os = "linux"))]
fn deps(_: &DepsOpts) -> Result<()> {
    anyhow::bail!("schedlab bench needs Linux")
}

#[cfg(not(target_os = "linux"))]
fn slices(_: &SlicesOpts) -> Result<()> {
    anyhow::bail!("schedlab bench needs Linux")
}

#[cfg(not(target_os = "linux"))]
fn worker(_: &WorkerOpts) -> Result<()> {
    anyhow::bail!("schedlab bench needs Linux")
}

#[cfg(not(target_os = "linux"))]
fn daemon(_: &DaemonOpts) -> Result<()> {
    anyhow::bail!("schedlab bench needs Linux")
}

#[cfg(target_os = "linux")]
fn daemon(opts: &DaemonOpts) -> Result<()> {
    let launch = schedlab_live::daemon::launch::Launch::from_json(&opts.launch).context("--launch")?;
    crate::run::run(&crate::run::RunOpts::quiet(launch))
}

#[cfg(target_os = "linux")]
fn worker(opts: &WorkerOpts) -> Result<()> {
    schedlab_lab::bench::workers::worker_main(&opts.args).context("benchmark worker failed")
}

#[cfg(target_os = "linux")]
fn deps(opts: &DepsOpts) -> Result<()> {
    use schedlab_lab::bench::deps::{run_deps, DepsConfig};
    use schedlab_lab::bench::workers::DEFAULT_SORT_LEN;

    use crate::provenance::{write_json, Provenance};

    let mut kinds = Vec::new();
    for k in &opts.ipc {
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
    if opts.multi_server {
        kinds = vec![schedlab_lab::bench::ipc::IpcKind::Sem];
    }
    let cfg = DepsConfig {
        kinds,
        multi_server: opts.multi_server,
        load: opts.load,
        iterations: opts.iterations,
        warmup: opts.warmup,
        sort_len: opts.sort_len.map_or(DEFAULT_SORT_LEN, |n| n as usize),
        with_daemon: opts.with_daemon,
        daemon_enforcer: opts.enforcer.map_or(schedlab_live::daemon::Enforcer::Auto, Into::into),
        reference: !opts.no_reference,
        time_limit: Duration::from_nanos(opts.time_limit),
        exe: std::env::current_exe().context("cannot find this program's path to start its workers")?,
        ..DepsConfig::default()
    };
    let bar = crate::progress::StepBar::new(false);
    let report = run_deps(&cfg, &mut |p| {
        bar.show(
            format!("cell {}/{}", p.cell + 1, p.cells),
            format!("{} {}", p.kind, p.scenario.name()),
            p.done as u64,
            p.total as u64,
        );
    });
    drop(bar);
    let report = report.context("the dependency benchmark failed")?;

    let mut out = io::stdout().lock();
    if opts.json {
        write_json(&mut out, &Provenance::of_this_run(), &report)?;
        return Ok(());
    }
    let ms = |v: f64| duration((v * 1e6).round() as Ns);
    let daemon = report.kinds.iter().flat_map(|k| &k.cells).any(|c| c.daemon.is_some());
    let mut columns = vec![
        ("IPC", Align::Left),
        ("SCENARIO", Align::Left),
        ("MEDIAN", Align::Right),
        ("MEAN", Align::Right),
        ("P90", Align::Right),
        ("×UNLOADED", Align::Right),
    ];
    if daemon {
        columns.extend([("BOOST P50", Align::Right), ("BOOST P99", Align::Right), ("BOOSTS", Align::Right)]);
    }
    let mut table = Table::new(&columns);
    let mut notes = Vec::new();
    for k in &report.kinds {
        for c in &k.cells {
            let mut row = vec![
                k.kind.to_string(),
                c.scenario.name().to_string(),
                ms(c.stats.median_ms),
                ms(c.stats.mean_ms),
                ms(c.stats.p90_ms),
                format!("{:.2}", c.ratio_to_unloaded),
            ];
            if let Some(d) = &c.daemon {
                match &d.boost_reaction_us {
                    Some(b) => row.extend([
                        duration((b.p50 * 1e3).round() as Ns),
                        duration((b.p99 * 1e3).round() as Ns),
                        b.count.to_string(),
                    ]),
                    None => row.extend(["-".to_string(), "-".to_string(), "-".to_string()]),
                }
                if let Some(e) = &d.stats_error {
                    notes.push(format!("{}: no daemon stats: {e}", k.kind));
                }
                if d.killed {
                    notes.push(format!("{}: the daemon ignored SIGINT for 10 s and was killed", k.kind));
                }
            }
            table.row(row);
        }
    }
    table.write(&mut out)?;
    if opts.multi_server {
        writeln!(out, "\nper iteration (ms):")?;
        for c in report.kinds.iter().flat_map(|k| &k.cells) {
            let v: Vec<String> = c.samples_ms.iter().map(|t| format!("{t:.1}")).collect();
            writeln!(out, "  {:9} {}", c.scenario.name(), v.join(" "))?;
        }
    }
    writeln!(
        out,
        "\n{} measured round trips per cell ({} warm-up), {} integers sorted per request, \
         {} hog{} on each of CPUs {:?}, client at nice {}; {:.1} s.",
        report.iterations,
        report.warmup,
        report.sort_len,
        report.load,
        if report.load == 1 { "" } else { "s" },
        report.cpus,
        report.client_nice,
        report.wall_s
    )?;
    for n in notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn slices(opts: &SlicesOpts) -> Result<()> {
    use schedlab_lab::bench::slices::{run_slices, Program, SlicesConfig, Zone};

    use crate::provenance::{write_json, Provenance};

    let mut programs = Vec::new();
    for p in &opts.programs {
        let p: Program = p.parse()?;
        if !programs.contains(&p) {
            programs.push(p);
        }
    }
    let cfg = SlicesConfig {
        work_ns: opts.work_ms.iter().map(|ms| (ms * 1e6).round() as u64).collect(),
        loops: opts.loops,
        sleep_ns: opts.sleep_ms * 1_000_000,
        runs: opts.runs,
        programs,
        tm_ms: opts.tm_ms,
        sched_ext: opts.sched_ext,
        ext_slice_ms: opts.ext_slice_ms,
        ext_timeshare: opts.ext_timeshare,
        cpu: opts.cpu,
        time_limit: Duration::from_nanos(opts.time_limit),
        exe: std::env::current_exe().context("cannot find this program's path to start its workers")?,
        ..SlicesConfig::default()
    };
    let bar = crate::progress::StepBar::new(false);
    let report = run_slices(&cfg, &mut |p| {
        bar.show(
            format!("series {}/{}", p.series + 1, p.total_series),
            format!("{} {}", p.label, if p.daemon { "daemon" } else { "without" }),
            p.done as u64,
            p.runs as u64,
        );
    });
    drop(bar);
    let report = report.context("the slices benchmark failed")?;

    let mut out = io::stdout().lock();
    if opts.json {
        write_json(&mut out, &Provenance::of_this_run(), &report)?;
        return Ok(());
    }
    let ms = |v: f64| format!("{v:.1}");
    let mut table = Table::new(&[
        ("PROGRAM", Align::Left),
        ("ZONE", Align::Left),
        ("SERIES", Align::Left),
        ("RUNS (ms)", Align::Left),
        ("FORCED", Align::Left),
        ("MEAN 2..", Align::Right),
        ("SD", Align::Right),
        ("×WITHOUT", Align::Right),
        (if opts.sched_ext { "EXTENDED" } else { "SLICES SET/RESET" }, Align::Right),
    ]);
    let names = if opts.sched_ext { ["no slices", "slices"] } else { ["without", "daemon"] };
    let mut notes = Vec::new();
    for p in &report.programs {
        let zone = match p.zone {
            Some(Zone::WithinSlice) => "≤ slice",
            Some(Zone::SlicePlusTm) => "slice..+T_m",
            Some(Zone::Beyond) => "> slice+T_m",
            None => "",
        };
        for (first, name, s) in [(true, names[0], &p.without), (false, names[1], &p.with_daemon)] {
            let runs: Vec<String> = s.runs_ms.iter().map(|&v| ms(v)).collect();
            let counts = match &s.daemon {
                Some(d) => {
                    if let Some(e) = &d.stats_error {
                        notes.push(format!("{}: no daemon stats: {e}", p.label));
                    }
                    if d.killed {
                        notes.push(format!("{}: the daemon ignored SIGINT and was killed", p.label));
                    }
                    let per_run = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
                    match opts.sched_ext {
                        true => format!(
                            "{} ({})",
                            d.extensions_per_run.iter().sum::<u64>(),
                            per_run(&d.extensions_per_run)
                        ),
                        false => {
                            format!(
                                "{}/{} ({})",
                                d.slices_set,
                                d.slices_reset,
                                per_run(&d.slices_set_per_run)
                            )
                        }
                    }
                }
                None => String::new(),
            };
            let ratio = if first { String::new() } else { format!("{:.3}", p.ratio) };
            let label = if first { p.label.clone() } else { String::new() };
            let zone = if first { zone.to_string() } else { String::new() };
            table.row(vec![
                label,
                zone,
                name.to_string(),
                runs.join(" "),
                s.involuntary_per_run.iter().map(u64::to_string).collect::<Vec<_>>().join(" "),
                ms(s.mean_ms),
                ms(s.stdev_ms),
                ratio,
                counts,
            ]);
        }
    }
    table.write(&mut out)?;
    let slice = match report.default_slice_ms {
        Some(s) if opts.sched_ext => format!(
            "schedlab's sched_ext scheduler ({}), slice {s:.3} ms",
            if opts.ext_timeshare { "round robin" } else { "vtime" }
        ),
        Some(s) => format!("default slice {s:.3} ms"),
        None => "default slice unreadable (3 ms assumed)".to_string(),
    };
    writeln!(
        out,
        "\n{slice}, T_m {} ms; test program: {} loops, {} ms sleeps; {} runs per series, \
         each program and one hog pinned to CPU {}; {:.1} s.",
        report.tm_ms, report.loops, report.sleep_ms, report.runs, report.cpu, report.wall_s
    )?;
    writeln!(
        out,
        "FORCED: the test program's involuntary switches per run. {}: over the series (per run); \
         MEAN, SD and ×WITHOUT leave run 1 out.",
        if opts.sched_ext { "EXTENDED" } else { "SLICES SET" }
    )?;
    for s in &report.skipped {
        notes.push(format!("skipped {s}"));
    }
    for n in notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tests::parse;
    use crate::Command;

    use super::*;

    fn parse_deps(args: &[&str]) -> DepsOpts {
        let mut all = vec!["bench", "deps"];
        all.extend_from_slice(args);
        match parse(&all).unwrap().command {
            Command::Bench(BenchOpts { command: BenchCommand::Deps(d) }) => d,
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn deps_options_parse() {
        let d = parse_deps(&[]);
        assert_eq!((d.ipc.len(), d.load, d.iterations, d.warmup), (6, 8, 30, 3));
        assert!(!d.with_daemon && !d.no_reference && !d.json);
        let d = parse_deps(&["--ipc", "pipe,sig", "--load", "1", "--iterations", "3", "--with-daemon"]);
        assert_eq!(d.ipc.iter().map(|k| k.to_string()).collect::<Vec<_>>(), ["pipe", "sig"]);
        assert!(d.with_daemon);
        assert!(parse(&["bench", "deps", "--ipc", "tcp"])
            .unwrap_err()
            .to_string()
            .contains("unknown IPC kind"));
        assert!(parse(&["bench", "deps", "--iterations", "0"]).is_err());
    }

    #[test]
    fn slices_options_parse() {
        let Command::Bench(BenchOpts { command: BenchCommand::Slices(s) }) =
            parse(&["bench", "slices"]).unwrap().command
        else {
            panic!("not slices")
        };
        assert!(s.work_ms.is_empty());
        assert_eq!((s.loops, s.sleep_ms, s.runs, s.tm_ms, s.programs.len()), (20, 100, 5, 20, 3));
        let Command::Bench(BenchOpts { command: BenchCommand::Slices(s) }) =
            parse(&["bench", "slices", "--work-ms", "2,3.5", "--programs", "test", "--runs", "2"])
                .unwrap()
                .command
        else {
            panic!("not slices")
        };
        assert_eq!((s.work_ms, s.programs, s.runs), (vec![2.0, 3.5], vec!["test".to_string()], 2));
        assert!(parse(&["bench", "slices", "--programs", "cat"]).is_err());
        assert!(parse(&["bench", "slices", "--work-ms", "0"]).is_err());
        assert!(parse(&["bench", "slices", "--runs", "1"]).is_err());
    }

    #[test]
    fn worker_arguments_pass_through() {
        let Command::Bench(BenchOpts { command: BenchCommand::Worker(w) }) =
            parse(&["bench", "worker", "hog", "--cpu", "1", "--nice=-5"]).unwrap().command
        else {
            panic!("not a worker")
        };
        assert_eq!(w.args, ["hog", "--cpu", "1", "--nice=-5"]);
    }

    /// The benchmarks start their daemon by `DAEMON_COMMAND` with a launch: this binary
    /// must take that command line back to the same launch.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_benchmarks_daemon_launch_reaches_its_subcommand_whole() {
        use schedlab_lab::bench::deps::DAEMON_COMMAND;
        use schedlab_live::daemon::launch::Launch;
        let launch = Launch {
            config: Some("/tmp/d/daemon.toml".into()),
            store: "/tmp/d/schedlab.db".into(),
            socket: "/tmp/d/schedlab.sock".into(),
            enforcer: schedlab_live::daemon::Enforcer::Syscalls,
        };
        let json = launch.to_json();
        let mut args = DAEMON_COMMAND.to_vec();
        args.extend(["--launch", json.as_str()]);
        let Command::Bench(BenchOpts { command: BenchCommand::Daemon(d) }) = parse(&args).unwrap().command
        else {
            panic!("not a benchmark's daemon")
        };
        assert_eq!(Launch::from_json(&d.launch).unwrap(), launch);
    }
}

//! `schedlab simulate`: run a workload in the simulator and report per-task metrics.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use indicatif::ProgressBar;
use schedlab_behavior::pfs::{PfsParams, PfsScheduler, PfsStore};
use schedlab_behavior::swap::{SwapDetector, SwapParams};
use schedlab_model::EventSink;
use schedlab_model::{ProviderLayer, SliceLayer};
use schedlab_sim::trace::PerfettoTrace;
use schedlab_sim::workloads::BUILTINS;
use schedlab_sim::{FairFlavor, Hooks, Report, SimConfig, TaskReport, Topology};

use crate::csv;
use crate::human::{count, duration, percent};
use crate::table::{Align, Table};
use crate::tunables::{self, Setting};

/// With more tasks than this, the task table shows the busiest ones and a summary.
const MAX_TASK_ROWS: usize = 20;
/// How many of the busiest tasks a summarized table shows.
const TOP_TASKS: usize = 15;

const EXAMPLES: &str = "\
Examples:
  # hackbench with 10 groups of 20+20 tasks over pipes, under EEVDF on 4 CPUs
  schedlab simulate hackbench:groups=10,fds=20,loops=100,size=100,ipc=pipe --cpus 4

  # the same under CFS with a shorter latency target, and a timeline to open in
  # ui.perfetto.dev
  schedlab simulate hackbench:groups=10,fds=20,loops=100,size=100,ipc=pipe \\
      --fair cfs --set sched_latency_ns=3ms --trace hackbench.json

  # ten CPU-bound processes under SCHED_FIFO, the report as JSON
  schedlab simulate pi:procs=10,policy=fifo --json | jq .makespan_ns

  # an rt-app workload file, per-task rows to a CSV file
  schedlab simulate workload.json --csv tasks.csv

  # every tunable with its default on 8 CPUs
  schedlab simulate --cpus 8 --set help

  # PFS: the first run learns each program's bursts into pfs.json, the next ones use
  # and adapt them
  schedlab simulate mixed:procs=10 --fair timeshare --pfs pfs.json --pfs-tm 40ms

  # SWAP: tasks blocked on a pipe, socket, queue, semaphore, lock or signal have
  # their most confident provider run in their place
  schedlab simulate hackbench:groups=4 --swap";

/// Run a workload in the simulator and report per-task metrics.
///
/// The simulator is a deterministic discrete-event model of a multi-CPU Linux
/// scheduler: the stop, real-time (SCHED_FIFO, SCHED_RR), fair and idle classes, with
/// the kernel's weight table and default tunables scaled for the CPU count. Tasks run
/// programs that compute, sleep, and block on pipes, sockets, System V IPC, flock and
/// signals with POSIX semantics. The same seed, workload and settings always give the
/// same result.
///
/// The report lists the run's makespan, context switches and migrations, and per task
/// its runtime, wait (runnable, not running), sleep, turnaround, voluntary and
/// involuntary context switches, migrations and wake-up latency percentiles.
#[derive(Debug, Args)]
#[command(after_long_help = long_help())]
pub struct SimulateOpts {
    /// The workload: an rt-app JSON file, or a built-in generator with its
    /// parameters, such as `hackbench:groups=10,fds=20,loops=100,size=100,ipc=pipe`
    /// (hackbench's -g -f -l -s, over pipes or sockets) or `pi:procs=10,policy=fifo`
    /// (paper 002's CPU-bound program). `--help` lists the built-ins and their keys.
    #[arg(value_name = "WORKLOAD")]
    pub workload: Option<String>,

    /// Number of simulated CPUs of a flat machine: one node, one last-level cache, no
    /// SMT [default: the CPUs this process may use here].
    ///
    /// Also scales the fair-class tunables' defaults by 1 + ilog2(min(cpus, 8)), as the
    /// kernel does.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cpus: Option<u32>,

    /// The simulated machine's topology instead of --cpus: NODESxCORESxTHREADS (e.g.
    /// `2x16x2`: 2 NUMA nodes of 16 cores with 2 SMT threads, one LLC per node, 64
    /// CPUs), or a file with the output of `lscpu -p`, or a copy of a machine's sysfs
    /// (`/sys/devices/system/cpu`).
    ///
    /// The simulator balances load over its sched domains (SMT, LLC, node, machine) and
    /// places waking tasks on idle cores and CPUs of their LLC as the kernel does.
    #[arg(long, value_name = "NxCxT|FILE|DIR", conflicts_with = "cpus", value_parser = crate::args::topology)]
    pub topology: Option<Topology>,

    /// The fair class that SCHED_OTHER, SCHED_BATCH and SCHED_IDLE tasks get: CFS
    /// (Linux 2.6.23-6.5), EEVDF (Linux 6.6 and later) or classic UNIX time sharing.
    #[arg(long, value_name = "CLASS", default_value = "eevdf", value_parser = fair_parser())]
    pub fair: FairFlavor,

    /// Set a tunable, e.g. `--set base_slice_ns=3ms`; repeat for several, the last one
    /// wins. `--set help` lists every tunable with its meaning and its value for
    /// --cpus.
    ///
    /// Durations take a unit (ns, us, ms, s; none means ns), flags take 0/1/on/off.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = tunables::parse_setting)]
    pub set: Vec<Setting>,

    /// List every tunable with its meaning and its value for --cpus, then exit (the
    /// same as `--set help`).
    #[arg(long)]
    pub list_tunables: bool,

    /// Seed of the simulator's random numbers; the same seed gives the same run.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Print the report as one JSON object on standard output instead of the summary
    /// (keys as in the README's "JSON output"; times in nanoseconds).
    #[arg(long)]
    pub json: bool,

    /// Also write one row per task to FILE as CSV (times in nanoseconds).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Also write a timeline to FILE as Chrome/Perfetto trace JSON, one track per CPU;
    /// open it in ui.perfetto.dev.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// Schedule with PFS (paper 001), keeping its knowledge in FILE (JSON; created if
    /// missing): programs without a PFS are logged and get one when they exit; programs
    /// with one may keep the CPU at a slice end when predicted to block within --pfs-tm.
    /// Run the same workload again to use and adapt what was learned.
    #[arg(long, value_name = "FILE")]
    pub pfs: Option<PathBuf>,

    /// PFS: the maximum dispatch delay T_m (a multiple of the 1 ms timeslot).
    #[arg(long, value_name = "DURATION", default_value = "20ms", value_parser = schedlab_sim::parse_duration)]
    pub pfs_tm: u64,

    /// PFS: the increase and decrease scaling factors x = y, in percent.
    #[arg(long, value_name = "PCT", default_value_t = 10)]
    pub pfs_xy: u32,

    /// Schedule with SWAP (paper 004): dependencies are detected from the system calls;
    /// a task blocked on a resource whose provider can run stays queued, and the most
    /// confident provider runs in its place.
    #[arg(long)]
    pub swap: bool,

    /// SWAP: the confidence quantum T.
    #[arg(long, value_name = "DURATION", default_value = "20ms", value_parser = schedlab_sim::parse_duration)]
    pub swap_t: u64,
}

/// The end of `--help`: the built-in workloads with their keys, then examples.
fn long_help() -> String {
    let name_width = BUILTINS.iter().map(|b| b.name.len()).max().unwrap_or(0);
    let key_width = BUILTINS.iter().flat_map(|b| b.keys).map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut text = String::from("Built-in workloads (WORKLOAD is NAME or NAME:key=value,...):\n");
    for b in BUILTINS {
        text.push_str(&format!("  {:<name_width$}  {}\n", b.name, b.about));
        for (key, meaning) in b.keys {
            text.push_str(&format!("      {key:<key_width$}  {meaning}\n"));
        }
    }
    text.push('\n');
    text.push_str(EXAMPLES);
    text
}

/// Parses `--fair` with clap listing the possible values in help and errors.
fn fair_parser() -> impl TypedValueParser<Value = FairFlavor> {
    PossibleValuesParser::new(["cfs", "eevdf", "timeshare"])
        .try_map(|s| FairFlavor::parse(&s).ok_or_else(|| format!("unknown fair class '{s}'")))
}

/// Runs `schedlab simulate`.
pub fn run(opts: &SimulateOpts) -> Result<()> {
    let topology = crate::args::machine(opts.cpus, opts.topology.as_ref(), host_cpus);
    let cpus = topology.cpus();
    let mut config = SimConfig::with_topology(topology, opts.fair);
    config.seed = opts.seed;
    tunables::apply(&mut config.tunables, &opts.set).map_err(|e| anyhow::anyhow!("--set {e}"))?;

    let stdout = io::stdout();
    if opts.list_tunables || opts.set.contains(&Setting::Help) {
        return tunables::list(&mut stdout.lock(), &config.tunables, cpus, opts.json)
            .context("cannot write to standard output");
    }

    let spec = opts.workload.as_deref().context(
        "no WORKLOAD given: name an rt-app JSON file or a built-in such as \
         hackbench:groups=10,fds=20,loops=100,size=100,ipc=pipe (see 'schedlab simulate --help')",
    )?;
    let workload =
        schedlab_sim::workloads::load(spec).with_context(|| format!("cannot load workload '{spec}'"))?;

    // Open the output files first, so that a bad path fails before a long run.
    let csv_out = opts.csv.as_deref().map(|p| create(p, "CSV")).transpose()?;
    let mut trace = match &opts.trace {
        Some(path) => Some(
            PerfettoTrace::new(create(path, "trace")?, cpus)
                .with_context(|| format!("cannot write the trace file {}", path.display()))?,
        ),
        None => None,
    };

    let params =
        PfsParams { t_m_ns: opts.pfs_tm, x_pct: opts.pfs_xy, y_pct: opts.pfs_xy, ..PfsParams::default() };
    params.validate().map_err(|e| anyhow::anyhow!("--pfs-tm: {e}"))?;
    let mut pfs = match &opts.pfs {
        Some(path) => Some(PfsScheduler::new(params, PfsStore::load(path)?)),
        None => None,
    };
    let mut swap =
        opts.swap.then(|| SwapDetector::new(SwapParams { t_ns: opts.swap_t, ..SwapParams::default() }));

    let spinner = ProgressBar::new_spinner();
    spinner.set_message(format!("simulating {spec} on {cpus} CPU(s) under {}", opts.fair.name()));
    spinner.enable_steady_tick(Duration::from_millis(100));
    let hooks = Hooks {
        sink: trace.as_mut().map(|t| t as &mut dyn EventSink),
        layer: pfs.as_mut().map(|p| p as &mut dyn SliceLayer),
        provider: swap.as_mut().map(|s| s as &mut dyn ProviderLayer),
    };
    let result = schedlab_sim::simulate_with(&workload, &config, hooks);
    spinner.finish_and_clear();
    let report = match result {
        Ok(report) => report,
        Err(e) => {
            // Do not leave empty or truncated output files behind.
            for path in opts.csv.iter().chain(&opts.trace) {
                let _ = fs::remove_file(path);
            }
            return Err(e).with_context(|| format!("simulating '{spec}' failed"));
        }
    };

    if let (Some(pfs), Some(path)) = (&pfs, &opts.pfs) {
        pfs.store.save(path)?;
    }
    if let (Some(trace), Some(path)) = (trace, &opts.trace) {
        trace.finish().with_context(|| format!("cannot write the trace file {}", path.display()))?;
    }
    if let (Some(mut out), Some(path)) = (csv_out, &opts.csv) {
        csv::write_tasks(&mut out, &report.tasks)
            .and_then(|()| out.flush())
            .with_context(|| format!("cannot write the CSV file {}", path.display()))?;
    }

    let mut out = stdout.lock();
    let written = if opts.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::from).and_then(|()| writeln!(out))
    } else {
        write_summary(&mut out, &report, &opts.set)
    };
    written.context("cannot write to standard output")
}

/// The CPUs this process may run on (affinity and cgroup limits), at least 1.
pub(crate) fn host_cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
}

/// Creates (truncates) an output file, buffered; `what` names it in the error.
fn create(path: &Path, what: &str) -> Result<BufWriter<File>> {
    let file = File::create(path).with_context(|| {
        format!(
            "cannot create the {what} file {} (check that its directory exists and is writable)",
            path.display()
        )
    })?;
    Ok(BufWriter::new(file))
}

/// Prints the human summary: run totals, then the task table.
fn write_summary(out: &mut impl Write, r: &Report, settings: &[Setting]) -> io::Result<()> {
    let mut facts = Table::new(&[("", Align::Left), ("", Align::Left)]).headless();
    let mut fact = |k: &str, v: String| facts.row(vec![k.to_string(), v]);
    fact("workload", r.workload.clone());
    fact("cpus", r.cpus.to_string());
    fact("topology", r.topology.clone());
    fact("fair class", r.fair.to_string());
    fact("seed", r.seed.to_string());
    let set: Vec<String> = settings
        .iter()
        .filter_map(|s| match s {
            Setting::Assign { name, value } => Some(format!("{name}={value}")),
            Setting::Help => None,
        })
        .collect();
    if !set.is_empty() {
        fact("tunables set", set.join(" "));
    }
    fact("makespan", duration(r.makespan_ns));
    fact("events", r.events.to_string());
    fact("wall time", duration(r.wall_ns));
    fact("events/s", count(r.events_per_sec));
    fact("context switches", r.context_switches.to_string());
    fact("migrations", r.migrations.to_string());
    fact("cpu busy", cpu_busy(&r.cpu_busy_ns, r.makespan_ns));
    facts.write(out)?;
    writeln!(out)?;
    task_table(&r.tasks).write(out)?;
    let running = r.tasks.iter().filter(|t| !t.exited).count();
    if running > 0 {
        writeln!(
            out,
            "\n{running} task(s) had not exited when the run stopped; their turnaround runs to the end."
        )?;
    }
    Ok(())
}

/// Per-CPU busy time as a share of the makespan: each CPU up to 8, else mean and range.
fn cpu_busy(busy: &[u64], makespan: u64) -> String {
    if busy.len() <= 8 {
        return busy.iter().map(|&b| percent(b, makespan)).collect::<Vec<_>>().join("  ");
    }
    let total: u64 = busy.iter().sum();
    let (min, max) = (busy.iter().min().copied(), busy.iter().max().copied());
    format!(
        "mean {}, min {}, max {}",
        percent(total / busy.len() as u64, makespan),
        percent(min.unwrap_or(0), makespan),
        percent(max.unwrap_or(0), makespan)
    )
}

/// The per-task table; with more than [`MAX_TASK_ROWS`] tasks, the [`TOP_TASKS`]
/// busiest, a line for the rest, and total and mean rows.
fn task_table(tasks: &[TaskReport]) -> Table {
    let mut table = Table::new(&[
        ("NAME", Align::Left),
        ("PID", Align::Right),
        ("POLICY", Align::Left),
        ("NICE", Align::Right),
        ("RUNTIME", Align::Right),
        ("WAIT", Align::Right),
        ("SLEEP", Align::Right),
        ("TURNAROUND", Align::Right),
        ("NVCSW", Align::Right),
        ("NIVCSW", Align::Right),
        ("MIGR", Align::Right),
        ("WAKE-LAT p50", Align::Right),
        ("p99", Align::Right),
        ("max", Align::Right),
    ]);
    let mut shown: Vec<&TaskReport> = tasks.iter().collect();
    if tasks.len() > MAX_TASK_ROWS {
        shown.sort_by_key(|t| std::cmp::Reverse(t.runtime_ns));
        shown.truncate(TOP_TASKS);
    }
    for t in &shown {
        let woke = t.wakeups > 0;
        let lat = |ns: u64| if woke { duration(ns) } else { "-".to_string() };
        let (policy, nice) = match t.policy.strip_prefix("SCHED_").unwrap_or(t.policy) {
            p @ ("FIFO" | "RR") => (format!("{p} {}", t.rt_priority), "-".to_string()),
            p => (p.to_string(), t.nice.to_string()),
        };
        table.row(vec![
            t.name.clone(),
            t.pid.to_string(),
            policy,
            nice,
            duration(t.runtime_ns),
            duration(t.wait_ns),
            duration(t.sleep_ns),
            duration(t.turnaround_ns),
            t.nvcsw.to_string(),
            t.nivcsw.to_string(),
            t.migrations.to_string(),
            lat(t.wakeup_latency_ns.p50),
            lat(t.wakeup_latency_ns.p99),
            lat(t.wakeup_latency_ns.max),
        ]);
    }
    if shown.len() < tasks.len() {
        table.row(vec![format!("... {} more", tasks.len() - shown.len())]);
    }
    if tasks.len() > 1 {
        add_totals(&mut table, tasks);
    }
    table
}

/// Adds a total row (sums; the largest wake-up latency) and a mean row (per task; the
/// latency means over the tasks that were woken).
fn add_totals(table: &mut Table, tasks: &[TaskReport]) {
    let sum = |f: fn(&TaskReport) -> u64| tasks.iter().map(f).sum::<u64>();
    let n = tasks.len() as u64;
    let woken: Vec<_> = tasks.iter().filter(|t| t.wakeups > 0).map(|t| t.wakeup_latency_ns).collect();
    let lat_mean = |f: fn(&schedlab_sim::Percentiles) -> u64| {
        if woken.is_empty() {
            "-".to_string()
        } else {
            duration(woken.iter().map(f).sum::<u64>() / woken.len() as u64)
        }
    };
    let max_lat = woken.iter().map(|l| l.max).max();
    let (runtime, wait, sleep) = (sum(|t| t.runtime_ns), sum(|t| t.wait_ns), sum(|t| t.sleep_ns));
    let (nvcsw, nivcsw, migr) = (sum(|t| t.nvcsw), sum(|t| t.nivcsw), sum(|t| t.migrations));
    let blank = String::new;
    table.row(vec![
        format!("total ({n} tasks)"),
        blank(),
        blank(),
        blank(),
        duration(runtime),
        duration(wait),
        duration(sleep),
        blank(),
        nvcsw.to_string(),
        nivcsw.to_string(),
        migr.to_string(),
        blank(),
        blank(),
        max_lat.map_or_else(|| "-".to_string(), duration),
    ]);
    let mean = |total: u64| count(total as f64 / n as f64);
    table.row(vec![
        "mean".to_string(),
        blank(),
        blank(),
        blank(),
        duration(runtime / n),
        duration(wait / n),
        duration(sleep / n),
        duration(sum(|t| t.turnaround_ns) / n),
        mean(nvcsw),
        mean(nivcsw),
        mean(migr),
        lat_mean(|l| l.p50),
        lat_mean(|l| l.p99),
        lat_mean(|l| l.max),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::tests::task;
    use crate::tests::parse_simulate;

    fn report(tasks: Vec<TaskReport>) -> Report {
        Report {
            workload: "test:tasks".to_string(),
            cpus: 2,
            topology: "1 node, 1 LLC, 2 cores, 2 CPUs".to_string(),
            fair: "eevdf",
            seed: 1,
            makespan_ns: 2_000_000,
            events: 12_345,
            wall_ns: 5_000_000,
            events_per_sec: 2_469_000.0,
            context_switches: 40,
            migrations: 3,
            cpu_busy_ns: vec![2_000_000, 1_000_000],
            tasks,
        }
    }

    fn summary(r: &Report, settings: &[Setting]) -> String {
        let mut out = Vec::new();
        write_summary(&mut out, r, settings).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn options_parse_with_defaults() {
        let o = parse_simulate(&["hackbench:groups=1"]).unwrap();
        assert_eq!(o.workload.as_deref(), Some("hackbench:groups=1"));
        assert_eq!((o.cpus, o.fair, o.seed, o.json), (None, FairFlavor::Eevdf, 1, false));
        assert!(o.set.is_empty() && o.csv.is_none() && o.trace.is_none());

        let o = parse_simulate(&[
            "w.json", "--cpus", "4", "--fair", "cfs", "--seed", "9", "--json", "--csv", "t.csv", "--trace",
            "t.json",
        ])
        .unwrap();
        assert_eq!((o.cpus, o.fair, o.seed, o.json), (Some(4), FairFlavor::Cfs, 9, true));
        assert_eq!(o.csv.unwrap(), Path::new("t.csv"));
        assert_eq!(o.trace.unwrap(), Path::new("t.json"));
        assert!(host_cpus() >= 1);
    }

    #[test]
    fn bad_options_are_rejected_with_the_choices() {
        let e = parse_simulate(&["w", "--fair", "bfs"]).unwrap_err().to_string();
        assert!(e.contains("cfs") && e.contains("eevdf") && e.contains("timeshare"), "{e}");
        let e = parse_simulate(&["w", "--cpus", "0"]).unwrap_err().to_string();
        assert!(e.contains("--cpus"), "{e}");
        assert!(parse_simulate(&["w", "--seed", "-1"]).is_err());
    }

    #[test]
    fn a_missing_workload_says_what_to_give() {
        let o = parse_simulate(&["--cpus", "2"]).unwrap();
        let e = format!("{:#}", run(&o).unwrap_err());
        assert!(e.contains("no WORKLOAD given") && e.contains("hackbench:"), "{e}");
    }

    #[test]
    fn a_run_writes_its_csv_and_trace() {
        let dir = std::env::temp_dir().join(format!("schedlab-cli-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (csv_path, trace_path) = (dir.join("tasks.csv"), dir.join("trace.json"));
        let o = parse_simulate(&[
            "hackbench:groups=1,fds=2,loops=3,size=100,ipc=pipe",
            "--cpus",
            "2",
            "--csv",
            csv_path.to_str().unwrap(),
            "--trace",
            trace_path.to_str().unwrap(),
        ])
        .unwrap();
        run(&o).unwrap();
        let csv = fs::read_to_string(&csv_path).unwrap();
        assert_eq!(csv.lines().count(), 1 + 4, "a header and 2 senders + 2 receivers:\n{csv}");
        let trace: serde_json::Value = serde_json::from_slice(&fs::read(&trace_path).unwrap()).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        assert!(events.iter().any(|e| e["ph"] == "X"), "no slices in {trace}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_small_run_lists_every_task() {
        let tasks = vec![task("sender", 1, 500_000), task("receiver", 2, 300_000)];
        let setting = tunables::parse_setting("base_slice_ns=3ms").unwrap();
        let text = summary(&report(tasks), &[setting]);
        for want in [
            "workload          test:tasks",
            "tunables set      base_slice_ns=3ms",
            "makespan          2.000 ms",
            "events/s          2.47 M",
            "cpu busy          100.0%  50.0%",
            "sender",
            "receiver",
            "total (2 tasks)",
            "mean",
        ] {
            assert!(text.contains(want), "{want:?} missing:\n{text}");
        }
        assert!(!text.contains("more"), "{text}");
    }

    #[test]
    fn a_large_run_shows_the_busiest_tasks() {
        let tasks: Vec<_> = (1..=50).map(|i| task(&format!("t{i}"), i, u64::from(i) * 1_000)).collect();
        let mut rt = task("rt", 51, 10);
        rt.policy = "SCHED_FIFO";
        rt.rt_priority = 50;
        rt.wakeups = 0;
        let text = summary(&report(tasks.into_iter().chain([rt]).collect()), &[]);
        let names: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("NAME"))
            .skip(1)
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        assert_eq!(names[0], "t50");
        assert_eq!(names[TOP_TASKS - 1], "t36");
        assert!(text.contains("... 36 more"), "{text}");
        assert!(text.contains("total (51 tasks)"), "{text}");
        assert!(!text.contains("FIFO"), "{text}");
    }

    #[test]
    fn real_time_tasks_show_their_priority() {
        let mut rt = task("rt", 1, 10);
        rt.policy = "SCHED_FIFO";
        rt.rt_priority = 50;
        rt.wakeups = 0;
        let text = summary(&report(vec![rt]), &[]);
        let row = text.lines().find(|l| l.starts_with("rt ")).unwrap();
        assert!(row.contains("FIFO 50"), "{row}");
        let last: Vec<&str> = row.split_whitespace().rev().take(3).collect();
        assert_eq!(last, ["-", "-", "-"], "{row}");
    }
}

//! `schedlab observe`: watch the live machine through eBPF for a while and report what
//! the processes did (system-call mix, CPU time, context switches, run bursts) and whom
//! they waited for (SWAP's dependencies).

use std::collections::HashMap;
use std::io::{self, Write};

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use schedlab_behavior::learn::{long_to_arff, Dataset, FeatureVector, LongRecord, ProcessProfile};
use schedlab_live::activity::Activity;
use schedlab_live::dependencies::{Dependency, DependencyRecorder};
use schedlab_live::process::{tgid_of, ProcInfo};
use schedlab_live::profile;
use schedlab_model::{Ns, Pid, Resource};
use schedlab_store::{
    Burst, DependencyEdge, DurationStats, Process, ProcessKey, Store, SyscallCount, Window,
};
use serde::Serialize;

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

#[derive(Debug, Serialize)]
struct Bursts {
    count: usize,
    mean_ns: Ns,
    p90_ns: Ns,
}

#[derive(Debug, Serialize)]
pub(crate) struct ProcessReport {
    pub(crate) pid: u32,
    pub(crate) comm: String,
    exe: String,
    syscalls: serde_json::Map<String, serde_json::Value>,
    /// The calls, most frequent first.
    #[serde(skip)]
    ranked: Vec<(String, u64)>,
    runtime_ns: Ns,
    /// Time blocked (from blocking to the wake-up).
    sleep_ns: Ns,
    nvcsw: u64,
    nivcsw: u64,
    bursts: Bursts,
    /// The process as the learning code sees it (its run bursts shortest first), from
    /// the builder the daemon uses too ([`schedlab_live::profile`]).
    #[serde(skip)]
    profile: ProcessProfile,
}

impl ProcessReport {
    /// The report of one process from its profile.
    fn new(pid: u32, exe: String, profile: ProcessProfile) -> ProcessReport {
        let mut ranked: Vec<(String, u64)> = profile.syscalls.iter().map(|(c, &n)| (c.clone(), n)).collect();
        ranked.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
        let syscalls = ranked.iter().map(|(name, n)| (name.clone(), serde_json::Value::from(*n))).collect();
        let b = &profile.run_bursts_ns;
        let mean = if b.is_empty() { 0 } else { b.iter().sum::<Ns>() / b.len() as Ns };
        ProcessReport {
            pid,
            comm: profile.name.clone(),
            exe,
            syscalls,
            ranked,
            runtime_ns: profile.runtime_ns,
            sleep_ns: profile.sleep_ns,
            nvcsw: profile.voluntary_switches,
            nivcsw: profile.involuntary_switches,
            bursts: Bursts { count: b.len(), mean_ns: mean, p90_ns: percentile(b, 0.9) },
            profile,
        }
    }

    /// The process as the learning code sees it.
    pub(crate) fn profile(&self) -> &ProcessProfile {
        &self.profile
    }
}

/// Every process of a window that `wanted` keeps, busiest first: named by `comm_of`,
/// their programs by `exe_of`.
fn process_reports(
    window: &profile::Window,
    tgid_of: impl Fn(u32) -> u32,
    comm_of: impl Fn(u32) -> String,
    exe_of: impl Fn(u32) -> String,
    wanted: impl Fn(u32) -> bool,
) -> Vec<ProcessReport> {
    let mut processes: Vec<ProcessReport> = profile::profiles(window, tgid_of, wanted)
        .into_iter()
        .map(|(pid, mut p)| {
            p.name = comm_of(pid);
            ProcessReport::new(pid, exe_of(pid), p)
        })
        .collect();
    processes.sort_by(|a, b| b.runtime_ns.cmp(&a.runtime_ns).then(a.pid.cmp(&b.pid)));
    processes
}

#[derive(Debug, Serialize)]
struct TaskRef {
    pid: u32,
    comm: String,
}

#[derive(Debug, Serialize)]
struct ResourceRef {
    kind: &'static str,
    id: u64,
    name: String,
    #[serde(skip)]
    resource: Resource,
}

#[derive(Debug, Serialize)]
struct DependencyReport {
    requester: TaskRef,
    provider: TaskRef,
    resource: ResourceRef,
    confidence: u32,
    wakeups: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub(crate) duration_ns: Ns,
    events: u64,
    lost_events: u64,
    pub(crate) processes: Vec<ProcessReport>,
    dependencies: Vec<DependencyReport>,
}

fn resource_ref(r: &Resource) -> ResourceRef {
    let id = match *r {
        Resource::Socket { inode }
        | Resource::Pipe { inode, .. }
        | Resource::Fifo { inode, .. }
        | Resource::Flock { inode, .. } => inode,
        Resource::SysvMsg { id } | Resource::SysvSem { id, .. } => id as u64,
        Resource::Signal { pid } => u64::from(pid),
    };
    ResourceRef { kind: r.kind(), id, name: r.to_string(), resource: *r }
}

fn proc_comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim_end().to_string())
}

fn percentile(sorted: &[Ns], p: f64) -> Ns {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
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
        keep(&Store::open(&path)?, &report)
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

/// Keeps a window in the store: the window, its processes, their syscall counts and
/// bursts, and the dependency edges.
fn keep(store: &Store, r: &Report) -> Result<()> {
    let started_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as Ns)
        .saturating_sub(r.duration_ns);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
    let kernel = schedlab_ext::kernel::release();
    let window = store.insert_window(&Window {
        started_ns,
        duration_ns: r.duration_ns,
        host,
        kernel,
        events: r.events,
        lost_events: r.lost_events,
    })?;
    let mut keys = HashMap::new();
    for p in &r.processes {
        let info = ProcInfo::read(p.pid).unwrap_or(ProcInfo { pid: p.pid, ..ProcInfo::default() });
        let key = info.key();
        keys.insert(p.pid, key);
        let exe = (!p.exe.is_empty()).then(|| p.exe.clone());
        store.insert_process(&Process {
            window,
            key,
            comm: p.comm.clone(),
            exe,
            cmdline: info.cmdline,
            cgroup: info.cgroup,
            uid: info.uid,
            ppid: Pid(info.ppid),
        })?;
        for (call, n) in &p.ranked {
            if let Some(nr) = schedlab_model::syscall_nr(call) {
                store.insert_syscall_count(&SyscallCount { window, key, nr, count: *n })?;
            }
        }
        let stats = |v: &[Ns]| DurationStats {
            count: v.len() as u64,
            total_ns: v.iter().sum(),
            min_ns: v.iter().copied().min().unwrap_or(0),
            max_ns: v.iter().copied().max().unwrap_or(0),
        };
        let wait = DurationStats { count: p.nvcsw, total_ns: p.sleep_ns, min_ns: 0, max_ns: 0 };
        store.insert_burst(&Burst { window, key, run: stats(&p.profile.run_bursts_ns), wait })?;
    }
    let key_of = |pid: u32| keys.get(&pid).copied().unwrap_or(ProcessKey { pid: Pid(pid), start_time: 0 });
    for d in &r.dependencies {
        store.insert_dependency_edge(&DependencyEdge {
            window,
            requester: key_of(d.requester.pid),
            provider: key_of(d.provider.pid),
            resource: d.resource.resource,
            confidence: d.confidence,
            wakeups: d.wakeups,
        })?;
    }
    Ok(())
}

/// Observes the machine for `window_ns` and aggregates what happened per process
/// (restricted to `pids` when not empty).
#[cfg(target_os = "linux")]
pub(crate) fn observe_window(window_ns: Ns, pids: &[u32]) -> Result<Report> {
    use std::time::{Duration, Instant};

    use anyhow::Context;
    use indicatif::{ProgressBar, ProgressStyle};
    use schedlab_live::observer::{Observer, ObserverOptions, SchedEvents};

    // Every switch and waking, and the system-call hook for the whole window: the report
    // gives exact per-process call counts.
    let options =
        ObserverOptions { syscalls: true, sched_events: SchedEvents::All, ..ObserverOptions::default() };
    let mut observer = Observer::start(options).context("cannot start the live observer")?;
    let mut stats = Activity::default();
    let mut deps = DependencyRecorder::new();

    let window = Duration::from_nanos(window_ns);
    let bar = ProgressBar::new(window.as_millis() as u64);
    bar.set_style(
        ProgressStyle::with_template("observing {bar:30} {elapsed}/{duration} {msg}")
            .expect("a valid progress template"),
    );
    let start = Instant::now();
    loop {
        let elapsed = start.elapsed();
        if elapsed >= window {
            break;
        }
        let wait = (window - elapsed).min(Duration::from_millis(100));
        observer.poll(&mut (&mut stats, &mut deps), wait).context("cannot read the observer's events")?;
        bar.set_position(start.elapsed().as_millis() as u64);
        bar.set_message(format!("{} events", count(observer.events() as f64)));
    }
    let duration_ns = start.elapsed().as_nanos() as Ns;
    let counts = observer.syscall_counts().context("cannot read the syscall counts")?;
    let lost_events = observer.lost_events().context("cannot read the lost-event count")?;
    bar.finish_and_clear();

    // The process of each thread and what it is called.
    let tgid_of = |pid: u32| -> u32 {
        observer.task(pid).map(|t| t.tgid).filter(|&t| t != 0).or_else(|| tgid_of(pid)).unwrap_or(pid)
    };
    let comm_of = |pid: u32| -> String {
        observer
            .task(pid)
            .map(|t| t.comm.clone())
            .filter(|c| !c.is_empty())
            .or_else(|| proc_comm(pid))
            .unwrap_or_default()
    };
    let wanted = |tgid: u32| pids.is_empty() || pids.contains(&tgid);
    let exe_of = |pid: u32| -> String {
        observer
            .task(pid)
            .and_then(|t| t.exe.clone())
            .or_else(|| schedlab_live::process::exe_of(pid))
            .unwrap_or_default()
    };
    let none = HashMap::new();
    let window =
        profile::Window { length_ns: duration_ns, counts: &counts, baseline: &none, activity: &stats };
    let processes = process_reports(&window, tgid_of, comm_of, exe_of, wanted);

    let dependencies: Vec<DependencyReport> = deps
        .dependencies()
        .into_iter()
        .filter(|d: &Dependency| wanted(tgid_of(d.requester.0)) || wanted(tgid_of(d.provider.0)))
        .map(|d| DependencyReport {
            requester: TaskRef { pid: d.requester.0, comm: comm_of(d.requester.0) },
            provider: TaskRef { pid: d.provider.0, comm: comm_of(d.provider.0) },
            resource: resource_ref(&d.resource),
            confidence: d.confidence,
            wakeups: d.wakeups,
        })
        .collect();
    Ok(Report { duration_ns, events: observer.events(), lost_events, processes, dependencies })
}

/// Observing needs Linux (eBPF tracepoints).
#[cfg(not(target_os = "linux"))]
pub(crate) fn observe_window(_window_ns: Ns, _pids: &[u32]) -> Result<Report> {
    anyhow::bail!("schedlab observe needs Linux (eBPF tracepoints)")
}

fn write_human(out: &mut impl Write, r: &Report, top: usize) -> io::Result<()> {
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
    use super::*;
    use schedlab_model::{Event, EventSink};

    #[test]
    fn a_window_is_kept_in_the_store() {
        let path = std::env::temp_dir().join(format!("schedlab-observe-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let me = std::process::id();
        let report = Report {
            duration_ns: 1_000_000_000,
            events: 7,
            lost_events: 0,
            processes: vec![ProcessReport::new(
                me,
                String::new(),
                ProcessProfile {
                    name: "test".into(),
                    window_secs: 1.0,
                    syscalls: [("read".to_string(), 5), ("write".to_string(), 2)].into(),
                    voluntary_switches: 2,
                    involuntary_switches: 0,
                    run_bursts_ns: vec![10, 20],
                    runtime_ns: 30,
                    sleep_ns: 60,
                },
            )],
            dependencies: vec![DependencyReport {
                requester: TaskRef { pid: me, comm: "test".into() },
                provider: TaskRef { pid: 1, comm: "init".into() },
                resource: resource_ref(&Resource::Pipe { inode: 9, write: false }),
                confidence: 21,
                wakeups: 1,
            }],
        };
        let store = Store::open(&path).unwrap();
        keep(&store, &report).unwrap();
        let (w, window) = store.windows().unwrap().pop().unwrap();
        assert_eq!((window.events, window.duration_ns), (7, 1_000_000_000));
        let procs = store.processes(w).unwrap();
        assert_eq!(procs[0].comm, "test");
        assert!(procs[0].key.start_time > 0, "the start time comes from /proc");
        assert_eq!(store.syscall_counts(w).unwrap().len(), 2);
        assert_eq!(store.bursts(w).unwrap()[0].run.total_ns, 30);
        assert_eq!(store.dependency_edges(w).unwrap()[0].confidence, 21);
        // Closed first: SQLite removes its log and index files with the last connection.
        drop(store);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn the_report_gives_the_model_what_the_daemon_gives_it() {
        use schedlab_model::{EventKind, PrevState};
        let mut activity = Activity::default();
        for (time, prev, prev_state, next) in
            [(0, 0, PrevState::Runnable, 7), (40, 7, PrevState::Runnable, 8), (90, 8, PrevState::Blocked, 7)]
        {
            let kind = EventKind::Switch { cpu: 0, prev: Pid(prev), prev_state, next: Pid(next) };
            activity.event(&Event { time, kind });
        }
        let read = schedlab_model::syscall_nr("read").unwrap();
        let counts = HashMap::from([((7, read), 9), ((7, 4000), 1)]);
        let none = HashMap::new();
        let window =
            profile::Window { length_ns: 1_000, counts: &counts, baseline: &none, activity: &activity };
        let tgid_of = |t: u32| if t == 8 { 7 } else { t };
        let reports = process_reports(&window, tgid_of, |_| "prog".into(), |_| String::new(), |_| true);
        let mut served = profile::profiles(&window, tgid_of, |_| true).remove(&7).unwrap();
        served.name = "prog".into();
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].profile().features(), served.features(), "the same features both ways");
        // And the report says what the profile holds.
        let r = &reports[0];
        assert_eq!((r.pid, r.nvcsw, r.nivcsw, r.runtime_ns), (7, 1, 1, 90));
        assert_eq!(r.ranked, [("read".to_string(), 9), ("syscall_4000".to_string(), 1)]);
        assert_eq!(r.syscalls["read"], 9);
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        assert_eq!(percentile(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9);
        assert_eq!(percentile(&[], 0.9), 0);
    }

    #[test]
    fn observe_parses_its_options() {
        let o = crate::tests::parse(&["observe", "--duration", "2s", "--pid", "1", "--pid", "7", "--json"])
            .unwrap();
        let crate::Command::Observe(o) = o.command else { panic!("not observe") };
        assert_eq!((o.duration, o.pids.as_slice(), o.json), (2_000_000_000, &[1, 7][..], true));
        assert!(crate::tests::parse(&["observe", "--duration", "0s"]).is_err());
    }
}

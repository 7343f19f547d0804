//! `schedlab observe`: watch the live machine through eBPF for a while and report what
//! the processes did (system-call mix, CPU time, context switches, run bursts) and whom
//! they waited for (SWAP's dependencies).

use std::collections::HashMap;
use std::io::{self, Write};

use anyhow::Result;
use clap::Args;
use schedlab_live::dependencies::{Dependency, DependencyRecorder};
use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, PrevState, Resource};
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
/// Needs root, a kernel with BTF (/sys/kernel/btf/vmlinux) and tracefs; says which is
/// missing otherwise.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub struct ObserveOpts {
    /// How long to observe (with a unit: 500ms, 30s, 2m).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration_parser)]
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
}

fn duration_parser(s: &str) -> Result<Ns, String> {
    match schedlab_sim::parse_duration(s)? {
        0 => Err("the duration must be positive".to_string()),
        d => Ok(d),
    }
}

/// One thread's scheduling as seen from its switches.
#[derive(Clone, Debug, Default)]
struct ThreadStats {
    on_cpu_since: Option<Ns>,
    runtime: Ns,
    burst: Ns,
    nvcsw: u64,
    nivcsw: u64,
    bursts: Vec<Ns>,
}

/// Per-thread run time, context switches and bursts from `Switch` events.
#[derive(Debug, Default)]
struct SwitchStats {
    threads: HashMap<Pid, ThreadStats>,
    events: u64,
}

impl EventSink for SwitchStats {
    fn event(&mut self, e: &Event) {
        self.events += 1;
        let EventKind::Switch { prev, prev_state, next, .. } = e.kind else { return };
        if prev != Pid::IDLE {
            let t = self.threads.entry(prev).or_default();
            if let Some(since) = t.on_cpu_since.take() {
                let ran = e.time.saturating_sub(since);
                t.runtime += ran;
                t.burst += ran;
                match prev_state {
                    PrevState::Runnable => t.nivcsw += 1,
                    PrevState::Blocked | PrevState::Dead => {
                        if prev_state == PrevState::Blocked {
                            t.nvcsw += 1;
                        }
                        t.bursts.push(std::mem::take(&mut t.burst));
                    }
                }
            }
        }
        if next != Pid::IDLE {
            self.threads.entry(next).or_default().on_cpu_since = Some(e.time);
        }
    }
}

struct Sinks<'a>(&'a mut SwitchStats, &'a mut DependencyRecorder);

impl EventSink for Sinks<'_> {
    fn event(&mut self, e: &Event) {
        self.0.event(e);
        self.1.event(e);
    }
}

#[derive(Debug, Serialize)]
struct Bursts {
    count: usize,
    mean_ns: Ns,
    p90_ns: Ns,
}

#[derive(Debug, Serialize)]
struct ProcessReport {
    pid: u32,
    comm: String,
    exe: String,
    syscalls: serde_json::Map<String, serde_json::Value>,
    /// The calls, most frequent first.
    #[serde(skip)]
    ranked: Vec<(String, u64)>,
    runtime_ns: Ns,
    nvcsw: u64,
    nivcsw: u64,
    bursts: Bursts,
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
struct Report {
    duration_ns: Ns,
    events: u64,
    lost_events: u64,
    processes: Vec<ProcessReport>,
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
    ResourceRef { kind: r.kind(), id, name: r.to_string() }
}

fn proc_comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim_end().to_string())
}

fn proc_tgid(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse().ok())
}

fn percentile(sorted: &[Ns], p: f64) -> Ns {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Runs `schedlab observe`.
#[cfg(target_os = "linux")]
pub fn run(opts: &ObserveOpts) -> Result<()> {
    use std::time::{Duration, Instant};

    use anyhow::Context;
    use indicatif::{ProgressBar, ProgressStyle};
    use schedlab_live::observer::{Observer, ObserverOptions};

    let mut observer =
        Observer::start(ObserverOptions::default()).context("cannot start the live observer")?;
    let mut stats = SwitchStats::default();
    let mut deps = DependencyRecorder::new();

    let window = Duration::from_nanos(opts.duration);
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
        observer
            .poll(&mut Sinks(&mut stats, &mut deps), wait)
            .context("cannot read the observer's events")?;
        bar.set_position(start.elapsed().as_millis() as u64);
        bar.set_message(format!("{} events", count(observer.events() as f64)));
    }
    let duration_ns = start.elapsed().as_nanos() as Ns;
    let counts = observer.syscall_counts().context("cannot read the syscall counts")?;
    let lost_events = observer.lost_events().context("cannot read the lost-event count")?;
    bar.finish_and_clear();

    // The process of each thread and what it is called.
    let tgid_of = |pid: u32| -> u32 {
        observer.task(pid).map(|t| t.tgid).filter(|&t| t != 0).or_else(|| proc_tgid(pid)).unwrap_or(pid)
    };
    let comm_of = |pid: u32| -> String {
        observer
            .task(pid)
            .map(|t| t.comm.clone())
            .filter(|c| !c.is_empty())
            .or_else(|| proc_comm(pid))
            .unwrap_or_default()
    };
    let wanted = |tgid: u32| opts.pids.is_empty() || opts.pids.contains(&tgid);

    #[derive(Default)]
    struct Acc {
        runtime: Ns,
        nvcsw: u64,
        nivcsw: u64,
        bursts: Vec<Ns>,
        syscalls: Vec<(u32, u64)>,
    }
    let mut procs: HashMap<u32, Acc> = HashMap::new();
    for (pid, t) in &stats.threads {
        let tgid = tgid_of(pid.0);
        if !wanted(tgid) {
            continue;
        }
        let a = procs.entry(tgid).or_default();
        a.runtime += t.runtime;
        a.nvcsw += t.nvcsw;
        a.nivcsw += t.nivcsw;
        a.bursts.extend_from_slice(&t.bursts);
    }
    for (&(tgid, nr), &n) in &counts {
        if wanted(tgid) {
            procs.entry(tgid).or_default().syscalls.push((nr, n));
        }
    }
    let mut processes: Vec<ProcessReport> = procs
        .into_iter()
        .map(|(pid, mut a)| {
            a.bursts.sort_unstable();
            a.syscalls.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            let mean =
                if a.bursts.is_empty() { 0 } else { a.bursts.iter().sum::<Ns>() / a.bursts.len() as Ns };
            let exe = observer
                .task(pid)
                .and_then(|t| t.exe.clone())
                .or_else(|| {
                    std::fs::read_link(format!("/proc/{pid}/exe")).ok().map(|p| p.display().to_string())
                })
                .unwrap_or_default();
            let ranked: Vec<(String, u64)> = a
                .syscalls
                .iter()
                .map(|&(nr, n)| {
                    let name = schedlab_model::syscall_name(nr)
                        .map_or_else(|| format!("syscall_{nr}"), str::to_string);
                    (name, n)
                })
                .collect();
            let syscalls =
                ranked.iter().map(|(name, n)| (name.clone(), serde_json::Value::from(*n))).collect();
            ProcessReport {
                pid,
                comm: comm_of(pid),
                exe,
                syscalls,
                ranked,
                runtime_ns: a.runtime,
                nvcsw: a.nvcsw,
                nivcsw: a.nivcsw,
                bursts: Bursts { count: a.bursts.len(), mean_ns: mean, p90_ns: percentile(&a.bursts, 0.9) },
            }
        })
        .collect();
    processes.sort_by(|a, b| b.runtime_ns.cmp(&a.runtime_ns).then(a.pid.cmp(&b.pid)));

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
    let report = Report { duration_ns, events: observer.events(), lost_events, processes, dependencies };
    drop(observer);

    let mut out = io::stdout().lock();
    if opts.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write_human(&mut out, &report, opts.top)?;
    }
    Ok(())
}

/// Runs `schedlab observe` (Linux only).
#[cfg(not(target_os = "linux"))]
pub fn run(_opts: &ObserveOpts) -> Result<()> {
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

    fn switch(time: Ns, prev: u32, prev_state: PrevState, next: u32) -> Event {
        Event { time, kind: EventKind::Switch { cpu: 0, prev: Pid(prev), prev_state, next: Pid(next) } }
    }

    #[test]
    fn bursts_merge_preemptions_and_end_at_a_block() {
        let mut s = SwitchStats::default();
        for e in [
            switch(0, 0, PrevState::Runnable, 5),
            switch(10, 5, PrevState::Runnable, 6),
            switch(15, 6, PrevState::Blocked, 5),
            switch(20, 5, PrevState::Blocked, 0),
            switch(30, 0, PrevState::Runnable, 5),
            switch(33, 5, PrevState::Dead, 0),
        ] {
            s.event(&e);
        }
        let t = &s.threads[&Pid(5)];
        assert_eq!((t.runtime, t.nvcsw, t.nivcsw), (18, 1, 1));
        assert_eq!(t.bursts, vec![15, 3]);
        assert_eq!(s.threads[&Pid(6)].bursts, vec![5]);
        s.event(&switch(40, 7, PrevState::Blocked, 0));
        assert_eq!(s.threads[&Pid(7)].nvcsw, 0, "7 was not seen switching in: nothing to count");
        assert_eq!(percentile(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9);
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

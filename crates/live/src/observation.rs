//! One window of observation: the machine watched through the observer for a while,
//! every process's system-call mix, CPU time, switches and run bursts (the profile the
//! daemon's model sees too, [`crate::profile`]), and the dependencies SWAP found;
//! `schedlab observe` and `classify` print it, [`keep`] stores it.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use schedlab_behavior::learn::ProcessProfile;
use schedlab_model::{Ns, Pid, Resource};
use schedlab_store::{
    Burst, DependencyEdge, DurationStats, Process, ProcessKey, Store, SyscallCount, Window,
};
use serde::Serialize;

use crate::activity::Activity;
use crate::dependencies::{Dependency, DependencyRecorder};
use crate::observer::{Observer, ObserverError, ObserverOptions, SchedEvents};
use crate::process::{tgid_of, ProcInfo};
use crate::profile;

/// A process's run bursts: how many, their mean and 90th percentile.
#[derive(Debug, Serialize)]
pub struct Bursts {
    pub count: usize,
    pub mean_ns: Ns,
    pub p90_ns: Ns,
}

/// One process of a window: its calls, CPU time, switches and bursts.
#[derive(Debug, Serialize)]
pub struct ProcessReport {
    pub pid: u32,
    pub comm: String,
    pub exe: String,
    pub syscalls: serde_json::Map<String, serde_json::Value>,
    /// The calls, most frequent first.
    #[serde(skip)]
    pub ranked: Vec<(String, u64)>,
    pub runtime_ns: Ns,
    /// Time blocked (from blocking to the wake-up).
    pub sleep_ns: Ns,
    pub nvcsw: u64,
    pub nivcsw: u64,
    pub bursts: Bursts,
    /// The process as the learning code sees it (its run bursts shortest first), from
    /// the builder the daemon uses too ([`schedlab_live::profile`]).
    #[serde(skip)]
    pub profile: ProcessProfile,
}

impl ProcessReport {
    /// The report of one process from its profile.
    pub fn new(pid: u32, exe: String, profile: ProcessProfile) -> ProcessReport {
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
    pub fn profile(&self) -> &ProcessProfile {
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

/// A task by pid and name.
#[derive(Debug, Serialize)]
pub struct TaskRef {
    pub pid: u32,
    pub comm: String,
}

/// A resource a requester waited on, as the report names it.
#[derive(Debug, Serialize)]
pub struct ResourceRef {
    pub kind: &'static str,
    pub id: u64,
    pub name: String,
    #[serde(skip)]
    pub resource: Resource,
}

/// A dependency SWAP found in the window: who waited for whom, on what.
#[derive(Debug, Serialize)]
pub struct DependencyReport {
    pub requester: TaskRef,
    pub provider: TaskRef,
    pub resource: ResourceRef,
    pub confidence: u32,
    pub wakeups: u64,
}

/// What one window of observation found: every process's profile and the
/// dependencies between them.
#[derive(Debug, Serialize)]
pub struct Observation {
    pub duration_ns: Ns,
    pub events: u64,
    pub lost_events: u64,
    pub processes: Vec<ProcessReport>,
    pub dependencies: Vec<DependencyReport>,
}

/// The report's name of `r`.
pub fn resource_ref(r: &Resource) -> ResourceRef {
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

fn percentile(sorted: &[Ns], p: f64) -> Ns {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Keeps a window in the store: the window, its processes, their syscall counts and
/// bursts, and the dependency edges.
pub fn keep(store: &Store, r: &Observation) -> Result<(), schedlab_store::Error> {
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
/// (restricted to `pids` when not empty); `progress(elapsed, events)` hears how far it
/// is about every 100 ms.
pub fn observe(
    window_ns: Ns,
    pids: &[u32],
    progress: &mut dyn FnMut(Duration, u64),
) -> Result<Observation, ObserverError> {
    // Every switch and waking, and the system-call hook for the whole window: the report
    // gives exact per-process call counts.
    let options =
        ObserverOptions { syscalls: true, sched_events: SchedEvents::All, ..ObserverOptions::default() };
    let mut observer = Observer::start(options)?;
    let mut stats = Activity::default();
    let mut deps = DependencyRecorder::new();

    let window = Duration::from_nanos(window_ns);
    let start = Instant::now();
    loop {
        let elapsed = start.elapsed();
        if elapsed >= window {
            break;
        }
        let wait = (window - elapsed).min(Duration::from_millis(100));
        observer.poll(&mut (&mut stats, &mut deps), wait)?;
        progress(start.elapsed(), observer.events());
    }
    let duration_ns = start.elapsed().as_nanos() as Ns;
    let counts = observer.syscall_counts()?;
    let lost_events = observer.lost_events()?;

    // The process of each thread and what it is called.
    let tgid_of = |pid: u32| -> u32 {
        observer.task(pid).map(|t| t.tgid).filter(|&t| t != 0).or_else(|| tgid_of(pid)).unwrap_or(pid)
    };
    let comm_of = |pid: u32| -> String {
        observer
            .task(pid)
            .map(|t| t.comm.clone())
            .filter(|c| !c.is_empty())
            .or_else(|| crate::process::comm_of(pid))
            .unwrap_or_default()
    };
    let wanted = |tgid: u32| pids.is_empty() || pids.contains(&tgid);
    let exe_of = |pid: u32| -> String {
        observer
            .task(pid)
            .and_then(|t| t.exe.clone())
            .or_else(|| crate::process::exe_of(pid))
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
    Ok(Observation { duration_ns, events: observer.events(), lost_events, processes, dependencies })
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
        let report = Observation {
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
}

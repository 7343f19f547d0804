//! One hackbench run traced in both worlds, event by event: the real run through the
//! observer (the kernel's `sched_switch`, `sched_waking`, fork, exec and exit), the
//! simulated one from the engine's events. Each is written as a Perfetto trace (open
//! both in ui.perfetto.dev side by side) and summed up in the same statistics
//! ([`TraceStats`]), so that where the simulator departs from the kernel shows as
//! numbers: how often the tasks block and are preempted, how long they run, where
//! wake-ups land (the waker's CPU, an idle one), whether the wakee preempts whoever runs
//! there, how soon it runs, how long the CPUs idle.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, PrevState};
use schedlab_sim::trace::PerfettoTrace;
use schedlab_sim::SimConfig;
use serde::Serialize;

use crate::bench::{Context, OutputProblem};

use super::fit::median;
use super::hackbench::HackbenchParams;
use super::{Result, ValidateError};

/// What one run's events say about its tasks' scheduling. Counts are over the
/// workload's tasks only (a real trace holds the whole machine); CPU times spent on
/// other tasks are `other_ns`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceStats {
    /// Tasks of the workload seen.
    pub tasks: u64,
    /// From the first to the last event of a workload task.
    pub span_ns: Ns,
    /// Switches away from a workload task that blocked, and from one still runnable
    /// (preempted).
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Stints on a CPU, their median length and their total.
    pub runs: u64,
    pub run_median_ns: Ns,
    pub run_ns: Ns,
    /// Wake-ups of workload tasks; of them, those whose wakee then first ran on the
    /// waker's CPU, on a CPU that was idle at the wake-up, on another CPU than it last
    /// ran on, and by preempting a runnable task. Where the wakee ran is taken from the
    /// switches, not from the wake-up event: the kernel's `sched_waking`, which the
    /// observer records, fires before the destination is chosen and names the wakee's
    /// previous CPU.
    pub wakeups: u64,
    pub wakeups_on_wakers_cpu: u64,
    pub wakeups_to_idle_cpu: u64,
    pub wakeups_migrating: u64,
    pub wakeups_preempting: u64,
    /// Median time from a wake-up to the wakee's first run.
    pub wake_to_run_median_ns: Ns,
    /// A CPU going idle while the workload ran, and the time CPUs spent idle then.
    pub idle_periods: u64,
    pub idle_ns: Ns,
    /// CPU time of tasks outside the workload while it ran.
    pub other_ns: Ns,
}

/// A wake-up whose wakee has not run yet.
#[derive(Debug)]
struct Woken {
    at: Ns,
    wakers_cpu: Option<usize>,
    idle_cpus: Vec<bool>,
}

/// Builds [`TraceStats`] from an event stream (an [`EventSink`]).
#[derive(Debug, Default)]
pub struct StatsSink {
    /// Only this task and its descendants count (`None`: every task).
    root: Option<Pid>,
    tracked: HashSet<Pid>,
    /// Per CPU: who runs since when (`None` until a switch on it is seen).
    running: Vec<Option<(Pid, Ns)>>,
    last_cpu: HashMap<Pid, u32>,
    /// Woken and not yet run: when, the waker's CPU then, and which CPUs were idle.
    woken: HashMap<Pid, Woken>,
    runs: Vec<Ns>,
    waits: Vec<Ns>,
    first: Option<Ns>,
    last: Ns,
    /// The root left the CPU dead: what follows is not the workload's.
    over: bool,
    stats: TraceStats,
}

impl StatsSink {
    /// Counts `root` and the tasks it forks (directly or not), or every task.
    pub fn new(root: Option<Pid>) -> Self {
        StatsSink { root, tracked: root.into_iter().collect(), ..StatsSink::default() }
    }

    fn counts(&self, pid: Pid) -> bool {
        pid != Pid::IDLE && (self.root.is_none() || self.tracked.contains(&pid))
    }

    /// The statistics of the events so far.
    pub fn stats(&self) -> TraceStats {
        let med = |v: &[Ns]| median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>()).unwrap_or(0.0) as Ns;
        TraceStats {
            tasks: self.tracked.len() as u64,
            span_ns: self.first.map_or(0, |f| self.last - f),
            runs: self.runs.len() as u64,
            run_median_ns: med(&self.runs),
            run_ns: self.runs.iter().sum(),
            wake_to_run_median_ns: med(&self.waits),
            ..self.stats.clone()
        }
    }

    fn switch(&mut self, t: Ns, cpu: u32, prev: Pid, prev_state: PrevState, next: Pid) {
        let i = cpu as usize;
        if self.running.len() <= i {
            self.running.resize(i + 1, None);
        }
        let before = self.running[i].replace((next, t));
        let active = self.first.is_some();
        if self.counts(prev) {
            if let Some((_, since)) = before {
                self.runs.push(t - since);
            }
            match prev_state {
                PrevState::Blocked => self.stats.voluntary_switches += 1,
                PrevState::Runnable => self.stats.involuntary_switches += 1,
                PrevState::Dead => {}
            }
        } else if let (true, Some((_, since))) = (active, before) {
            // Only while the workload ran.
            let spent = t - since.max(self.first.unwrap_or(t));
            if prev == Pid::IDLE {
                self.stats.idle_ns += spent;
            } else {
                self.stats.other_ns += spent;
            }
        }
        if next == Pid::IDLE && active {
            self.stats.idle_periods += 1;
        }
        if self.counts(next) {
            let last = self.last_cpu.insert(next, cpu);
            if let Some(w) = self.woken.remove(&next) {
                let s = &mut self.stats;
                self.waits.push(t - w.at);
                s.wakeups_on_wakers_cpu += u64::from(w.wakers_cpu == Some(i));
                s.wakeups_to_idle_cpu += u64::from(w.idle_cpus.get(i).copied().unwrap_or(false));
                s.wakeups_migrating += u64::from(last.is_some_and(|c| c != cpu));
                if prev != Pid::IDLE && prev_state == PrevState::Runnable {
                    s.wakeups_preempting += 1;
                }
            }
        }
    }

    fn wakeup(&mut self, t: Ns, waker: Pid, wakee: Pid) {
        self.stats.wakeups += 1;
        let on = |c: &Option<(Pid, Ns)>, pid: Pid| c.is_some_and(|(p, _)| p == pid);
        let wakers_cpu = self.running.iter().position(|c| waker != Pid::IDLE && on(c, waker));
        let idle_cpus = self.running.iter().map(|c| on(c, Pid::IDLE)).collect();
        self.woken.insert(wakee, Woken { at: t, wakers_cpu, idle_cpus });
    }
}

impl EventSink for StatsSink {
    fn event(&mut self, e: &Event) {
        if self.over {
            return;
        }
        let t = e.time;
        if let EventKind::Fork { parent, child, .. } = e.kind {
            if self.counts(parent) {
                self.tracked.insert(child);
            }
        }
        let pid = e.kind.pid();
        let ours = self.counts(pid) || matches!(e.kind, EventKind::Switch { prev, .. } if self.counts(prev));
        if ours {
            self.first.get_or_insert(t);
            self.last = t;
            if self.root.is_none() && pid != Pid::IDLE {
                self.tracked.insert(pid);
            }
        }
        match e.kind {
            EventKind::Switch { cpu, prev, prev_state, next } => {
                self.switch(t, cpu, prev, prev_state, next);
                self.over = prev_state == PrevState::Dead && self.root == Some(prev);
            }
            EventKind::Wakeup { waker, wakee, .. } if self.counts(wakee) => self.wakeup(t, waker, wakee),
            _ => {}
        }
    }
}

/// Names the tasks of a live trace that started before it (no `Exec` seen) from
/// `/proc`, the first time a switch shows them, before passing events on.
struct Named<S> {
    inner: S,
    named: HashSet<Pid>,
}

impl<S: EventSink> EventSink for Named<S> {
    fn event(&mut self, e: &Event) {
        match e.kind {
            EventKind::Exec { pid, .. } | EventKind::Fork { child: pid, .. } => {
                self.named.insert(pid);
            }
            EventKind::Switch { next, .. } if next != Pid::IDLE && self.named.insert(next) => {
                if let Some(comm) = schedlab_live::process::comm_of(next.0) {
                    let exec = EventKind::Exec { pid: next, tgid: next, comm, path: String::new() };
                    self.inner.event(&Event { time: e.time, kind: exec });
                }
            }
            _ => {}
        }
        self.inner.event(e);
    }
}

/// A Perfetto trace written to `path`.
fn perfetto(path: &Path, cpus: u32) -> Result<PerfettoTrace<BufWriter<File>>> {
    let file = File::create(path).ctx(|| format!("cannot create {}", path.display()))?;
    PerfettoTrace::new(BufWriter::new(file), cpus).ctx(|| format!("cannot write {}", path.display()))
}

/// Ends a Perfetto trace, with its write errors.
fn finish(trace: PerfettoTrace<BufWriter<File>>, path: &Path) -> Result<()> {
    trace.finish().and_then(|mut w| w.flush()).ctx(|| format!("cannot write {}", path.display()))
}

/// Runs hackbench `p` once here under the observer (root, BPF), killed past `limit`;
/// writes its Perfetto trace (every CPU, every task) to `out` and returns the
/// statistics of hackbench's tasks.
pub fn real(p: &HackbenchParams, cpus: u32, out: &Path, limit: Duration) -> Result<TraceStats> {
    use schedlab_live::observer::{Observer, ObserverOptions, SchedEvents};
    // The reader disturbs the run least when it wakes rarely and does not preempt
    // hackbench's tasks: 4 MiB of the 8 MiB ring per wake-up, at the workers' nice.
    let options = ObserverOptions {
        syscalls: false,
        syscall_enters: false,
        sched_events: SchedEvents::All,
        wakeup_bytes: 4 << 20,
        reader_nice: None,
        ..ObserverOptions::default()
    };
    let mut observer = Observer::start(options).map_err(ValidateError::ObserverStart)?;
    let cmd = p.command();
    let quiet = super::hackbench::tempfile("trace")?;
    let mut child =
        crate::child::ChildGroup::spawn(&cmd[0], &cmd[1..], Some(quiet), crate::child::Placement::Inherited)?;
    let mut stats = StatsSink::new(Some(Pid(child.pid() as u32)));
    let mut trace = Named { inner: perfetto(out, cpus)?, named: HashSet::new() };
    let deadline = Instant::now() + limit;
    let line = cmd.join(" ");
    loop {
        observer.poll(&mut (&mut stats, &mut trace), Duration::from_millis(200))?;
        if let Some(exit) = child.try_wait()? {
            // What the kernel recorded up to the exit.
            observer.poll(&mut (&mut stats, &mut trace), Duration::ZERO)?;
            if !exit.success() {
                let output = exit.describe();
                return Err(child.error(&line, crate::bench::ChildProblem::ExitedSaying { exit, output }));
            }
            break;
        }
        if Instant::now() > deadline {
            return Err(child.error(&line, crate::bench::ChildProblem::Silent));
        }
    }
    if observer.lost_events()? > 0 {
        let output = format!("{} events lost", observer.lost_events()?);
        return Err(ValidateError::output(
            "the observer",
            OutputProblem::Lacks { thing: "every event", output },
        ));
    }
    finish(trace.inner, out)?;
    Ok(stats.stats())
}

/// Simulates `p` (its [`HackbenchParams::sim_spec`]) under `config`, writes the
/// Perfetto trace to `out` and returns the statistics of its tasks.
pub fn simulated(p: &HackbenchParams, config: &SimConfig, out: &Path) -> Result<TraceStats> {
    let spec = p.sim_spec();
    let w = schedlab_sim::workloads::load(&spec)?;
    let mut stats = StatsSink::new(None);
    let mut trace = perfetto(out, config.cpus())?;
    schedlab_sim::simulate(&w, config, Some(&mut (&mut stats, &mut trace)))
        .map_err(|source| ValidateError::Simulate { workload: spec, source })?;
    finish(trace, out)?;
    Ok(stats.stats())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(time: Ns, kind: EventKind) -> Event {
        Event { time, kind }
    }

    fn switch(time: Ns, cpu: u32, prev: u32, prev_state: PrevState, next: u32) -> Event {
        at(time, EventKind::Switch { cpu, prev: Pid(prev), prev_state, next: Pid(next) })
    }

    #[test]
    fn the_statistics_count_what_the_events_show() {
        use PrevState::{Blocked, Runnable};
        // Task 1 (the root) forks 2 on CPU 0; 2 runs on CPU 1 from idle, blocks at 30;
        // 1 wakes 2 onto CPU 1 (idle) at 40, it runs at 45; 1 wakes 2 again onto
        // CPU 0 at 60 after 2 blocked at 50, and 2 preempts 1 at 61. Task 9 (not
        // forked by 1) runs on CPU 1 from 70 to 80.
        let events = [
            switch(0, 0, 0, Runnable, 1),
            at(5, EventKind::Fork { parent: Pid(1), child: Pid(2), thread: false }),
            switch(10, 1, 0, Runnable, 2),
            switch(30, 1, 2, Blocked, 0),
            at(40, EventKind::Wakeup { waker: Pid(1), wakee: Pid(2), cpu: 1 }),
            switch(45, 1, 0, Runnable, 2),
            switch(50, 1, 2, Blocked, 0),
            at(60, EventKind::Wakeup { waker: Pid(1), wakee: Pid(2), cpu: 0 }),
            switch(61, 0, 1, Runnable, 2),
            switch(70, 1, 0, Runnable, 9),
            switch(80, 1, 9, Runnable, 0),
            switch(90, 0, 2, Blocked, 1),
            switch(95, 0, 1, PrevState::Dead, 0),
            // The workload is over: nothing after the root's death counts.
            switch(100, 1, 0, Runnable, 9),
            switch(200, 1, 9, Runnable, 0),
        ];
        let mut sink = StatsSink::new(Some(Pid(1)));
        for e in &events {
            sink.event(e);
        }
        let s = sink.stats();
        assert_eq!(s.tasks, 2);
        assert_eq!(s.span_ns, 95);
        assert_eq!((s.voluntary_switches, s.involuntary_switches), (3, 1));
        // Runs: 2 for 20 and 5, 1 for 61, 2 for 29, 1 for 5.
        assert_eq!((s.runs, s.run_ns), (5, 20 + 5 + 61 + 29 + 5));
        assert_eq!(s.wakeups, 2);
        assert_eq!(s.wakeups_on_wakers_cpu, 1, "the second, onto CPU 0 where 1 runs");
        assert_eq!(s.wakeups_to_idle_cpu, 1);
        assert_eq!(s.wakeups_migrating, 1, "2 last ran on CPU 1");
        assert_eq!(s.wakeups_preempting, 1);
        assert_eq!(s.wake_to_run_median_ns, 3, "median of 5 and 1");
        // CPU 1 went idle at 30 and 50 (and 80); idle 30..45 and 50..70 (before 10 it
        // was idle since no one knows when).
        assert_eq!(s.idle_periods, 4, "CPU 0 too, at 95");
        assert_eq!(s.idle_ns, 15 + 20);
        assert_eq!(s.other_ns, 10);
        // Without a root every task counts.
        let mut all = StatsSink::new(None);
        for e in &events {
            all.event(e);
        }
        assert_eq!(all.stats().tasks, 3);
        assert_eq!(all.stats().other_ns, 0, "task 9 is the workload's then");
    }
}

//! rt-tests `hackbench` on this machine: `hackbench -g G -f FDS -l L -s SIZE -p`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::time::Duration;

use schedlab_model::{Event, EventKind, EventSink, Pid, Syscall};
use serde::Serialize;

use crate::bench::{ChildProblem, OutputProblem};
use crate::child::ChildGroup;

use super::{Result, ValidateError};

/// One hackbench run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HackbenchRun {
    /// hackbench's own `Time:`: the message-passing phase, after the workers are
    /// forked and ready.
    pub time_ns: u64,
    /// The whole process, fork and setup included.
    pub wall_ns: u64,
    /// CPU time of hackbench and all its workers.
    pub cpu_ns: u64,
    /// Voluntary context switches of hackbench and all its workers (it reaps them, so
    /// `wait4`'s usage includes theirs).
    pub nvcsw: u64,
    /// Involuntary context switches, likewise.
    pub nivcsw: u64,
}

/// hackbench's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HackbenchParams {
    pub groups: u32,
    pub fds: u32,
    pub loops: u32,
    pub size: u32,
    /// The kernel puts each session in a task group of its own
    /// ([`autogroups_enabled`]): hackbench runs in one, this program's.
    pub autogroup: bool,
}

impl HackbenchParams {
    /// The command line, program first.
    pub fn command(&self) -> Vec<String> {
        let HackbenchParams { groups, fds, loops, size, .. } = *self;
        ["hackbench", "-g", &groups.to_string(), "-f", &fds.to_string(), "-l", &loops.to_string()]
            .into_iter()
            .chain(["-s", &size.to_string(), "-p"])
            .map(str::to_string)
            .collect()
    }

    /// The simulator's workload spec for the same run: hackbench's whole process, its
    /// parent included, so that [`SimulatedTime`] can time it as hackbench does, and in
    /// one autogroup when the kernel makes them.
    pub fn sim_spec(&self) -> String {
        let HackbenchParams { groups, fds, loops, size, autogroup } = *self;
        let session = if autogroup { ",session=yes" } else { "" };
        format!("hackbench:groups={groups},fds={fds},loops={loops},size={size},ipc=pipe,mode=process,parent=yes{session}")
    }
}

/// Whether the kernel gives every session a task group of its own
/// (`/proc/sys/kernel/sched_autogroup_enabled` is 1; absent without
/// CONFIG_SCHED_AUTOGROUP).
pub fn autogroups_enabled() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled").is_ok_and(|s| s.trim() == "1")
}

/// hackbench's `Time:` in a simulated run of [`HackbenchParams::sim_spec`], measured
/// between the events that match hackbench's two `gettimeofday` calls: from the parent's
/// start byte (its only `write`) to the return of its last `wait4`. The parent is pid 1,
/// the workload's only task at the start.
#[derive(Debug, Default)]
pub struct SimulatedTime {
    start: Option<u64>,
    end: Option<u64>,
}

impl SimulatedTime {
    /// The span, once both ends were seen.
    pub fn ns(&self) -> Option<u64> {
        Some(self.end?.saturating_sub(self.start?))
    }
}

impl EventSink for SimulatedTime {
    fn event(&mut self, e: &Event) {
        const PARENT: Pid = Pid(1);
        match e.kind {
            EventKind::SyscallEnter { pid: PARENT, nr, .. } if nr == Syscall::Write.nr() => {
                self.start.get_or_insert(e.time);
            }
            EventKind::SyscallExit { pid: PARENT, nr, .. } if nr == Syscall::Wait4.nr() => {
                self.end = Some(e.time);
            }
            _ => {}
        }
    }
}

/// hackbench's `Time: S` line, in nanoseconds.
pub fn parse_time(output: &str) -> Option<u64> {
    output.lines().find_map(|l| {
        let s: f64 = l.trim().strip_prefix("Time:")?.trim().parse().ok()?;
        (s.is_finite() && s >= 0.0).then(|| (s * 1e9).round() as u64)
    })
}

/// Runs hackbench once, killed past `limit`.
pub fn run(p: &HackbenchParams, limit: Duration) -> Result<HackbenchRun> {
    let cmd = p.command();
    let mut out = tempfile("hackbench")?;
    let file = out.try_clone().map_err(|e| ValidateError::io("cannot duplicate a file", e))?;
    let line = cmd.join(" ");
    let mut child = ChildGroup::spawn(&cmd[0], &cmd[1..], Some(file), crate::child::Placement::Inherited)?;
    // Nothing to do meanwhile: one tick is the whole limit.
    let exit = child.wait_within(limit, limit, &line, || {})?;
    let mut text = String::new();
    out.seek(SeekFrom::Start(0))
        .and_then(|_| out.read_to_string(&mut text))
        .map_err(|e| ValidateError::io("cannot read hackbench's output", e))?;
    let output = text.trim().to_string();
    if !exit.success() {
        return Err(child.error(&line, ChildProblem::ExitedSaying { exit, output }));
    }
    let time_ns = parse_time(&text)
        .ok_or_else(|| ValidateError::output(line, OutputProblem::Lacks { thing: "'Time:' line", output }))?;
    Ok(HackbenchRun {
        time_ns,
        wall_ns: exit.wall_ns,
        cpu_ns: exit.cpu_ns(),
        nvcsw: exit.nvcsw,
        nivcsw: exit.nivcsw,
    })
}

/// The machine's CPU time since boot from `/proc/stat`'s `cpu` line, in nanoseconds
/// (at the clock tick's resolution, usually 10 ms): (busy, total), busy being user,
/// nice, system, irq, softirq and steal, total adding idle and iowait.
pub fn cpu_time_ns() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let hz = schedlab_live::process::clock_ticks_per_s();
    let (busy, total) = parse_cpu_line(text.lines().next()?)?;
    Some((busy * 1_000_000_000 / hz, total * 1_000_000_000 / hz))
}

/// Busy and total ticks of a `/proc/stat` `cpu` line.
fn parse_cpu_line(line: &str) -> Option<(u64, u64)> {
    let mut words = line.split_whitespace();
    if words.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = words.take(8).map(|w| w.parse().ok()).collect::<Option<_>>()?;
    let [user, nice, system, idle, iowait, irq, softirq, steal] = v[..] else { return None };
    let busy = user + nice + system + irq + softirq + steal;
    Some((busy, busy + idle + iowait))
}

/// How much of the machine other processes used while ours ran: the busy time between
/// two [`cpu_time_ns`] samples less `ours_ns`, as a fraction of the total, 0..=1.
pub fn other_load(before: (u64, u64), after: (u64, u64), ours_ns: u64) -> Option<f64> {
    let busy = after.0.checked_sub(before.0)?;
    let total = after.1.checked_sub(before.1)?;
    (total > 0).then(|| (busy.saturating_sub(ours_ns) as f64 / total as f64).clamp(0.0, 1.0))
}

/// An anonymous file (unlinked at once) for a child's output, read back from the start.
pub(crate) fn tempfile(what: &str) -> Result<File> {
    let dir = std::env::temp_dir();
    let path = dir.join(format!(
        "schedlab-validate-{what}-{}-{:?}.out",
        std::process::id(),
        std::thread::current().id()
    ));
    let f = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(|e| ValidateError::io(format!("cannot create {}", path.display()), e))?;
    let _ = std::fs::remove_file(&path);
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulated_time_spans_the_start_byte_to_the_last_reap() {
        let p = HackbenchParams { groups: 1, fds: 2, loops: 5, size: 100, autogroup: true };
        let w = schedlab_sim::workloads::load(&p.sim_spec()).unwrap();
        let mut config = schedlab_sim::SimConfig::new(2, schedlab_sim::FairFlavor::Eevdf);
        config.tunables.set("fork_ns", "100us").unwrap();
        config.tunables.set("exit_ns", "50us").unwrap();
        let mut events = Vec::new();
        let mut time = SimulatedTime::default();
        let r = schedlab_sim::simulate(&w, &config, Some(&mut (&mut time, &mut events))).unwrap();
        let write = events
            .iter()
            .find(|e| matches!(e.kind, EventKind::SyscallEnter { pid: Pid(1), nr: 1, .. }))
            .unwrap();
        assert!(write.time >= 4 * 100_000, "the four forks come first: {}", write.time);
        let ns = time.ns().unwrap();
        // It ends at the last reap, before the parent's own exit (50 µs).
        assert_eq!(write.time + ns + 50_000, r.makespan_ns);
        assert_eq!(SimulatedTime::default().ns(), None);
    }

    #[test]
    fn the_time_line_is_read() {
        let out = "Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)\n\
                   Each sender will pass 100 messages of 100 bytes\nTime: 0.226\n";
        assert_eq!(parse_time(out), Some(226_000_000));
        assert_eq!(parse_time("Time: soon"), None);
        assert_eq!(parse_time(""), None);
    }

    #[test]
    fn other_load_is_the_busy_time_not_ours() {
        let line = "cpu  100 10 50 800 5 3 2 30 0 0";
        assert_eq!(parse_cpu_line(line), Some((195, 1000)));
        assert_eq!(parse_cpu_line("cpu0 1 2 3 4 5 6 7 8"), None);
        assert!(cpu_time_ns().is_some_and(|(busy, total)| busy <= total));
        // 2 CPUs for 1 s: 2 s in all, 1.5 s busy of which 0.5 s ours: half the machine.
        let f = other_load((0, 0), (1_500_000_000, 2_000_000_000), 500_000_000).unwrap();
        assert!((f - 0.5).abs() < 1e-12, "{f}");
        assert_eq!(other_load((0, 0), (100, 1_000), 500), Some(0.0), "never negative");
        assert_eq!(other_load((10, 10), (5, 20), 0), None);
    }

    #[test]
    fn command_and_spec_match() {
        let p = HackbenchParams { groups: 3, fds: 20, loops: 50, size: 100, autogroup: false };
        assert_eq!(p.command().join(" "), "hackbench -g 3 -f 20 -l 50 -s 100 -p");
        assert_eq!(
            p.sim_spec(),
            "hackbench:groups=3,fds=20,loops=50,size=100,ipc=pipe,mode=process,parent=yes"
        );
    }
}

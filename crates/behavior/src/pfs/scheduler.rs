//! The logger and the process controller together, driven by the event stream.

use std::collections::HashMap;

use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, PrevState, SliceLayer};

use crate::pfs::{Controller, Decision, Log, LogState, PfsParams, PfsStore};

/// The most state changes kept for one process without a PFS; past this it gets none
/// (16 bytes each: 320 KB).
pub const MAX_LOG_ENTRIES: usize = 20_000;
/// The most processes logged at once (for programs without a PFS yet); one more
/// starts without a log, so a daemon's logs stay within `MAX_LOGS × MAX_LOG_ENTRIES`.
pub const MAX_LOGS: usize = 1024;
/// The most programs with a PFS kept.
pub const MAX_PROGRAMS: usize = 4096;

/// PFS for a whole machine: processes of programs without a PFS are logged and get one
/// when they exit; processes of programs with one are scheduled by the controller,
/// whose adjustments update the store, so the knowledge adapts run after run.
///
/// A program is known by its executable path (the `Exec` event), else its comm.
#[derive(Clone, Debug, Default)]
pub struct PfsScheduler {
    pub store: PfsStore,
    pub controller: Controller,
    /// Program of each live process.
    program: HashMap<u32, String>,
    /// Logs of processes whose program had no PFS when they started.
    logs: HashMap<u32, Log>,
    /// The time of each CPU's last switch (see [`Log::left_cpu`]).
    cpu_switched: HashMap<u32, Ns>,
}

impl PfsScheduler {
    pub fn new(params: PfsParams, store: PfsStore) -> Self {
        PfsScheduler { store, controller: Controller::new(params), ..Self::default() }
    }

    /// The end of `pid`'s time slice at `now`: true when it should keep the CPU.
    pub fn keep_running(&mut self, pid: Pid, now: Ns) -> bool {
        self.controller.slice_end(pid.0, now) == Decision::Continue
    }

    fn started(&mut self, pid: u32, program: String, now: Ns) {
        self.logs.remove(&pid);
        if self.store.get(&program).is_some() {
            self.controller.created(pid, &program, &self.store);
        } else if self.logs.len() < MAX_LOGS {
            let mut log = Log::default();
            log.record(now, LogState::Ready);
            self.logs.insert(pid, log);
        }
        self.program.insert(pid, program);
    }

    /// Keeps the programs known below [`MAX_PROGRAMS`] before one more is added: any
    /// user can run programs under as many paths as they like. A program no live
    /// process runs goes first.
    fn make_room(&mut self) {
        if self.store.programs.len() < MAX_PROGRAMS {
            return;
        }
        let running: std::collections::HashSet<&String> = self.program.values().collect();
        let idle = self.store.programs.keys().find(|p| !running.contains(p)).cloned();
        if let Some(p) = idle.or_else(|| self.store.programs.keys().next().cloned()) {
            self.store.programs.remove(&p);
        }
    }

    /// Logs `state` for `pid` from `now`; a state off the CPU, as [`Log::left_cpu`]
    /// with the CPU's last switch at `cpu_since`.
    fn log(&mut self, pid: u32, now: Ns, state: LogState, cpu_since: Ns) {
        if let Some(log) = self.logs.get_mut(&pid) {
            match state {
                LogState::Run => log.record(now, state),
                LogState::Ready | LogState::Wait => log.left_cpu(now, state, cpu_since),
            }
            if log.entries.len() > MAX_LOG_ENTRIES {
                // A long-lived process: its flow would be too long to predict anything
                // from, and the log would grow without end in a daemon.
                self.logs.remove(&pid);
            }
        }
    }
}

/// PFS is the simulator's slice layer: its decision at a slice end.
impl SliceLayer for PfsScheduler {
    fn keep_running(&mut self, pid: Pid, now: Ns) -> bool {
        PfsScheduler::keep_running(self, pid, now)
    }
}

impl EventSink for PfsScheduler {
    fn event(&mut self, e: &Event) {
        let now = e.time;
        match &e.kind {
            EventKind::Exec { pid, comm, path, .. } => {
                let program = if path.is_empty() { comm.clone() } else { path.clone() };
                self.started(pid.0, program, now);
            }
            EventKind::Fork { parent, child, .. } => {
                // Until it execs, a child runs its parent's program.
                if let Some(p) = self.program.get(&parent.0).cloned() {
                    self.started(child.0, p, now);
                }
            }
            EventKind::Switch { cpu, prev, prev_state, next } => {
                let cpu_since = self.cpu_switched.insert(*cpu, now).unwrap_or(now);
                if *prev != Pid::IDLE {
                    match prev_state {
                        PrevState::Runnable => {
                            self.controller.preempted(prev.0, now);
                            self.log(prev.0, now, LogState::Ready, cpu_since);
                        }
                        PrevState::Blocked => {
                            self.controller.blocked(prev.0, now, &mut self.store);
                            self.log(prev.0, now, LogState::Wait, cpu_since);
                        }
                        PrevState::Dead => {}
                    }
                }
                if *next != Pid::IDLE {
                    self.controller.dispatched(next.0, now);
                    self.log(next.0, now, LogState::Run, now);
                }
            }
            EventKind::Exit { pid, .. } => {
                self.controller.terminated(pid.0, now, &mut self.store);
                let program = self.program.remove(&pid.0);
                if let (Some(log), Some(program)) = (self.logs.remove(&pid.0), program) {
                    self.make_room();
                    self.store.insert_new(log.to_pfs(&program, now));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    fn ev(time: Ns, kind: EventKind) -> Event {
        Event { time, kind }
    }

    fn switch(prev: u32, state: PrevState, next: u32) -> EventKind {
        EventKind::Switch { cpu: 0, prev: Pid(prev), prev_state: state, next: Pid(next) }
    }

    fn exec(pid: u32) -> EventKind {
        EventKind::Exec { pid: Pid(pid), tgid: Pid(pid), comm: "t".into(), path: "/bin/t".into() }
    }

    /// A run of program /bin/t: 30 ms (preempted at 10 ms for 5 ms), wait 100 ms, 20 ms.
    fn one_run(s: &mut PfsScheduler, pid: u32, t0: Ns) {
        for e in [
            ev(t0, exec(pid)),
            ev(t0, switch(0, PrevState::Runnable, pid)),
            ev(t0 + 10 * MS, switch(pid, PrevState::Runnable, 99)),
            ev(t0 + 15 * MS, switch(99, PrevState::Runnable, pid)),
            ev(t0 + 35 * MS, switch(pid, PrevState::Blocked, 0)),
            ev(t0 + 135 * MS, switch(0, PrevState::Runnable, pid)),
            ev(t0 + 155 * MS, EventKind::Exit { pid: Pid(pid), code: 0, life: None }),
            ev(t0 + 155 * MS, switch(pid, PrevState::Dead, 0)),
        ] {
            s.event(&e);
        }
    }

    #[test]
    fn first_run_logs_and_creates_the_pfs_later_runs_use_it() {
        let mut s = PfsScheduler::new(PfsParams::default(), PfsStore::default());
        one_run(&mut s, 1, 0);
        let pfs = s.store.get("/bin/t").expect("created at exit");
        assert_eq!(pfs.bursts().collect::<Vec<_>>(), vec![30 * MS, 20 * MS]);
        assert_eq!(pfs.entries[1].time_ns, 100 * MS);
        // Second run: the controller schedules it; predictions are exact, nothing adapts.
        s.event(&ev(1000 * MS, exec(2)));
        assert!(s.controller.info(2).is_some());
        s.event(&ev(1000 * MS, switch(0, PrevState::Runnable, 2)));
        assert!(s.keep_running(Pid(2), 1015 * MS), "15 ms left ≤ T_m 20 ms");
        s.event(&ev(1030 * MS, switch(2, PrevState::Blocked, 0)));
        assert_eq!(s.store.get("/bin/t").unwrap().bursts().next(), Some(30 * MS));
    }

    #[test]
    fn a_switch_in_the_kernel_did_not_report_is_logged_from_the_cpus_last_switch() {
        let mut s = PfsScheduler::new(PfsParams::default(), PfsStore::default());
        // As one_run, but the switch 99 → 1 at 15 ms is not reported (the kernel reports
        // no switch out of 99): 1 is logged to run again from the CPU's last switch, at
        // 10 ms, and its first burst is 35 ms, not 10.
        for e in [
            ev(0, exec(1)),
            ev(0, switch(0, PrevState::Runnable, 1)),
            ev(10 * MS, switch(1, PrevState::Runnable, 99)),
            ev(35 * MS, switch(1, PrevState::Blocked, 0)),
            ev(135 * MS, switch(0, PrevState::Runnable, 1)),
            ev(155 * MS, EventKind::Exit { pid: Pid(1), code: 0, life: None }),
            ev(155 * MS, switch(1, PrevState::Dead, 0)),
        ] {
            s.event(&e);
        }
        let pfs = s.store.get("/bin/t").expect("created at exit");
        assert_eq!(pfs.bursts().collect::<Vec<_>>(), vec![35 * MS, 20 * MS]);
    }

    #[test]
    fn the_programs_and_logs_kept_are_bounded() {
        let mut s = PfsScheduler::new(PfsParams::default(), PfsStore::default());
        one_run(&mut s, 1, 0);
        let pfs = s.store.get("/bin/t").unwrap().clone();
        for i in 1..MAX_PROGRAMS {
            s.store.insert_new(crate::pfs::Pfs { program: format!("/x/{i}"), ..pfs.clone() });
        }
        s.store.programs.remove("/bin/t");
        assert_eq!(s.store.programs.len(), MAX_PROGRAMS - 1);
        s.store.insert_new(crate::pfs::Pfs { program: "/x/0".into(), ..pfs.clone() });
        // Full: the next program's PFS takes the place of one no process runs.
        one_run(&mut s, 2, 0);
        assert_eq!(s.store.programs.len(), MAX_PROGRAMS);
        assert!(s.store.get("/bin/t").is_some());
        // Past MAX_LOGS processes of programs without a PFS, a new one is not logged.
        for pid in 0..MAX_LOGS as u32 + 5 {
            let exec = EventKind::Exec {
                pid: Pid(100 + pid),
                tgid: Pid(100 + pid),
                comm: "n".into(),
                path: "/new".into(),
            };
            s.event(&ev(0, exec));
        }
        assert_eq!(s.logs.len(), MAX_LOGS);
    }
}

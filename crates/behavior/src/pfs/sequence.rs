//! The logger's data: a process's log of run/ready/wait states and the PFS made from it
//! (paper 001, sections 3.1 and 4.1).

use schedlab_model::Ns;
use serde::{Deserialize, Serialize};

/// The state a log entry records, from the entry's time on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogState {
    Run,
    Ready,
    Wait,
}

/// One process's log: its state changes at each dispatch, in time order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Log {
    pub entries: Vec<(Ns, LogState)>,
}

impl Log {
    /// Records that the process is in `state` from `time` on.
    pub fn record(&mut self, time: Ns, state: LogState) {
        self.entries.push((time, state));
    }

    /// Records that the process left the CPU at `time` for `state` (ready or wait);
    /// `cpu_since` is the time of that CPU's switch before this one. A log that does not
    /// have the process running missed its switch in: the kernel of some machines reports
    /// no switch out of a few tasks (seen here: a sandbox agent's threads, in ftrace
    /// too), and so none from them back to the task they had preempted. It ran since that
    /// CPU's last switch at the earliest, and is logged to run from then.
    pub fn left_cpu(&mut self, time: Ns, state: LogState, cpu_since: Ns) {
        if let Some(&(last, s)) = self.entries.last() {
            if s != LogState::Run {
                self.record(cpu_since.max(last).min(time), LogState::Run);
            }
        }
        self.record(time, state);
    }

    /// The PFS of this log, the process having ended at `end`: consecutive run↔ready
    /// entries merge into one run entry whose `T_p` is the sum of the run times (the
    /// paper's `T_p = {C₂(ready) − C₁(run)} + … + {C_{n+2}(wait) − C_{n+1}(run)}`); ready
    /// time is dropped, since it depends on the load, not the program; a wait entry keeps
    /// its time.
    pub fn to_pfs(&self, program: &str, end: Ns) -> Pfs {
        let mut entries = Vec::new();
        let mut run = 0;
        let mut in_burst = false;
        for (i, &(t, state)) in self.entries.iter().enumerate() {
            let until = self.entries.get(i + 1).map_or(end, |&(n, _)| n);
            let span = until.saturating_sub(t);
            match state {
                LogState::Run => {
                    run += span;
                    in_burst = true;
                }
                LogState::Ready => {}
                LogState::Wait => {
                    if in_burst {
                        entries.push(PfsEntry { state: PfsState::Run, time_ns: run });
                        run = 0;
                        in_burst = false;
                    }
                    entries.push(PfsEntry { state: PfsState::Wait, time_ns: span });
                }
            }
        }
        if in_burst {
            entries.push(PfsEntry { state: PfsState::Run, time_ns: run });
        }
        Pfs { program: program.to_string(), entries }
    }
}

/// A PFS entry's state: a CPU burst, or a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PfsState {
    Run,
    Wait,
}

/// One entry: a burst of `time_ns` CPU time (`T_p`) or a wait of that length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PfsEntry {
    pub state: PfsState,
    pub time_ns: Ns,
}

/// A program's flow sequence, named by the program (its path, else its comm).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pfs {
    pub program: String,
    pub entries: Vec<PfsEntry>,
}

impl Pfs {
    /// The index of the first run entry at or after `from`.
    pub fn run_entry_from(&self, from: usize) -> Option<usize> {
        (from..self.entries.len()).find(|&i| self.entries[i].state == PfsState::Run)
    }

    /// The CPU bursts, in order.
    pub fn bursts(&self) -> impl Iterator<Item = Ns> + '_ {
        self.entries.iter().filter(|e| e.state == PfsState::Run).map(|e| e.time_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LogState::*;

    #[test]
    fn run_and_ready_merge_and_waits_keep_their_time() {
        // run 0–100, ready 100–300, run 300–350, wait 350–1350, run 1350–1400, ready,
        // run 1500–1510, end.
        let log = Log {
            entries: vec![
                (0, Run),
                (100, Ready),
                (300, Run),
                (350, Wait),
                (1350, Run),
                (1400, Ready),
                (1500, Run),
            ],
        };
        let pfs = log.to_pfs("/bin/t", 1510);
        let got: Vec<(PfsState, Ns)> = pfs.entries.iter().map(|e| (e.state, e.time_ns)).collect();
        assert_eq!(got, vec![(PfsState::Run, 150), (PfsState::Wait, 1000), (PfsState::Run, 60)]);
        assert_eq!(pfs.bursts().collect::<Vec<_>>(), vec![150, 60]);
        assert_eq!(pfs.run_entry_from(1), Some(2));
        assert_eq!(pfs.run_entry_from(3), None);
    }

    #[test]
    fn a_switch_out_of_a_process_not_known_to_run_logs_it_running_since_the_cpus_last_switch() {
        let mut log = Log::default();
        log.record(0, Run);
        // Preempted at 10 by a task whose switch back to it is never reported; the CPU's
        // next reported switch is its own switch out at 30.
        log.left_cpu(10, Ready, 5);
        log.left_cpu(30, Wait, 10);
        assert_eq!(log.entries, vec![(0, Run), (10, Ready), (10, Run), (30, Wait)]);
        assert_eq!(log.to_pfs("p", 40).bursts().collect::<Vec<_>>(), vec![30]);
        // Never before its last known state: woken at 50 (ready), the CPU last switched at 45.
        log.record(50, Ready);
        log.left_cpu(60, Wait, 45);
        assert_eq!(&log.entries[4..], &[(50, Ready), (50, Run), (60, Wait)]);
    }

    #[test]
    fn a_process_that_starts_waiting_has_a_leading_wait() {
        let log = Log { entries: vec![(0, Wait), (10, Run)] };
        let pfs = log.to_pfs("p", 15);
        assert_eq!(pfs.entries[0], PfsEntry { state: PfsState::Wait, time_ns: 10 });
        assert_eq!(pfs.entries[1], PfsEntry { state: PfsState::Run, time_ns: 5 });
    }
}

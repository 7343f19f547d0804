//! Burst-aware slices, live (paper 001's idea acted out through the EEVDF per-task
//! slice): each program's PFS (flow of CPU bursts and waits) is learned from the
//! observed switches; when a process of a program with a PFS blocks, the controller
//! moves to its next burst, and if that burst is predicted to end within the default
//! slice plus `T_m`, the process gets a slice that long (`sched_attr.sched_runtime`,
//! clamped by the kernel to 100 µs–100 ms), so the switch the default slice would force
//! just before the burst ends does not happen. Otherwise it keeps the default slice.
//! Predictions adapt by the paper's x/y rules as bursts end (the controller does that).
//!
//! Decisions, where the paper is about a kernel scheduler and this acts from outside:
//! - The slice is set when the process blocks, for its next burst: EEVDF reads a
//!   task's slice when it is placed at wake-up, so a slice set then covers the whole
//!   burst. (Setting it at the switch-in would only take effect at the next deadline.)
//! - Only single-threaded processes (the thread is the process) are given slices: the
//!   actuator changes whole processes, and a PFS describes one flow.
//! - The slice is changed only when the wanted one differs from the current one by more
//!   than 10 %, to keep the cost at a few calls per second for bursty programs.

use std::collections::HashMap;

use schedlab_behavior::pfs::{PfsParams, PfsScheduler, PfsStore};
use schedlab_model::{Event, EventSink, Ns, Pid};

use super::stats::SliceRow;
use crate::settings::{MAX_SLICE_NS, MIN_SLICE_NS};

/// The most bursts of a flow handed to a scheduler at an exec: a flow is followed from
/// the exec on, and a process past its 256th burst is a long-lived one whose early
/// flow predicts little (past the last, the scheduler's default slice holds).
pub const FLOW_BURSTS: usize = 256;

/// PFS for the live machine, and the slices it asked for.
#[derive(Debug)]
pub struct Slices {
    pfs: PfsScheduler,
    /// The default slice (`sched_getattr` of a task without its own), in ns.
    default_ns: u64,
    /// The slice each process has from schedlab now.
    set: HashMap<u32, SliceRow>,
}

impl Slices {
    /// PFS with `params` over the programs of `store`; `default_ns` is the kernel's
    /// default slice.
    pub fn new(params: PfsParams, store: PfsStore, default_ns: u64) -> Slices {
        Slices { pfs: PfsScheduler::new(params, store), default_ns, set: HashMap::new() }
    }

    /// The PFS of every program, as learned and adapted so far (to save).
    pub fn store(&self) -> &PfsStore {
        &self.pfs.store
    }

    /// The slice process `tgid` has from schedlab, if any.
    pub fn slice_of(&self, tgid: u32) -> Option<&SliceRow> {
        self.set.get(&tgid)
    }

    /// The predicted bursts of `program`'s PFS, up to 20.
    pub fn bursts_of(&self, program: &str) -> Vec<u64> {
        self.pfs.store.get(program).map(|p| p.bursts().take(20).collect()).unwrap_or_default()
    }

    /// After thread `tid` (the whole process) blocked: the slice its next burst should
    /// have, `Some(0)` to go back to the default, `None` to leave it as it is.
    pub fn after_block(&mut self, tid: Pid, program: impl FnOnce() -> String) -> Option<u64> {
        let info = self.pfs.controller.info(tid.0)?;
        let t_m = self.pfs.controller.params.t_m_ns;
        let predicted = info.t_e;
        let wanted = match info.pfs_ptr {
            Some(_) if predicted > self.default_ns as i64 && predicted <= (self.default_ns + t_m) as i64 => {
                (predicted as u64).clamp(MIN_SLICE_NS, MAX_SLICE_NS)
            }
            _ => 0,
        };
        let current = self.set.get(&tid.0).map_or(0, |s| s.slice_ns);
        let differs = if wanted == 0 || current == 0 {
            wanted != current
        } else {
            wanted.abs_diff(current) * 10 > current
        };
        if !differs {
            return None;
        }
        if wanted == 0 {
            self.set.remove(&tid.0);
        } else {
            self.set.insert(
                tid.0,
                SliceRow {
                    slice_ns: wanted,
                    predicted_ns: predicted,
                    program: crate::text::printable(&program()).into_owned(),
                },
            );
        }
        Some(wanted)
    }

    /// The predicted bursts of `program`'s flow from an exec, the first [`FLOW_BURSTS`]:
    /// what a scheduler that follows the flow itself needs.
    pub fn flow_of(&self, program: &str) -> Option<Vec<u64>> {
        let bursts: Vec<u64> = self.pfs.store.get(program)?.bursts().take(FLOW_BURSTS).collect();
        (!bursts.is_empty()).then_some(bursts)
    }

    /// Forgets process `tgid` (exited, or released).
    pub fn forget(&mut self, tgid: u32) {
        self.set.remove(&tgid);
    }

    /// Programs with a PFS.
    pub fn programs(&self) -> usize {
        self.pfs.store.programs.len()
    }
}

impl EventSink for Slices {
    fn event(&mut self, e: &Event) {
        self.pfs.event(e);
    }
}

/// The paper's parameters with the configuration's `T_m`, x and y (timeslot 1 ms).
pub fn params(t_m_ms: u64, x: u32, y: u32) -> PfsParams {
    PfsParams { t_m_ns: t_m_ms * 1_000_000, x_pct: x, y_pct: y, ..PfsParams::default() }
}

/// Nanoseconds in a millisecond, for the callers' conversions.
pub const MS: Ns = 1_000_000;

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_behavior::pfs::{Pfs, PfsEntry, PfsState};
    use schedlab_model::{EventKind, PrevState};

    fn program_with_bursts(bursts_ms: &[u64]) -> PfsStore {
        let mut entries = Vec::new();
        for &b in bursts_ms {
            entries.push(PfsEntry { state: PfsState::Run, time_ns: b * MS });
            entries.push(PfsEntry { state: PfsState::Wait, time_ns: 5 * MS });
        }
        let mut store = PfsStore::default();
        store.insert_new(Pfs { program: "/bin/t".into(), entries });
        store
    }

    fn ev(time: Ns, kind: EventKind) -> Event {
        Event { time, kind }
    }

    #[test]
    fn a_burst_ending_within_slice_plus_tm_gets_that_slice() {
        // Default slice 3 ms, T_m 20 ms: bursts of 10 ms (fits), 40 ms (does not), 2 ms
        // (the default suffices).
        let mut s = Slices::new(params(20, 10, 10), program_with_bursts(&[1, 10, 40, 2]), 3 * MS);
        let p = Pid(7);
        s.event(&ev(0, EventKind::Exec { pid: p, tgid: p, comm: "t".into(), path: "/bin/t".into() }));
        let run_then_block = |s: &mut Slices, at: Ns, ran: Ns| {
            s.event(&ev(
                at,
                EventKind::Switch { cpu: 0, prev: Pid::IDLE, prev_state: PrevState::Runnable, next: p },
            ));
            s.event(&ev(
                at + ran,
                EventKind::Switch { cpu: 0, prev: p, prev_state: PrevState::Blocked, next: Pid::IDLE },
            ));
        };
        run_then_block(&mut s, 0, MS);
        assert_eq!(s.after_block(p, || "/bin/t".into()), Some(10 * MS), "next burst 10 ms");
        assert_eq!(s.slice_of(7).unwrap().predicted_ns, (10 * MS) as i64);
        run_then_block(&mut s, 20 * MS, 10 * MS);
        assert_eq!(s.after_block(p, || "/bin/t".into()), Some(0), "40 ms is past slice + T_m: default");
        run_then_block(&mut s, 50 * MS, 40 * MS);
        assert_eq!(s.after_block(p, || "/bin/t".into()), None, "2 ms: the default already");
    }
}

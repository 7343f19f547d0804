//! The process controller of paper 001 (section 4.2): its four phases, exactly.
//!
//! Per process scheduled by PFS, a *current information table* holds `C_s` (when the
//! process started using the CPU for this portion of CPU), `T_e` (the CPU time it is
//! expected to use from `C_s` until it blocks) and `pfs_ptr` (the PFS run entry of the
//! current burst).
//!
//! Decisions where the paper is vague, all applied consistently:
//! - "Continue using the CPU" grants a new time slice, at the end of which the
//!   controller decides again: the paper's Figure 8(b) has a process allowed to continue
//!   use "100 milliseconds more" before it is dispatched away.
//! - `T_e` is compared with `T_m` in whole timeslots (`T_e` rounded up to the timeslot),
//!   the unit by which switching can be delayed; `T_m` must be a multiple of it.
//! - `C_s ← 0` whenever the process leaves the CPU (the paper sets `C_s ← C_c` when
//!   `T_e < 0` and the process is dispatched away, which would count its ready time as
//!   CPU time at the next slice end); a process preempted other than at its slice end
//!   has its `T_e` reduced by the CPU time it used, as at a slice end.
//! - Past its last PFS run entry a process has no prediction and is time-shared as
//!   usual.
//! - Adjustments truncate towards zero in integer nanoseconds.

use std::collections::HashMap;

use schedlab_model::{Ns, NSEC_PER_MSEC};

use crate::pfs::{Pfs, PfsStore};

/// The controller's parameters, with the paper's defaults (section 5: timeslot 1 ms;
/// Figure 7: `T_m` 20 ms and `x = y = 10 %`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfsParams {
    /// The minimum unit by which a switch can be delayed.
    pub timeslot_ns: Ns,
    /// `T_m`, the maximum dispatch delay time (a multiple of the timeslot).
    pub t_m_ns: Ns,
    /// `x`, the increase scaling factor, in percent.
    pub x_pct: u32,
    /// `y`, the decrease scaling factor, in percent.
    pub y_pct: u32,
}

impl Default for PfsParams {
    fn default() -> Self {
        PfsParams { timeslot_ns: NSEC_PER_MSEC, t_m_ns: 20 * NSEC_PER_MSEC, x_pct: 10, y_pct: 10 }
    }
}

impl PfsParams {
    /// Checks the paper's rule that `T_m` is a multiple of the timeslot.
    pub fn validate(&self) -> Result<(), PfsParamsError> {
        if self.timeslot_ns == 0 {
            return Err(PfsParamsError::ZeroTimeslot);
        }
        if !self.t_m_ns.is_multiple_of(self.timeslot_ns) {
            return Err(PfsParamsError::TmNotMultiple { t_m_ns: self.t_m_ns, timeslot_ns: self.timeslot_ns });
        }
        Ok(())
    }
}

/// Why [`PfsParams::validate`] refused the controller's parameters, with the values at
/// fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PfsParamsError {
    /// The timeslot is 0: switching could never be delayed, and `T_m` is measured in it.
    #[error("the timeslot must be longer than 0")]
    ZeroTimeslot,
    /// `T_m` is not a whole number of timeslots, the paper's rule.
    #[error("T_m ({t_m_ns} ns) must be a multiple of the timeslot ({timeslot_ns} ns)")]
    TmNotMultiple { t_m_ns: Ns, timeslot_ns: Ns },
}

/// What to do when a time slice ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Keep the CPU (rule 1: `0 ≤ T_e ≤ T_m`).
    Continue,
    /// Dispatch the next waiting process (rule 2).
    Dispatch,
}

/// The current information table of one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CurrentInfo {
    /// `C_s`; `None` is the paper's 0 (not on the CPU).
    pub c_s: Option<Ns>,
    /// `T_e`, signed: it goes below zero when the process overruns its prediction.
    pub t_e: i64,
    /// `pfs_ptr`: the index of the current burst's run entry, `None` past the last.
    pub pfs_ptr: Option<usize>,
}

/// The scheduling table: the processes scheduled by PFS and their current information.
#[derive(Clone, Debug, Default)]
pub struct Controller {
    pub params: PfsParams,
    table: HashMap<u32, (String, CurrentInfo)>,
}

impl Controller {
    pub fn new(params: PfsParams) -> Self {
        Controller { params, table: HashMap::new() }
    }

    /// The current information of `pid`, if it is scheduled by PFS.
    pub fn info(&self, pid: u32) -> Option<CurrentInfo> {
        self.table.get(&pid).map(|(_, i)| *i)
    }

    fn t_p(pfs: &Pfs, ptr: Option<usize>) -> i64 {
        ptr.map_or(0, |i| pfs.entries[i].time_ns as i64)
    }

    /// Phase 1, a process is created running `program`: if the program has a PFS, the
    /// process enters the scheduling table with `C_s ← 0`, `pfs_ptr` at the first run
    /// entry and `T_e ← T_p`.
    pub fn created(&mut self, pid: u32, program: &str, store: &PfsStore) {
        let Some(pfs) = store.get(program) else { return };
        let ptr = pfs.run_entry_from(0);
        let info = CurrentInfo { c_s: None, t_e: Self::t_p(pfs, ptr), pfs_ptr: ptr };
        self.table.insert(pid, (program.to_string(), info));
    }

    /// A process changes from ready to run: `C_s ← C_c` if `C_s` is 0.
    pub fn dispatched(&mut self, pid: u32, now: Ns) {
        if let Some((_, info)) = self.table.get_mut(&pid) {
            info.c_s.get_or_insert(now);
        }
    }

    /// Phase 2, the process used up its time slice at `now`: `T_e ← T_e − (C_c − C_s)`;
    /// it continues (and `C_s ← C_c`) when `0 ≤ T_e ≤ T_m`, else the next waiting
    /// process is dispatched (and `C_s ← 0`).
    pub fn slice_end(&mut self, pid: u32, now: Ns) -> Decision {
        let t_m = self.params.t_m_ns as i64;
        let slot = self.params.timeslot_ns as i64;
        let Some((_, info)) = self.table.get_mut(&pid) else { return Decision::Dispatch };
        info.t_e -= (now - info.c_s.unwrap_or(now)) as i64;
        let slots = if info.t_e > 0 { (info.t_e + slot - 1) / slot * slot } else { info.t_e };
        if info.pfs_ptr.is_some() && info.t_e >= 0 && slots <= t_m {
            info.c_s = Some(now);
            Decision::Continue
        } else {
            info.c_s = None;
            Decision::Dispatch
        }
    }

    /// The process left the CPU while still runnable, other than by a slice-end
    /// dispatch: the CPU time it used comes off `T_e`.
    pub fn preempted(&mut self, pid: u32, now: Ns) {
        if let Some((_, info)) = self.table.get_mut(&pid) {
            if let Some(c_s) = info.c_s.take() {
                info.t_e -= (now - c_s) as i64;
            }
        }
    }

    /// Phase 3, the process blocked at `now`: its burst's `T_p` adapts (rules 3–5) and
    /// the table moves to the next run entry.
    pub fn blocked(&mut self, pid: u32, now: Ns, store: &mut PfsStore) {
        let params = self.params;
        let Some((program, info)) = self.table.get_mut(&pid) else { return };
        let Some(pfs) = store.get_mut(program) else { return };
        Self::adjust(params, info, pfs, now);
        info.c_s = None;
        info.pfs_ptr = info.pfs_ptr.and_then(|i| pfs.run_entry_from(i + 1));
        info.t_e = Self::t_p(pfs, info.pfs_ptr);
    }

    /// Phase 4, the process terminated at `now`: its last burst adapts and it leaves
    /// the scheduling table.
    pub fn terminated(&mut self, pid: u32, now: Ns, store: &mut PfsStore) {
        let params = self.params;
        let Some((program, mut info)) = self.table.remove(&pid) else { return };
        if let Some(pfs) = store.get_mut(&program) {
            Self::adjust(params, &mut info, pfs, now);
        }
    }

    /// Rules 3–5 with `r = T_e − (C_c − C_s)`: `T_p ← T_p − r·x/100` when `r < 0` (the
    /// burst was longer than predicted), `T_p ← T_p − r·y/100` when `r > 0`.
    fn adjust(params: PfsParams, info: &mut CurrentInfo, pfs: &mut Pfs, now: Ns) {
        let Some(i) = info.pfs_ptr else { return };
        let r = info.t_e - (now - info.c_s.unwrap_or(now)) as i64;
        let pct = i64::from(if r < 0 { params.x_pct } else { params.y_pct });
        let t_p = &mut pfs.entries[i].time_ns;
        *t_p = (*t_p as i64 - r * pct / 100).max(0) as Ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pfs::{PfsEntry, PfsState};

    const MS: Ns = NSEC_PER_MSEC;

    fn store(bursts: &[Ns]) -> PfsStore {
        let mut entries = Vec::new();
        for &b in bursts {
            entries.push(PfsEntry { state: PfsState::Run, time_ns: b });
            entries.push(PfsEntry { state: PfsState::Wait, time_ns: 1000 * MS });
        }
        let mut s = PfsStore::default();
        s.insert_new(Pfs { program: "t".into(), entries });
        s
    }

    #[test]
    fn phase1_fills_the_table_only_for_known_programs() {
        let s = store(&[310 * MS]);
        let mut c = Controller::new(PfsParams::default());
        c.created(1, "t", &s);
        c.created(2, "unknown", &s);
        assert_eq!(c.info(1), Some(CurrentInfo { c_s: None, t_e: 310 * MS as i64, pfs_ptr: Some(0) }));
        assert_eq!(c.info(2), None);
        assert_eq!(c.slice_end(2, 5), Decision::Dispatch, "no PFS: plain time sharing");
    }

    #[test]
    fn phase2_continues_only_within_t_m() {
        // Figure 8(a): a 310 ms burst, 100 ms slices, T_m 20 ms.
        let s = store(&[310 * MS]);
        let mut c = Controller::new(PfsParams::default());
        c.created(1, "t", &s);
        c.dispatched(1, 0);
        assert_eq!(c.slice_end(1, 100 * MS), Decision::Dispatch); // T_e 210
        assert_eq!(c.info(1).unwrap().c_s, None);
        c.dispatched(1, 150 * MS);
        assert_eq!(c.slice_end(1, 250 * MS), Decision::Dispatch); // T_e 110
        c.dispatched(1, 300 * MS);
        assert_eq!(c.slice_end(1, 400 * MS), Decision::Continue); // T_e 10
        assert_eq!(
            c.info(1).unwrap(),
            CurrentInfo { c_s: Some(400 * MS), t_e: 10 * MS as i64, pfs_ptr: Some(0) }
        );
        // Overrunning: at the next slice end T_e < 0 → dispatched.
        assert_eq!(c.slice_end(1, 500 * MS), Decision::Dispatch);
        assert_eq!(c.info(1).unwrap().t_e, -90 * MS as i64);
    }

    #[test]
    fn t_m_is_compared_in_whole_timeslots() {
        let s = store(&[120_500_000]); // 20.5 ms left after one slice: 21 timeslots
        let mut c = Controller::new(PfsParams::default());
        c.created(1, "t", &s);
        c.dispatched(1, 0);
        assert_eq!(c.slice_end(1, 100 * MS), Decision::Dispatch);
        let mut c = Controller::new(PfsParams { t_m_ns: 21 * MS, ..PfsParams::default() });
        c.created(1, "t", &s);
        c.dispatched(1, 0);
        assert_eq!(c.slice_end(1, 100 * MS), Decision::Continue);
        assert!(PfsParams { t_m_ns: 1_500_000, ..PfsParams::default() }.validate().is_err());
    }

    #[test]
    fn phases_3_and_4_adapt_t_p_by_the_scaling_factors() {
        // Figure 7(a): PFS says 210 ms, the burst takes 310 ms: T_p += 100 ms × x.
        let mut s = store(&[210 * MS, 210 * MS]);
        let mut c = Controller::new(PfsParams { x_pct: 20, y_pct: 30, ..PfsParams::default() });
        c.created(1, "t", &s);
        c.dispatched(1, 0);
        c.slice_end(1, 100 * MS); // dispatched away, T_e 110
        c.dispatched(1, 200 * MS);
        c.slice_end(1, 300 * MS); // T_e 10: continue
        c.blocked(1, 410 * MS, &mut s); // r = 10 − 110 = −100 ms → T_p = 210 + 20
        assert_eq!(s.get("t").unwrap().entries[0].time_ns, 230 * MS);
        assert_eq!(c.info(1).unwrap(), CurrentInfo { c_s: None, t_e: 210 * MS as i64, pfs_ptr: Some(2) });
        // Figure 7(b): the next burst takes 110 ms: T_p −= 100 ms × y, at exit.
        c.dispatched(1, 1410 * MS);
        c.terminated(1, 1520 * MS, &mut s);
        assert_eq!(s.get("t").unwrap().entries[2].time_ns, 180 * MS);
        assert_eq!(c.info(1), None);
    }

    #[test]
    fn exact_prediction_needs_no_adjustment() {
        let mut s = store(&[50 * MS]);
        let mut c = Controller::new(PfsParams::default());
        c.created(1, "t", &s);
        c.dispatched(1, 7);
        c.blocked(1, 7 + 50 * MS, &mut s);
        assert_eq!(s.get("t").unwrap().entries[0].time_ns, 50 * MS);
    }
}

//! Burst-aware slices (paper 001, [`crate::daemon::slices`]): when a process blocks,
//! the slice for its next burst.

use schedlab_model::Pid;

use super::{Change, Core, Machine, State};

impl Core {
    /// Thread `tid` blocked: if it is a whole process (one thread), PFS may want another
    /// slice for its next burst.
    pub(super) fn slice_after_block(&mut self, tid: Pid, m: &mut dyn Machine) {
        let tgid = self.tgid(tid.0, m);
        if tgid != tid.0 || tgid == self.self_pid {
            return;
        }
        let program = || m.program(tid.0).unwrap_or_default();
        let Some(slice) = self.slices.as_mut().and_then(|s| s.after_block(tid, program)) else { return };
        if self.procs.get(&tgid).is_some_and(|p| matches!(p.state, State::Released(_))) {
            return;
        }
        self.ensure_known(tgid, m);
        let why = match slice {
            0 => "PFS: the next burst does not end within slice + T_m; default slice".to_string(),
            ns => format!("PFS: the next burst ends in {:.2} ms, within slice + T_m", ns as f64 / 1e6),
        };
        if self.change(tgid, Change::Slice(slice), &why, m) {
            if slice == 0 {
                self.counters.slices_reset += 1;
            } else {
                self.counters.slices_set += 1;
            }
        }
    }
}

//! Burst-aware slices (paper 001, [`crate::daemon::slices`]): when a process blocks,
//! the slice for its next burst; when it execs a program with a flow, the flow, for an
//! enforcer that follows it itself.

use schedlab_model::Pid;

use super::{Change, Core, Decision, Machine, Outcome, State};

impl Core {
    /// Process `tgid` exec'd `program`: if PFS knows its flow, the enforcer hears it (a
    /// sched_ext scheduler follows it from this exec; the system calls skip it).
    pub(super) fn flow_at_exec(&mut self, tgid: Pid, program: &str, m: &mut dyn Machine) {
        if tgid.0 == self.self_pid {
            return;
        }
        let Some(bursts) = self.slices.as_ref().and_then(|s| s.flow_of(program)) else { return };
        let flow = Decision::Flow { process: tgid, program: program.to_string(), bursts };
        match m.enforce(&flow) {
            Outcome::Made => self.counters.flows += 1,
            Outcome::Failed(e) => {
                self.counters.failed_changes += 1;
                self.note_quietly(Some(tgid.0), format!("handing over the flow of {program} failed: {e}"), m);
            }
            Outcome::Shown | Outcome::Skipped | Outcome::Gone => {}
        }
    }

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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use schedlab_behavior::pfs::{Pfs, PfsEntry, PfsState, PfsStore};
    use schedlab_model::Pid;

    use crate::daemon::core::fake::FakeMachine;
    use crate::daemon::core::Decision;
    use crate::daemon::slices::{params, Slices, MS};

    const CONFIG: &str = "[daemon]\nmodel = false\nboost = false\nslices = true\nmin_age_ms = 0\n";

    #[test]
    fn an_exec_of_a_program_with_a_flow_hands_the_flow_over() {
        let mut m = FakeMachine::new();
        let mut core = m.core(CONFIG, None);
        let run = |ms| PfsEntry { state: PfsState::Run, time_ns: ms * MS };
        let wait = PfsEntry { state: PfsState::Wait, time_ns: 100 * MS };
        let mut store = PfsStore::default();
        store.insert_new(Pfs { program: "/usr/bin/t".into(), entries: vec![run(125), wait, run(75), wait] });
        core.slices = Some(Slices::new(params(40, 10, 10), store, 3 * MS));
        m.spawn(7, "t", Duration::ZERO);
        m.spawn(8, "other", Duration::ZERO);
        let execs = [m.exec(7), m.exec(8)];
        core.events(&execs, &mut m);
        let flows: Vec<Decision> =
            m.take().into_iter().filter(|d| matches!(d, Decision::Flow { .. })).collect();
        assert_eq!(
            flows,
            [Decision::Flow {
                process: Pid(7),
                program: "/usr/bin/t".into(),
                bursts: vec![125 * MS, 75 * MS]
            }],
            "the program without a PFS has no flow"
        );
        assert_eq!(core.stats(&m).flows, 1);
    }
}

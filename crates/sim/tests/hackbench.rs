//! hackbench delivers every message, in both IPC modes and both task modes.

mod common;

use common::*;
use schedlab_model::{EventKind, Syscall};
use schedlab_sim::workloads::hackbench::{Hackbench, Ipc, Mode};
use schedlab_sim::FairFlavor;

#[test]
fn hackbench_delivers_groups_x_fds_x_fds_x_loops_messages() {
    for ipc in [Ipc::Pipe, Ipc::Socket] {
        for mode in [Mode::Process, Mode::Thread] {
            let hb = Hackbench { groups: 2, fds: 4, loops: 10, size: 100, ipc, mode };
            for fair in [FairFlavor::Cfs, FairFlavor::Eevdf, FairFlavor::Timeshare] {
                let (r, ev) = run(&hb.workload(), 2, fair, &[]);
                let read: i64 = ev
                    .iter()
                    .filter_map(|e| match e.kind {
                        EventKind::SyscallExit { nr, ret, .. } if nr == Syscall::Read.nr() && ret > 0 => {
                            Some(ret)
                        }
                        _ => None,
                    })
                    .sum();
                assert_eq!(hb.messages(), 2 * 4 * 4 * 10);
                assert_eq!(read as u64, hb.messages() * 100, "{ipc:?} {mode:?} {fair:?}");
                assert!(r.tasks.iter().all(|t| t.exited), "{ipc:?} {mode:?} {fair:?}: a task never exited");
            }
        }
    }
}

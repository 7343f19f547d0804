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
            for parent in [false, true] {
                let hb =
                    Hackbench { groups: 2, fds: 4, loops: 10, size: 100, ipc, mode, parent, session: false };
                for fair in [FairFlavor::Cfs, FairFlavor::Eevdf, FairFlavor::Timeshare] {
                    let (r, ev) = run(&hb.workload(), 2, fair, &[]);
                    let read: i64 = ev
                        .iter()
                        .filter_map(|e| match e.kind {
                            // The parent's ready bytes are 1-byte reads; messages are 100.
                            EventKind::SyscallExit { nr, ret, .. } if nr == Syscall::Read.nr() && ret > 1 => {
                                Some(ret)
                            }
                            _ => None,
                        })
                        .sum();
                    let case = format!("{ipc:?} {mode:?} {fair:?} parent={parent}");
                    assert_eq!(hb.messages(), 2 * 4 * 4 * 10);
                    assert_eq!(read as u64, hb.messages() * 100, "{case}");
                    assert!(r.tasks.iter().all(|t| t.exited), "{case}: a task never exited");
                    assert_eq!(r.tasks.len(), 16 + usize::from(parent), "{case}");
                }
            }
        }
    }
}

#[test]
fn hackbench_parent_starts_the_workers_together_and_reaps_them_in_fork_order() {
    // 1 group of 2 + 2 workers over pipes, 1 CPU, free costs: the parent (pid 1) forks
    // receivers 2, 3 and senders 4, 5; each says ready and polls; the parent reads the
    // four ready bytes, writes the start byte (one write, waking all four pollers at
    // once), then waits for 2, 3, 4, 5 in that order.
    let hb = Hackbench {
        groups: 1,
        fds: 2,
        loops: 3,
        size: 100,
        ipc: Ipc::Pipe,
        mode: Mode::Process,
        parent: true,
        session: false,
    };
    let sets =
        [("context_switch_ns", "0"), ("syscall_ns", "100"), ("copy_ns_per_kib", "0"), ("migration_ns", "0")];
    let (r, ev) = run(&hb.workload(), 1, FairFlavor::Eevdf, &sets);
    assert!(r.tasks.iter().all(|t| t.exited));
    let forks: Vec<(u32, u32)> = ev
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Fork { parent, child, thread: false } => Some((parent.0, child.0)),
            _ => None,
        })
        .collect();
    assert_eq!(forks, [(1, 2), (1, 3), (1, 4), (1, 5)]);
    let start: Vec<u64> = ev
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::SyscallEnter { pid, nr, .. } if pid.0 == 1 && nr == Syscall::Write.nr() => {
                Some(e.time)
            }
            _ => None,
        })
        .collect();
    assert_eq!(start.len(), 1, "the parent writes once: the start byte");
    let woken: Vec<u32> = ev
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Wakeup { waker, wakee, .. } if waker.0 == 1 && e.time <= start[0] + 100 => {
                Some(wakee.0)
            }
            _ => None,
        })
        .collect();
    assert_eq!(woken.len(), 4, "the start byte wakes every worker: {woken:?}");
    let reaped: Vec<i64> = ev
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::SyscallExit { pid, nr, ret } if pid.0 == 1 && nr == Syscall::Wait4.nr() => Some(ret),
            _ => None,
        })
        .collect();
    assert_eq!(reaped, [2, 3, 4, 5]);
}

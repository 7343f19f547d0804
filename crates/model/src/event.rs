//! The event stream: what happened to which task, when, and on which CPU.

use serde::{Deserialize, Serialize};

use crate::{Cpu, Ns, Pid, Resource};

/// One thing that happened, stamped with its time in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub time: Ns,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// The state a task leaves the CPU in, as `sched_switch`'s `prev_state` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrevState {
    /// Still runnable: preempted, its slice ended, or it yielded (`R`).
    Runnable,
    /// Sleeping, interruptibly or not (`S`, `D`): it waits for something.
    Blocked,
    /// Exited (`Z`, `X`).
    Dead,
}

/// What a task did over its life, as the kernel counts it for every task
/// (`se.sum_exec_runtime`, `sched_info.run_delay`, `nvcsw`, `nivcsw`, `start_time`) and
/// the simulator for its own: carried by the task's [`EventKind::Exit`]. The behavior a
/// program shows from run to run (a compressor runnable all its life, an editor
/// asleep most of it) is learned from these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Life {
    /// Time on a CPU.
    pub runtime_ns: Ns,
    /// Time runnable but waiting for a CPU.
    pub wait_ns: Ns,
    /// From its start (its fork) to its exit.
    pub lived_ns: Ns,
    /// Switches away from it because it blocked (voluntary) and because it was
    /// preempted (involuntary).
    pub nvcsw: u64,
    pub nivcsw: u64,
}

impl Life {
    /// The share of its life it was runnable (running or waiting for a CPU), 0..=1:
    /// near 1 for a CPU-bound task whatever the competition for the CPUs (under it, the
    /// waiting grows as the running shrinks), low for one that mostly sleeps.
    pub fn runnable_share(&self) -> f64 {
        if self.lived_ns == 0 {
            return 0.0;
        }
        ((self.runtime_ns + self.wait_ns) as f64 / self.lived_ns as f64).min(1.0)
    }
}

/// The arguments of a system call that identify what it acts on (the resource a later
/// block is about, or the peer a signal goes to). Raw values as the kernel sees them;
/// `None` where the call has no such argument.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyscallArgs {
    /// A file descriptor (read, write, sendto, recvfrom, flock, close, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fd: Option<i32>,
    /// A System V IPC id (semop, msgsnd, msgrcv).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sysv_id: Option<i32>,
    /// A target process (kill, wait4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_pid: Option<i32>,
    /// The `flock` operation: `LOCK_SH` 1, `LOCK_EX` 2, `LOCK_NB` 4, `LOCK_UN` 8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flock_op: Option<i32>,
    /// A signal number (kill).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// A byte count (read, write, msgsnd) or a semaphore adjustment (semop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// The resource the call acts on, resolved from the fd or id when the observer can
    /// (the simulator always can; live, from `/proc/PID/fd`): the side of a pipe or FIFO
    /// the call uses (`write` true for a write), the socket endpoint of the fd, the
    /// semaphore or queue, the lock kind asked for, or the signal target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<Resource>,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// `pid` (of thread group `tgid`) started running program `path`; `comm` is its
    /// 15-character task name.
    Exec { pid: Pid, tgid: Pid, comm: String, path: String },
    /// `parent` created `child`; `thread` when it shares the parent's address space.
    Fork { parent: Pid, child: Pid, thread: bool },
    /// `pid` exited with `code`, having lived `life` (where the world that saw it knows).
    Exit {
        pid: Pid,
        code: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        life: Option<Life>,
    },
    /// `pid` entered system call `nr` (x86_64 number).
    SyscallEnter { pid: Pid, nr: u32, args: SyscallArgs },
    /// `pid` returned from system call `nr` with `ret` (negative errno on failure).
    SyscallExit { pid: Pid, nr: u32, ret: i64 },
    /// `pid` is about to sleep, waiting for `resource` when that is known (`None` for a
    /// plain timed sleep or an I/O wait). The switch away from it follows.
    Block { pid: Pid, resource: Option<Resource> },
    /// `waker` made `wakee` runnable on `cpu`; `waker` is `Pid::IDLE` for an interrupt
    /// or a timer. In the simulator `cpu` is where the wakee was enqueued; the live
    /// observer records the kernel's `sched_waking`, which fires before the destination
    /// is chosen, so there `cpu` is the wakee's previous CPU (where it runs next shows
    /// in the switches).
    Wakeup { waker: Pid, wakee: Pid, cpu: Cpu },
    /// `cpu` stopped running `prev` (which left in `prev_state`) and started `next`;
    /// either may be `Pid::IDLE`.
    Switch { cpu: Cpu, prev: Pid, prev_state: PrevState, next: Pid },
}

impl EventKind {
    /// The task the event is about (the wakee of a wakeup, the next task of a switch).
    pub fn pid(&self) -> Pid {
        match *self {
            EventKind::Exec { pid, .. }
            | EventKind::Exit { pid, .. }
            | EventKind::SyscallEnter { pid, .. }
            | EventKind::SyscallExit { pid, .. }
            | EventKind::Block { pid, .. } => pid,
            EventKind::Fork { child, .. } => child,
            EventKind::Wakeup { wakee, .. } => wakee,
            EventKind::Switch { next, .. } => next,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_through_json() {
        let events = [
            Event {
                time: 5,
                kind: EventKind::Block {
                    pid: Pid(7),
                    resource: Some(Resource::Pipe { inode: 42, write: false }),
                },
            },
            Event {
                time: 6,
                kind: EventKind::Switch {
                    cpu: 1,
                    prev: Pid(7),
                    prev_state: PrevState::Blocked,
                    next: Pid::IDLE,
                },
            },
            Event {
                time: 9,
                kind: EventKind::SyscallEnter {
                    pid: Pid(3),
                    nr: 73,
                    args: SyscallArgs { fd: Some(4), flock_op: Some(2), ..Default::default() },
                },
            },
        ];
        assert_eq!(
            serde_json::to_string(&events[0]).unwrap(),
            r#"{"time":5,"event":"block","pid":7,"resource":{"kind":"pipe","inode":42,"write":false}}"#
        );
        for e in events {
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), e, "{json}");
        }
    }
}

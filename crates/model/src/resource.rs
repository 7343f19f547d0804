//! What a task waits on: the resource objects of SWAP (paper 004, section 3.2).

use serde::{Deserialize, Serialize};

/// Shared or exclusive `flock(2)`: SWAP keeps one resource object for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlockKind {
    Shared,
    Exclusive,
}

/// A resource a task can block on, identified as the kernel identifies it.
///
/// Pipes, FIFOs and sockets are named by inode (`pipe:[N]` in `/proc/PID/fd`); the
/// direction says which side of the object a blocked task waits for, because SWAP keeps
/// separate read and write objects for a pipe and one object per socket endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resource {
    /// A socket endpoint; `inode` is the endpoint's own inode, so the two ends of a
    /// socket pair are two resources.
    Socket { inode: u64 },
    /// An anonymous pipe; `write` is true for the writing side (waiting for space).
    Pipe { inode: u64, write: bool },
    /// A named pipe; `write` as for [`Resource::Pipe`].
    Fifo { inode: u64, write: bool },
    /// A System V message queue (`msgget` id).
    SysvMsg { id: i32 },
    /// A System V semaphore set (`semget` id) and the semaphore number in it.
    SysvSem { id: i32, num: u16 },
    /// A `flock` on a file (inode), shared or exclusive.
    Flock { inode: u64, lock: FlockKind },
    /// Signals delivered to `pid` (pause, sigsuspend, sigtimedwait, or wait for a child).
    Signal { pid: u32 },
}

impl Resource {
    /// The kind as a short lowercase word (`socket`, `pipe`, `fifo`, `sysv_msg`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Resource::Socket { .. } => "socket",
            Resource::Pipe { .. } => "pipe",
            Resource::Fifo { .. } => "fifo",
            Resource::SysvMsg { .. } => "sysv_msg",
            Resource::SysvSem { .. } => "sysv_sem",
            Resource::Flock { .. } => "flock",
            Resource::Signal { .. } => "signal",
        }
    }
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |write: bool| if write { "w" } else { "r" };
        match *self {
            Resource::Socket { inode } => write!(f, "socket:[{inode}]"),
            Resource::Pipe { inode, write } => write!(f, "pipe:[{inode}]/{}", side(write)),
            Resource::Fifo { inode, write } => write!(f, "fifo:[{inode}]/{}", side(write)),
            Resource::SysvMsg { id } => write!(f, "msg:{id}"),
            Resource::SysvSem { id, num } => write!(f, "sem:{id}.{num}"),
            Resource::Flock { inode, lock } => {
                let l = if lock == FlockKind::Shared { "sh" } else { "ex" };
                write!(f, "flock:[{inode}]/{l}")
            }
            Resource::Signal { pid } => write!(f, "signal:{pid}"),
        }
    }
}

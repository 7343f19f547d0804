//! IPC objects with POSIX blocking semantics and finite buffers. The functions here
//! only change the objects and say whom to wake; the engine does the waking.

use std::collections::VecDeque;

use schedlab_model::{FlockKind, Resource};

use crate::config::Tunables;
use crate::program::FlockOp;
use crate::workload::{End, FdTarget, ObjectSpec};

/// Atomic write size of a pipe (`PIPE_BUF`): smaller writes are never split.
pub(crate) const PIPE_BUF: u32 = 4096;

/// What kind of byte stream an object is, for the resource ids of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamKind {
    Pipe,
    Fifo,
    Socket,
}

/// One direction of a pipe, FIFO or socket pair: a bounded byte buffer.
#[derive(Clone, Debug)]
pub(crate) struct Stream {
    pub buffered: u32,
    pub capacity: u32,
    /// Open read and write ends (fds of live tasks).
    pub readers: u32,
    pub writers: u32,
    pub read_waiters: VecDeque<u32>,
    pub write_waiters: VecDeque<u32>,
    /// Tasks in `poll()` for input: woken together by every write (they are not
    /// exclusive waiters), and when the last writer goes, the latest first
    /// (`add_wait_queue` puts each at the head of the wait queue).
    pub pollers: Vec<u32>,
}

impl Stream {
    fn new(capacity: u32) -> Self {
        Stream {
            buffered: 0,
            capacity,
            readers: 0,
            writers: 0,
            read_waiters: VecDeque::new(),
            write_waiters: VecDeque::new(),
            pollers: Vec::new(),
        }
    }
}

/// A `msgsnd` blocked for room, with its message size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingSend {
    pub pid: u32,
    pub bytes: u32,
}

/// A `semop` blocked until it can complete.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingSemop {
    pub pid: u32,
    pub num: u16,
    pub delta: i16,
}

/// A simulated kernel object.
#[derive(Clone, Debug)]
pub(crate) enum Object {
    /// Pipes and FIFOs use `streams[0]`; a socket pair sends A→B on `streams[0]` and
    /// B→A on `streams[1]`.
    Streams {
        kind: StreamKind,
        streams: Vec<Stream>,
        inode: u64,
    },
    SemSet {
        values: Vec<i32>,
        waiters: Vec<PendingSemop>,
    },
    MsgQueue {
        messages: VecDeque<u32>,
        bytes: u32,
        max_bytes: u32,
        senders: VecDeque<PendingSend>,
        receivers: VecDeque<u32>,
    },
    File {
        inode: u64,
        shared: Vec<u32>,
        exclusive: Option<u32>,
        waiters: VecDeque<(u32, FlockOp)>,
    },
}

/// Outcome of an attempted operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// Done with this return value.
    Done(i64),
    /// Must block on this resource.
    Block(Resource),
}

const EPIPE: i64 = -32;

impl Object {
    pub fn new(id: u32, spec: &ObjectSpec, t: &Tunables) -> Self {
        let inode = 10_000 + 2 * u64::from(id);
        let streams = |kind, n, cap: Option<u32>, default| Object::Streams {
            kind,
            streams: vec![Stream::new(cap.unwrap_or(default)); n],
            inode,
        };
        match spec {
            ObjectSpec::Pipe { capacity } => streams(StreamKind::Pipe, 1, *capacity, t.pipe_bytes),
            ObjectSpec::Fifo { capacity } => streams(StreamKind::Fifo, 1, *capacity, t.pipe_bytes),
            ObjectSpec::SocketPair { capacity } => streams(StreamKind::Socket, 2, *capacity, t.socket_bytes),
            ObjectSpec::SemSet { values } => Object::SemSet { values: values.clone(), waiters: Vec::new() },
            ObjectSpec::MsgQueue { max_bytes } => Object::MsgQueue {
                messages: VecDeque::new(),
                bytes: 0,
                max_bytes: max_bytes.unwrap_or(t.msgmnb),
                senders: VecDeque::new(),
                receivers: VecDeque::new(),
            },
            ObjectSpec::File => {
                Object::File { inode, shared: Vec::new(), exclusive: None, waiters: VecDeque::new() }
            }
        }
    }

    /// The stream an fd end reads from: a pipe's only one; a socket reads what its peer
    /// sent (A reads stream 1, B reads stream 0).
    fn read_stream(end: End, kind: StreamKind) -> usize {
        usize::from(kind == StreamKind::Socket && end == End::A)
    }

    /// The stream an fd end writes to (socket B writes stream 1).
    fn write_stream(end: End, kind: StreamKind) -> usize {
        usize::from(kind == StreamKind::Socket && end == End::B)
    }

    fn stream_resource(kind: StreamKind, inode: u64, end: End, write: bool) -> Resource {
        match kind {
            StreamKind::Pipe => Resource::Pipe { inode, write },
            StreamKind::Fifo => Resource::Fifo { inode, write },
            StreamKind::Socket => Resource::Socket { inode: inode + u64::from(end == End::B) },
        }
    }

    /// The resource an operation through `end` acts on: `write` picks the side of a
    /// pipe or FIFO, `num` the semaphore of a set, `lock` the kind of a file lock.
    pub fn resource(&self, id: u32, end: End, write: bool, num: u16, lock: FlockKind) -> Resource {
        match self {
            Object::Streams { kind, inode, .. } => Self::stream_resource(*kind, *inode, end, write),
            Object::SemSet { .. } => Resource::SysvSem { id: id as i32, num },
            Object::MsgQueue { .. } => Resource::SysvMsg { id: id as i32 },
            Object::File { inode, .. } => Resource::Flock { inode: *inode, lock },
        }
    }

    /// An fd of a live task opens (`+1`) or closes (`-1`) `end`; returns whom the close
    /// wakes (readers at EOF, writers at a broken pipe).
    pub fn adjust_ends(&mut self, end: End, delta: i32, wake: &mut Vec<u32>) {
        let Object::Streams { kind, streams, .. } = self else { return };
        let kind = *kind;
        let touches_read = matches!(end, End::Read | End::A | End::B);
        let touches_write = matches!(end, End::Write | End::A | End::B);
        if touches_read {
            let s = &mut streams[Self::read_stream(end, kind)];
            s.readers = s.readers.saturating_add_signed(delta);
            if s.readers == 0 {
                wake.extend(s.write_waiters.drain(..));
            }
        }
        if touches_write {
            let s = &mut streams[Self::write_stream(end, kind)];
            s.writers = s.writers.saturating_add_signed(delta);
            if s.writers == 0 {
                wake.extend(s.pollers.drain(..).rev());
                wake.extend(s.read_waiters.drain(..));
            }
        }
    }

    /// `read()` of up to `want` bytes: returns what is buffered, 0 at end of file.
    pub fn read(&mut self, pid: u32, fd: FdTarget, want: u32, wake: &mut Vec<u32>) -> Attempt {
        let Object::Streams { kind, streams, inode } = self else { return Attempt::Done(-22) };
        let s = &mut streams[Self::read_stream(fd.end, *kind)];
        if s.buffered == 0 {
            if s.writers == 0 {
                return Attempt::Done(0);
            }
            s.read_waiters.push_back(pid);
            return Attempt::Block(Self::stream_resource(*kind, *inode, fd.end, false));
        }
        let n = want.min(s.buffered);
        s.buffered -= n;
        // Pipes wake one exclusive waiter per event, sockets every waiter.
        match kind {
            StreamKind::Socket => wake.extend(s.write_waiters.drain(..)),
            _ => wake.extend(s.write_waiters.pop_front()),
        }
        if s.buffered > 0 && *kind != StreamKind::Socket {
            wake.extend(s.read_waiters.pop_front());
        }
        Attempt::Done(i64::from(n))
    }

    /// `poll()` for input through `fd`: 1 when data is buffered or every writer has
    /// gone (`POLLIN`, `POLLHUP`), else the poller waits.
    pub fn poll_in(&mut self, pid: u32, fd: FdTarget) -> Attempt {
        let Object::Streams { kind, streams, inode } = self else { return Attempt::Done(1) };
        let s = &mut streams[Self::read_stream(fd.end, *kind)];
        if s.buffered > 0 || s.writers == 0 {
            return Attempt::Done(1);
        }
        s.pollers.push(pid);
        Attempt::Block(Self::stream_resource(*kind, *inode, fd.end, false))
    }

    /// `write()` of `want` bytes of which `done` are written: writes what fits (all of
    /// it at once when `want ≤ PIPE_BUF`) and returns the bytes written this time, or
    /// blocks when nothing fits.
    pub fn write(&mut self, pid: u32, fd: FdTarget, want: u32, done: u32, wake: &mut Vec<u32>) -> Attempt {
        let Object::Streams { kind, streams, inode } = self else { return Attempt::Done(-22) };
        let s = &mut streams[Self::write_stream(fd.end, *kind)];
        if s.readers == 0 {
            return Attempt::Done(EPIPE);
        }
        let left = want - done;
        let space = s.capacity - s.buffered;
        let n = if want <= PIPE_BUF && done == 0 {
            if space >= left {
                left
            } else {
                0
            }
        } else {
            left.min(space)
        };
        if n == 0 {
            s.write_waiters.push_back(pid);
            return Attempt::Block(Self::stream_resource(*kind, *inode, fd.end, true));
        }
        let was_empty = s.buffered == 0;
        s.buffered += n;
        // Pollers wait non-exclusively on the same queue as readers, ahead of them
        // (`add_wait_queue` puts them first), and a polled pipe wakes them at every
        // write (`pipe->poll_usage`).
        wake.extend(s.pollers.drain(..).rev());
        match kind {
            // unix_stream_sendmsg: every send signals the peer's readers.
            StreamKind::Socket => wake.extend(s.read_waiters.drain(..)),
            _ => {
                // pipe_write wakes a reader only when the pipe was empty: a reader that
                // waits while data is buffered is woken by the reader before it
                // (`wake_next_reader`), not by the writer.
                if was_empty {
                    wake.extend(s.read_waiters.pop_front());
                }
                // wake_next_writer: room is left, so the next waiting writer may go on.
                if s.buffered < s.capacity {
                    wake.extend(s.write_waiters.pop_front());
                }
            }
        }
        Attempt::Done(i64::from(n))
    }

    /// `semop()` of one operation; completed waiters are appended to `wake` (their
    /// operations are done for them, as the kernel's `update_queue` does).
    pub fn semop(&mut self, pid: u32, id: i32, num: u16, delta: i16, wake: &mut Vec<u32>) -> Attempt {
        let Object::SemSet { values, waiters } = self else { return Attempt::Done(-22) };
        let Some(v) = values.get_mut(num as usize) else { return Attempt::Done(-27) }; // EFBIG
        if !sem_can(*v, delta) {
            waiters.push(PendingSemop { pid, num, delta });
            return Attempt::Block(Resource::SysvSem { id, num });
        }
        *v += i32::from(delta);
        if delta != 0 {
            // Complete every waiter that now can, in arrival order, until nothing changes.
            while let Some(i) = waiters.iter().position(|w| sem_can(values[w.num as usize], w.delta)) {
                let w = waiters.remove(i);
                values[w.num as usize] += i32::from(w.delta);
                wake.push(w.pid);
            }
        }
        Attempt::Done(0)
    }

    /// `msgsnd()`: when the queue has room for the message (as `do_msgsnd` checks
    /// first), hands it to a waiting receiver or queues it; else blocks. A message larger
    /// than the whole queue is `EINVAL`. A receiver handed a message is appended to
    /// `handed` with its result.
    pub fn msgsnd(&mut self, pid: u32, id: i32, bytes: u32, handed: &mut Vec<(u32, i64)>) -> Attempt {
        let Object::MsgQueue { messages, bytes: used, max_bytes, senders, receivers } = self else {
            return Attempt::Done(-22);
        };
        if bytes > *max_bytes {
            return Attempt::Done(-22);
        }
        if *used + bytes > *max_bytes || messages.len() as u32 >= *max_bytes {
            senders.push_back(PendingSend { pid, bytes });
            return Attempt::Block(Resource::SysvMsg { id });
        }
        if let Some(r) = receivers.pop_front() {
            handed.push((r, i64::from(bytes)));
        } else {
            messages.push_back(bytes);
            *used += bytes;
        }
        Attempt::Done(0)
    }

    /// `msgrcv()` of the oldest message; senders that now fit are completed and
    /// appended to `handed` with result 0.
    pub fn msgrcv(&mut self, pid: u32, id: i32, handed: &mut Vec<(u32, i64)>) -> Attempt {
        let Object::MsgQueue { messages, bytes: used, max_bytes, senders, receivers } = self else {
            return Attempt::Done(-22);
        };
        let Some(m) = messages.pop_front() else {
            receivers.push_back(pid);
            return Attempt::Block(Resource::SysvMsg { id });
        };
        *used -= m;
        while let Some(s) = senders.front().copied() {
            if *used + s.bytes > *max_bytes {
                break;
            }
            senders.pop_front();
            messages.push_back(s.bytes);
            *used += s.bytes;
            handed.push((s.pid, 0));
        }
        Attempt::Done(i64::from(m))
    }

    /// `flock()`: takes, converts or releases `pid`'s lock; waiters granted by a release
    /// are appended to `wake` (their calls are done).
    pub fn flock(&mut self, pid: u32, op: FlockOp, wake: &mut Vec<u32>) -> Attempt {
        let Object::File { inode, shared, exclusive, waiters } = self else { return Attempt::Done(-22) };
        // A conversion first drops the lock the task holds, as flock(2) does.
        shared.retain(|&p| p != pid);
        if *exclusive == Some(pid) {
            *exclusive = None;
        }
        let inode = *inode;
        match op {
            FlockOp::Unlock => {
                grant_flocks(shared, exclusive, waiters, wake);
                Attempt::Done(0)
            }
            _ if flock_compatible(shared, *exclusive, op) => {
                take_flock(shared, exclusive, pid, op);
                grant_flocks(shared, exclusive, waiters, wake);
                Attempt::Done(0)
            }
            _ => {
                waiters.push_back((pid, op));
                let lock = if op == FlockOp::Shared { FlockKind::Shared } else { FlockKind::Exclusive };
                Attempt::Block(Resource::Flock { inode, lock })
            }
        }
    }

    /// Releases every lock `pid` holds (it exited).
    pub fn release_flocks(&mut self, pid: u32, wake: &mut Vec<u32>) {
        if let Object::File { shared, exclusive, waiters, .. } = self {
            let held = shared.contains(&pid) || *exclusive == Some(pid);
            shared.retain(|&p| p != pid);
            if *exclusive == Some(pid) {
                *exclusive = None;
            }
            if held {
                grant_flocks(shared, exclusive, waiters, wake);
            }
        }
    }
}

fn sem_can(value: i32, delta: i16) -> bool {
    match delta {
        0 => value == 0,
        d => value + i32::from(d) >= 0,
    }
}

fn flock_compatible(shared: &[u32], exclusive: Option<u32>, op: FlockOp) -> bool {
    match op {
        FlockOp::Shared => exclusive.is_none(),
        FlockOp::Exclusive => exclusive.is_none() && shared.is_empty(),
        FlockOp::Unlock => true,
    }
}

fn take_flock(shared: &mut Vec<u32>, exclusive: &mut Option<u32>, pid: u32, op: FlockOp) {
    match op {
        FlockOp::Shared => shared.push(pid),
        FlockOp::Exclusive => *exclusive = Some(pid),
        FlockOp::Unlock => {}
    }
}

/// Grants waiting locks in arrival order, each one that is compatible with the locks
/// held by then (the kernel wakes all waiters and lets them retry; granting in order is
/// the outcome of that race when waiters run in the order they slept).
fn grant_flocks(
    shared: &mut Vec<u32>,
    exclusive: &mut Option<u32>,
    waiters: &mut VecDeque<(u32, FlockOp)>,
    wake: &mut Vec<u32>,
) {
    let mut i = 0;
    while i < waiters.len() {
        let (p, op) = waiters[i];
        if flock_compatible(shared, *exclusive, op) {
            take_flock(shared, exclusive, p, op);
            waiters.remove(i);
            wake.push(p);
        } else {
            i += 1;
        }
    }
}

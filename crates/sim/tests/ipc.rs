//! Pipes, sockets, semaphores, message queues, signals and flock block and wake exactly
//! as POSIX says. Every test runs with free system calls, copies, context switches and
//! migrations, so each time below can be worked out by hand from the programs.

mod common;

use common::*;
use schedlab_model::{Event, EventKind, FlockKind, Pid, Resource, Syscall};
use schedlab_sim::{
    End, FairFlavor, FdTarget, FlockOp, ObjectSpec, Op, Program, SignalTarget, TaskSpec, Workload,
};

const MS: u64 = 1_000_000;

/// Every cost but the work the programs ask for is zero.
const EXACT: [(&str, &str); 4] =
    [("context_switch_ns", "0"), ("syscall_ns", "0"), ("copy_ns_per_kib", "0"), ("migration_ns", "0")];

fn exact(w: &Workload, cpus: u32) -> (schedlab_sim::Report, Vec<Event>) {
    run(w, cpus, FairFlavor::Eevdf, &EXACT)
}

fn exact_with(w: &Workload, cpus: u32, extra: &[(&str, &str)]) -> (schedlab_sim::Report, Vec<Event>) {
    let mut sets: Vec<(&str, &str)> = EXACT.to_vec();
    sets.extend_from_slice(extra);
    run(w, cpus, FairFlavor::Eevdf, &sets)
}

fn fd(object: u32, end: End) -> FdTarget {
    FdTarget { object, end }
}

/// A task running `program` with file descriptors `fds`, starting at `start_ns`.
fn spawn(w: &mut Workload, name: &str, program: Program, fds: Vec<FdTarget>, start_ns: u64) {
    let p = w.add_program(program);
    w.tasks.push(TaskSpec { fds, start_ns, ..TaskSpec::new(name, p) });
}

/// `(time, ret)` of each exit of system call `nr` by `pid`, in order.
fn exits(ev: &[Event], pid: u32, nr: Syscall) -> Vec<(u64, i64)> {
    ev.iter()
        .filter_map(|e| match e.kind {
            EventKind::SyscallExit { pid: p, nr: n, ret } if p == Pid(pid) && n == nr.nr() => {
                Some((e.time, ret))
            }
            _ => None,
        })
        .collect()
}

/// `(time, resource)` of each Block event of `pid`.
fn blocks(ev: &[Event], pid: u32) -> Vec<(u64, Option<Resource>)> {
    ev.iter()
        .filter_map(|e| match e.kind {
            EventKind::Block { pid: p, resource } if p == Pid(pid) => Some((e.time, resource)),
            _ => None,
        })
        .collect()
}

/// `(time, waker)` of each Wakeup event of `pid`.
fn wakeups(ev: &[Event], pid: u32) -> Vec<(u64, u32)> {
    ev.iter()
        .filter_map(|e| match e.kind {
            EventKind::Wakeup { waker, wakee, .. } if wakee == Pid(pid) => Some((e.time, waker.0)),
            _ => None,
        })
        .collect()
}

fn all_exited(r: &schedlab_sim::Report) {
    for t in &r.tasks {
        assert!(t.exited, "task {} (pid {}) never exited", t.name, t.pid);
    }
}

// ---- pipes --------------------------------------------------------------------------

#[test]
fn pipe_reader_blocks_until_the_writer_writes() {
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    spawn(
        &mut w,
        "reader",
        Program::new("reader").op(Op::Read { fd: 0, bytes: 100 }),
        vec![fd(pipe, End::Read)],
        0,
    );
    let writer = Program::new("writer").op(Op::Sleep(10 * MS)).op(Op::Write { fd: 0, bytes: 100 });
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    for cpus in [1, 2] {
        let (r, ev) = exact(&w, cpus);
        all_exited(&r);
        let b = blocks(&ev, 1);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(b[0].0, 0);
        assert!(matches!(b[0].1, Some(Resource::Pipe { write: false, .. })), "{b:?}");
        assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2)], "the writer wakes the reader when it writes");
        assert_eq!(exits(&ev, 1, Syscall::Read), vec![(10 * MS, 100)]);
        assert_eq!(exits(&ev, 2, Syscall::Write), vec![(10 * MS, 100)]);
        assert_eq!(turnaround(&r, "reader"), 10 * MS);
        // The writer never blocked: its only block is its sleep.
        assert_eq!(blocks(&ev, 2), vec![(0, None)]);
    }
}

#[test]
fn the_waker_pays_for_each_wake_up() {
    // The writer wakes the blocked reader twice (two writes, the reader reading between
    // them on the other CPU); each wake-up costs the writer 1 µs, nothing else does.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    let reader = Program::new("reader").op(Op::Read { fd: 0, bytes: 1 }).op(Op::Read { fd: 0, bytes: 1 });
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    let writer = Program::new("writer")
        .op(Op::Sleep(MS))
        .op(Op::Write { fd: 0, bytes: 1 })
        .op(Op::Sleep(MS))
        .op(Op::Write { fd: 0, bytes: 1 })
        .op(Op::Compute(MS));
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let (r, ev) = exact_with(&w, 2, &[("wakeup_ns", "1us")]);
    all_exited(&r);
    assert_eq!(wakeups(&ev, 1).len(), 2);
    assert_eq!(runtime(&r, "writer"), MS + 2_000, "1 ms of work and two wake-ups");
    assert_eq!(runtime(&r, "reader"), 0, "being woken is free");
}

#[test]
fn pipe_writer_blocks_when_the_64k_buffer_is_full() {
    // 100 KiB into a 64 KiB pipe. The reader takes 32 KiB at 10 ms, 32 KiB at 20 ms and
    // the last 36 KiB at 30 ms. The writer fills 64 KiB at once, 32 KiB more at 10 ms
    // (98304 bytes written), and its last 4096 bytes at 20 ms.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    spawn(
        &mut w,
        "writer",
        Program::new("writer").op(Op::Write { fd: 0, bytes: 102_400 }),
        vec![fd(pipe, End::Write)],
        0,
    );
    let reader = Program::new("reader")
        .op(Op::Sleep(10 * MS))
        .op(Op::Read { fd: 0, bytes: 32_768 })
        .op(Op::Sleep(10 * MS))
        .op(Op::Read { fd: 0, bytes: 32_768 })
        .op(Op::Sleep(10 * MS))
        .op(Op::Read { fd: 0, bytes: 36_864 });
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(20 * MS, 102_400)], "one write call, done at 20 ms");
    let b = blocks(&ev, 1);
    assert_eq!(b.iter().map(|b| b.0).collect::<Vec<_>>(), vec![0, 10 * MS], "{b:?}");
    assert!(b.iter().all(|b| matches!(b.1, Some(Resource::Pipe { write: true, .. }))), "{b:?}");
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2), (20 * MS, 2)]);
    assert_eq!(exits(&ev, 2, Syscall::Read), vec![(10 * MS, 32_768), (20 * MS, 32_768), (30 * MS, 36_864)]);
    assert_eq!(turnaround(&r, "writer"), 20 * MS);
    assert_eq!(turnaround(&r, "reader"), 30 * MS);
}

#[test]
fn pipe_reader_takes_what_a_full_pipe_holds() {
    // The reader arrives at 10 ms and asks for all 100 KiB: its first read returns the
    // 64 KiB capacity, not more; the writer's call ends at 10 ms.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    spawn(
        &mut w,
        "writer",
        Program::new("writer").op(Op::Write { fd: 0, bytes: 102_400 }),
        vec![fd(pipe, End::Write)],
        0,
    );
    let reader = Program::new("reader").op(Op::Sleep(10 * MS)).op(Op::Read { fd: 0, bytes: 102_400 });
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    let reads = exits(&ev, 2, Syscall::Read);
    assert_eq!(reads, vec![(10 * MS, 65_536), (10 * MS, 36_864)]);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(10 * MS, 102_400)]);
    assert_eq!(blocks(&ev, 1).len(), 1);
}

#[test]
fn pipe_capacity_tunable_sets_the_buffer() {
    // With pipe_bytes = 10000, a 25000-byte write needs three rounds of the reader.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    spawn(
        &mut w,
        "writer",
        Program::new("writer").op(Op::Write { fd: 0, bytes: 25_000 }),
        vec![fd(pipe, End::Write)],
        0,
    );
    let reader =
        Program::new("reader").repeat(3, |p| p.op(Op::Sleep(10 * MS)).op(Op::Read { fd: 0, bytes: 10_000 }));
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact_with(&w, 2, &[("pipe_bytes", "10000")]);
    all_exited(&r);
    // The last read gets the 5000 bytes left, then end of file (the writer is gone).
    let reads = exits(&ev, 2, Syscall::Read);
    assert_eq!(reads, vec![(10 * MS, 10_000), (20 * MS, 10_000), (30 * MS, 5_000), (30 * MS, 0)]);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(20 * MS, 25_000)]);
}

#[test]
fn pipe_writes_up_to_pipe_buf_are_atomic() {
    // 8192-byte pipe: 6000 bytes fit, then a 4096-byte write finds 2192 bytes free. It
    // must block without writing any of it: the reader, asking for 10096 bytes at
    // 10 ms, first gets the 6000 bytes alone, then the 4096 bytes together.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: Some(8192) });
    let writer =
        Program::new("writer").op(Op::Write { fd: 0, bytes: 6000 }).op(Op::Write { fd: 0, bytes: 4096 });
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let reader = Program::new("reader").op(Op::Sleep(10 * MS)).op(Op::Read { fd: 0, bytes: 10_096 });
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(0, 6000), (10 * MS, 4096)]);
    let b = blocks(&ev, 1);
    assert_eq!(b.len(), 1);
    assert!(matches!(b[0], (0, Some(Resource::Pipe { write: true, .. }))), "{b:?}");
    assert_eq!(exits(&ev, 2, Syscall::Read), vec![(10 * MS, 6000), (10 * MS, 4096)]);
}

#[test]
fn pipe_writes_above_pipe_buf_may_be_split() {
    // The same with a 5000-byte write (> PIPE_BUF): 2192 bytes go in at once, so the
    // reader's first read returns the full 8192 bytes.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: Some(8192) });
    let writer =
        Program::new("writer").op(Op::Write { fd: 0, bytes: 6000 }).op(Op::Write { fd: 0, bytes: 5000 });
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let reader = Program::new("reader").op(Op::Sleep(10 * MS)).op(Op::Read { fd: 0, bytes: 11_000 });
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 2, Syscall::Read), vec![(10 * MS, 8192), (10 * MS, 2808)]);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(0, 6000), (10 * MS, 5000)]);
}

#[test]
fn pipe_readers_waiting_on_an_empty_pipe_are_woken_in_turn() {
    // Two readers of 100 bytes wait; one 200-byte write feeds both at 10 ms (the first
    // reader, leaving data behind, passes the wake-up on to the second).
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    for (name, start) in [("r1", 0), ("r2", MS)] {
        spawn(
            &mut w,
            name,
            Program::new(name).op(Op::Read { fd: 0, bytes: 100 }),
            vec![fd(pipe, End::Read)],
            start,
        );
    }
    // The writer keeps its end open a while: closing the last write end would wake
    // every reader at once (EOF), as pipe_release does.
    let writer = Program::new("writer")
        .op(Op::Sleep(10 * MS))
        .op(Op::Write { fd: 0, bytes: 200 })
        .op(Op::Sleep(10 * MS));
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Read), vec![(10 * MS, 100)]);
    assert_eq!(exits(&ev, 2, Syscall::Read), vec![(10 * MS, 100)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 3)]);
    assert_eq!(wakeups(&ev, 2), vec![(10 * MS, 1)], "woken by the first reader");
}

#[test]
fn a_pipe_write_wakes_a_reader_only_when_the_pipe_was_empty() {
    // On one CPU two readers of 1 byte wait; the writer writes 1 byte twice, then
    // sleeps with its end open. The first write wakes r1; the second finds data buffered
    // and wakes nobody, so r2 is woken by r1, which leaves a byte behind when it reads.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    for name in ["r1", "r2"] {
        spawn(
            &mut w,
            name,
            Program::new(name).op(Op::Read { fd: 0, bytes: 1 }),
            vec![fd(pipe, End::Read)],
            0,
        );
    }
    let writer = Program::new("writer")
        .op(Op::Sleep(MS))
        .op(Op::Write { fd: 0, bytes: 1 })
        .op(Op::Write { fd: 0, bytes: 1 })
        .op(Op::Sleep(10 * MS));
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(wakeups(&ev, 1), vec![(MS, 3)]);
    let r2 = wakeups(&ev, 2);
    assert_eq!(r2.len(), 1, "{r2:?}");
    assert_eq!(r2[0].1, 1, "woken by the first reader, not by the second write: {r2:?}");
}

#[test]
fn pipe_writers_waiting_on_a_full_pipe_are_woken_in_turn() {
    // An 8192-byte pipe is filled at 0; w1 (at 1 ms) and w2 (at 2 ms) block writing 100
    // bytes each. At 10 ms the reader empties the pipe: there is room for both, so both
    // writes complete at 10 ms (Linux: the reader wakes w1, and w1, a writer that
    // waited and leaves the pipe not full, wakes the next writer; fs/pipe.c
    // `wake_next_writer`). The reader reads the 200 bytes at 20 ms.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: Some(8192) });
    let wr = vec![fd(pipe, End::Write)];
    spawn(&mut w, "filler", Program::new("filler").op(Op::Write { fd: 0, bytes: 8192 }), wr.clone(), 0);
    spawn(&mut w, "w1", Program::new("w1").op(Op::Write { fd: 0, bytes: 100 }), wr.clone(), MS);
    spawn(&mut w, "w2", Program::new("w2").op(Op::Write { fd: 0, bytes: 100 }), wr, 2 * MS);
    let reader = Program::new("reader")
        .op(Op::Sleep(10 * MS))
        .op(Op::Read { fd: 0, bytes: 8192 })
        .op(Op::Sleep(10 * MS))
        .op(Op::Read { fd: 0, bytes: 200 });
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 2, Syscall::Write), vec![(10 * MS, 100)]);
    assert_eq!(exits(&ev, 3, Syscall::Write), vec![(10 * MS, 100)], "w2 has room at 10 ms");
    assert_eq!(exits(&ev, 4, Syscall::Read), vec![(10 * MS, 8192), (20 * MS, 200)]);
}

#[test]
fn pipe_read_returns_zero_at_eof_when_the_writer_exits() {
    // The reader blocks on the empty pipe; the only writer exits at 10 ms without
    // writing, so read() returns 0 and the reader goes on to compute 1 ms.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    let reader = Program::new("reader").op(Op::Read { fd: 0, bytes: 100 }).op(Op::Compute(MS));
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    spawn(&mut w, "writer", Program::new("writer").op(Op::Sleep(10 * MS)), vec![fd(pipe, End::Write)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Read), vec![(10 * MS, 0)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2)], "the exiting writer wakes the reader");
    assert_eq!(turnaround(&r, "reader"), 11 * MS);
    assert_eq!(runtime(&r, "reader"), MS);
}

#[test]
fn pipe_read_gets_the_rest_then_eof() {
    // 50 bytes then the writer exits: a read of 100 bytes returns 50, then 0.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    spawn(
        &mut w,
        "reader",
        Program::new("reader").op(Op::Read { fd: 0, bytes: 100 }),
        vec![fd(pipe, End::Read)],
        0,
    );
    let writer =
        Program::new("writer").op(Op::Sleep(5 * MS)).op(Op::Write { fd: 0, bytes: 50 }).op(Op::Sleep(5 * MS));
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Read), vec![(5 * MS, 50), (10 * MS, 0)]);
    assert_eq!(turnaround(&r, "reader"), 10 * MS);
}

#[test]
fn pipe_eof_needs_every_writer_gone() {
    // Two writers: the first exits at 5 ms without writing, which is no end of file;
    // the second writes at 10 ms.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    spawn(
        &mut w,
        "reader",
        Program::new("reader").op(Op::Read { fd: 0, bytes: 100 }),
        vec![fd(pipe, End::Read)],
        0,
    );
    spawn(&mut w, "quitter", Program::new("quitter").op(Op::Sleep(5 * MS)), vec![fd(pipe, End::Write)], 0);
    let writer = Program::new("writer").op(Op::Sleep(10 * MS)).op(Op::Write { fd: 0, bytes: 100 });
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Read), vec![(10 * MS, 100)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 3)]);
}

#[test]
fn forked_child_keeps_the_inherited_write_end_open() {
    // The writer forks a child (which inherits the write end) and exits at once; the
    // reader sees end of file only when the child exits at 10 ms.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    let child = w.add_program(Program::new("child").op(Op::Sleep(10 * MS)));
    spawn(
        &mut w,
        "reader",
        Program::new("reader").op(Op::Read { fd: 0, bytes: 100 }),
        vec![fd(pipe, End::Read)],
        0,
    );
    let parent = Program::new("parent").op(Op::Fork { program: child, thread: false });
    spawn(&mut w, "parent", parent, vec![fd(pipe, End::Write)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Read), vec![(10 * MS, 0)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 3)], "the child (pid 3) closes the last write end");
    assert_eq!(turnaround(&r, "reader"), 10 * MS);
}

#[test]
fn pipe_write_without_readers_fails_with_epipe() {
    // The only reader exits at once; a write at 1 ms gets EPIPE (-32) without blocking.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    spawn(&mut w, "reader", Program::new("reader").op(Op::Exit), vec![fd(pipe, End::Read)], 0);
    let writer =
        Program::new("writer").op(Op::Sleep(MS)).op(Op::Write { fd: 0, bytes: 100 }).op(Op::Compute(MS));
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 2, Syscall::Write), vec![(MS, -32)]);
    assert_eq!(turnaround(&r, "writer"), 2 * MS);
}

#[test]
fn pipe_writer_blocked_on_a_full_pipe_gets_epipe_when_the_reader_exits() {
    // 4096-byte pipe, filled; the next (atomic) write blocks; the reader exits at 10 ms
    // without reading, which wakes the writer with EPIPE.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: Some(4096) });
    let writer =
        Program::new("writer").op(Op::Write { fd: 0, bytes: 4096 }).op(Op::Write { fd: 0, bytes: 100 });
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    spawn(&mut w, "reader", Program::new("reader").op(Op::Sleep(10 * MS)), vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(0, 4096), (10 * MS, -32)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2)]);
    assert_eq!(turnaround(&r, "writer"), 10 * MS);
}

#[test]
fn pipe_write_cut_short_by_the_reader_leaving_returns_what_it_wrote() {
    // 4096-byte pipe; a 6000-byte write puts 4096 in and waits for room; the reader exits
    // at 10 ms without reading: the call returns the 4096 bytes written, the next one
    // fails with EPIPE (pipe_write returns what it wrote before noticing).
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: Some(4096) });
    let writer =
        Program::new("writer").op(Op::Write { fd: 0, bytes: 6000 }).op(Op::Write { fd: 0, bytes: 10 });
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    spawn(&mut w, "reader", Program::new("reader").op(Op::Sleep(10 * MS)), vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(10 * MS, 4096), (10 * MS, -32)]);
}

#[test]
fn fifo_blocks_like_a_pipe_and_says_fifo() {
    let mut w = Workload::default();
    let fifo = w.add_object(ObjectSpec::Fifo { capacity: None });
    spawn(
        &mut w,
        "reader",
        Program::new("reader").op(Op::Read { fd: 0, bytes: 10 }),
        vec![fd(fifo, End::Read)],
        0,
    );
    let writer = Program::new("writer").op(Op::Sleep(7 * MS)).op(Op::Write { fd: 0, bytes: 10 });
    spawn(&mut w, "writer", writer, vec![fd(fifo, End::Write)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    let b = blocks(&ev, 1);
    assert!(matches!(b[..], [(0, Some(Resource::Fifo { write: false, .. }))]), "{b:?}");
    assert_eq!(wakeups(&ev, 1), vec![(7 * MS, 2)]);
    assert_eq!(turnaround(&r, "reader"), 7 * MS);
}

// ---- UNIX socket pairs -----------------------------------------------------------------

#[test]
fn socket_pair_directions_are_independent() {
    // A writes then reads; B sleeps 10 ms, writes, then reads. A must not read its own
    // message back: its read waits for B's write at 10 ms. B finds A's message waiting.
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SocketPair { capacity: None });
    let a = Program::new("a").op(Op::Write { fd: 0, bytes: 100 }).op(Op::Read { fd: 0, bytes: 100 });
    spawn(&mut w, "a", a, vec![fd(s, End::A)], 0);
    let b = Program::new("b")
        .op(Op::Sleep(10 * MS))
        .op(Op::Write { fd: 0, bytes: 100 })
        .op(Op::Read { fd: 0, bytes: 100 });
    spawn(&mut w, "b", b, vec![fd(s, End::B)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Read), vec![(10 * MS, 100)]);
    assert_eq!(exits(&ev, 2, Syscall::Read), vec![(10 * MS, 100)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2)]);
    let ba = blocks(&ev, 1);
    assert!(matches!(ba[..], [(0, Some(Resource::Socket { .. }))]), "{ba:?}");
    assert_eq!(blocks(&ev, 2), vec![(0, None)], "B never waits on the socket: A's message is there");
}

#[test]
fn socket_ends_are_distinct_resources() {
    // Both ends block reading; each blocks on its own endpoint's inode.
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SocketPair { capacity: None });
    spawn(&mut w, "a", Program::new("a").op(Op::Read { fd: 0, bytes: 1 }), vec![fd(s, End::A)], 0);
    let b = Program::new("b").op(Op::Read { fd: 0, bytes: 1 });
    spawn(&mut w, "b", b, vec![fd(s, End::B)], 0);
    let c = Program::new("c")
        .op(Op::Sleep(MS))
        .op(Op::Write { fd: 0, bytes: 1 })
        .op(Op::Write { fd: 1, bytes: 1 });
    spawn(&mut w, "c", c, vec![fd(s, End::A), fd(s, End::B)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    let (ra, rb) = (blocks(&ev, 1)[0].1.unwrap(), blocks(&ev, 2)[0].1.unwrap());
    assert!(matches!(ra, Resource::Socket { .. }) && matches!(rb, Resource::Socket { .. }));
    assert_ne!(ra, rb);
    assert_eq!(wakeups(&ev, 1), vec![(MS, 3)]);
    assert_eq!(wakeups(&ev, 2), vec![(MS, 3)]);
}

#[test]
fn socket_read_returns_zero_when_the_peer_exits() {
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SocketPair { capacity: None });
    spawn(&mut w, "a", Program::new("a").op(Op::Read { fd: 0, bytes: 100 }), vec![fd(s, End::A)], 0);
    spawn(&mut w, "b", Program::new("b").op(Op::Sleep(10 * MS)), vec![fd(s, End::B)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Read), vec![(10 * MS, 0)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2)]);
}

#[test]
fn socket_ping_pong_takes_two_compute_times_per_round_trip() {
    // A computes 1 ms and sends; B receives, computes 1 ms and answers; A receives.
    // Each round trip is 2 ms of strictly alternating work, on two CPUs as on one.
    const N: u32 = 10;
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SocketPair { capacity: None });
    let a = Program::new("a").repeat(N, |p| {
        p.op(Op::Compute(MS)).op(Op::Write { fd: 0, bytes: 100 }).op(Op::Read { fd: 0, bytes: 100 })
    });
    spawn(&mut w, "a", a, vec![fd(s, End::A)], 0);
    let b = Program::new("b").repeat(N, |p| {
        p.op(Op::Read { fd: 0, bytes: 100 }).op(Op::Compute(MS)).op(Op::Write { fd: 0, bytes: 100 })
    });
    spawn(&mut w, "b", b, vec![fd(s, End::B)], 0);
    for cpus in [1, 2] {
        let (r, ev) = exact(&w, cpus);
        all_exited(&r);
        assert_eq!(r.makespan_ns, 2 * u64::from(N) * MS, "{cpus} CPUs");
        assert_eq!(turnaround(&r, "a"), 2 * u64::from(N) * MS);
        let a_reads: Vec<u64> = exits(&ev, 1, Syscall::Read).iter().map(|x| x.0).collect();
        let want: Vec<u64> = (1..=u64::from(N)).map(|i| 2 * i * MS).collect();
        assert_eq!(a_reads, want, "A gets each answer 2 ms after the previous one");
        let b_reads: Vec<u64> = exits(&ev, 2, Syscall::Read).iter().map(|x| x.0).collect();
        let want: Vec<u64> = (0..u64::from(N)).map(|i| (2 * i + 1) * MS).collect();
        assert_eq!(b_reads, want);
        for (t, waker) in wakeups(&ev, 1) {
            assert_eq!(waker, 2, "A is woken by B's write at {t}");
        }
    }
}

#[test]
fn socket_full_duplex_overlaps_on_two_cpus() {
    // Both sides send, compute 1 ms, then receive the other's message: with the two
    // directions independent, the two sides run in parallel on two CPUs (N ms), and
    // take turns on one (2N ms).
    const N: u32 = 10;
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SocketPair { capacity: None });
    let body = |p: Program| {
        p.op(Op::Write { fd: 0, bytes: 100 }).op(Op::Compute(MS)).op(Op::Read { fd: 0, bytes: 100 })
    };
    spawn(&mut w, "a", Program::new("a").repeat(N, body), vec![fd(s, End::A)], 0);
    spawn(&mut w, "b", Program::new("b").repeat(N, body), vec![fd(s, End::B)], 0);
    let (r, _) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(r.makespan_ns, u64::from(N) * MS);
    let (r, _) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(r.makespan_ns, 2 * u64::from(N) * MS);
}

#[test]
fn socket_capacity_is_the_socket_bytes_tunable() {
    // socket_bytes = 10000: A's 25000-byte send fills 10000 at once, 5000 more when B
    // reads 5000 at 10 ms, and the last 10000 when B drains the 10000 at 20 ms.
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SocketPair { capacity: None });
    spawn(&mut w, "a", Program::new("a").op(Op::Write { fd: 0, bytes: 25_000 }), vec![fd(s, End::A)], 0);
    let b = Program::new("b")
        .op(Op::Sleep(10 * MS))
        .op(Op::Read { fd: 0, bytes: 5_000 })
        .op(Op::Sleep(10 * MS))
        .op(Op::Read { fd: 0, bytes: 20_000 });
    spawn(&mut w, "b", b, vec![fd(s, End::B)], 0);
    let (r, ev) = exact_with(&w, 2, &[("socket_bytes", "10000")]);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(20 * MS, 25_000)]);
    let b_blocks: Vec<u64> = blocks(&ev, 1).iter().map(|b| b.0).collect();
    assert_eq!(b_blocks, vec![0, 10 * MS]);
    assert!(blocks(&ev, 1).iter().all(|b| matches!(b.1, Some(Resource::Socket { .. }))));
    assert_eq!(exits(&ev, 2, Syscall::Read), vec![(10 * MS, 5_000), (20 * MS, 10_000), (20 * MS, 10_000)]);
    // The default (212992 bytes) takes the whole send at once.
    let (_, ev) = exact(&w, 2);
    assert_eq!(exits(&ev, 1, Syscall::Write), vec![(0, 25_000)]);
}

// ---- System V semaphores ------------------------------------------------------------

fn sem(delta: i16) -> Op {
    Op::SemOp { fd: 0, num: 0, delta }
}

#[test]
fn semop_down_blocks_on_zero_until_an_up() {
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SemSet { values: vec![0] });
    spawn(&mut w, "down", Program::new("down").op(sem(-1)).op(Op::Compute(MS)), vec![fd(s, End::Whole)], 0);
    spawn(&mut w, "up", Program::new("up").op(Op::Sleep(10 * MS)).op(sem(1)), vec![fd(s, End::Whole)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(blocks(&ev, 1), vec![(0, Some(Resource::SysvSem { id: s as i32, num: 0 }))]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2)]);
    assert_eq!(exits(&ev, 1, Syscall::Semop), vec![(10 * MS, 0)]);
    assert_eq!(turnaround(&r, "down"), 11 * MS);
}

#[test]
fn semop_up_by_two_wakes_two_waiters_in_fifo_order() {
    // Three waiters of -1 arrive at 0, 1 and 2 ms; +2 at 10 ms completes the first two,
    // +1 at 20 ms the third.
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SemSet { values: vec![0] });
    for (i, name) in ["w1", "w2", "w3"].into_iter().enumerate() {
        spawn(&mut w, name, Program::new(name).op(sem(-1)), vec![fd(s, End::Whole)], i as u64 * MS);
    }
    let up = Program::new("up").op(Op::Sleep(10 * MS)).op(sem(2)).op(Op::Sleep(10 * MS)).op(sem(1));
    spawn(&mut w, "up", up, vec![fd(s, End::Whole)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 4)]);
    assert_eq!(wakeups(&ev, 2), vec![(10 * MS, 4)]);
    assert_eq!(wakeups(&ev, 3), vec![(20 * MS, 4)]);
    assert_eq!(turnaround(&r, "w1"), 10 * MS);
    assert_eq!(turnaround(&r, "w2"), 9 * MS);
    assert_eq!(turnaround(&r, "w3"), 18 * MS);
}

#[test]
fn semop_waiters_complete_first_come_first_served() {
    // Waiters arrive in the order w3, w1, w2 (started at 0, 1, 2 ms, pids 3, 1, 2); one
    // +1 every 10 ms completes them in that order.
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SemSet { values: vec![0] });
    for (name, start) in [("w1", MS), ("w2", 2 * MS), ("w3", 0)] {
        spawn(&mut w, name, Program::new(name).op(sem(-1)), vec![fd(s, End::Whole)], start);
    }
    let up = Program::new("up").repeat(3, |p| p.op(Op::Sleep(10 * MS)).op(sem(1)));
    spawn(&mut w, "up", up, vec![fd(s, End::Whole)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(wakeups(&ev, 3), vec![(10 * MS, 4)]);
    assert_eq!(wakeups(&ev, 1), vec![(20 * MS, 4)]);
    assert_eq!(wakeups(&ev, 2), vec![(30 * MS, 4)]);
}

#[test]
fn semop_down_by_two_needs_two_ups() {
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SemSet { values: vec![0] });
    spawn(&mut w, "down2", Program::new("down2").op(sem(-2)), vec![fd(s, End::Whole)], 0);
    let up = Program::new("up").repeat(2, |p| p.op(Op::Sleep(10 * MS)).op(sem(1)));
    spawn(&mut w, "up", up, vec![fd(s, End::Whole)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(wakeups(&ev, 1), vec![(20 * MS, 2)], "value 1 at 10 ms is not enough");
    assert_eq!(turnaround(&r, "down2"), 20 * MS);
}

#[test]
fn semop_wait_for_zero_blocks_until_the_value_is_zero() {
    // Value 2: a wait-for-zero blocks; -1 at 10 ms leaves 1 (still blocked); -1 at
    // 20 ms reaches 0 and completes it.
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SemSet { values: vec![2] });
    spawn(&mut w, "zero", Program::new("zero").op(sem(0)), vec![fd(s, End::Whole)], 0);
    let down = Program::new("down").repeat(2, |p| p.op(Op::Sleep(10 * MS)).op(sem(-1)));
    spawn(&mut w, "down", down, vec![fd(s, End::Whole)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(blocks(&ev, 1), vec![(0, Some(Resource::SysvSem { id: s as i32, num: 0 }))]);
    assert_eq!(wakeups(&ev, 1), vec![(20 * MS, 2)]);
    assert_eq!(exits(&ev, 1, Syscall::Semop), vec![(20 * MS, 0)]);
    assert_eq!(exits(&ev, 2, Syscall::Semop), vec![(10 * MS, 0), (20 * MS, 0)], "the downs never block");
    // On a zero value a wait-for-zero returns at once.
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SemSet { values: vec![0] });
    spawn(&mut w, "zero", Program::new("zero").op(Op::Sleep(MS)).op(sem(0)), vec![fd(s, End::Whole)], 0);
    let (_, ev) = exact(&w, 1);
    assert_eq!(exits(&ev, 1, Syscall::Semop), vec![(MS, 0)]);
    assert_eq!(blocks(&ev, 1), vec![(0, None)]);
}

#[test]
fn semaphores_of_a_set_are_independent() {
    // A +1 on semaphore 1 does not wake a waiter on semaphore 0.
    let mut w = Workload::default();
    let s = w.add_object(ObjectSpec::SemSet { values: vec![0, 0] });
    let down = Program::new("down").op(Op::SemOp { fd: 0, num: 0, delta: -1 });
    spawn(&mut w, "down", down, vec![fd(s, End::Whole)], 0);
    let up = Program::new("up")
        .op(Op::Sleep(10 * MS))
        .op(Op::SemOp { fd: 0, num: 1, delta: 1 })
        .op(Op::Sleep(10 * MS))
        .op(Op::SemOp { fd: 0, num: 0, delta: 1 });
    spawn(&mut w, "up", up, vec![fd(s, End::Whole)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(wakeups(&ev, 1), vec![(20 * MS, 2)]);
}

// ---- System V message queues -----------------------------------------------------------

#[test]
fn msgrcv_blocks_on_an_empty_queue_until_msgsnd() {
    let mut w = Workload::default();
    let q = w.add_object(ObjectSpec::MsgQueue { max_bytes: None });
    spawn(&mut w, "rcv", Program::new("rcv").op(Op::MsgRcv { fd: 0 }), vec![fd(q, End::Whole)], 0);
    let snd = Program::new("snd").op(Op::Sleep(10 * MS)).op(Op::MsgSnd { fd: 0, bytes: 123 });
    spawn(&mut w, "snd", snd, vec![fd(q, End::Whole)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(blocks(&ev, 1), vec![(0, Some(Resource::SysvMsg { id: q as i32 }))]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2)]);
    assert_eq!(exits(&ev, 1, Syscall::Msgrcv), vec![(10 * MS, 123)], "msgrcv returns the message size");
    assert_eq!(exits(&ev, 2, Syscall::Msgsnd), vec![(10 * MS, 0)]);
}

#[test]
fn msgsnd_blocks_while_the_queue_is_full() {
    // 1000-byte queue: 300 + 500 fit, 600 does not. Receiving 300 at 10 ms leaves 500
    // (500 + 600 > 1000: still blocked); receiving 500 at 20 ms makes room.
    let mut w = Workload::default();
    let q = w.add_object(ObjectSpec::MsgQueue { max_bytes: Some(1000) });
    let snd = Program::new("snd")
        .op(Op::MsgSnd { fd: 0, bytes: 300 })
        .op(Op::MsgSnd { fd: 0, bytes: 500 })
        .op(Op::MsgSnd { fd: 0, bytes: 600 });
    spawn(&mut w, "snd", snd, vec![fd(q, End::Whole)], 0);
    let rcv = Program::new("rcv")
        .repeat(2, |p| p.op(Op::Sleep(10 * MS)).op(Op::MsgRcv { fd: 0 }))
        .op(Op::MsgRcv { fd: 0 });
    spawn(&mut w, "rcv", rcv, vec![fd(q, End::Whole)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(blocks(&ev, 1), vec![(0, Some(Resource::SysvMsg { id: q as i32 }))]);
    assert_eq!(wakeups(&ev, 1), vec![(20 * MS, 2)]);
    assert_eq!(exits(&ev, 1, Syscall::Msgsnd), vec![(0, 0), (0, 0), (20 * MS, 0)]);
    assert_eq!(exits(&ev, 2, Syscall::Msgrcv), vec![(10 * MS, 300), (20 * MS, 500), (20 * MS, 600)]);
    assert_eq!(turnaround(&r, "snd"), 20 * MS);
}

#[test]
fn msgsnd_checks_room_before_handing_over_and_rejects_oversized_messages() {
    // 1000-byte queue: a 1001-byte message can never fit (EINVAL); 800 are queued, and a
    // 300-byte message waits until the receiver takes them at 10 ms.
    let mut w = Workload::default();
    let q = w.add_object(ObjectSpec::MsgQueue { max_bytes: Some(1000) });
    let snd = Program::new("snd")
        .op(Op::MsgSnd { fd: 0, bytes: 1001 })
        .op(Op::MsgSnd { fd: 0, bytes: 800 })
        .op(Op::MsgSnd { fd: 0, bytes: 300 });
    spawn(&mut w, "snd", snd, vec![fd(q, End::Whole)], 0);
    let rcv = Program::new("rcv").op(Op::Sleep(10 * MS)).op(Op::MsgRcv { fd: 0 }).op(Op::MsgRcv { fd: 0 });
    spawn(&mut w, "rcv", rcv, vec![fd(q, End::Whole)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Msgsnd), vec![(0, -22), (0, 0), (10 * MS, 0)]);
    assert_eq!(exits(&ev, 2, Syscall::Msgrcv), vec![(10 * MS, 800), (10 * MS, 300)]);
}

#[test]
fn msgmnb_tunable_sets_the_queue_size() {
    // msgmnb = 1000: a second 600-byte message waits for the first to be received.
    let mut w = Workload::default();
    let q = w.add_object(ObjectSpec::MsgQueue { max_bytes: None });
    let snd = Program::new("snd").op(Op::MsgSnd { fd: 0, bytes: 600 }).op(Op::MsgSnd { fd: 0, bytes: 600 });
    spawn(&mut w, "snd", snd, vec![fd(q, End::Whole)], 0);
    let rcv = Program::new("rcv").op(Op::Sleep(10 * MS)).op(Op::MsgRcv { fd: 0 }).op(Op::MsgRcv { fd: 0 });
    spawn(&mut w, "rcv", rcv, vec![fd(q, End::Whole)], 0);
    let (_, ev) = exact_with(&w, 1, &[("msgmnb", "1000")]);
    assert_eq!(exits(&ev, 1, Syscall::Msgsnd), vec![(0, 0), (10 * MS, 0)]);
    let (_, ev) = exact(&w, 1);
    assert_eq!(exits(&ev, 1, Syscall::Msgsnd), vec![(0, 0), (0, 0)], "16384 bytes by default");
}

#[test]
fn messages_come_back_in_fifo_order() {
    let sizes = [10u32, 700, 3, 4096, 1, 999];
    let mut w = Workload::default();
    let q = w.add_object(ObjectSpec::MsgQueue { max_bytes: None });
    let snd = sizes
        .iter()
        .fold(Program::new("snd").op(Op::Sleep(MS)), |p, &b| p.op(Op::MsgSnd { fd: 0, bytes: b }));
    spawn(&mut w, "snd", snd, vec![fd(q, End::Whole)], 0);
    // The first receive waits (handed a message directly), the rest find them queued.
    let rcv = Program::new("rcv").repeat(sizes.len() as u32, |p| p.op(Op::MsgRcv { fd: 0 }));
    spawn(&mut w, "rcv", rcv, vec![fd(q, End::Whole)], 0);
    for cpus in [1, 2] {
        let (r, ev) = exact(&w, cpus);
        all_exited(&r);
        let got: Vec<i64> = exits(&ev, 2, Syscall::Msgrcv).iter().map(|x| x.1).collect();
        assert_eq!(got, sizes.iter().map(|&b| i64::from(b)).collect::<Vec<_>>(), "{cpus} CPUs");
    }
}

// ---- signals and children -----------------------------------------------------------------

#[test]
fn pause_blocks_until_kill_and_the_killer_wakes_it() {
    let mut w = Workload::default();
    spawn(&mut w, "pauser", Program::new("pauser").op(Op::Pause).op(Op::Compute(MS)), vec![], 0);
    let killer =
        Program::new("killer").op(Op::Sleep(10 * MS)).op(Op::Kill { target: SignalTarget::Task(0), sig: 10 });
    spawn(&mut w, "killer", killer, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(blocks(&ev, 1), vec![(0, Some(Resource::Signal { pid: 1 }))]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2)]);
    assert_eq!(exits(&ev, 1, Syscall::Pause), vec![(10 * MS, -4)], "pause returns EINTR");
    assert_eq!(exits(&ev, 2, Syscall::Kill), vec![(10 * MS, 0)]);
    assert_eq!(turnaround(&r, "pauser"), 11 * MS);
}

#[test]
fn a_signal_sent_before_pause_is_pending_and_pause_returns_at_once() {
    // The signal arrives at 5 ms while the target sleeps (signals are blocked outside
    // pause/sigtimedwait in the model: the sleep is not interrupted); its pause at
    // 10 ms takes the pending signal without blocking.
    let mut w = Workload::default();
    let pauser = Program::new("pauser").op(Op::Sleep(10 * MS)).op(Op::Pause).op(Op::Pause);
    spawn(&mut w, "pauser", pauser, vec![], 0);
    let killer = Program::new("killer")
        .op(Op::Sleep(5 * MS))
        .op(Op::Kill { target: SignalTarget::Task(0), sig: 10 })
        .op(Op::Sleep(15 * MS))
        .op(Op::Kill { target: SignalTarget::Task(0), sig: 10 });
    spawn(&mut w, "killer", killer, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Pause), vec![(10 * MS, -4), (20 * MS, -4)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 0), (20 * MS, 2)], "the sleep's timer, then the second kill");
    assert_eq!(blocks(&ev, 1), vec![(0, None), (10 * MS, Some(Resource::Signal { pid: 1 }))]);
    assert_eq!(turnaround(&r, "pauser"), 20 * MS);
}

#[test]
fn kill_of_a_dead_task_fails_with_esrch() {
    let mut w = Workload::default();
    spawn(&mut w, "short", Program::new("short").op(Op::Exit), vec![], 0);
    let killer =
        Program::new("killer").op(Op::Sleep(MS)).op(Op::Kill { target: SignalTarget::Task(0), sig: 15 });
    spawn(&mut w, "killer", killer, vec![], 0);
    let (_, ev) = exact(&w, 1);
    assert_eq!(exits(&ev, 2, Syscall::Kill), vec![(MS, -3)]);
}

#[test]
fn sigtimedwait_times_out_with_eagain() {
    let mut w = Workload::default();
    spawn(&mut w, "waiter", Program::new("waiter").op(Op::SigTimedWait { timeout: 10 * MS }), vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(blocks(&ev, 1), vec![(0, Some(Resource::Signal { pid: 1 }))]);
    assert_eq!(exits(&ev, 1, Syscall::RtSigtimedwait), vec![(10 * MS, -11)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 0)], "woken by the timer");
    assert_eq!(turnaround(&r, "waiter"), 10 * MS);
}

#[test]
fn sigtimedwait_returns_the_signal_when_killed_before_the_timeout() {
    // Killed at 4 ms with signal 12: returns 12 then. Its second wait (10 ms, from
    // 4 ms) must time out at 14 ms, not at 10 ms when the first wait's timer was due.
    let mut w = Workload::default();
    let waiter = Program::new("waiter")
        .op(Op::SigTimedWait { timeout: 10 * MS })
        .op(Op::SigTimedWait { timeout: 10 * MS });
    spawn(&mut w, "waiter", waiter, vec![], 0);
    let killer =
        Program::new("killer").op(Op::Sleep(4 * MS)).op(Op::Kill { target: SignalTarget::Task(0), sig: 12 });
    spawn(&mut w, "killer", killer, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::RtSigtimedwait), vec![(4 * MS, 12), (14 * MS, -11)]);
    assert_eq!(wakeups(&ev, 1), vec![(4 * MS, 2), (14 * MS, 0)]);
    assert_eq!(turnaround(&r, "waiter"), 14 * MS);
}

#[test]
fn sigtimedwait_takes_a_pending_signal_at_once() {
    let mut w = Workload::default();
    let waiter = Program::new("waiter").op(Op::Sleep(10 * MS)).op(Op::SigTimedWait { timeout: 100 * MS });
    spawn(&mut w, "waiter", waiter, vec![], 0);
    let killer = Program::new("killer").op(Op::Kill { target: SignalTarget::Task(0), sig: 14 });
    spawn(&mut w, "killer", killer, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::RtSigtimedwait), vec![(10 * MS, 14)]);
    assert_eq!(turnaround(&r, "waiter"), 10 * MS);
}

#[test]
fn wait4_blocks_until_the_forked_child_exits() {
    let mut w = Workload::default();
    let child = w.add_program(Program::new("child").op(Op::Sleep(10 * MS)).op(Op::Compute(MS)));
    let parent = Program::new("parent").op(Op::Fork { program: child, thread: false }).op(Op::Wait);
    spawn(&mut w, "parent", parent, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    // The child is pid 2, the first task after the workload's one.
    assert_eq!(exits(&ev, 1, Syscall::Fork), vec![(0, 2)]);
    assert!(ev.iter().any(|e| e.kind == EventKind::Fork { parent: Pid(1), child: Pid(2), thread: false }));
    assert_eq!(blocks(&ev, 1), vec![(0, Some(Resource::Signal { pid: 1 }))]);
    assert_eq!(wakeups(&ev, 1), vec![(11 * MS, 2)], "the exiting child wakes its parent");
    assert_eq!(exits(&ev, 1, Syscall::Wait4), vec![(11 * MS, 2)], "wait4 returns the child's pid");
    assert_eq!(turnaround(&r, "parent"), 11 * MS);
    let c = r.tasks.iter().find(|t| t.pid == 2).expect("the child is reported");
    assert_eq!(c.ppid, 1);
    assert_eq!(c.turnaround_ns, 11 * MS);
}

#[test]
fn wait4_reaps_children_as_they_exit() {
    // Children exiting at 10 ms (pid 2) and 20 ms (pid 3); each wait4 blocks for one.
    let mut w = Workload::default();
    let c1 = w.add_program(Program::new("c1").op(Op::Sleep(10 * MS)));
    let c2 = w.add_program(Program::new("c2").op(Op::Sleep(20 * MS)));
    let parent = Program::new("parent")
        .op(Op::Fork { program: c1, thread: false })
        .op(Op::Fork { program: c2, thread: false })
        .op(Op::Wait)
        .op(Op::Wait)
        .op(Op::Wait);
    spawn(&mut w, "parent", parent, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Wait4), vec![(10 * MS, 2), (20 * MS, 3), (20 * MS, -10)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS, 2), (20 * MS, 3)]);
}

#[test]
fn wait4_without_children_fails_with_echild() {
    let mut w = Workload::default();
    spawn(&mut w, "lonely", Program::new("lonely").op(Op::Wait).op(Op::Compute(MS)), vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Wait4), vec![(0, -10)]);
    assert_eq!(blocks(&ev, 1), vec![]);
    assert_eq!(turnaround(&r, "lonely"), MS);
}

#[test]
fn wait4_for_an_exited_child_returns_at_once() {
    // The child exits at once; the parent's wait4 at 10 ms reaps it without blocking.
    let mut w = Workload::default();
    let child = w.add_program(Program::new("child").op(Op::Exit));
    let parent = Program::new("parent")
        .op(Op::Fork { program: child, thread: false })
        .op(Op::Sleep(10 * MS))
        .op(Op::Wait);
    spawn(&mut w, "parent", parent, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    let waits = exits(&ev, 1, Syscall::Wait4);
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].0, 10 * MS);
    assert!(waits[0].1 >= 0, "wait4 succeeds: {waits:?}");
    assert_eq!(blocks(&ev, 1), vec![(0, None)], "only the sleep blocks");
    assert_eq!(turnaround(&r, "parent"), 10 * MS);
}

#[test]

fn wait4_for_an_exited_child_returns_its_pid() {
    let mut w = Workload::default();
    let child = w.add_program(Program::new("child").op(Op::Exit));
    let parent = Program::new("parent")
        .op(Op::Fork { program: child, thread: false })
        .op(Op::Sleep(10 * MS))
        .op(Op::Wait);
    spawn(&mut w, "parent", parent, vec![], 0);
    let (_, ev) = exact(&w, 1);
    assert_eq!(
        exits(&ev, 1, Syscall::Wait4),
        vec![(10 * MS, 2)],
        "POSIX: wait4 returns the reaped child's pid"
    );
}

#[test]
fn kill_parent_wakes_a_pausing_parent() {
    let mut w = Workload::default();
    let child = w.add_program(
        Program::new("child").op(Op::Sleep(3 * MS)).op(Op::Kill { target: SignalTarget::Parent, sig: 17 }),
    );
    let parent =
        Program::new("parent").op(Op::Fork { program: child, thread: false }).op(Op::Pause).op(Op::Wait);
    spawn(&mut w, "parent", parent, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Pause), vec![(3 * MS, -4)]);
    assert_eq!(wakeups(&ev, 1)[0], (3 * MS, 2));
    assert_eq!(turnaround(&r, "parent"), 3 * MS);
}

// ---- flock ----------------------------------------------------------------------------

fn flock(op: FlockOp) -> Op {
    Op::Flock { fd: 0, op }
}

/// The lock kind waited for, when `seen` is exactly one Block on a flock.
fn flock_block(seen: &[(u64, Option<Resource>)]) -> Option<FlockKind> {
    match seen {
        [(_, Some(Resource::Flock { lock, .. }))] => Some(*lock),
        _ => None,
    }
}

#[test]
fn flock_exclusive_holder_blocks_shared_and_exclusive_until_unlock() {
    // A holds EX from 0 to 10 ms. B (SH, at 1 ms), C (EX, at 2 ms) and D (SH, at 3 ms)
    // queue. At 10 ms both shared waiters B and D are granted (C is incompatible with
    // B's lock, so D is not kept behind it); C waits for both: D unlocks at 15 ms, B
    // at 20 ms, and C gets the lock at 20 ms from B.
    let mut w = Workload::default();
    let f = w.add_object(ObjectSpec::File);
    let file = vec![fd(f, End::Whole)];
    let a = Program::new("a").op(flock(FlockOp::Exclusive)).op(Op::Sleep(10 * MS)).op(flock(FlockOp::Unlock));
    spawn(&mut w, "a", a, file.clone(), 0);
    let b = Program::new("b").op(flock(FlockOp::Shared)).op(Op::Sleep(10 * MS)).op(flock(FlockOp::Unlock));
    spawn(&mut w, "b", b, file.clone(), MS);
    let c = Program::new("c").op(flock(FlockOp::Exclusive)).op(Op::Compute(MS)).op(flock(FlockOp::Unlock));
    spawn(&mut w, "c", c, file.clone(), 2 * MS);
    let d = Program::new("d").op(flock(FlockOp::Shared)).op(Op::Sleep(5 * MS)).op(flock(FlockOp::Unlock));
    spawn(&mut w, "d", d, file, 3 * MS);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    assert_eq!(flock_block(&blocks(&ev, 2)[..1]), Some(FlockKind::Shared));
    assert_eq!(flock_block(&blocks(&ev, 3)[..1]), Some(FlockKind::Exclusive));
    assert_eq!(flock_block(&blocks(&ev, 4)[..1]), Some(FlockKind::Shared));
    assert_eq!((blocks(&ev, 2)[0].0, blocks(&ev, 3)[0].0, blocks(&ev, 4)[0].0), (MS, 2 * MS, 3 * MS));
    assert_eq!(wakeups(&ev, 2)[0], (10 * MS, 1), "B granted by A's unlock");
    assert_eq!(wakeups(&ev, 4)[0], (10 * MS, 1), "D granted by A's unlock");
    assert_eq!(wakeups(&ev, 3), vec![(20 * MS, 2)], "C granted when the last shared lock (B) goes");
    assert_eq!(exits(&ev, 2, Syscall::Flock), vec![(10 * MS, 0), (20 * MS, 0)]);
    assert_eq!(exits(&ev, 4, Syscall::Flock), vec![(10 * MS, 0), (15 * MS, 0)]);
    assert_eq!(exits(&ev, 3, Syscall::Flock), vec![(20 * MS, 0), (21 * MS, 0)]);
    assert_eq!(r.makespan_ns, 21 * MS);
}

#[test]
fn flock_two_shared_holders_coexist() {
    // A and B both take SH without blocking; C's EX waits for both to unlock (A at
    // 10 ms, B at 20 ms).
    let mut w = Workload::default();
    let f = w.add_object(ObjectSpec::File);
    let file = vec![fd(f, End::Whole)];
    let holder = |name: &str, hold: u64| {
        Program::new(name).op(flock(FlockOp::Shared)).op(Op::Sleep(hold)).op(flock(FlockOp::Unlock))
    };
    spawn(&mut w, "a", holder("a", 10 * MS), file.clone(), 0);
    spawn(&mut w, "b", holder("b", 19 * MS), file.clone(), MS);
    spawn(&mut w, "c", Program::new("c").op(flock(FlockOp::Exclusive)), file, 2 * MS);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Flock), vec![(0, 0), (10 * MS, 0)]);
    assert_eq!(
        exits(&ev, 2, Syscall::Flock),
        vec![(MS, 0), (20 * MS, 0)],
        "B's shared lock is granted at once"
    );
    assert!(!blocks(&ev, 2).iter().any(|b| b.1.is_some()), "B never waits for the lock");
    assert_eq!(flock_block(&blocks(&ev, 3)), Some(FlockKind::Exclusive));
    assert_eq!(wakeups(&ev, 3), vec![(20 * MS, 2)]);
    assert_eq!(turnaround(&r, "c"), 18 * MS);
}

#[test]
fn flock_is_released_when_its_holder_exits() {
    let mut w = Workload::default();
    let f = w.add_object(ObjectSpec::File);
    let file = vec![fd(f, End::Whole)];
    spawn(
        &mut w,
        "a",
        Program::new("a").op(flock(FlockOp::Exclusive)).op(Op::Sleep(10 * MS)),
        file.clone(),
        0,
    );
    spawn(&mut w, "b", Program::new("b").op(flock(FlockOp::Exclusive)).op(Op::Compute(MS)), file.clone(), MS);
    spawn(&mut w, "c", Program::new("c").op(flock(FlockOp::Shared)).op(Op::Compute(MS)), file, 2 * MS);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(wakeups(&ev, 2), vec![(10 * MS, 1)], "A's exit hands the lock to B");
    assert_eq!(exits(&ev, 2, Syscall::Flock), vec![(10 * MS, 0)]);
    // B exits at 11 ms, still holding its lock: C gets its shared lock then.
    assert_eq!(wakeups(&ev, 3), vec![(11 * MS, 2)]);
    assert_eq!(exits(&ev, 3, Syscall::Flock), vec![(11 * MS, 0)]);
    assert_eq!(r.makespan_ns, 12 * MS);
}

// ---- waitpid in fork order, poll, the life of a process ------------------------------

#[test]
fn waitpid_of_the_oldest_child_waits_for_it_alone() {
    // pid 2 exits at 20 ms, pid 3 at 10 ms. waitpid(2) sleeps through pid 3's exit (not
    // woken: it waits for pid 2 only) and returns at 20 ms; waitpid(3) then reaps the
    // zombie at once; a third call has no child left.
    let mut w = Workload::default();
    let late = w.add_program(Program::new("late").op(Op::Sleep(20 * MS)));
    let early = w.add_program(Program::new("early").op(Op::Sleep(10 * MS)));
    let parent = Program::new("parent")
        .op(Op::Fork { program: late, thread: false })
        .op(Op::Fork { program: early, thread: false })
        .op(Op::WaitOldest)
        .op(Op::WaitOldest)
        .op(Op::WaitOldest);
    spawn(&mut w, "parent", parent, vec![], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Wait4), vec![(20 * MS, 2), (20 * MS, 3), (20 * MS, -10)]);
    assert_eq!(wakeups(&ev, 1), vec![(20 * MS, 2)], "pid 3's exit does not wake the parent");
}

#[test]
fn every_poller_wakes_at_one_write_and_nothing_is_read() {
    // Three tasks poll an empty pipe; the writer's one byte at 10 ms wakes all three
    // (pollers are not exclusive waiters), and the byte is still there for the reader.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    for n in 0..3 {
        spawn(
            &mut w,
            &format!("poller{n}"),
            Program::new("poller").op(Op::Poll { fd: 0 }),
            vec![fd(pipe, End::Read)],
            0,
        );
    }
    let writer = Program::new("writer").op(Op::Sleep(10 * MS)).op(Op::Write { fd: 0, bytes: 1 });
    spawn(&mut w, "writer", writer, vec![fd(pipe, End::Write)], 0);
    let reader = Program::new("reader").op(Op::Sleep(20 * MS)).op(Op::Read { fd: 0, bytes: 1 });
    spawn(&mut w, "reader", reader, vec![fd(pipe, End::Read)], 0);
    let (r, ev) = exact(&w, 2);
    all_exited(&r);
    for pid in 1..=3 {
        assert!(matches!(blocks(&ev, pid)[..], [(0, Some(Resource::Pipe { write: false, .. }))]), "{pid}");
        assert_eq!(wakeups(&ev, pid), vec![(10 * MS, 4)], "poller {pid}");
        assert_eq!(exits(&ev, pid, Syscall::Poll), vec![(10 * MS, 1)], "poller {pid}");
    }
    assert_eq!(exits(&ev, 5, Syscall::Read), vec![(20 * MS, 1)], "poll took nothing");
}

#[test]
fn poll_returns_at_once_on_data_or_when_the_writers_are_gone() {
    let mut w = Workload::default();
    let (full, closed) = (
        w.add_object(ObjectSpec::Pipe { capacity: None }),
        w.add_object(ObjectSpec::Pipe { capacity: None }),
    );
    spawn(
        &mut w,
        "writer",
        Program::new("writer").op(Op::Write { fd: 0, bytes: 1 }),
        vec![fd(full, End::Write)],
        0,
    );
    let poller = Program::new("poller").op(Op::Sleep(MS)).op(Op::Poll { fd: 0 }).op(Op::Poll { fd: 1 });
    // The second pipe's only writer is the task "gone", which exits at once.
    spawn(&mut w, "poller", poller, vec![fd(full, End::Read), fd(closed, End::Read)], 0);
    spawn(&mut w, "gone", Program::new("gone").op(Op::Exit), vec![fd(closed, End::Write)], 0);
    let (r, ev) = exact(&w, 1);
    all_exited(&r);
    assert_eq!(exits(&ev, 2, Syscall::Poll), vec![(MS, 1), (MS, 1)]);
    assert_eq!(blocks(&ev, 2), vec![(0, None)], "only the sleep blocks");
}

#[test]
fn a_process_pays_its_exit_and_its_parent_its_fork() {
    // fork_ns 3 ms in the parent's fork, exit_ns 2 ms at the end of each process: the
    // child (1 ms of work) starts at 3 ms and is dead at 3 + 1 + 2 = 6 ms; the parent's
    // wait4 returns then, and the parent is dead 2 ms later. One CPU.
    let mut w = Workload::default();
    let child = w.add_program(Program::new("child").op(Op::Compute(MS)));
    let parent = Program::new("parent").op(Op::Fork { program: child, thread: false }).op(Op::Wait);
    spawn(&mut w, "parent", parent, vec![], 0);
    let (r, ev) = exact_with(&w, 1, &[("fork_ns", "3ms"), ("exit_ns", "2ms")]);
    all_exited(&r);
    assert_eq!(exits(&ev, 1, Syscall::Fork), vec![(3 * MS, 2)]);
    assert_eq!(exits(&ev, 1, Syscall::Wait4), vec![(6 * MS, 2)]);
    assert_eq!(turnaround(&r, "parent"), 8 * MS);
    let c = r.tasks.iter().find(|t| t.pid == 2).unwrap();
    assert_eq!((c.runtime_ns, c.turnaround_ns), (3 * MS, 3 * MS), "1 ms of work and 2 ms of exit");
}

#[test]
fn only_the_last_thread_of_a_process_pays_its_exit() {
    // A process of two threads: the first (1 ms of work) exits at once, the second
    // (3 ms) is the last and pays exit_ns 2 ms. Two CPUs; threads pay no fork_ns.
    let mut w = Workload::default();
    let thread = w.add_program(Program::new("thread").op(Op::Compute(3 * MS)));
    let main = Program::new("main").op(Op::Fork { program: thread, thread: true }).op(Op::Compute(MS));
    spawn(&mut w, "main", main, vec![], 0);
    let (r, _) = exact_with(&w, 2, &[("fork_ns", "3ms"), ("exit_ns", "2ms")]);
    all_exited(&r);
    assert_eq!(turnaround(&r, "main"), MS);
    let t = r.tasks.iter().find(|t| t.pid == 2).unwrap();
    assert_eq!(t.turnaround_ns, 5 * MS);
}

#[test]
fn an_idle_cpu_runs_work_sent_to_it_only_after_its_exit_latency() {
    // The reader blocks in read on CPU 1, the writer sleeps 10 ms on CPU 0: both CPUs
    // are asleep. With idle_exit_ns 50 µs the writer's timer gets it running at
    // 10.05 ms, when it writes and wakes the reader, whose CPU runs it at 10.1 ms. At
    // t = 0 nothing is asleep yet: both start at once.
    let mut w = Workload::default();
    let pipe = w.add_object(ObjectSpec::Pipe { capacity: None });
    let p = w.add_program(Program::new("reader").op(Op::Read { fd: 0, bytes: 1 }));
    w.tasks.push(TaskSpec {
        fds: vec![fd(pipe, End::Read)],
        affinity: Some(vec![1]),
        ..TaskSpec::new("reader", p)
    });
    let p = w.add_program(Program::new("writer").op(Op::Sleep(10 * MS)).op(Op::Write { fd: 0, bytes: 1 }));
    w.tasks.push(TaskSpec {
        fds: vec![fd(pipe, End::Write)],
        affinity: Some(vec![0]),
        ..TaskSpec::new("writer", p)
    });
    let (r, ev) = exact_with(&w, 2, &[("idle_exit_ns", "50us")]);
    all_exited(&r);
    assert_eq!(exits(&ev, 2, Syscall::Write), vec![(10 * MS + 50_000, 1)]);
    assert_eq!(wakeups(&ev, 1), vec![(10 * MS + 50_000, 2)]);
    assert_eq!(exits(&ev, 1, Syscall::Read), vec![(10 * MS + 100_000, 1)]);
    assert_eq!(
        blocks(&ev, 1),
        vec![(0, Some(Resource::Pipe { inode: 10_000, write: false }))],
        "it ran at 0"
    );
    let (r0, ev0) = exact(&w, 2);
    all_exited(&r0);
    assert_eq!(exits(&ev0, 1, Syscall::Read), vec![(10 * MS, 1)], "no latency by default");
}

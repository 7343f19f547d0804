//! Running programs: each operation's CPU cost, its system-call events, and its effect
//! on IPC objects, timers, signals and children.

use rand::Rng;
use schedlab_model::{EventKind, FlockKind, Life, Ns, Pid, Resource, Syscall, SyscallArgs};

use super::ipc::Attempt;
use super::task::{LoopFrame, Phase, State, Task, Wait};
use super::Engine;
use crate::class::{Dequeue, Enqueue, FairClass};
use crate::program::{FlockOp, Op, SignalTarget};

const ECHILD: i64 = -10;
const ESRCH: i64 = -3;
const EINTR: i64 = -4;
const EBADF: i64 = -9;

impl<F: FairClass> Engine<'_, F> {
    /// The system call an operation makes, with the arguments the event stream reports
    /// (fds numbered after stdin, stdout and stderr; the resource resolved).
    fn syscall_of(&self, op: &Op, pid: u32) -> (u32, SyscallArgs) {
        let t = &self.tasks[pid as usize];
        let a = SyscallArgs::default();
        // The fd's number and the resource an operation through it acts on.
        let on = |f: u16, write: bool, num: u16, lock: FlockKind| -> SyscallArgs {
            let target = t.fds.get(f as usize);
            let resource =
                target.map(|x| self.objs[x.object as usize].resource(x.object, x.end, write, num, lock));
            let sysv_id = target.map(|x| x.object as i32);
            SyscallArgs { fd: Some(i32::from(f) + 3), sysv_id, resource, ..a }
        };
        let ex = FlockKind::Exclusive;
        match *op {
            Op::Sleep(_) | Op::Timer { .. } => (Syscall::ClockNanosleep.nr(), a),
            Op::Lock { .. }
            | Op::Unlock { .. }
            | Op::CondWait { .. }
            | Op::CondSignal { .. }
            | Op::Barrier { .. } => (Syscall::Futex.nr(), a),
            Op::SetAffinity { .. } => (Syscall::SchedSetaffinity.nr(), a),
            Op::SetSched { .. } => (Syscall::SchedSetscheduler.nr(), a),
            Op::SetGroup { .. } => (Syscall::Write.nr(), a),
            Op::Yield => (Syscall::SchedYield.nr(), a),
            Op::Fork { thread: true, .. } => (Syscall::Clone.nr(), a),
            Op::Fork { .. } => (Syscall::Fork.nr(), a),
            Op::Wait | Op::WaitOldest => {
                let resource = Some(Resource::Signal { pid });
                let target = match op {
                    Op::WaitOldest => t.unreaped.front().map_or(-1, |&c| c as i32),
                    _ => -1,
                };
                (Syscall::Wait4.nr(), SyscallArgs { target_pid: Some(target), resource, ..a })
            }
            Op::Poll { fd } => (Syscall::Poll.nr(), SyscallArgs { sysv_id: None, ..on(fd, false, 0, ex) }),
            Op::Write { fd, bytes } => {
                let count = Some(i64::from(bytes - t.progress));
                (Syscall::Write.nr(), SyscallArgs { count, sysv_id: None, ..on(fd, true, 0, ex) })
            }
            Op::Read { fd, bytes } => {
                let count = Some(i64::from(bytes - t.progress));
                (Syscall::Read.nr(), SyscallArgs { count, sysv_id: None, ..on(fd, false, 0, ex) })
            }
            Op::SemOp { fd, num, delta } => (
                Syscall::Semop.nr(),
                SyscallArgs { count: Some(i64::from(delta)), fd: None, ..on(fd, false, num, ex) },
            ),
            Op::MsgSnd { fd, bytes } => (
                Syscall::Msgsnd.nr(),
                SyscallArgs { count: Some(i64::from(bytes)), fd: None, ..on(fd, true, 0, ex) },
            ),
            Op::MsgRcv { fd } => (Syscall::Msgrcv.nr(), SyscallArgs { fd: None, ..on(fd, false, 0, ex) }),
            Op::Kill { target, sig } => {
                let to = self.signal_target(pid, target);
                let args = SyscallArgs {
                    target_pid: Some(to as i32),
                    signal: Some(i32::from(sig)),
                    resource: Some(Resource::Signal { pid: to }),
                    ..a
                };
                (Syscall::Kill.nr(), args)
            }
            Op::Pause | Op::SigTimedWait { .. } => {
                let nr = if *op == Op::Pause { Syscall::Pause } else { Syscall::RtSigtimedwait };
                (nr.nr(), SyscallArgs { resource: Some(Resource::Signal { pid }), ..a })
            }
            Op::Flock { fd, op } => {
                let (raw, lock) = match op {
                    FlockOp::Shared => (1, FlockKind::Shared),
                    FlockOp::Exclusive => (2, ex),
                    FlockOp::Unlock => (8, ex),
                };
                (
                    Syscall::Flock.nr(),
                    SyscallArgs { flock_op: Some(raw), sysv_id: None, ..on(fd, false, 0, lock) },
                )
            }
            Op::Syscall { nr } => (nr, a),
            Op::Compute(_)
            | Op::Memset(_)
            | Op::Spin(_)
            | Op::Io(_)
            | Op::Loop { .. }
            | Op::LoopEnd
            | Op::Exit => (Syscall::ExitGroup.nr(), a),
        }
    }

    /// The pid a signal goes to.
    fn signal_target(&self, pid: u32, target: SignalTarget) -> u32 {
        match target {
            SignalTarget::Task(i) => i + 1,
            SignalTarget::Parent => self.tasks[pid as usize].ppid,
        }
    }

    fn op(&self, pid: u32) -> Option<Op> {
        let t = &self.tasks[pid as usize];
        self.programs[t.program as usize].ops.get(t.pc as usize).copied()
    }

    fn jitter(&mut self, ns: Ns) -> Ns {
        let pct = self.t.jitter_pct;
        if pct == 0 || ns == 0 {
            return ns;
        }
        let spread = ns * pct / 100;
        self.rng.random_range(ns - spread..=ns + spread)
    }

    /// The running task finished the CPU work of its current step.
    pub(super) fn step_done(&mut self, pid: u32) {
        match self.tasks[pid as usize].phase {
            Phase::Next => self.run_ops(pid),
            Phase::Compute => {
                self.next_op(pid);
                self.run_ops(pid);
            }
            Phase::Syscall | Phase::Retry => self.attempt(pid),
            Phase::Completed(ret) => self.finish_syscall(pid, ret),
            Phase::Exiting => self.exit_task(pid),
        }
    }

    fn next_op(&mut self, pid: u32) {
        let t = &mut self.tasks[pid as usize];
        t.pc += 1;
        t.progress = 0;
        t.phase = Phase::Next;
    }

    /// Interprets operations from `pc` until one needs CPU time, blocks, or exits.
    fn run_ops(&mut self, pid: u32) {
        loop {
            let Some(op) = self.op(pid) else {
                self.begin_exit(pid);
                return;
            };
            if self.sync_fast_path(pid, &op) {
                self.next_op(pid);
                continue;
            }
            let t = &mut self.tasks[pid as usize];
            match op {
                Op::Loop { count } => {
                    let left = if count == 0 { u32::MAX } else { count };
                    t.loops.push(LoopFrame { start: t.pc, left });
                    t.pc += 1;
                }
                Op::LoopEnd => {
                    let f = t.loops.last_mut().expect("validated: LoopEnd closes a Loop");
                    if f.left != u32::MAX {
                        f.left -= 1;
                    }
                    if f.left > 0 {
                        t.pc = f.start + 1;
                    } else {
                        t.loops.pop();
                        t.pc += 1;
                    }
                }
                Op::Compute(ns) => return self.compute(pid, ns),
                Op::Memset(bytes) => return self.compute(pid, bytes * self.t.mem_ns_per_kib / 1024),
                Op::Spin(ns) => {
                    t.spin_until = self.now + ns.max(1);
                    t.phase = Phase::Compute;
                    self.start_stint(pid);
                    return;
                }
                Op::Io(ns) => {
                    let until = self.now + self.jitter(ns);
                    self.block(pid, Wait::Io, None, Some(until));
                    return;
                }
                Op::Exit => {
                    self.begin_exit(pid);
                    return;
                }
                _ => {
                    self.enter_syscall(pid, &op);
                    return;
                }
            }
        }
    }

    /// Starts `ns` of CPU work (spread by the jitter) for `pid`.
    fn compute(&mut self, pid: u32, ns: Ns) {
        let work = self.jitter(ns);
        let t = &mut self.tasks[pid as usize];
        t.work = work;
        t.phase = Phase::Compute;
        self.start_stint(pid);
    }

    /// Emits the entry of `op`'s system call and charges its cost (entry, exit and the
    /// copy of the bytes it moves).
    fn enter_syscall(&mut self, pid: u32, op: &Op) {
        let bytes = match *op {
            Op::Write { bytes, .. } | Op::Read { bytes, .. } => bytes - self.tasks[pid as usize].progress,
            Op::MsgSnd { bytes, .. } => bytes,
            _ => 0,
        };
        self.emit(|e| {
            let (nr, args) = e.syscall_of(op, pid);
            EventKind::SyscallEnter { pid: Pid(pid), nr, args }
        });
        let fork = if matches!(op, Op::Fork { thread: false, .. }) { self.t.fork_ns } else { 0 };
        let cost = self.jitter(self.t.syscall_ns + fork + u64::from(bytes) * self.t.copy_ns_per_kib / 1024);
        let t = &mut self.tasks[pid as usize];
        t.work = cost;
        t.phase = Phase::Syscall;
        self.start_stint(pid);
    }

    /// Emits the system call's exit; the operation is over and the next one starts.
    pub(super) fn finish_syscall(&mut self, pid: u32, ret: i64) {
        self.exit_event(pid, ret);
        self.next_op(pid);
        self.run_ops(pid);
    }

    fn exit_event(&mut self, pid: u32, ret: i64) {
        self.emit(|e| {
            let t = &e.tasks[pid as usize];
            let op = e.programs[t.program as usize].ops[t.pc as usize];
            EventKind::SyscallExit { pid: Pid(pid), nr: e.syscall_of(&op, pid).0, ret }
        });
    }

    /// Wakes every task in `pids` (woken by `waker`), each resuming with `phase`.
    fn wake_list(&mut self, waker: u32, pids: &[u32], phase: Phase) {
        for &p in pids {
            self.wake(p, waker, phase);
        }
    }

    fn fd_target(&self, pid: u32, fd: u16) -> Option<crate::FdTarget> {
        self.tasks[pid as usize].fds.get(fd as usize).copied()
    }

    /// Performs the effect of the system call at `pc`, whose entry cost is paid.
    fn attempt(&mut self, pid: u32) {
        let op = self.op(pid).expect("a system call is in progress");
        let now = self.now;
        let mut wake = Vec::new();
        match op {
            Op::Sleep(ns) => self.block(pid, Wait::Timer, None, Some(now + ns)),
            Op::Timer { .. }
            | Op::Lock { .. }
            | Op::Unlock { .. }
            | Op::CondWait { .. }
            | Op::CondSignal { .. }
            | Op::Barrier { .. }
            | Op::SetAffinity { .. }
            | Op::SetSched { .. }
            | Op::SetGroup { .. } => self.sync_attempt(pid, op),
            Op::Yield => self.do_yield(pid),
            Op::Fork { program, thread } => {
                let child = self.fork(pid, program, thread);
                self.finish_syscall(pid, i64::from(child));
            }
            Op::Wait => {
                let t = &mut self.tasks[pid as usize];
                if !t.zombies.is_empty() {
                    let child = t.zombies.remove(0);
                    t.reaped(child);
                    self.finish_syscall(pid, i64::from(child));
                } else if t.children == 0 {
                    self.finish_syscall(pid, ECHILD);
                } else {
                    self.block(pid, Wait::Child, Some(Resource::Signal { pid }), None);
                }
            }
            Op::WaitOldest => {
                let t = &mut self.tasks[pid as usize];
                match t.unreaped.front().copied() {
                    None => self.finish_syscall(pid, ECHILD),
                    Some(child) => match t.zombies.iter().position(|&z| z == child) {
                        Some(i) => {
                            t.zombies.remove(i);
                            t.reaped(child);
                            self.finish_syscall(pid, i64::from(child));
                        }
                        None => self.block(pid, Wait::Child, Some(Resource::Signal { pid }), None),
                    },
                }
            }
            Op::Poll { fd } => {
                let Some(target) = self.fd_target(pid, fd) else { return self.finish_syscall(pid, EBADF) };
                match self.objs[target.object as usize].poll_in(pid, target) {
                    Attempt::Block(r) => self.block(pid, Wait::Object, Some(r), None),
                    Attempt::Done(ret) => self.finish_syscall(pid, ret),
                }
            }
            Op::Write { fd, bytes } => {
                let Some(target) = self.fd_target(pid, fd) else { return self.finish_syscall(pid, EBADF) };
                let done = self.tasks[pid as usize].progress;
                match self.objs[target.object as usize].write(pid, target, bytes, done, &mut wake) {
                    Attempt::Done(n) if n > 0 => {
                        self.wake_list(pid, &wake, Phase::Retry);
                        let t = &mut self.tasks[pid as usize];
                        t.progress += n as u32;
                        if t.progress < bytes {
                            // The rest waits for room inside the same call.
                            self.attempt(pid);
                        } else {
                            self.finish_syscall(pid, i64::from(bytes));
                        }
                    }
                    // A write cut short by the last reader leaving returns what it wrote;
                    // only a call that wrote nothing fails (EPIPE).
                    Attempt::Done(err) => {
                        let written = i64::from(self.tasks[pid as usize].progress);
                        self.finish_syscall(pid, if written > 0 { written } else { err });
                    }
                    Attempt::Block(r) => self.block(pid, Wait::Object, Some(r), None),
                }
            }
            Op::Read { fd, bytes } => {
                let Some(target) = self.fd_target(pid, fd) else { return self.finish_syscall(pid, EBADF) };
                let want = bytes - self.tasks[pid as usize].progress;
                match self.objs[target.object as usize].read(pid, target, want, &mut wake) {
                    Attempt::Done(n) if n > 0 => {
                        self.wake_list(pid, &wake, Phase::Retry);
                        self.tasks[pid as usize].progress += n as u32;
                        if self.tasks[pid as usize].progress < bytes {
                            // Short read: the program reads again for the rest.
                            self.exit_event(pid, n);
                            self.enter_syscall(pid, &op);
                        } else {
                            self.finish_syscall(pid, n);
                        }
                    }
                    Attempt::Done(ret) => self.finish_syscall(pid, ret),
                    Attempt::Block(r) => self.block(pid, Wait::Object, Some(r), None),
                }
            }
            Op::SemOp { fd, num, delta } => {
                let Some(target) = self.fd_target(pid, fd) else { return self.finish_syscall(pid, EBADF) };
                let id = target.object as i32;
                let attempt = self.objs[target.object as usize].semop(pid, id, num, delta, &mut wake);
                self.settle(pid, attempt, wake.iter().map(|&p| (p, 0)));
            }
            Op::MsgSnd { fd, bytes } => {
                let Some(target) = self.fd_target(pid, fd) else { return self.finish_syscall(pid, EBADF) };
                let mut handed = Vec::new();
                let attempt =
                    self.objs[target.object as usize].msgsnd(pid, target.object as i32, bytes, &mut handed);
                self.settle(pid, attempt, handed);
            }
            Op::MsgRcv { fd } => {
                let Some(target) = self.fd_target(pid, fd) else { return self.finish_syscall(pid, EBADF) };
                let mut handed = Vec::new();
                let attempt =
                    self.objs[target.object as usize].msgrcv(pid, target.object as i32, &mut handed);
                self.settle(pid, attempt, handed);
            }
            Op::Kill { target, sig } => {
                let ret = self.kill(pid, target, sig);
                self.finish_syscall(pid, ret);
            }
            Op::Pause | Op::SigTimedWait { .. } => {
                let t = &mut self.tasks[pid as usize];
                if t.pending_signals > 0 {
                    t.pending_signals -= 1;
                    let ret = if op == Op::Pause { EINTR } else { i64::from(t.last_signal) };
                    self.finish_syscall(pid, ret);
                } else {
                    let until = match op {
                        Op::SigTimedWait { timeout } => Some(now + timeout),
                        _ => None,
                    };
                    self.block(pid, Wait::Signal, Some(Resource::Signal { pid }), until);
                }
            }
            Op::Flock { fd, op: lock } => {
                let Some(target) = self.fd_target(pid, fd) else { return self.finish_syscall(pid, EBADF) };
                let attempt = self.objs[target.object as usize].flock(pid, lock, &mut wake);
                self.settle(pid, attempt, wake.iter().map(|&p| (p, 0)));
            }
            Op::Syscall { .. } => self.finish_syscall(pid, 0),
            Op::Compute(_)
            | Op::Memset(_)
            | Op::Spin(_)
            | Op::Io(_)
            | Op::Loop { .. }
            | Op::LoopEnd
            | Op::Exit => {
                unreachable!("not a system call: {op:?}")
            }
        }
    }

    /// Ends an attempt on an object that completes its waiters' calls itself
    /// (semaphores, queues, locks): each of `completed` wakes with its result and `pid`
    /// returns, or `pid` blocks.
    fn settle(&mut self, pid: u32, attempt: Attempt, completed: impl IntoIterator<Item = (u32, i64)>) {
        match attempt {
            Attempt::Done(ret) => {
                for (p, r) in completed {
                    self.wake(p, pid, Phase::Completed(r));
                }
                self.finish_syscall(pid, ret);
            }
            Attempt::Block(r) => self.block(pid, Wait::Object, Some(r), None),
        }
    }

    /// `sched_yield()`: the class moves the task back; it continues with its next
    /// operation when it runs again.
    fn do_yield(&mut self, pid: u32) {
        self.exit_event(pid, 0);
        self.next_op(pid);
        let cpu = self.tasks[pid as usize].cpu;
        if self.is_rt(pid) {
            self.tasks[pid as usize].requeue_tail = true;
        } else {
            // yield_task_fair: its own queue only; it is no longer a buddy.
            let q = self.task_q(pid);
            self.clear_buddies(q, pid);
            let alone = self.cfs[cpu as usize].h_nr_queued <= 1;
            self.fair.yield_curr(&mut self.cfs[q as usize].fair, &mut self.ents, alone);
        }
        self.resched(cpu);
    }

    /// `kill()`: a task waiting for a signal wakes with it; otherwise it stays pending
    /// (signals are blocked outside pause/sigtimedwait, the sigsuspend idiom).
    fn kill(&mut self, pid: u32, target: SignalTarget, sig: u8) -> i64 {
        let to = self.signal_target(pid, target);
        let Some(t) = self.tasks.get_mut(to as usize).filter(|t| to != 0 && t.state != State::Dead) else {
            return ESRCH;
        };
        t.last_signal = sig;
        if t.state == State::Blocked && t.wait == Wait::Signal {
            let op = self.op(to);
            let ret = if op == Some(Op::Pause) { EINTR } else { i64::from(sig) };
            self.wake(to, pid, Phase::Completed(ret));
        } else {
            t.pending_signals += 1;
        }
        0
    }

    /// `fork()`/`clone()`: a child with a copy of the fd table, policy and affinity.
    fn fork(&mut self, parent: u32, program: u32, thread: bool) -> u32 {
        let child = self.tasks.len() as u32;
        let p = &mut self.tasks[parent as usize];
        p.children += 1;
        p.unreaped.push_back(child);
        let comm = self.programs[program as usize].comm.clone();
        let mut t = Task::new(child, comm, program, p.fds.clone(), p.affinity.clone());
        t.ppid = parent;
        t.tgid = if thread { p.tgid } else { child };
        t.cpu = p.cpu;
        t.group = p.group;
        let pe = &self.ents[parent];
        let slice = pe.custom_slice.then_some(pe.slice);
        let ent = self.new_entity(pe.policy, pe.nice, pe.rt_priority, slice);
        for fd in &t.fds {
            self.objs[fd.object as usize].adjust_ends(fd.end, 1, &mut Vec::new());
        }
        let leader = t.tgid;
        self.tasks.push(t);
        self.tasks[leader as usize].live_threads += 1;
        self.ents.tasks.push(ent);
        self.alive += 1;
        self.emit(|_| EventKind::Fork { parent: Pid(parent), child: Pid(child), thread });
        self.start_task(child);
        child
    }

    /// Whether `parent` is blocked in a wait that `child`'s exit ends: `wait4(-1)`, or
    /// `waitpid` of that child.
    fn waits_for(&self, parent: u32, child: u32) -> bool {
        let p = &self.tasks[parent as usize];
        p.state == State::Blocked
            && p.wait == Wait::Child
            && match self.op(parent) {
                Some(Op::WaitOldest) => p.unreaped.front() == Some(&child),
                _ => true,
            }
    }

    /// The task's program is over: the last task of its process first pays for the
    /// process's teardown (`exit_ns`), then it exits; other threads exit at once.
    fn begin_exit(&mut self, pid: u32) {
        let leader = self.tasks[pid as usize].tgid;
        if self.t.exit_ns > 0 && self.tasks[leader as usize].live_threads == 1 {
            let t = &mut self.tasks[pid as usize];
            t.work = self.t.exit_ns;
            t.phase = Phase::Exiting;
            self.start_stint(pid);
        } else {
            self.exit_task(pid);
        }
    }

    /// The task exits: its fds close (waking readers at EOF and writers at a broken
    /// pipe), its locks go, its parent is told.
    fn exit_task(&mut self, pid: u32) {
        let now = self.now;
        let cpu = self.tasks[pid as usize].cpu;
        if self.rqs[cpu as usize].curr == pid {
            self.account(cpu);
        }
        let s = &self.tasks[pid as usize].stats;
        let life = Life {
            runtime_ns: s.cpu_ns,
            wait_ns: s.wait_ns,
            lived_ns: now - s.started,
            nvcsw: s.nvcsw,
            nivcsw: s.nivcsw,
        };
        self.emit(|_| EventKind::Exit { pid: Pid(pid), code: 0, life: Some(life) });
        let t = &mut self.tasks[pid as usize];
        t.state = State::Dead;
        t.stats.exited = Some(now);
        let (cpu, ppid) = (t.cpu, t.ppid);
        let fds = std::mem::take(&mut t.fds);
        self.alive -= 1;
        self.last_exit = now;
        self.dequeue(pid, Dequeue::Sleep);
        if !self.is_rt(pid) {
            self.remove_dead_load(pid);
        }
        let (mut closed, mut granted) = (Vec::new(), Vec::new());
        for fd in &fds {
            let o = &mut self.objs[fd.object as usize];
            o.adjust_ends(fd.end, -1, &mut closed);
            o.release_flocks(pid, &mut granted);
        }
        self.wake_list(pid, &closed, Phase::Retry);
        self.wake_list(pid, &granted, Phase::Completed(0));
        let leader = self.tasks[pid as usize].tgid;
        self.tasks[leader as usize].live_threads -= 1;
        if ppid != 0 && self.tasks[ppid as usize].state != State::Dead {
            let waits_for_it = self.waits_for(ppid, pid);
            let p = &mut self.tasks[ppid as usize];
            p.children -= 1;
            if waits_for_it {
                p.reaped(pid);
                self.wake(ppid, pid, Phase::Completed(i64::from(pid)));
            } else {
                p.zombies.push(pid);
            }
        }
        self.resched(cpu);
    }

    /// Moves a queued (not running) task to another CPU (`detach_task` and
    /// `attach_task`): a fair task's averages leave its old queue's at once and join the
    /// new one's when it is queued there.
    pub(super) fn migrate_queued(&mut self, pid: u32, to: u32) {
        let from_min_vruntime = self.cfs[self.task_q(pid) as usize].fair.min_vruntime;
        self.dequeue_task(pid, Dequeue::Migrate, true);
        if !self.is_rt(pid) {
            // migrate_task_rq_fair: attached where it is queued next.
            self.ents[pid].avg.last_update_time = 0;
        }
        self.count_migration(pid);
        self.enqueue(pid, to, Enqueue::Migrated { from_min_vruntime });
        self.check_preempt(to, pid);
    }
}

//! hackbench as rt-tests runs it (`hackbench -g GROUPS -f FDS -l LOOPS -s SIZE [-p] [-T]`):
//! groups of senders and receivers that pass fixed-size messages through pipes or UNIX
//! stream sockets, the scheduler benchmark of paper 003.
//!
//! Each group has `fds` receivers and `fds` senders. Every receiver owns one pipe (or one
//! socket pair); every sender holds the write end of each receiver of its group and
//! writes `loops` rounds of one `size`-byte message to every receiver (loops outer,
//! receivers inner, as rt-tests does); each receiver reads `fds * loops` messages, each
//! read repeated until the whole message has arrived. That is
//! `groups * fds * fds * loops` messages in all.
//!
//! By default only the workers are simulated: they all start at t = 0 with their fd
//! tables in place (the fds a forked worker inherits but never uses are left out), as in
//! LinSched and paper 003. With `parent=yes` the run is hackbench's whole process
//! instead ([`Hackbench::parent`]): the parent forks the workers group by group, each
//! reports ready on a pipe and polls a start pipe, the parent writes the start byte
//! once all are ready and reaps them in fork order. rt-tests' `Time:` is the span from
//! that write to the last reap.

use super::spec::{Args, Builtin};
use super::WorkloadError;
use crate::{End, Fd, FdTarget, ObjectSpec, Op, Program, TaskSpec, Workload};

/// Workers of a run with `parent=yes`: every worker inherits the parent's whole fd
/// table (two fds per receiver), so the tables' memory grows with its square.
pub const MAX_PARENT_WORKERS: u64 = 4_000;

/// The channel a receiver reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ipc {
    /// `pipe(2)`, hackbench's `-p/--pipe`.
    Pipe,
    /// `socketpair(AF_UNIX, SOCK_STREAM)`, hackbench's default.
    Socket,
}

/// How the workers are created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forked processes, hackbench's default.
    Process,
    /// Threads of one process, hackbench's `-T/--threads`.
    Thread,
}

/// hackbench's parameters; [`Default`] gives rt-tests' defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hackbench {
    /// Number of groups (`-g`).
    pub groups: u32,
    /// Senders and receivers per group (`-f`).
    pub fds: u32,
    /// Messages each sender sends to each receiver (`-l`).
    pub loops: u32,
    /// Bytes per message (`-s`).
    pub size: u32,
    /// Pipes (`-p`) or socket pairs.
    pub ipc: Ipc,
    /// Processes or threads (`-T`).
    pub mode: Mode,
    /// Simulate hackbench's parent task too (see the module doc).
    pub parent: bool,
    /// Run every task in one autogroup ([`Workload::in_autogroup`]): hackbench started
    /// from a shell runs in its session's autogroup on a kernel with
    /// `kernel.sched_autogroup_enabled` 1, which changes the loads the scheduler compares
    /// (`task_h_load`).
    pub session: bool,
}

impl Default for Hackbench {
    fn default() -> Self {
        Hackbench {
            groups: 10,
            fds: 20,
            loops: 100,
            size: 100,
            ipc: Ipc::Socket,
            mode: Mode::Process,
            parent: false,
            session: false,
        }
    }
}

/// The `hackbench` built-in.
pub(crate) const BUILTIN: Builtin = Builtin {
    name: "hackbench",
    about: "rt-tests hackbench: groups of senders and receivers exchanging messages",
    keys: &[
        ("groups", "number of groups, 1..=10000, default 10"),
        ("fds", "senders and also receivers per group, 1..=1000, default 20"),
        ("loops", "messages from each sender to each receiver, default 100"),
        ("size", "bytes per message, default 100"),
        ("ipc", "pipe or socket, default socket"),
        ("mode", "process or thread, default process"),
        ("parent", "yes: also hackbench's parent, which forks the workers, starts them together and reaps them; default no"),
        ("session", "yes: all in one autogroup, as run from a shell with autogroups enabled; default no"),
    ],
    build: |args| Ok(Hackbench::from_args(args)?.workload()),
};

impl Hackbench {
    /// How many messages the run passes: `groups * fds * fds * loops` (saturating).
    pub fn messages(&self) -> u64 {
        [self.fds, self.fds, self.loops]
            .iter()
            .fold(u64::from(self.groups), |n, &f| n.saturating_mul(u64::from(f)))
    }

    /// The spec string that gives these parameters, used as the workload's name.
    pub fn spec(&self) -> String {
        let ipc = match self.ipc {
            Ipc::Pipe => "pipe",
            Ipc::Socket => "socket",
        };
        let mode = match self.mode {
            Mode::Process => "process",
            Mode::Thread => "thread",
        };
        let parent = if self.parent { ",parent=yes" } else { "" };
        let session = if self.session { ",session=yes" } else { "" };
        format!(
            "hackbench:groups={},fds={},loops={},size={},ipc={ipc},mode={mode}{parent}{session}",
            self.groups, self.fds, self.loops, self.size
        )
    }

    /// The objects each group's receivers read from, and the ends receivers and senders
    /// hold.
    fn channel(&self) -> (ObjectSpec, End, End) {
        match self.ipc {
            Ipc::Pipe => (ObjectSpec::Pipe { capacity: None }, End::Read, End::Write),
            // rt-tests gives the receiver fds[0] of the pair and the senders fds[1].
            Ipc::Socket => (ObjectSpec::SocketPair { capacity: None }, End::A, End::B),
        }
    }

    /// Builds the workload: per group, its `fds` receivers then its `fds` senders, each
    /// named `receiver-g<group>-<n>` / `sender-g<group>-<n>`, all running the one
    /// `hackbench` executable (or, with [`Hackbench::parent`], hackbench's parent that
    /// forks them), all in one autogroup with [`Hackbench::session`]. In thread mode
    /// every task is a thread of the first task's process.
    ///
    /// # Panics
    /// If `fds` does not fit an [`Fd`] or a count is zero (which would make a loop run
    /// for ever); [`super::load`] rejects such values with an error first.
    pub fn workload(&self) -> Workload {
        assert!(
            self.groups > 0 && self.fds > 0 && self.loops > 0 && self.size > 0,
            "zero parameter: {self:?}"
        );
        let mut w = if self.parent { self.with_parent() } else { self.workers() };
        if self.session {
            w.in_autogroup(0);
        }
        w
    }

    /// The workers alone, all started at once.
    fn workers(&self) -> Workload {
        let fds = Fd::try_from(self.fds).expect("fds fits an Fd");
        let mut w = Workload { name: self.spec(), ..Workload::default() };
        let (object, receiver_end, sender_end) = self.channel();
        let size = self.size;
        let receiver = w.add_program(
            Program::new("hackbench")
                .repeat(self.loops, |p| p.repeat(self.fds, |p| p.op(Op::Read { fd: 0, bytes: size }))),
        );
        let sender = w.add_program(
            Program::new("hackbench")
                .repeat(self.loops, |p| (0..fds).fold(p, |p, fd| p.op(Op::Write { fd, bytes: size }))),
        );
        for g in 0..self.groups {
            let channels: Vec<_> = (0..self.fds).map(|_| w.add_object(object.clone())).collect();
            for (n, &ch) in channels.iter().enumerate() {
                let mut t = TaskSpec::new(format!("receiver-g{g}-{n}"), receiver);
                t.fds = vec![FdTarget { object: ch, end: receiver_end }];
                w.tasks.push(t);
            }
            for n in 0..self.fds {
                let mut t = TaskSpec::new(format!("sender-g{g}-{n}"), sender);
                t.fds = channels.iter().map(|&ch| FdTarget { object: ch, end: sender_end }).collect();
                w.tasks.push(t);
            }
        }
        if self.mode == Mode::Thread {
            for t in w.tasks.iter_mut().skip(1) {
                t.thread_of = Some(0);
            }
        }
        w
    }

    /// hackbench's whole process, as rt-tests runs it: one task, the parent, whose fd
    /// table holds every group's channels (receiver end, sender end), then the ready
    /// pipe and the start pipe (read end, write end each), all created before the
    /// forks. For each group it forks the receivers, then the senders; each worker writes
    /// one byte to the ready pipe and polls the start pipe (`ready()`), then does its
    /// work. The parent reads one ready byte per worker, writes the start byte (the
    /// start of `Time:`), and reaps the workers in fork order (`waitpid`, or
    /// `pthread_join` in thread mode; the end of `Time:`).
    ///
    /// Simplification: the parent keeps every fd (rt-tests closes each group's after
    /// forking it), so workers inherit them all; this changes nothing the workers do,
    /// but a worker's table grows with the groups, hence [`MAX_PARENT_WORKERS`].
    fn with_parent(&self) -> Workload {
        let mut w = Workload { name: self.spec(), ..Workload::default() };
        let (object, receiver_end, sender_end) = self.channel();
        let (groups, fds, size) = (self.groups, self.fds, self.size);
        let workers = 2 * groups * fds;
        let mut table = Vec::new();
        for _ in 0..groups * fds {
            let ch = w.add_object(object.clone());
            table.push(FdTarget { object: ch, end: receiver_end });
            table.push(FdTarget { object: ch, end: sender_end });
        }
        let fd = |n: u32| Fd::try_from(n).expect("MAX_PARENT_WORKERS keeps fds within an Fd");
        let (ready_r, ready_w, start_r, start_w) =
            (fd(workers), fd(workers + 1), fd(workers + 2), fd(workers + 3));
        for _ in 0..2 {
            let p = w.add_object(ObjectSpec::Pipe { capacity: None });
            table.push(FdTarget { object: p, end: End::Read });
            table.push(FdTarget { object: p, end: End::Write });
        }
        let ready = |p: Program| p.op(Op::Write { fd: ready_w, bytes: 1 }).op(Op::Poll { fd: start_r });
        let thread = self.mode == Mode::Thread;
        let mut parent = Program::new("hackbench");
        for g in 0..groups {
            let first = 2 * g * fds;
            for n in 0..fds {
                let receiver = w.add_program(ready(Program::new("hackbench")).repeat(self.loops, |p| {
                    p.repeat(fds, |p| p.op(Op::Read { fd: fd(first + 2 * n), bytes: size }))
                }));
                parent = parent.op(Op::Fork { program: receiver, thread });
            }
            let sender = w.add_program(ready(Program::new("hackbench")).repeat(self.loops, |p| {
                (0..fds).fold(p, |p, n| p.op(Op::Write { fd: fd(first + 2 * n + 1), bytes: size }))
            }));
            parent = parent.repeat(fds, |p| p.op(Op::Fork { program: sender, thread }));
        }
        let parent = parent
            .repeat(workers, |p| p.op(Op::Read { fd: ready_r, bytes: 1 }))
            .op(Op::Write { fd: start_w, bytes: 1 })
            .repeat(workers, |p| p.op(Op::WaitOldest));
        let program = w.add_program(parent);
        let mut t = TaskSpec::new("hackbench", program);
        t.fds = table;
        w.tasks.push(t);
        w
    }

    /// Reads the parameters from a spec's keys.
    fn from_args(args: &Args) -> Result<Self, WorkloadError> {
        let d = Hackbench::default();
        let max = i64::from(u32::MAX);
        let h = Hackbench {
            groups: args.int("groups", d.groups.into(), 1..=10_000)? as u32,
            fds: args.int("fds", d.fds.into(), 1..=1_000)? as u32,
            loops: args.int("loops", d.loops.into(), 1..=max)? as u32,
            size: args.int("size", d.size.into(), 1..=max)? as u32,
            ipc: args.choice("ipc", d.ipc, &[("pipe", Ipc::Pipe), ("socket", Ipc::Socket)])?,
            mode: args.choice("mode", d.mode, &[("process", Mode::Process), ("thread", Mode::Thread)])?,
            parent: args.choice("parent", d.parent, &[("no", false), ("yes", true)])?,
            session: args.choice("session", d.session, &[("no", false), ("yes", true)])?,
        };
        let workers = 2 * u64::from(h.groups) * u64::from(h.fds);
        if h.parent && workers > MAX_PARENT_WORKERS {
            return Err(WorkloadError::BadValue {
                workload: "hackbench".into(),
                key: "groups×fds".into(),
                value: format!("{}×{}", h.groups, h.fds),
                problem: format!(
                    "{workers} workers; with parent=yes at most {MAX_PARENT_WORKERS} (each inherits the parent's fd for every worker)"
                ),
            });
        }
        let tasks = 2 * u64::from(h.groups) * u64::from(h.fds);
        if tasks > super::MAX_TASKS {
            return Err(WorkloadError::BadValue {
                workload: "hackbench".into(),
                key: "groups×fds".into(),
                value: format!("{}×{}", h.groups, h.fds),
                problem: format!(
                    "{tasks} tasks (2 × groups × fds); a workload has at most {}",
                    super::MAX_TASKS
                ),
            });
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::workloads::load;
    use crate::workloads::test_util::executions;
    use crate::ObjectId;

    /// Bytes written into and read out of each object over the whole run, and how many
    /// write calls carry a message.
    fn traffic(w: &Workload) -> (HashMap<ObjectId, u64>, HashMap<ObjectId, u64>, u64) {
        let (mut written, mut read, mut messages) = (HashMap::new(), HashMap::new(), 0);
        for t in &w.tasks {
            for (op, times) in executions(&w.programs[t.program as usize]) {
                match op {
                    Op::Write { fd, bytes } => {
                        *written.entry(t.fds[fd as usize].object).or_default() += u64::from(bytes) * times;
                        messages += times;
                    }
                    Op::Read { fd, bytes } => {
                        *read.entry(t.fds[fd as usize].object).or_default() += u64::from(bytes) * times
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        (written, read, messages)
    }

    #[test]
    fn defaults_are_rt_tests_defaults() {
        let h = Hackbench::default();
        assert_eq!(h.messages(), 10 * 20 * 20 * 100);
        let w = h.workload();
        assert_eq!(w.tasks.len(), 400);
        assert_eq!(w.objects.len(), 200);
        assert!(w.objects.iter().all(|o| *o == ObjectSpec::SocketPair { capacity: None }));
        assert_eq!(w.name, "hackbench:groups=10,fds=20,loops=100,size=100,ipc=socket,mode=process");
        assert_eq!(load(&w.name).unwrap(), w);
        w.validate(2).unwrap();
    }

    #[test]
    fn a_session_puts_every_task_in_one_autogroup() {
        for parent in ["no", "yes"] {
            let spec =
                format!("hackbench:groups=2,fds=3,loops=4,size=100,ipc=pipe,mode=process,parent={parent}");
            let w = load(&format!("{spec},session=yes")).unwrap();
            assert_eq!(w.groups, [crate::TaskGroup::autogroup("autogroup", 0)]);
            assert!(w.tasks.iter().all(|t| t.group == Some(0)), "{spec}");
            assert_eq!(load(&w.name).unwrap(), w, "the name gives the same workload");
            assert!(load(&spec).unwrap().groups.is_empty());
        }
        // The parent's forks inherit its group; the run completes.
        let w = load("hackbench:groups=2,fds=3,loops=4,size=100,ipc=pipe,parent=yes,session=yes").unwrap();
        let r = crate::simulate(&w, &crate::SimConfig::new(2, crate::FairFlavor::Eevdf), None).unwrap();
        assert!(r.tasks.iter().all(|t| t.exited));
        assert_eq!(r.tasks.len(), 13);
    }

    #[test]
    fn every_channel_carries_what_its_senders_write() {
        for ipc in ["pipe", "socket"] {
            let w = load(&format!("hackbench:groups=3,fds=4,loops=5,size=7,ipc={ipc}")).unwrap();
            let (written, read, messages) = traffic(&w);
            assert_eq!(messages, 3 * 4 * 4 * 5);
            assert_eq!(written.len(), 12);
            assert_eq!(written, read);
            // Each receiver gets fds senders x loops messages of size bytes.
            assert!(written.values().all(|&b| b == 4 * 5 * 7), "{written:?}");
        }
    }

    #[test]
    fn senders_write_rounds_over_their_own_groups_receivers() {
        let w = load("hackbench:groups=2,fds=3,loops=2,size=10,ipc=pipe").unwrap();
        let sender = &w.programs[w.tasks[3].program as usize];
        let writes = |fd| Op::Write { fd, bytes: 10 };
        assert_eq!(sender.ops, [Op::Loop { count: 2 }, writes(0), writes(1), writes(2), Op::LoopEnd]);
        let receiver = &w.programs[w.tasks[0].program as usize];
        assert_eq!(executions(receiver), [(Op::Read { fd: 0, bytes: 10 }, 6)]);
        assert_eq!(receiver.comm, "hackbench");
        assert_eq!(sender.comm, "hackbench");
        let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            &names[..6],
            ["receiver-g0-0", "receiver-g0-1", "receiver-g0-2", "sender-g0-0", "sender-g0-1", "sender-g0-2"]
        );
        // Group 1's senders hold the write ends of group 1's pipes (objects 3..6) only.
        let g1_sender = &w.tasks[9];
        assert_eq!(g1_sender.name, "sender-g1-0");
        let ends: Vec<(u32, End)> = g1_sender.fds.iter().map(|f| (f.object, f.end)).collect();
        assert_eq!(ends, [(3, End::Write), (4, End::Write), (5, End::Write)]);
        assert_eq!(w.tasks[6].fds, [FdTarget { object: 3, end: End::Read }]);
        assert!(w.objects.iter().all(|o| *o == ObjectSpec::Pipe { capacity: None }));
    }

    #[test]
    fn socket_receivers_hold_the_first_socket() {
        let w = load("hackbench:groups=1,fds=2").unwrap();
        assert_eq!(w.tasks[1].fds, [FdTarget { object: 1, end: End::A }]);
        assert_eq!(w.tasks[2].fds.iter().map(|f| f.end).collect::<Vec<_>>(), [End::B, End::B]);
    }

    #[test]
    fn thread_mode_makes_one_process() {
        let threads = load("hackbench:groups=2,fds=2,mode=thread").unwrap();
        assert_eq!(threads.tasks[0].thread_of, None);
        assert!(threads.tasks[1..].iter().all(|t| t.thread_of == Some(0)));
        threads.validate(4).unwrap();
        let procs = load("hackbench:groups=2,fds=2,mode=process").unwrap();
        assert!(procs.tasks.iter().all(|t| t.thread_of.is_none()));
    }

    #[test]
    fn bad_values_say_what_is_accepted() {
        let err = |spec| load(spec).unwrap_err().to_string();
        assert_eq!(err("hackbench:ipc=tcp"), "hackbench: ipc=tcp: expected one of pipe, socket");
        assert_eq!(err("hackbench:mode=fiber"), "hackbench: mode=fiber: expected one of process, thread");
        assert_eq!(err("hackbench:groups=0"), "hackbench: groups=0: expected a whole number in 1..=10000");
        assert_eq!(err("hackbench:fds=1001"), "hackbench: fds=1001: expected a whole number in 1..=1000");
        assert_eq!(
            err("hackbench:loops=-1"),
            "hackbench: loops=-1: expected a whole number in 1..=4294967295"
        );
        assert_eq!(
            err("hackbench:size=big"),
            "hackbench: size=big: expected a whole number in 1..=4294967295"
        );
        assert_eq!(
            err("hackbench:groups=10000,fds=1000"),
            "hackbench: groups×fds=10000×1000: 20000000 tasks (2 × groups × fds); a workload has at most 100000"
        );
        assert!(load("hackbench:groups=100,fds=500").is_ok(), "100,000 tasks exactly");
    }

    #[test]
    fn with_its_parent_one_task_forks_a_program_per_receiver() {
        let w = load("hackbench:groups=2,fds=3,loops=2,size=10,ipc=pipe,parent=yes").unwrap();
        assert_eq!(w.name, "hackbench:groups=2,fds=3,loops=2,size=10,ipc=pipe,mode=process,parent=yes");
        assert_eq!(w.tasks.len(), 1, "the parent alone; it forks the workers");
        // Its table: per receiver its channel's two ends (12), then ready and start pipes.
        assert_eq!(w.tasks[0].fds.len(), 2 * 6 + 4);
        assert_eq!(w.objects.len(), 6 + 2);
        // 6 receivers and 2 senders (one per group), then the parent.
        assert_eq!(w.programs.len(), 6 + 2 + 1);
        let receiver = &w.programs[0];
        assert_eq!(&receiver.ops[..2], [Op::Write { fd: 13, bytes: 1 }, Op::Poll { fd: 14 }]);
        assert_eq!(executions(receiver).last(), Some(&(Op::Read { fd: 0, bytes: 10 }, 6)));
        let g1_sender = &w.programs[7];
        let writes: Vec<Op> =
            g1_sender.ops.iter().copied().filter(|o| matches!(o, Op::Write { bytes: 10, .. })).collect();
        assert_eq!(
            writes,
            [7, 9, 11].map(|fd| Op::Write { fd, bytes: 10 }),
            "group 1's channels' sender ends"
        );
        w.validate(2).unwrap();
        let err = load("hackbench:groups=101,fds=20,parent=yes").unwrap_err().to_string();
        assert_eq!(
            err,
            "hackbench: groups×fds=101×20: 4040 workers; with parent=yes at most 4000 (each inherits the parent's fd for every worker)"
        );
        assert_eq!(
            load("hackbench:parent=maybe").unwrap_err().to_string(),
            "hackbench: parent=maybe: expected one of no, yes"
        );
    }

    #[test]
    fn messages_saturate_instead_of_overflowing() {
        let h = Hackbench { groups: u32::MAX, fds: u32::MAX, loops: u32::MAX, ..Hackbench::default() };
        assert_eq!(h.messages(), u64::MAX);
    }
}

//! The programs of paper 002 (a benchmark of SCHED_OTHER, SCHED_FIFO and SCHED_RR on a
//! quad-core i7): `N` processes (10, 50 or 100 in the paper) each running a CPU-bound
//! (`pi`), an I/O-bound (`rw`) or a `mixed` program under one policy.
//!
//! The paper's Appendix B programs (pi-sched.c, rw.c, mixed.c, from the CU CSCI 3753
//! assignment code) set the policy with `sched_get_priority_max(policy)` as the priority,
//! i.e. 99 for FIFO and RR, then fork the children, which inherit it. Here the parent's
//! setup and `wait` are not modeled: the `N` children are tasks that start at t = 0 with
//! the policy already set; the makespan of the tasks is the paper's "real time".
//!
//! - **pi** (pi-sched.c): a Monte-Carlo estimate of pi over 1 000 000 iterations of two
//!   `random()` calls and a distance, then the result is printed. Modeled as one
//!   [`Op::Compute`] of the iterations' CPU time and one `write(2)` to stdout. The paper's
//!   table gives 0.71 s of user time for 10 processes (3.51 s for 50, 6.8 s for 100),
//!   about 70 ms per process, so one iteration costs [`NS_PER_ITERATION`] = 70 ns.
//! - **rw** (rw.c): copies 102 400 bytes in 1 024-byte blocks from the shared input file
//!   to its own output file opened `O_SYNC`. Modeled as `openat`, `getpid` (for the
//!   output file's name), `openat`, then per block: `read(2)` (a page-cache hit: all
//!   processes read the same small input file), [`Op::Compute`] of `cpu` (the kernel's
//!   copy and filesystem work for the block), `write(2)`, and [`Op::Io`] of `io` (an
//!   `O_SYNC` write returns only when the device has the block); then `close` twice. The
//!   defaults come from the paper's SCHED_OTHER runs: about 0.15 s of system time per
//!   1 000 blocks gives `cpu` = 150 µs, and the real time divided by all blocks written
//!   (1.5 s / 1 000, 14.9 s / 10 000) gives `io` = 1.5 ms per write. The simulator's
//!   [`Op::Io`] has no device queue, so concurrent writers do not wait for each other:
//!   the growth of the paper's real time with `N`, which comes from one disk serving
//!   everyone, is not reproduced, while each process's blocking pattern is.
//! - **mixed** (mixed.c): the pi part, then the rw part, in one process.
//!
//! Keys: `procs`, `policy` (other, batch, idle, fifo, rr), `prio` (FIFO/RR only, default
//! 99 as in the paper's code), `nice` (fair policies only, default 0); pi and mixed:
//! `iterations` or `work` (CPU time per process); rw and mixed: `bytes`, `block`, `io`,
//! `cpu`.

use schedlab_model::{Ns, Syscall};

use super::spec::{fmt_duration, Args, Builtin};
use super::WorkloadError;
use crate::{Op, Policy, Program, TaskSpec, Workload};

/// CPU time of one iteration of pi-sched's loop, from the paper's user times.
pub const NS_PER_ITERATION: Ns = 70;
/// pi-sched's `DEFAULT_ITERATIONS`.
pub const PI_ITERATIONS: u64 = 1_000_000;

/// `openat(2)`, what glibc's `open()` calls on x86_64.
const OPENAT: u32 = 257;

/// Which of the paper's programs the processes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// CPU-bound: pi-sched.c.
    Pi,
    /// I/O-bound: rw.c.
    Rw,
    /// pi then rw: mixed.c.
    Mixed,
}

impl Kind {
    /// The built-in's name, also the prefix of the task names.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Pi => "pi",
            Kind::Rw => "rw",
            Kind::Mixed => "mixed",
        }
    }

    /// The executable the paper runs.
    fn comm(self) -> &'static str {
        match self {
            Kind::Pi => "pi-sched",
            Kind::Rw => "rw",
            Kind::Mixed => "mixed",
        }
    }

    fn has_pi(self) -> bool {
        self != Kind::Rw
    }

    fn has_rw(self) -> bool {
        self != Kind::Pi
    }
}

/// The CPU-bound part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pi {
    /// CPU time of the whole computation.
    pub work_ns: Ns,
}

impl Default for Pi {
    /// pi-sched's default iteration count.
    fn default() -> Self {
        Pi { work_ns: PI_ITERATIONS * NS_PER_ITERATION }
    }
}

/// The I/O-bound part: a synchronous file copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rw {
    /// Bytes copied; a multiple of `block`.
    pub bytes: u64,
    /// Bytes per `read`/`write`.
    pub block: u32,
    /// Device time of one synchronous write (0: no wait).
    pub io_ns: Ns,
    /// CPU time per block besides the two system calls' own cost (0: none).
    pub cpu_ns: Ns,
}

impl Default for Rw {
    /// rw.c's transfer and block sizes, and the costs derived from the paper's table.
    fn default() -> Self {
        Rw { bytes: 102_400, block: 1_024, io_ns: 1_500_000, cpu_ns: 150_000 }
    }
}

impl Rw {
    fn blocks(&self) -> u32 {
        u32::try_from(self.bytes / u64::from(self.block)).expect("block count fits u32")
    }
}

/// A paper 002 experiment: `procs` processes running one program under one policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paper002 {
    /// The program every process runs.
    pub kind: Kind,
    /// Number of processes (the paper: 10, 50, 100).
    pub procs: u32,
    /// The policy all processes run under (the paper: OTHER, FIFO, RR).
    pub policy: Policy,
    /// Real-time priority for FIFO/RR.
    pub prio: u8,
    /// Nice value for the fair policies.
    pub nice: i8,
    /// Used by `pi` and `mixed`.
    pub pi: Pi,
    /// Used by `rw` and `mixed`.
    pub rw: Rw,
}

impl Paper002 {
    /// The paper's LOW setting: 10 SCHED_OTHER processes, default sizes; `prio` is 99
    /// as the paper's programs use should the policy become FIFO or RR.
    pub fn new(kind: Kind) -> Self {
        Paper002 {
            kind,
            procs: 10,
            policy: Policy::Other,
            prio: 99,
            nice: 0,
            pi: Pi::default(),
            rw: Rw::default(),
        }
    }

    /// The spec string that gives these parameters, used as the workload's name.
    pub fn spec(&self) -> String {
        let policy = self.policy.name()["SCHED_".len()..].to_ascii_lowercase();
        let mut s = format!("{}:procs={},policy={policy}", self.kind.name(), self.procs);
        if self.policy.is_rt() {
            s += &format!(",prio={}", self.prio);
        } else {
            s += &format!(",nice={}", self.nice);
        }
        if self.kind.has_pi() {
            s += &format!(",work={}", fmt_duration(self.pi.work_ns));
        }
        if self.kind.has_rw() {
            let rw = &self.rw;
            s += &format!(
                ",bytes={},block={},io={},cpu={}",
                rw.bytes,
                rw.block,
                fmt_duration(rw.io_ns),
                fmt_duration(rw.cpu_ns)
            );
        }
        s
    }

    /// What each process runs.
    pub fn program(&self) -> Program {
        let sys = |nr: u32| Op::Syscall { nr };
        let mut p = Program::new(self.kind.comm());
        if self.kind.has_pi() {
            p = p.op(Op::Compute(self.pi.work_ns)).op(sys(Syscall::Write.nr()));
        }
        if self.kind.has_rw() {
            let rw = self.rw;
            p = p
                .op(sys(OPENAT))
                .op(sys(Syscall::Getpid.nr()))
                .op(sys(OPENAT))
                .repeat(rw.blocks(), |mut p| {
                    p = p.op(sys(Syscall::Read.nr()));
                    if rw.cpu_ns > 0 {
                        p = p.op(Op::Compute(rw.cpu_ns));
                    }
                    p = p.op(sys(Syscall::Write.nr()));
                    if rw.io_ns > 0 {
                        p = p.op(Op::Io(rw.io_ns));
                    }
                    p
                })
                .op(sys(Syscall::Close.nr()))
                .op(sys(Syscall::Close.nr()));
        }
        p
    }

    /// `procs` processes named `<kind>-<n>`, all running [`Self::program`] from t = 0.
    pub fn workload(&self) -> Workload {
        let mut w = Workload { name: self.spec(), ..Workload::default() };
        let program = w.add_program(self.program());
        for n in 0..self.procs {
            let mut t = TaskSpec::new(format!("{}-{n}", self.kind.name()), program);
            t.policy = self.policy;
            if self.policy.is_rt() {
                t.rt_priority = self.prio;
            } else {
                t.nice = self.nice;
            }
            w.tasks.push(t);
        }
        w
    }

    /// Reads the parameters from a spec's keys.
    fn from_args(kind: Kind, args: &Args) -> Result<Self, WorkloadError> {
        let mut p = Paper002::new(kind);
        p.procs = args.int("procs", p.procs.into(), 1..=100_000)? as u32;
        if let Some(v) = args.get("policy") {
            p.policy = Policy::parse(v)
                .ok_or_else(|| args.bad("policy", "expected one of other, batch, idle, fifo, rr"))?;
        }
        if p.policy.is_rt() && args.get("nice").is_some() {
            return Err(args.bad("nice", "nice applies to other, batch and idle; fifo and rr use prio"));
        }
        if !p.policy.is_rt() && args.get("prio").is_some() {
            return Err(args.bad(
                "prio",
                "prio is the real-time priority of fifo and rr; other, batch and idle use nice",
            ));
        }
        p.prio = args.int("prio", p.prio.into(), 1..=99)? as u8;
        p.nice = args.int("nice", p.nice.into(), -20..=19)? as i8;
        if kind.has_pi() {
            p.pi.work_ns = match (args.get("iterations"), args.get("work")) {
                (Some(_), Some(_)) => {
                    return Err(args.bad("work", "give either iterations or work, not both"))
                }
                (None, Some(_)) => args.duration("work", 0)?,
                _ => {
                    args.int("iterations", PI_ITERATIONS as i64, 1..=1_000_000_000_000)? as u64
                        * NS_PER_ITERATION
                }
            };
            if p.pi.work_ns == 0 {
                return Err(args.bad("work", "expected a CPU time above zero"));
            }
        }
        if kind.has_rw() {
            let d = Rw::default();
            let bytes = args.int("bytes", d.bytes as i64, 1..=1 << 40)? as u64;
            let block = args.int("block", d.block.into(), 1..=i64::from(u32::MAX))? as u32;
            if !bytes.is_multiple_of(u64::from(block)) {
                return Err(
                    args.bad("block", format!("expected a divisor of bytes={bytes}, as rw.c requires"))
                );
            }
            if bytes / u64::from(block) > u64::from(u32::MAX) {
                return Err(args
                    .bad("block", format!("too small: bytes={bytes} would take over {} blocks", u32::MAX)));
            }
            p.rw = Rw {
                bytes,
                block,
                io_ns: args.duration("io", d.io_ns)?,
                cpu_ns: args.duration("cpu", d.cpu_ns)?,
            };
        }
        Ok(p)
    }
}

const PROCS: (&str, &str) = ("procs", "number of processes, 1..=100000, default 10 (the paper: 10, 50, 100)");
const POLICY: (&str, &str) = ("policy", "other, batch, idle, fifo or rr, default other");
const PRIO: (&str, &str) =
    ("prio", "real-time priority for fifo/rr, 1..=99, default 99 as the paper's programs");
const NICE: (&str, &str) = ("nice", "nice value for other/batch/idle, -20..=19, default 0");
const ITERATIONS: (&str, &str) = ("iterations", "pi iterations at 70 ns of CPU each, default 1000000");
const WORK: (&str, &str) = ("work", "pi CPU time per process instead of iterations, e.g. 70ms");
const BYTES: (&str, &str) = ("bytes", "bytes each process copies, default 102400");
const BLOCK: (&str, &str) = ("block", "bytes per read and write, must divide bytes, default 1024");
const IO: (&str, &str) = ("io", "device time of each O_SYNC write, default 1500us");
const CPU: (&str, &str) = ("cpu", "CPU time per block besides the system calls, default 150us");

/// The `pi` built-in.
pub(crate) const PI: Builtin = Builtin {
    name: "pi",
    about: "paper 002's CPU-bound pi-sched: N processes computing pi",
    keys: &[PROCS, POLICY, PRIO, NICE, ITERATIONS, WORK],
    build: |args| Ok(Paper002::from_args(Kind::Pi, args)?.workload()),
};

/// The `rw` built-in.
pub(crate) const RW: Builtin = Builtin {
    name: "rw",
    about: "paper 002's I/O-bound rw: N processes copying a file with synchronous writes",
    keys: &[PROCS, POLICY, PRIO, NICE, BYTES, BLOCK, IO, CPU],
    build: |args| Ok(Paper002::from_args(Kind::Rw, args)?.workload()),
};

/// The `mixed` built-in.
pub(crate) const MIXED: Builtin = Builtin {
    name: "mixed",
    about: "paper 002's mixed: N processes computing pi, then copying a file",
    keys: &[PROCS, POLICY, PRIO, NICE, ITERATIONS, WORK, BYTES, BLOCK, IO, CPU],
    build: |args| Ok(Paper002::from_args(Kind::Mixed, args)?.workload()),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::load;
    use crate::workloads::test_util::executions;

    /// Total CPU time of `Compute` ops, and how many times each syscall and `Io` run.
    fn totals(p: &Program) -> (Ns, Vec<(u32, u64)>, u64) {
        let (mut cpu, mut syscalls, mut ios) = (0, Vec::<(u32, u64)>::new(), 0);
        for (op, times) in executions(p) {
            match op {
                Op::Compute(ns) => cpu += ns * times,
                Op::Syscall { nr } => match syscalls.iter_mut().find(|(n, _)| *n == nr) {
                    Some((_, c)) => *c += times,
                    None => syscalls.push((nr, times)),
                },
                Op::Io(_) => ios += times,
                other => panic!("unexpected {other:?}"),
            }
        }
        (cpu, syscalls, ios)
    }

    #[test]
    fn every_program_and_policy_validates() {
        for kind in ["pi", "rw", "mixed"] {
            for policy in ["other", "batch", "idle", "fifo", "rr"] {
                for procs in [10, 50, 100] {
                    let w = load(&format!("{kind}:procs={procs},policy={policy}")).unwrap();
                    w.validate(4).unwrap_or_else(|e| panic!("{kind} {policy}: {e}"));
                    assert_eq!(w.tasks.len(), procs);
                    assert_eq!(w.tasks[procs - 1].name, format!("{kind}-{}", procs - 1));
                    assert_eq!(load(&w.name).unwrap(), w, "the name is a spec that rebuilds it");
                }
            }
        }
    }

    #[test]
    fn pi_is_70ms_of_cpu_and_a_result_write() {
        let w = load("pi").unwrap();
        assert_eq!(w.name, "pi:procs=10,policy=other,nice=0,work=70ms");
        let p = &w.programs[0];
        assert_eq!(p.comm, "pi-sched");
        assert_eq!(p.ops, [Op::Compute(70_000_000), Op::Syscall { nr: 1 }]);
        let w = load("pi:iterations=2000,procs=1").unwrap();
        assert_eq!(w.programs[0].ops[0], Op::Compute(140_000));
        let w = load("pi:work=1.5s").unwrap();
        assert_eq!(w.programs[0].ops[0], Op::Compute(1_500_000_000));
    }

    #[test]
    fn rw_copies_in_synchronous_blocks() {
        let w = load("rw").unwrap();
        assert_eq!(w.name, "rw:procs=10,policy=other,nice=0,bytes=102400,block=1024,io=1500us,cpu=150us");
        let (cpu, syscalls, ios) = totals(&w.programs[0]);
        assert_eq!(cpu, 100 * 150_000);
        assert_eq!(ios, 100);
        assert_eq!(syscalls, [(OPENAT, 2), (39, 1), (0, 100), (1, 100), (3, 2)]);
        let w = load("rw:bytes=4096,block=4096,io=0,cpu=0").unwrap();
        let (cpu, syscalls, ios) = totals(&w.programs[0]);
        assert_eq!((cpu, ios), (0, 0));
        assert_eq!(syscalls, [(OPENAT, 2), (39, 1), (0, 1), (1, 1), (3, 2)]);
    }

    #[test]
    fn mixed_is_pi_then_rw() {
        let w = load("mixed:procs=3,policy=rr").unwrap();
        let mixed = &w.programs[0].ops;
        let pi = Paper002::new(Kind::Pi).program().ops;
        let rw = Paper002::new(Kind::Rw).program().ops;
        assert_eq!(mixed[..pi.len()], pi[..]);
        assert_eq!(mixed[pi.len()..], rw[..]);
        assert_eq!(w.programs[0].comm, "mixed");
    }

    #[test]
    fn policies_get_the_papers_priority() {
        let w = load("pi:policy=fifo").unwrap();
        assert!(w.tasks.iter().all(|t| t.policy == Policy::Fifo && t.rt_priority == 99 && t.nice == 0));
        let w = load("rw:policy=SCHED_RR,prio=10").unwrap();
        assert!(w.tasks.iter().all(|t| t.policy == Policy::Rr && t.rt_priority == 10));
        let w = load("mixed:policy=batch,nice=-5").unwrap();
        assert!(w.tasks.iter().all(|t| t.policy == Policy::Batch && t.nice == -5 && t.rt_priority == 0));
        assert!(w.tasks.iter().all(|t| t.thread_of.is_none() && t.start_ns == 0));
    }

    #[test]
    fn bad_values_say_what_is_accepted() {
        let err = |spec| load(spec).unwrap_err().to_string();
        assert_eq!(
            err("pi:policy=deadline"),
            "pi: policy=deadline: expected one of other, batch, idle, fifo, rr"
        );
        assert_eq!(
            err("pi:prio=50"),
            "pi: prio=50: prio is the real-time priority of fifo and rr; other, batch and idle use nice"
        );
        assert_eq!(
            err("rw:policy=fifo,nice=1"),
            "rw: nice=1: nice applies to other, batch and idle; fifo and rr use prio"
        );
        assert_eq!(err("pi:policy=rr,prio=0"), "pi: prio=0: expected a whole number in 1..=99");
        assert_eq!(err("mixed:nice=20"), "mixed: nice=20: expected a whole number in -20..=19");
        assert_eq!(err("pi:iterations=5,work=1ms"), "pi: work=1ms: give either iterations or work, not both");
        assert_eq!(err("pi:work=0"), "pi: work=0: expected a CPU time above zero");
        assert!(err("pi:work=fast").starts_with("pi: work=fast: expected a duration such as 100ms"));
        assert_eq!(
            err("rw:bytes=1000,block=300"),
            "rw: block=300: expected a divisor of bytes=1000, as rw.c requires"
        );
        assert_eq!(err("pi:procs=0"), "pi: procs=0: expected a whole number in 1..=100000");
        let e = err("pi:bytes=5");
        assert!(e.starts_with("pi: unknown key 'bytes'; accepted keys: procs ("), "{e}");
        assert!(e.contains("work ("), "{e}");
        assert!(!e.contains("block"), "{e}");
    }
}

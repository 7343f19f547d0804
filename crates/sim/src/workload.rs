//! A workload: the programs, the IPC objects and the tasks that start the simulation.

use schedlab_model::{Cpu, Ns};

use crate::program::{Program, ProgramId};

pub use schedlab_model::Policy;

/// An index into [`Workload::objects`].
pub type ObjectId = u32;

/// An IPC object or file that tasks share through their fd tables.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectSpec {
    /// An anonymous pipe with a buffer of `capacity` bytes (`None`: the `pipe_bytes`
    /// tunable, 64 KiB as in Linux).
    Pipe { capacity: Option<u32> },
    /// A named pipe (FIFO); same semantics as a pipe, reported as a FIFO.
    Fifo { capacity: Option<u32> },
    /// A UNIX stream socket pair; each direction buffers `capacity` bytes (`None`: the
    /// `socket_bytes` tunable).
    SocketPair { capacity: Option<u32> },
    /// A System V semaphore set with these initial values.
    SemSet { values: Vec<i32> },
    /// A System V message queue holding at most `max_bytes` (`None`: the `msgmnb`
    /// tunable, 16384 as in Linux).
    MsgQueue { max_bytes: Option<u32> },
    /// A regular file, for `flock`.
    File,
}

/// Which end of an object an fd refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// The read end of a pipe or FIFO.
    Read,
    /// The write end of a pipe or FIFO.
    Write,
    /// The first socket of a pair.
    A,
    /// The second socket of a pair.
    B,
    /// Objects without ends (semaphores, queues, files).
    Whole,
}

/// One entry of a file-descriptor table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FdTarget {
    pub object: ObjectId,
    pub end: End,
}

/// A task present at the start (or at `start_ns`).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    /// A name for reports (defaults to the program's comm when empty).
    pub name: String,
    pub program: ProgramId,
    pub policy: Policy,
    /// Nice value −20..19 for the fair policies.
    pub nice: i8,
    /// Real-time priority 1..99 for `SCHED_FIFO`/`SCHED_RR`.
    pub rt_priority: u8,
    /// CPUs the task may run on (`None`: all).
    pub affinity: Option<Vec<Cpu>>,
    /// When the task starts.
    pub start_ns: Ns,
    /// Its file-descriptor table.
    pub fds: Vec<FdTarget>,
    /// `sched_attr.sched_runtime`: a per-task EEVDF slice (clamped to 100 µs–100 ms).
    pub slice_ns: Option<Ns>,
    /// Make this task a thread of the process of the `n`-th task (an earlier index).
    pub thread_of: Option<u32>,
}

impl TaskSpec {
    /// A `SCHED_OTHER` nice-0 task running `program` from time 0, with no fds.
    pub fn new(name: impl Into<String>, program: ProgramId) -> Self {
        TaskSpec {
            name: name.into(),
            program,
            policy: Policy::Other,
            nice: 0,
            rt_priority: 0,
            affinity: None,
            start_ns: 0,
            fds: Vec::new(),
            slice_ns: None,
            thread_of: None,
        }
    }
}

/// Everything a simulation starts from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    /// A short description for reports (`hackbench:groups=10,...`, a file name).
    pub name: String,
    pub programs: Vec<Program>,
    pub objects: Vec<ObjectSpec>,
    pub tasks: Vec<TaskSpec>,
    /// Stop the simulation at this time even if tasks remain (rt-app `global.duration`).
    pub duration_ns: Option<Ns>,
}

impl Workload {
    /// Adds a program and returns its id.
    pub fn add_program(&mut self, p: Program) -> ProgramId {
        self.programs.push(p);
        (self.programs.len() - 1) as ProgramId
    }

    /// Adds an object and returns its id.
    pub fn add_object(&mut self, o: ObjectSpec) -> ObjectId {
        self.objects.push(o);
        (self.objects.len() - 1) as ObjectId
    }

    /// Checks the references between tasks, programs, objects and CPUs; the error says
    /// which task or program is wrong and why.
    pub fn validate(&self, cpus: u32) -> Result<(), InvalidWorkload> {
        for p in &self.programs {
            p.validate()?;
            for op in &p.ops {
                if let crate::Op::Fork { program, .. } = op {
                    if *program as usize >= self.programs.len() {
                        return Err(InvalidWorkload::ForkOfUnknownProgram {
                            comm: p.comm.clone(),
                            program: *program,
                        });
                    }
                }
            }
        }
        for (task, t) in self.tasks.iter().enumerate() {
            let name = || t.name.clone();
            if t.program as usize >= self.programs.len() {
                return Err(InvalidWorkload::UnknownProgram { task, name: name(), program: t.program });
            }
            if !(-20..=19).contains(&t.nice) {
                return Err(InvalidWorkload::Nice { task, name: name(), nice: t.nice });
            }
            if t.policy.is_rt() && !(1..=99).contains(&t.rt_priority) {
                return Err(InvalidWorkload::RtPriority { task, name: name(), priority: t.rt_priority });
            }
            if let Some(aff) = &t.affinity {
                if aff.is_empty() {
                    return Err(InvalidWorkload::EmptyAffinity { task, name: name() });
                }
                if let Some(&cpu) = aff.iter().find(|&&c| c >= cpus) {
                    return Err(InvalidWorkload::NoSuchCpu { task, name: name(), cpu, cpus });
                }
            }
            for fd in &t.fds {
                if fd.object as usize >= self.objects.len() {
                    return Err(InvalidWorkload::UnknownObject { task, name: name(), object: fd.object });
                }
            }
            if let Some(parent) = t.thread_of {
                if parent as usize >= task {
                    return Err(InvalidWorkload::ThreadOfLaterTask { task, name: name(), thread_of: parent });
                }
            }
        }
        Ok(())
    }
}

/// Why a workload's parts do not fit together ([`Workload::validate`],
/// [`Program::validate`]). Each variant names the program (by its comm) or the task (by
/// its index and name) at fault and keeps the offending value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidWorkload {
    /// A program's `LoopEnd` at index `op` closes no loop.
    #[error("{comm}: op {op}: LoopEnd without Loop")]
    LoopEndWithoutLoop { comm: String, op: usize },
    /// A program ends with `open` loops not closed.
    #[error("{comm}: {open} loop(s) not closed")]
    UnclosedLoops { comm: String, open: usize },
    /// A program forks a program the workload does not have.
    #[error("{comm}: fork of unknown program {program}")]
    ForkOfUnknownProgram { comm: String, program: ProgramId },
    /// A task runs a program the workload does not have.
    #[error("task {task} ({name}): unknown program {program}")]
    UnknownProgram { task: usize, name: String, program: ProgramId },
    /// A task's nice value is outside -20..19.
    #[error("task {task} ({name}): nice {nice} is outside -20..19")]
    Nice { task: usize, name: String, nice: i8 },
    /// A real-time task's priority is outside 1..99.
    #[error("task {task} ({name}): real-time priority {priority} is outside 1..99")]
    RtPriority { task: usize, name: String, priority: u8 },
    /// A task may run on no CPU.
    #[error("task {task} ({name}): empty CPU affinity")]
    EmptyAffinity { task: usize, name: String },
    /// A task's affinity names a CPU beyond the simulation's `cpus`.
    #[error("task {task} ({name}): CPU {cpu} does not exist (the simulation has {cpus})")]
    NoSuchCpu { task: usize, name: String, cpu: Cpu, cpus: u32 },
    /// A task's fd table refers to an object the workload does not have.
    #[error("task {task} ({name}): fd refers to unknown object {object}")]
    UnknownObject { task: usize, name: String, object: ObjectId },
    /// A task is made a thread of itself or of a later task.
    #[error("task {task} ({name}): thread_of must name an earlier task")]
    ThreadOfLaterTask { task: usize, name: String, thread_of: u32 },
}

//! What went wrong in a benchmark or the validation: [`BenchError`], grouped by what
//! failed (the settings, a tool, a child, a time limit, a program's output, the
//! observer), each with the data that says how.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use schedlab_live::observer::ObserverError;

use crate::child::Exit;

/// What went wrong in a benchmark.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A system call failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The failure.
        #[source]
        source: io::Error,
    },
    /// Settings the benchmark cannot run with; nothing was started.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// Programs the benchmark runs are not installed; checked before anything starts.
    #[error("{needed_by} needs {}", list(tools))]
    Missing {
        /// What needs them (the suite, one of its modes).
        needed_by: &'static str,
        /// The missing ones, with their packages.
        tools: Vec<Tool>,
    },
    /// A child did not do what the benchmark expected of it; it is killed with its
    /// group (at the latest when its guard drops).
    #[error("{what}: the {name} {problem}")]
    Child {
        /// What was being done.
        what: String,
        /// What the child is called in messages (its program, a worker's name).
        name: String,
        /// What it did.
        problem: ChildProblem,
    },
    /// A child whose wait failed before (that error was returned then): nothing is left
    /// to wait for or kill, as its pid may be another process's by now.
    #[error("the {name} (pid {pid}) is lost: waiting for it failed before")]
    Lost {
        /// What the child is called in messages.
        name: String,
        /// Its pid.
        pid: i32,
    },
    /// A stop (a signal, through the caller's flag) ended the run early; the children
    /// are killed, and a daemon stopped, as the error unwinds through their guards.
    #[error("interrupted: every child was killed and nothing is left changed")]
    Interrupted,
    /// A whole run's time limit passed; it stops with every child killed.
    #[error("{what} ran past its time limit of {} s and was stopped", limit.as_secs_f64())]
    TimeLimit {
        /// What ran (the suite, a benchmark).
        what: &'static str,
        /// Its limit.
        limit: Duration,
    },
    /// A daemon the benchmark started exited before its socket accepted connections.
    #[error("schedlab run exited ({status}) before accepting connections{}", last_words(log))]
    DaemonExited {
        /// How it ended.
        status: ExitStatus,
        /// The last lines of its log.
        log: Vec<String>,
    },
    /// A daemon the benchmark started runs, but its socket did not accept connections
    /// in time; it is stopped when its guard drops.
    #[error(
        "schedlab run did not accept connections on {} within {} s{}",
        socket.display(),
        limit.as_secs_f64(),
        last_words(log)
    )]
    DaemonNotListening {
        /// Its control socket.
        socket: PathBuf,
        /// How long it had.
        limit: Duration,
        /// The last lines of its log.
        log: Vec<String>,
    },
    /// What a program printed (or logged, or answered) is not what the benchmark reads.
    #[error("{what} {problem}")]
    Output {
        /// Whose output, as the subject of the message: a program, its command line, the
        /// daemon's stats.
        what: String,
        /// What is wrong with it.
        #[source]
        problem: OutputProblem,
    },
    /// The observer failed while it ran.
    #[error("the observer: {0}")]
    Observer(#[from] ObserverError),
    /// The observer could not start.
    #[error("cannot start the observer: {0}")]
    ObserverStart(#[source] ObserverError),
    /// A thread the benchmark started panicked (its message went to standard error).
    #[error("the {thread} thread panicked")]
    Panicked {
        /// Which one.
        thread: &'static str,
    },
    /// What failed while doing something named: `{what}: {source}`.
    #[error("{what}: {source}")]
    During {
        /// What was being done.
        what: String,
        /// What failed.
        #[source]
        source: Box<BenchError>,
    },
    /// A simulator tunable refused (the calibration's or one the user set).
    #[error(transparent)]
    Tunable(#[from] schedlab_sim::TunableError),
    /// A workload the simulator could not build (the simulated half of a benchmark).
    #[error(transparent)]
    Workload(#[from] schedlab_sim::workloads::WorkloadError),
    /// A simulation that failed.
    #[error("simulating '{workload}' failed: {source}")]
    Simulate {
        /// The workload's spec.
        workload: String,
        /// Why.
        #[source]
        source: schedlab_sim::SimError,
    },
    /// The store of a daemon the benchmark started.
    #[error(transparent)]
    Store(#[from] schedlab_store::Error),
    /// The journal of a daemon that had to be killed could not be read or written.
    #[error("the journal of a killed daemon: {0}")]
    Journal(#[from] schedlab_live::actuator::ActuatorError),
    /// A daemon had to be killed and some of its changes could not be undone.
    #[error(
        "a daemon was killed and {failed} of its change(s) could not be undone: \
         `schedlab restore --store {}` and check the machine",
        store.display()
    )]
    Unrestored {
        /// Its store, whose journal keeps them.
        store: PathBuf,
        /// How many.
        failed: usize,
    },
}

impl BenchError {
    /// This error, as the failure of `what`.
    pub fn during(self, what: &str) -> Self {
        BenchError::During { what: what.to_string(), source: Box::new(self) }
    }

    /// A failed system call and what was being done.
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        BenchError::Io { context: context.into(), source }
    }

    /// `what`'s output (the subject of the message) and what is wrong with it.
    pub(crate) fn output(what: impl Into<String>, problem: OutputProblem) -> Self {
        BenchError::Output { what: what.into(), problem }
    }
}

/// Settings a benchmark or the validation cannot run with: they are checked before
/// anything starts, and the messages name what to change.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// A set or count to measure over is empty: no cell would run.
    #[error("nothing to measure: {lacking}")]
    NothingToMeasure {
        /// Which ones may be empty ("no programs or no runs").
        lacking: &'static str,
    },
    /// Sizes or counts that must be positive are not.
    #[error("{what} must be above 0")]
    Zero {
        /// Which ones.
        what: &'static str,
    },
    /// rw.c copies whole blocks only.
    #[error("the block {block} must divide the bytes {bytes}")]
    BlockNotDividing {
        /// The block size, in bytes.
        block: u32,
        /// The bytes to copy.
        bytes: u64,
    },
    /// A SCHED_FIFO or SCHED_RR priority outside what the kernel takes.
    #[error("the RT priority {0} is not in 1..=99")]
    RtPriority(i32),
    /// Real-time workers without the kernel's RT throttling could starve the machine.
    #[error(
        "the kernel's RT throttling is off (/proc/sys/kernel/sched_rt_runtime_us is -1): real-time \
         workers could starve everything else on their CPUs; turn it back on \
         (echo 950000 > /proc/sys/kernel/sched_rt_runtime_us) or pass --allow-unthrottled"
    )]
    RtUnthrottled,
    /// Real-time workers would hold every allowed CPU, the runner's and the system's.
    #[error(
        "the workers' CPUs {cpus:?} are every allowed CPU: real-time workers could take them all \
         from the system; give --cpus a smaller set, or --all-cpus to run anyway (the runner then \
         runs at SCHED_FIFO {}, the workers at {} at most)",
        super::policies::RUNNER_RT_PRIORITY,
        super::policies::RUNNER_RT_PRIORITY - 1
    )]
    EveryCpu {
        /// The workers' CPUs.
        cpus: Vec<usize>,
    },
    /// A CPU this process may not run on (its affinity, its cpuset).
    #[error("CPU {cpu} is not among the allowed {allowed:?}")]
    CpuNotAllowed {
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs this process may run on.
        allowed: Vec<usize>,
    },
    /// No CPU was asked for, or none is allowed.
    #[error("no CPU to run the workers on")]
    NoCpu,
    /// SWAP's multi-server variant waits on one SysV semaphore.
    #[error("the multi-server variant runs over a SysV semaphore only (sem)")]
    MultiServer,
    /// A `sig` endpoint without the process it signals.
    #[error("a sig {who} needs the peer to signal")]
    NoPeer {
        /// The client or the server.
        who: &'static str,
    },
    /// The hidden `bench worker` subcommand's arguments, as its parser words them.
    #[error("{0}")]
    WorkerArgs(String),
    /// A worker's input is shorter than the bytes it is to copy.
    #[error("{} ends after {len} of {bytes} bytes", path.display())]
    ShortInput {
        /// The input.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// The bytes to copy.
        bytes: u64,
    },
    /// The rt-app directory given is not a directory.
    #[error("the rt-app directory {} is not a directory", dir.display())]
    RtAppDir {
        /// The path given.
        dir: PathBuf,
    },
    /// An rt-app file that is not JSON (rt-app itself takes comments; serde_json does
    /// not).
    #[error("{}: not plain JSON (comments are not supported here): {source}", file.display())]
    RtAppJson {
        /// The file.
        file: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// An rt-app file whose top level or `global` is not an object.
    #[error("{file}: {part} is not an object")]
    RtAppShape {
        /// The file.
        file: String,
        /// Which part: the top level, `"global"`.
        part: &'static str,
    },
}

/// A program the benchmark runs, and the package that has it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tool {
    /// Its name on `PATH`.
    pub program: &'static str,
    /// The Debian/Ubuntu package.
    pub package: &'static str,
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (apt-get install {})", self.program, self.package)
    }
}

/// What a child did instead of what was expected of it: the words after "the {name}".
#[derive(Debug, thiserror::Error)]
pub enum ChildProblem {
    /// Its output was to be read but was not piped when it was started.
    #[error("has no piped output")]
    NotPiped,
    /// It exited while it should have gone on, or with a status other than 0.
    #[error("exited with {0}")]
    Exited(ExitStatus),
    /// Its output ended, and it had not exited (or could not be waited for) by the
    /// deadline.
    #[error("closed its output")]
    ClosedOutput,
    /// The deadline passed before its next line.
    #[error("said nothing in time")]
    Silent,
    /// A line other than the one expected.
    #[error("said '{line}' instead of '{want}'")]
    Said {
        /// What it said.
        line: String,
        /// What it should have said (a pattern, for lines that carry numbers).
        want: String,
    },
    /// The deadline passed before its exit.
    #[error("did not exit in time")]
    NoExit,
    /// It ran past its limit and was killed with its group.
    #[error("took longer than {:.1} s and was killed", limit.as_secs_f64())]
    Killed {
        /// Its limit, from its spawn.
        limit: Duration,
    },
    /// It ended other than with status 0, and what it printed says why.
    #[error("{}: {output}", exit.describe())]
    ExitedSaying {
        /// How it ended, and what it used.
        exit: Exit,
        /// What it printed (its last lines).
        output: String,
    },
}

/// What is wrong with a program's output: the words after the program (or whatever
/// [`BenchError::Output`] names).
#[derive(Debug, thiserror::Error)]
pub enum OutputProblem {
    /// The line or table the benchmark reads is missing.
    #[error("printed no {thing}: {output}")]
    Lacks {
        /// What is missing (a time, a histogram).
        thing: &'static str,
        /// What it printed instead (its start, for long outputs).
        output: String,
    },
    /// Its time line holds no number.
    #[error("printed '{line}', not a time: {source}")]
    NotTime {
        /// The line.
        line: String,
        /// Why it is not a number.
        source: std::num::ParseFloatError,
    },
    /// rt-app's log shows no loop of its busy loop.
    #[error("logged no loops")]
    NoLoops,
    /// No calibration run gave a finite, positive rate.
    #[error("gave no rate: {rates:?}")]
    NoRate {
        /// The runs' rates, in ns per loop.
        rates: Vec<f64>,
    },
    /// An answer that should be JSON is not.
    #[error("are not JSON ({source}): {text}")]
    NotJson {
        /// The answer.
        text: String,
        /// Why.
        source: serde_json::Error,
    },
    /// A JSON answer without a number the benchmark reads.
    #[error("have no '{key}': {text}")]
    NoKey {
        /// The key.
        key: &'static str,
        /// The answer.
        text: String,
    },
}

/// `tools`, separated by commas.
fn list(tools: &[Tool]) -> String {
    tools.iter().map(Tool::to_string).collect::<Vec<_>>().join(", ")
}

/// A daemon's last log lines, to end a message: empty without any.
fn last_words(log: &[String]) -> String {
    match log.is_empty() {
        true => String::new(),
        false => format!("; its last words:\n{}", log.join("\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::error_chain;

    #[test]
    fn messages_say_what_and_their_causes_once() {
        let tools = vec![
            Tool { program: "hackbench", package: "rt-tests" },
            Tool { program: "xz", package: "xz-utils" },
        ];
        let e = BenchError::Missing { needed_by: "the suite", tools };
        assert_eq!(
            e.to_string(),
            "the suite needs hackbench (apt-get install rt-tests), xz (apt-get install xz-utils)"
        );
        let e = BenchError::TimeLimit { what: "the suite", limit: Duration::from_secs(600) };
        assert_eq!(e.to_string(), "the suite ran past its time limit of 600 s and was stopped");
        let log = vec!["a".to_string(), "b".to_string()];
        let e = BenchError::DaemonNotListening { socket: "/s".into(), limit: Duration::from_secs(30), log };
        assert_eq!(
            e.to_string(),
            "schedlab run did not accept connections on /s within 30 s; its last words:\na\nb"
        );
        let e = BenchError::DaemonExited { status: ExitStatus::default(), log: Vec::new() };
        assert!(e.to_string().ends_with("before accepting connections"), "{e}");
        let source = serde_json::from_str::<serde_json::Value>("nope").unwrap_err();
        let e =
            BenchError::output("the daemon's stats", OutputProblem::NotJson { text: "nope".into(), source });
        assert!(e.to_string().starts_with("the daemon's stats are not JSON ("), "{e}");
        assert_eq!(error_chain(&e), e.to_string(), "the cause is in the message once");
        let e = BenchError::from(Invalid::CpuNotAllowed { cpu: 5, allowed: vec![0, 1] });
        assert_eq!(e.to_string(), "CPU 5 is not among the allowed [0, 1]");
    }
}

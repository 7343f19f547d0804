//! Workload sources: rt-app JSON files, and generators for hackbench and the paper 002
//! programs, selected by a spec string such as `hackbench:groups=10,ipc=pipe`.
//!
//! [`load`] is the entry point: a spec that ends in `.json` or names an existing file is
//! read as rt-app JSON ([`rtapp`]); anything else is `NAME` or `NAME:key=value,...` naming
//! one of the [`BUILTINS`] ([`hackbench`], and `pi`, `rw`, `mixed` from [`paper002`]).

pub mod hackbench;
mod json;
pub mod paper002;
pub mod rtapp;
mod spec;

pub use spec::{builtin, Builtin, BUILTINS};

/// The most tasks (threads) a workload may have, from any source: an rt-app file's
/// `instance` counts summed, hackbench's `2 × groups × fds`. A few bytes of input must
/// not ask for a memory the machine does not have.
pub const MAX_TASKS: u64 = 100_000;

use std::path::Path;

use crate::Workload;

/// Why a workload could not be loaded. Every message says where the problem is (file and
/// `line:column`, or the spec key) and what would be accepted instead.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The workload file could not be read.
    #[error("cannot read workload file {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The rt-app file is not valid JSON.
    #[error("{file}:{line}:{column}: invalid JSON: {message}")]
    Json { file: String, line: usize, column: usize, message: String },
    /// The rt-app file is valid JSON but uses something the simulator does not support
    /// or gets a value wrong.
    #[error("{file}:{line}:{column}: {message}")]
    RtApp { file: String, line: usize, column: usize, message: String },
    /// The spec names no built-in workload and no file.
    #[error("unknown workload '{name}': use one of {known}, or the path of an rt-app .json file")]
    UnknownWorkload { name: String, known: String },
    /// A built-in workload was given a key it does not have.
    #[error("{workload}: unknown key '{key}'; accepted keys: {accepted}")]
    UnknownKey { workload: String, key: String, accepted: String },
    /// A built-in workload's key has a value it cannot use.
    #[error("{workload}: {key}={value}: {problem}")]
    BadValue { workload: String, key: String, value: String, problem: String },
    /// The spec string itself is malformed.
    #[error("workload spec '{spec}': {problem}")]
    BadSpec { spec: String, problem: String },
}

/// Loads a workload from `spec`: the path of an rt-app JSON file (anything ending in
/// `.json`, or an existing file), or a built-in `NAME[:key=value,...]`.
pub fn load(spec: &str) -> Result<Workload, WorkloadError> {
    if spec.ends_with(".json") || Path::new(spec).is_file() {
        let text = std::fs::read_to_string(spec)
            .map_err(|source| WorkloadError::Io { path: spec.to_string(), source })?;
        rtapp::parse(&text, spec)
    } else {
        spec::builtin(spec)
    }
}

/// Helpers shared by the workload tests.
#[cfg(test)]
pub(crate) mod test_util {
    use crate::{Op, Program};

    /// Each operation of `p` other than loop markers, with how many times it runs.
    /// Panics on a loop for ever, which has no count.
    pub fn executions(p: &Program) -> Vec<(Op, u64)> {
        let mut times = vec![1u64];
        let mut out = Vec::new();
        for op in &p.ops {
            match *op {
                Op::Loop { count } => {
                    assert_ne!(count, 0, "{}: loop for ever", p.comm);
                    times.push(times.last().unwrap() * u64::from(count));
                }
                Op::LoopEnd => {
                    times.pop();
                }
                op => out.push((op, *times.last().unwrap())),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_dispatches_on_the_spec() {
        let w = load("hackbench:groups=1,fds=2,loops=3").unwrap();
        assert_eq!(w.tasks.len(), 4);
        assert_eq!(load("pi").unwrap().tasks.len(), 10);
        let e = load("/nonexistent/dir/file.json").unwrap_err();
        assert!(matches!(e, WorkloadError::Io { .. }), "{e}");
        assert!(e.to_string().contains("/nonexistent/dir/file.json"), "{e}");
    }

    #[test]
    fn load_reads_rt_app_files() {
        let path = std::env::temp_dir().join(format!("schedlab-load-{}.json", std::process::id()));
        std::fs::write(&path, "{\"tasks\": {\"t\": {\"loop\": 2, \"run\": 100}},\n \"bogus\": 1}").unwrap();
        let spec = path.to_str().unwrap();
        let e = load(spec).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("{spec}:2:2: unknown top-level key \"bogus\"; accepted: tasks, global, resources")
        );
        std::fs::write(&path, "{\"global\": {\"duration\": 1}, \"tasks\": {\"t\": {\"run\": 100}}}").unwrap();
        let w = load(spec).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(w.name, spec);
        assert_eq!(w.tasks[0].name, "t-0");
    }
}

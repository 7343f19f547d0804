//! Benchmarks on the live machine.
//!
//! [`deps`] is SWAP's client-server microbenchmark (paper 004, section 6): a client at
//! nice −20 waits on a server at nice 0 that does a bubble sort per request, through
//! each of the six IPC kinds the observer detects ([`ipc`]), unloaded, loaded with CPU
//! hogs, with the server reniced by hand and with `schedlab run` boosting it. The
//! client, server and hogs are separate processes ([`workers`]) started by
//! re-executing the current binary with the hidden `bench worker` subcommand.
//!
//! [`overhead`] is the observer's cost: hackbench bare, under the observer and under
//! bpftrace with the thesis's aggregation.
//!
//! [`policies`] is paper 002's benchmark of SCHED_OTHER, SCHED_FIFO and SCHED_RR with
//! CPU-bound, I/O-bound and mixed programs, on a bounded CPU set.
//!
//! [`suite`] is the do-no-harm judge of the live world: real workloads (hackbench,
//! a compressor, a fork/exec loop, a parallel build, wake-up latency under load, the
//! client-server round trips) on bare Linux and under `schedlab run`, A-B-B-A, with a
//! verdict per workload.
//!
//! [`boost_tuning`] is `schedlab tune --live`'s objective: [`deps`] under the daemon
//! with a given `boost_max_ms`.
//!
//! [`slices`] is PFS's processing-time experiment (paper 001, section 5): a test
//! program of CPU bursts and sleeps, gzip and sort, each beside a CPU hog, timed
//! without and with `schedlab run` giving burst-aware slices.

use std::io;

pub mod boost_tuning;
pub mod deps;
mod error;
pub mod ipc;
pub mod named;
pub mod overhead;
pub mod policies;
pub mod slices;
pub mod stats;
pub mod suite;
pub mod workers;

pub use error::{BenchError, ChildProblem, Invalid, OutputProblem, Tool};

/// The benchmarks' results.
pub type Result<T> = std::result::Result<T, BenchError>;

/// Adds what was being done to an I/O error.
pub(crate) trait Context<T> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for io::Result<T> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| BenchError::Io { context: context(), source })
    }
}

/// A scratch directory for `what` (a benchmark's or a validation's files), removed with
/// everything in it when dropped.
pub(crate) fn scratch_dir(what: &str) -> Result<tempfile::TempDir> {
    let base = std::env::temp_dir();
    tempfile::Builder::new()
        .prefix(&format!("schedlab-{what}-"))
        .tempdir_in(&base)
        .ctx(|| format!("cannot create a directory in {}", base.display()))
}

/// `error` and each of its sources not already in the message before it, joined by
/// ": ": the whole story of an error kept as text (a report's row).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let next = e.to_string();
        if !text.contains(&next) {
            text = format!("{text}: {next}");
        }
        source = e.source();
    }
    text
}

/// `Ok(ret)` for a non-negative return of a libc call, the `errno` otherwise.
pub(crate) fn cvt<T: Copy + PartialOrd + Default>(ret: T) -> io::Result<T> {
    if ret < T::default() {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_chain_says_each_cause_once() {
        let io = || io::Error::new(io::ErrorKind::NotFound, "no such file");
        let e = BenchError::io("cannot open x", io()).during("the calibration");
        assert_eq!(error_chain(&e), "the calibration: cannot open x: no such file");
        let w = schedlab_sim::workloads::WorkloadError::Io { path: "w.json".into(), source: io() };
        assert_eq!(error_chain(&w), "cannot read workload file w.json: no such file");
    }
}

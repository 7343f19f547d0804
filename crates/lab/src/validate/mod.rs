//! `schedlab validate`'s live half: the same workloads on this machine as in the
//! simulator, to relate the two as paper 003's Figure 1 relates LinSched to hackbench.
//!
//! - [`calibrate`]: the simulator's cost tunables (system call, copy per KiB, context
//!   switch) measured here;
//! - [`hackbench`]: rt-tests hackbench over pipes, timed, with its context switches;
//! - [`rtapp`]: rt-app JSON files, with each thread's CPU time and context switches;
//! - [`fit`]: the least-squares line and R² over (simulated, real) pairs, medians;
//! - [`pairs`]: both halves run and paired, the report `schedlab validate` prints;
//! - [`fidelity`]: the simulator's errors against the kernel, and the verdict on each
//!   fidelity target.
//!
//! Every child runs in its own process group, under a time limit, and is killed with
//! its group on an error (`ChildGroup`, in the crate's `child` module).

pub mod calibrate;
pub mod fidelity;
pub mod fit;
pub mod forker;
pub mod hackbench;
pub mod pairs;
pub mod rtapp;
pub mod trace;

/// What went wrong while validating: the benchmarks' error (a failed system call with
/// what was being done, or a child that failed, timed out or said something unexpected).
pub use crate::bench::BenchError as ValidateError;
/// The validation's results.
pub use crate::bench::Result;

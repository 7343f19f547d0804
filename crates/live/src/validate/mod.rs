//! `schedlab validate`'s live half: the same workloads on this machine as in the
//! simulator, to relate the two as paper 003's Figure 1 relates LinSched to hackbench.
//!
//! - [`calibrate`]: the simulator's cost tunables (system call, copy per KiB, context
//!   switch) measured here;
//! - [`hackbench`]: rt-tests hackbench over pipes, timed, with its context switches;
//! - [`rtapp`]: rt-app JSON files, with each thread's CPU time and context switches;
//! - [`fit`]: the least-squares line and R² over (simulated, real) pairs, medians.
//!
//! Every child runs in its own process group, under a time limit, and is killed with
//! its group on an error ([`child`]). The simulator half lives in the CLI, which owns
//! the simulator dependency.

pub mod calibrate;
pub mod child;
pub mod fit;
pub mod hackbench;
pub mod rtapp;

use std::io;

/// What went wrong while validating.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// A system call failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    /// A child failed, timed out, or printed something unexpected.
    #[error("{0}")]
    Failed(String),
}

impl ValidateError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        ValidateError::Io { context: context.into(), source }
    }
}

/// The validation's results.
pub type Result<T> = std::result::Result<T, ValidateError>;

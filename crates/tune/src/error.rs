//! Why a search could not run, and why a live machine's scheduler knobs cannot be
//! written.

use std::path::PathBuf;

use schedlab_sim::{InvalidWorkload, SimError};

use crate::rsm::SingularSystem;

/// Why a search failed: its objective, a swarm, the response surface's fit or a
/// golden-section search. The values at fault are kept, so that a caller can tell the
/// cases apart without reading the message.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// The fair class has no tunables to search (timeshare).
    #[error("the {fair} fair class has no tunables to search (use cfs or eevdf)")]
    NoTunables { fair: &'static str },
    /// The objective was given no seed to simulate with.
    #[error("the objective needs at least one seed")]
    NoSeeds,
    /// The objective's workload does not fit together.
    #[error("invalid workload: {0}")]
    Workload(#[from] InvalidWorkload),
    /// A candidate could not be simulated.
    #[error(transparent)]
    Simulation(#[from] SimError),
    /// A candidate does not have one value per tunable of the space.
    #[error("a candidate has {got} values, the space {expected}")]
    CandidateLength { got: usize, expected: usize },
    /// A cost function of the caller's failed (a live benchmark, say): its error as it is.
    #[error(transparent)]
    Objective(Box<dyn std::error::Error + Send + Sync>),
    /// The search box does not have as many lower bounds as upper ones (or has none).
    #[error("bounds: {lower} lower and {upper} upper values")]
    BoundsLength { lower: usize, upper: usize },
    /// A dimension's lower bound is above its upper bound (or one of them is NaN).
    #[error("bounds of dimension {dimension}: {lower} > {upper}")]
    BoundsOrder { dimension: usize, lower: f64, upper: f64 },
    /// A swarm of no particles.
    #[error("a swarm needs at least one particle")]
    NoParticles,
    /// argmin's particle swarm refused its settings (a negative w, φp or φg) or failed.
    #[error("particle swarm: {0}")]
    Swarm(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The swarm ended without a best position.
    #[error("the swarm found no best position")]
    NoBest,
    /// argmin did not hand the cost function back after the run.
    #[error("argmin kept the problem")]
    ProblemKept,
    /// Fewer runs (or responses) than the second-order model has coefficients.
    #[error("a second-order model needs 10 runs at least ({points} points, {responses} responses)")]
    TooFewRuns { points: usize, responses: usize },
    /// The design's normal equations have no unique solution.
    #[error("cannot fit the model: {0}")]
    Fit(#[source] SingularSystem),
    /// A golden-section search on an empty or reversed interval, or with no tolerance.
    #[error("golden section needs a < b and tol > 0 (got [{a}, {b}], tol {tol})")]
    Interval { a: f64, b: f64, tol: f64 },
}

/// Why a scheduler knob in debugfs cannot be written, and what would let it be: the
/// check a live tuner makes before it starts ([`crate::objective::knob_writable`]).
#[derive(Debug, thiserror::Error)]
pub enum KnobError {
    /// EPERM although root: kernel lockdown makes debugfs read-only; `mode` is what
    /// `/sys/kernel/security/lockdown` says, when it says something.
    #[error(
        "cannot write {}: the kernel forbids it (EPERM): kernel lockdown{} makes debugfs read-only. \
         Boot without lockdown (lockdown=none, or Secure Boot off) to tune a live machine, \
         or tune in the simulator (drop --live)",
        .path.display(),
        .mode.as_ref().map_or(String::new(), |mode| format!(" is on ({mode})"))
    )]
    Lockdown { path: PathBuf, mode: Option<String> },
    /// EACCES: the file's mode lets only root write it.
    #[error("cannot write {}: permission denied; run as root (sudo) to tune a live machine", .path.display())]
    PermissionDenied { path: PathBuf },
    /// The knob does not exist: debugfs is not mounted, or the kernel has no EEVDF.
    #[error(
        "cannot write {}: no such file; mount debugfs (mount -t debugfs none /sys/kernel/debug) \
         on a kernel with the EEVDF scheduler (Linux 6.6 or later, CONFIG_SCHED_DEBUG)",
        .path.display()
    )]
    NotFound { path: PathBuf },
    /// Any other failure to open the knob for writing.
    #[error("cannot write {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

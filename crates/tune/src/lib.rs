//! Scheduler tuning after paper 003 (Anderson, Marwala and Nelwamondo, "Application of
//! Global and One-Dimensional Local Optimization to Operating System Scheduler Tuning"):
//! the fair class's tunables searched for the shortest turnaround of a workload.
//!
//! - [`pso`]: particle swarm optimization (the paper's global method), on `argmin`'s
//!   solver, with the evaluations it took to reach its best;
//! - [`rsm`]: the paper's meta-optimization of the swarm's w, φp, φg by response surface
//!   methodology (a 14-run Box-Behnken design and a second-order model);
//! - [`golden`]: golden-section search (the paper's local method) over SchedPeriod, with
//!   the paper's two parameter discovery algorithms mapping SchedPeriod back to
//!   Latency, MinGran and WakeupGran;
//! - [`objective`]: what is minimized — the simulated makespan of a workload for a
//!   candidate parameter vector, cached and evaluated in parallel — and the check that
//!   a live machine's scheduler knobs can be written;
//! - [`trace`]: the record of one search's evaluations (best so far, evaluations to the
//!   best);
//! - [`error`]: why a search failed ([`TuneError`]) and why a live machine's knobs cannot
//!   be written ([`KnobError`]).

pub mod error;
pub mod golden;
pub mod objective;
pub mod pso;
pub mod rsm;
pub mod trace;

pub use error::{KnobError, TuneError};
pub use golden::{
    discover, golden_section, interval, search_period, Discovery, GoldenOutcome, PeriodSearch, GOLDEN_RHO,
};
pub use objective::{debugfs_knobs_writable, Knobs, SimObjective, Space};
pub use pso::{particle_swarm, BatchCost, PsoOutcome, PsoParams};
pub use rsm::{box_behnken, meta_optimize, Fit, MetaOutcome, RsmChoice, RsmRun};
pub use trace::Trace;

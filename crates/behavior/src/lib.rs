//! Behavior models fed only by the event stream, so that the simulator and the live
//! daemon use the same code: PFS (paper 001) and, later, syscall profiles, classifiers
//! and SWAP's dependency graph.

/// CPU distribution planner of paper 000: fair share, weighted, isolation, co-location.
pub mod distribution;
/// What each program does from run to run, learned from its processes' lives.
pub mod habits;
pub mod learn;
pub mod pfs;
pub mod swap;

//! schedlab's experiments: everything that measures rather than schedules.
//!
//! - [`papers`]: the papers' experiments run in the simulator, each with the paper's
//!   own values beside the results (`schedlab reproduce`);
//! - [`bench`]: the live benchmarks and the do-no-harm suite that judges the daemon
//!   against bare Linux (`schedlab bench`);
//! - [`validate`]: the same workloads on this machine and in the simulator, related
//!   (`schedlab validate`).
//!
//! Both live halves run their processes as `child::ChildGroup`s: each leads its own
//! process group, which is killed when it drops.
//!
//! The product crates (`sim`, `live`, `tune`, `behavior`) never depend on this one.

#[cfg(target_os = "linux")]
pub mod bench;
#[cfg(target_os = "linux")]
pub(crate) mod child;
pub mod papers;
#[cfg(target_os = "linux")]
pub mod validate;

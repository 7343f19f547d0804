//! schedlab's sched_ext scheduler (issue 12): the papers' mechanisms at dispatch time.
//!
//! The BPF side (`src/bpf/schedlab.bpf.c`, whose header comment states the rules) does
//! per-class fair share by virtual time over the classes' CPU sets (paper 000), PFS's
//! delayed switch at slice expiry with the paper's x/y adaptation (paper 001), and
//! SWAP's provider-in-the-requester's-turn (paper 004), with no round trip through user
//! space. User space keeps learning (classes, each program's PFS, SWAP's confidence) and
//! hands the results over as a [`Plan`](plan) through maps.
//!
//! - [`kernel`]: whether the running kernel has sched_ext, and what it runs now;
//! - [`scheduler`]: loading, feeding and unloading the scheduler (Linux only);
//! - [`stats`]: its counters and its exit, as typed data.

pub mod kernel;
pub mod plan;
#[cfg(target_os = "linux")]
pub mod scheduler;
pub mod stats;

#[cfg(target_os = "linux")]
mod skel {
    #![allow(clippy::all, unused_imports, non_camel_case_types, non_snake_case, dead_code)]
    include!(concat!(env!("OUT_DIR"), "/schedlab.skel.rs"));
}

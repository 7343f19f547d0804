//! The live world on Linux: the eBPF observer ([`observer`], Linux only) and the
//! dependencies SWAP finds in its events ([`dependencies`]); actuator, journal and
//! daemon are filled by later issues.

pub mod dependencies;
#[cfg(target_os = "linux")]
pub mod observer;

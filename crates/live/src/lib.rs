//! The live world on Linux.
//!
//! - Seeing: the eBPF observer ([`observer`]), the dependencies SWAP finds in its events
//!   ([`dependencies`]) and the peers of UNIX sockets they need ([`socket_peers`]),
//!   what a process is doing now ([`activity`]), `/proc` reads ([`process`]), and the
//!   model's process profiles from an observation window ([`profile`]), the same for
//!   `observe` and the daemon, and one window observed and kept ([`observation`]).
//! - Acting: the daemon ([`daemon`]) with its configuration ([`config`]), the journaled
//!   changes it makes to processes ([`actuator`], [`settings`]) and the cpuset cgroups
//!   it moves them into ([`cgroup`]).
//! - Process names made safe to print ([`text`]).
//! - What the machine is (its online CPUs, tick, `cpu` cgroup controller, fair server),
//!   read for tests and benchmarks rather than assumed ([`host`]).
//!
//! Everything but the configuration, the dependencies, the profiles, the activity and
//! the text is Linux only.

pub mod activity;
#[cfg(target_os = "linux")]
pub mod actuator;
#[cfg(target_os = "linux")]
pub mod cgroup;
pub mod config;
#[cfg(target_os = "linux")]
pub mod daemon;
pub mod dependencies;
#[cfg(target_os = "linux")]
pub mod host;
#[cfg(target_os = "linux")]
pub mod observation;
#[cfg(target_os = "linux")]
pub mod observer;
#[cfg(target_os = "linux")]
pub mod process;
pub mod profile;
#[cfg(target_os = "linux")]
pub mod settings;
#[cfg(target_os = "linux")]
pub mod socket_peers;
pub mod text;

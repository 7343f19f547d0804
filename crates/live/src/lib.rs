//! The live world on Linux: the eBPF observer ([`observer`], Linux only), the
//! dependencies SWAP finds in its events ([`dependencies`]) and the peers of UNIX
//! sockets they need ([`socket_peers`], Linux only), and the daemon's configuration
//! ([`config`]), the cpuset cgroups the actuator moves processes into ([`cgroup`],
//! Linux only), and the model's process profiles from an observation window
//! ([`profile`]), the same for `observe` and the daemon; process names made safe to
//! print ([`text`]).

pub mod activity;
#[cfg(target_os = "linux")]
pub mod actuator;
#[cfg(target_os = "linux")]
pub mod bench;
#[cfg(target_os = "linux")]
pub mod cgroup;
pub mod config;
#[cfg(target_os = "linux")]
pub mod daemon;
pub mod dependencies;
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
#[cfg(target_os = "linux")]
pub mod validate;

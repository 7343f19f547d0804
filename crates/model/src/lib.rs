//! The vocabulary both worlds of schedlab speak.
//!
//! The simulator and the live eBPF observer emit the same [`Event`]s; the behavior models
//! consume them without knowing which world produced them. Time is integer nanoseconds
//! ([`Ns`]), as in the kernel.

mod event;
mod layer;
mod policy;
mod resource;
mod syscall;
mod syscall_table;

pub use event::{Event, EventKind, PrevState, SyscallArgs};
pub use layer::{ProviderLayer, SliceLayer};
pub use policy::Policy;
pub use resource::{FlockKind, Resource};
pub use syscall::{syscall_name, syscall_nr, Syscall};

/// Nanoseconds, the one unit of time (simulated clock or `CLOCK_MONOTONIC`).
pub type Ns = u64;

/// Nanoseconds in one microsecond, millisecond and second.
pub const NSEC_PER_USEC: Ns = 1_000;
pub const NSEC_PER_MSEC: Ns = 1_000_000;
pub const NSEC_PER_SEC: Ns = 1_000_000_000;

/// A task (thread) id, as the kernel's `pid`; `Pid(0)` is the idle task of a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Pid(pub u32);

impl Pid {
    /// The idle task: what a CPU "runs" when nothing else is runnable.
    pub const IDLE: Pid = Pid(0);
}

impl std::fmt::Display for Pid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A CPU number.
pub type Cpu = u32;

/// Something that consumes the event stream: a trace writer, a behavior model, a logger.
pub trait EventSink {
    /// Called for every event, in time order.
    fn event(&mut self, event: &Event);
}

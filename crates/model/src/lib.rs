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

pub use event::{Event, EventKind, Life, PrevState, SyscallArgs};
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

/// Collects every event, in order.
impl EventSink for Vec<Event> {
    fn event(&mut self, event: &Event) {
        self.push(event.clone());
    }
}

/// Discards every event: a run that needs no sink where the API asks for one.
impl EventSink for () {
    fn event(&mut self, _: &Event) {}
}

/// A borrowed sink, so that a sink can be lent to a run and read afterwards.
impl<T: EventSink + ?Sized> EventSink for &mut T {
    fn event(&mut self, event: &Event) {
        (**self).event(event);
    }
}

/// Two sinks fed the same stream, the first first: an observer's poll feeding a
/// recorder and a model at once.
impl<A: EventSink, B: EventSink> EventSink for (A, B) {
    fn event(&mut self, event: &Event) {
        self.0.event(event);
        self.1.event(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinks_collect_discard_and_fan_out_in_order() {
        let e = |time| Event { time, kind: EventKind::Exit { pid: Pid(1), code: 0, life: None } };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        {
            let mut both = (&mut a, (&mut b, ()));
            both.event(&e(1));
            both.event(&e(2));
        }
        assert_eq!(a, [e(1), e(2)]);
        assert_eq!(a, b);
    }
}

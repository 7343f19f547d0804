//! The simulator's plug-in points for behavior models, defined here so that the
//! simulator and the models both depend on this vocabulary and not on each other (as
//! sched_ext's ops are defined by the kernel, not by the schedulers that fill them in).

use crate::{EventSink, Ns, Pid};

/// A layer over the fair class consulted when the running task's slice ends: PFS
/// (paper 001) lets a task about to block keep the CPU. It sees every event.
pub trait SliceLayer: EventSink {
    /// `pid`'s slice ended at `now`: true lets it keep the CPU for a new slice.
    fn keep_running(&mut self, pid: Pid, now: Ns) -> bool;
}

/// A dependency layer (SWAP, paper 004) over the fair class: a requester that blocks
/// while one of its providers can run stays queued ("virtual runnable"); when the class
/// picks it, the provider this layer names runs in its place, the CPU time charged to the
/// requester's share (proxy execution). It sees every event.
pub trait ProviderLayer: EventSink {
    /// The provider to run at `now` in place of the blocked `requester` — most
    /// confident first, following chains of blocked providers — among the tasks
    /// `runnable` accepts.
    fn stand_in(&mut self, requester: Pid, now: Ns, runnable: &dyn Fn(Pid) -> bool) -> Option<Pid>;
}

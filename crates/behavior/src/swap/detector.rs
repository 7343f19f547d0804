//! Feeding SWAP's resource model from the event stream (paper 004, section 3.2), and
//! the confidence feedback of section 3.1 measured from the same stream.
//!
//! How each rule of the paper maps onto the events of `schedlab_model`:
//!
//! | paper rule | event |
//! |---|---|
//! | a process that accesses a resource becomes one of its providers | `SyscallEnter` of an access call, with `args.resource` the object used |
//! | a process that blocks in the call becomes a requester of the object it waits for | `Block` (its `resource`, else the saved call's `args.resource`), mapped by [`requested_objects`] |
//! | the requester completes its call and leaves the requester list | `SyscallExit` |
//! | `close`, `flock(LOCK_UN)` end being a provider | `SyscallExit` of that call with `ret ≥ 0` |
//! | the process terminates and leaves every list | `Exit` |
//! | a provider provides the resource to a requester: +1 | `Wakeup` whose `waker` is a listed provider of an object the blocked `wakee` requests |
//! | a provider runs T without providing: −1 | running time between events, from `Switch` (which task each CPU runs), while a requester of its object is blocked |
//!
//! The calls that make a process a provider, per kind (the resource's side, endpoint or
//! lock kind is the one `args.resource` names):
//! - sockets, pipes and FIFOs: `read`, `write`, `readv`, `writev`, `sendto` (`send`),
//!   `recvfrom` (`recv`), `sendmsg`, `recvmsg`, `sendmmsg`, `recvmmsg`, `select`,
//!   `pselect6`, `poll`, `ppoll`, `sendfile`;
//! - message queues: `msgsnd`, `msgrcv`; semaphores: `semop`, `semtimedop`;
//! - file locks: `flock` with `LOCK_SH` (the shared object) or `LOCK_EX` (the
//!   exclusive object);
//! - signals: `kill`, `tkill`, `tgkill`, `rt_sigqueueinfo`, `rt_tgsigqueueinfo` of a
//!   signal of interest ([`signal_of_interest`]), as provider of the receiver's object.

use std::collections::HashMap;

use schedlab_model::{
    Cpu, Event, EventKind, EventSink, FlockKind, Ns, Pid, ProviderLayer, Resource, Syscall, SyscallArgs,
};

use super::confidence::{Confidence, KindParams, SwapParams};
use super::resource::{
    requested_objects, same_kernel_object, simulator_socket_peer, ResourceObject, ResourceTable,
};

/// x86_64 numbers of the calls SWAP looks at that [`Syscall`] does not name.
mod nr {
    pub const POLL: u32 = 7;
    pub const READV: u32 = 19;
    pub const WRITEV: u32 = 20;
    pub const SELECT: u32 = 23;
    pub const SENDFILE: u32 = 40;
    pub const SENDMSG: u32 = 46;
    pub const RECVMSG: u32 = 47;
    pub const RT_SIGQUEUEINFO: u32 = 129;
    pub const TKILL: u32 = 200;
    pub const SEMTIMEDOP: u32 = 220;
    pub const TGKILL: u32 = 234;
    pub const PSELECT6: u32 = 270;
    pub const PPOLL: u32 = 271;
    pub const RT_TGSIGQUEUEINFO: u32 = 297;
    pub const RECVMMSG: u32 = 299;
    pub const SENDMMSG: u32 = 307;
}

/// The calls through which a socket, pipe or FIFO is accessed (section 3.2.1–3.2.2,
/// with their modern variants).
const STREAM_ACCESS: [u32; 15] = [
    Syscall::Read.nr(),
    Syscall::Write.nr(),
    nr::READV,
    nr::WRITEV,
    Syscall::Sendto.nr(),
    Syscall::Recvfrom.nr(),
    nr::SENDMSG,
    nr::RECVMSG,
    nr::SENDMMSG,
    nr::RECVMMSG,
    nr::SELECT,
    nr::PSELECT6,
    nr::POLL,
    nr::PPOLL,
    nr::SENDFILE,
];

/// The calls that send a signal to a process.
const SIGNAL_SEND: [u32; 5] =
    [Syscall::Kill.nr(), nr::TKILL, nr::TGKILL, nr::RT_SIGQUEUEINFO, nr::RT_TGSIGQUEUEINFO];

/// `flock` operations.
const LOCK_SH: i32 = 1;
const LOCK_EX: i32 = 2;
const LOCK_UN: i32 = 8;

/// Signals used for exception handling or that cannot be caught, which SWAP ignores
/// (section 3.2.5 names `SIGKILL` and `SIGBUS`): `SIGILL`, `SIGTRAP`, `SIGABRT`,
/// `SIGBUS`, `SIGFPE`, `SIGKILL`, `SIGSEGV`, `SIGSTOP`, `SIGSYS`.
const EXCEPTION_SIGNALS: [i32; 9] = [4, 5, 6, 7, 8, 9, 11, 19, 31];

/// Whether a `kill` of `signal` can be synchronization (section 3.2.5): a signal that is
/// sent (not the existence check 0) and is not an exception-handling signal. The paper
/// also leaves out signals the receiver explicitly ignores; the event vocabulary does
/// not carry signal dispositions, so they count.
pub fn signal_of_interest(signal: Option<i32>) -> bool {
    signal.is_some_and(|s| s > 0 && !EXCEPTION_SIGNALS.contains(&s))
}

/// The object a call makes its caller a provider of, if any (see the module docs).
fn provided_object(nr: u32, args: &SyscallArgs) -> Option<Resource> {
    let resource = args.resource?;
    let provides = match resource {
        Resource::Socket { .. } | Resource::Pipe { .. } | Resource::Fifo { .. } => {
            STREAM_ACCESS.contains(&nr)
        }
        Resource::SysvMsg { .. } => nr == Syscall::Msgsnd.nr() || nr == Syscall::Msgrcv.nr(),
        Resource::SysvSem { .. } => nr == Syscall::Semop.nr() || nr == nr::SEMTIMEDOP,
        Resource::Flock { inode, lock } if nr == Syscall::Flock.nr() => {
            // The operation names the lock kind; LOCK_UN provides nothing.
            let lock = match args.flock_op {
                Some(op) if op & LOCK_UN != 0 => return None,
                Some(op) if op & LOCK_EX != 0 => FlockKind::Exclusive,
                Some(op) if op & LOCK_SH != 0 => FlockKind::Shared,
                Some(_) => return None,
                None => lock,
            };
            return Some(Resource::Flock { inode, lock });
        }
        Resource::Flock { .. } => false,
        Resource::Signal { .. } => SIGNAL_SEND.contains(&nr) && signal_of_interest(args.signal),
    };
    provides.then_some(resource)
}

/// The objects a successful call stops its caller providing: the side or endpoint a
/// `close` closes, both lock objects of the file a `flock(LOCK_UN)` unlocks.
fn released_objects(nr: u32, args: &SyscallArgs) -> Vec<Resource> {
    match args.resource {
        Some(r @ (Resource::Socket { .. } | Resource::Pipe { .. } | Resource::Fifo { .. }))
            if nr == Syscall::Close.nr() =>
        {
            vec![r]
        }
        Some(Resource::Flock { inode, .. })
            if nr == Syscall::Flock.nr() && args.flock_op.is_some_and(|op| op & LOCK_UN != 0) =>
        {
            vec![
                Resource::Flock { inode, lock: FlockKind::Shared },
                Resource::Flock { inode, lock: FlockKind::Exclusive },
            ]
        }
        _ => Vec::new(),
    }
}

/// What SWAP remembers of one process.
#[derive(Clone, Debug, Default)]
struct Proc {
    /// The call in progress and its arguments ("SWAP saves the parameters").
    call: Option<(u32, SyscallArgs)>,
    /// The objects whose requester lists it is on, from its block until its call returns.
    requesting: Vec<Resource>,
    /// Blocked: between its `Block` and its `Wakeup`.
    blocked: bool,
    /// The objects whose provider lists it is on.
    provides: Vec<Resource>,
}

/// A function giving the peer endpoint of a socket endpoint inode (`None` if unknown).
pub type SocketPeer = Box<dyn Fn(u64) -> Option<u64> + Send>;

/// A function giving the confidence a new provider entry starts at (`None`: the base
/// K): what earlier runs learned of the provider's program on that kind of resource.
pub type InitialConfidence = Box<dyn Fn(Pid, &Resource) -> Option<u32> + Send>;

/// SWAP's dependency detector: the resource object table fed by the event stream, with
/// the confidence of every provider kept up to date by feedback.
///
/// Feed it every event in time order ([`SwapDetector::observe`], or as an
/// [`EventSink`]); ask it whom to run in place of a blocked requester with
/// [`SwapDetector::most_confident_runnable_provider`].
pub struct SwapDetector {
    params: SwapParams,
    table: ResourceTable,
    procs: HashMap<Pid, Proc>,
    /// The task each CPU runs (`Pid::IDLE` when none), from `Switch` events.
    running: Vec<Pid>,
    /// The time up to which running time has been charged.
    clock: Ns,
    /// Sequence of confidence changes, for the order among equal confidences.
    seq: u64,
    socket_peer: SocketPeer,
    initial: Option<InitialConfidence>,
}

impl std::fmt::Debug for SwapDetector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwapDetector")
            .field("params", &self.params)
            .field("objects", &self.table.len())
            .field("processes", &self.procs.len())
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl SwapDetector {
    /// A detector with `params`, pairing socket endpoints as the simulator numbers them
    /// ([`simulator_socket_peer`]: the peer of inode `N` is `N ^ 1`).
    ///
    /// # Panics
    /// If `params` fail [`SwapParams::check`].
    pub fn new(params: SwapParams) -> Self {
        Self::with_socket_peer(params, simulator_socket_peer)
    }

    /// A detector with `params` that asks `peer` for the other endpoint of a socket (a
    /// live observer knows socket pairs from `sock_diag` or `/proc/net/unix`).
    ///
    /// # Panics
    /// If `params` fail [`SwapParams::check`].
    pub fn with_socket_peer(params: SwapParams, peer: impl Fn(u64) -> Option<u64> + Send + 'static) -> Self {
        if let Err(e) = params.check() {
            panic!("{e}");
        }
        SwapDetector {
            table: ResourceTable::new(params.table_size),
            params,
            procs: HashMap::new(),
            running: Vec::new(),
            clock: 0,
            seq: 0,
            socket_peer: Box::new(peer),
            initial: None,
        }
    }

    /// Makes new provider entries start at what `initial` says instead of the base K
    /// (confidence kept across runs by the daemon).
    pub fn set_initial_confidence(&mut self, initial: InitialConfidence) {
        self.initial = Some(initial);
    }

    /// The parameters in use.
    pub fn params(&self) -> &SwapParams {
        &self.params
    }

    /// The resource object table.
    pub fn table(&self) -> &ResourceTable {
        &self.table
    }

    /// The object of `resource`, if it exists.
    pub fn object(&self, resource: &Resource) -> Option<&ResourceObject> {
        self.table.get(resource)
    }

    /// The confidence of `provider` on `resource`'s provider list (the paper's
    /// `C(P, provider, resource)` for any requester P other than `provider`).
    pub fn confidence(&self, resource: &Resource, provider: Pid) -> Option<Confidence> {
        self.table.get(resource)?.provider(provider).map(|e| e.confidence)
    }

    /// The objects `pid` is a requester of (empty unless it is blocked in, or has not
    /// yet returned from, a call that blocked).
    pub fn requests(&self, pid: Pid) -> &[Resource] {
        self.procs.get(&pid).map_or(&[], |p| &p.requesting)
    }

    /// The objects `pid` is a provider of.
    pub fn provides(&self, pid: Pid) -> &[Resource] {
        self.procs.get(&pid).map_or(&[], |p| &p.provides)
    }

    /// Whether `pid` is blocked (between its `Block` and its `Wakeup` or next run).
    pub fn is_blocked(&self, pid: Pid) -> bool {
        self.procs.get(&pid).is_some_and(|p| p.blocked)
    }

    /// Takes in one event (in time order). Running time up to the event's time is
    /// charged first, under the dependencies as they were before it.
    pub fn observe(&mut self, e: &Event) {
        self.settle(e.time);
        match e.kind {
            EventKind::Exec { .. } | EventKind::Fork { .. } => {}
            EventKind::Exit { pid, .. } => self.exit(pid),
            EventKind::SyscallEnter { pid, nr, args } => self.enter(pid, nr, args),
            EventKind::SyscallExit { pid, nr, ret } => self.leave(pid, nr, ret),
            EventKind::Block { pid, resource } => self.block(pid, resource),
            EventKind::Wakeup { waker, wakee, .. } => self.wakeup(waker, wakee),
            EventKind::Switch { cpu, next, .. } => self.switch(cpu, next),
        }
    }

    /// Charges running time up to `now` without an event: a scheduler asking for a
    /// decision mid-run (a provider running in a requester's place) sees the negative
    /// feedback its running has earned so far.
    pub fn advance_to(&mut self, now: Ns) {
        self.settle(now);
    }

    /// The kernel object `resource` is part of was destroyed (`msgctl`/`semctl` with
    /// `IPC_RMID`, whose command the event vocabulary does not carry, or a socket, pipe
    /// or file that is gone): every object of it leaves the table, with its lists.
    pub fn destroy(&mut self, resource: &Resource) {
        let gone: Vec<Resource> =
            self.table.iter().map(|o| *o.resource()).filter(|r| same_kernel_object(r, resource)).collect();
        for r in gone {
            self.drop_object(&r);
        }
    }

    fn enter(&mut self, pid: Pid, nr: u32, args: SyscallArgs) {
        self.procs.entry(pid).or_default().call = Some((nr, args));
        if let Some(r) = provided_object(nr, &args) {
            self.add_provider(pid, r);
        }
    }

    /// The call returned: the request (if any) is fulfilled, and a successful `close` or
    /// `LOCK_UN` takes effect. Removal waits for the return so that the wakeups the
    /// call itself causes (an unlock granting the lock) still credit the caller.
    fn leave(&mut self, pid: Pid, nr: u32, ret: i64) {
        self.withdraw_requests(pid);
        let Some(p) = self.procs.get_mut(&pid) else { return };
        p.blocked = false;
        if let Some((call_nr, args)) = p.call.take() {
            if call_nr == nr && ret >= 0 {
                for r in released_objects(nr, &args) {
                    self.remove_provider(pid, &r);
                }
            }
        }
    }

    fn block(&mut self, pid: Pid, resource: Option<Resource>) {
        let saved = self.procs.get(&pid).and_then(|p| p.call).and_then(|(_, a)| a.resource);
        let objects =
            resource.or(saved).map(|r| requested_objects(&r, &*self.socket_peer)).unwrap_or_default();
        self.withdraw_requests(pid);
        for r in &objects {
            self.table.get_or_insert(*r).add_requester(pid);
        }
        let p = self.procs.entry(pid).or_default();
        p.requesting = objects;
        p.blocked = true;
    }

    /// Positive feedback: `waker` provided the objects the blocked `wakee` requests on
    /// whose provider lists it is; `wakee` is blocked no more.
    ///
    /// A waker whose call in progress names a lock the wakee waits for (an unlock that
    /// granted it) is listed as its provider first: the wakeup proves it held the lock.
    /// Without a per-call hook (the live daemon sees only the call that woke someone)
    /// this is the only way a lock's holder is learned; with one, the unlock's return
    /// removes it again as before.
    fn wakeup(&mut self, waker: Pid, wakee: Pid) {
        let Some(p) = self.procs.get_mut(&wakee) else { return };
        let was_blocked = std::mem::replace(&mut p.blocked, false);
        if !was_blocked || waker == wakee {
            return;
        }
        let requesting = p.requesting.clone();
        let unlocked = self.procs.get(&waker).and_then(|w| w.call).and_then(|(nr, a)| match a.resource {
            Some(Resource::Flock { inode, .. }) if nr == Syscall::Flock.nr() => Some(inode),
            _ => None,
        });
        for r in &requesting {
            if let (Resource::Flock { inode, .. }, Some(held)) = (r, unlocked) {
                if *inode == held && self.table.get(r).is_none_or(|o| o.provider(waker).is_none()) {
                    self.add_provider(waker, *r);
                }
            }
        }
        for r in &requesting {
            let KindParams { k, .. } = self.params.for_resource(r);
            if let Some(e) = self.table.get_mut(r).and_then(|o| o.provider_mut(waker)) {
                if e.confidence.reward(k, self.clock) {
                    self.seq += 1;
                    e.since = self.seq;
                }
            }
        }
    }

    fn switch(&mut self, cpu: Cpu, next: Pid) {
        let cpu = cpu as usize;
        if self.running.len() <= cpu {
            self.running.resize(cpu + 1, Pid::IDLE);
        }
        self.running[cpu] = next;
        // A task that runs is not blocked, even if its wakeup went unseen.
        if let Some(p) = self.procs.get_mut(&next) {
            p.blocked = false;
        }
    }

    /// `pid` terminated: it leaves every list, and its own signal object goes.
    fn exit(&mut self, pid: Pid) {
        if let Some(p) = self.procs.remove(&pid) {
            for r in &p.requesting {
                if let Some(o) = self.table.get_mut(r) {
                    o.remove_requester(pid);
                }
                self.table.remove_if_unused(r);
            }
            for r in &p.provides {
                if let Some(o) = self.table.get_mut(r) {
                    o.remove_provider(pid);
                }
                self.table.remove_if_unused(r);
            }
        }
        self.drop_object(&Resource::Signal { pid: pid.0 });
    }

    fn add_provider(&mut self, pid: Pid, r: Resource) {
        let KindParams { k, .. } = self.params.for_resource(&r);
        let obj = self.table.get_or_insert(r);
        if obj.provider(pid).is_some() {
            return;
        }
        self.seq += 1;
        let initial = self.initial.as_ref().and_then(|f| f(pid, &r));
        let evicted = obj.add_provider(pid, k, initial, self.params.list_limit, self.seq);
        self.procs.entry(pid).or_default().provides.push(r);
        if let Some(p) = evicted.and_then(|e| self.procs.get_mut(&e)) {
            p.provides.retain(|x| *x != r);
        }
    }

    fn remove_provider(&mut self, pid: Pid, r: &Resource) {
        if let Some(o) = self.table.get_mut(r) {
            o.remove_provider(pid);
        }
        self.table.remove_if_unused(r);
        if let Some(p) = self.procs.get_mut(&pid) {
            p.provides.retain(|x| x != r);
        }
    }

    fn withdraw_requests(&mut self, pid: Pid) {
        let Some(p) = self.procs.get_mut(&pid) else { return };
        for r in std::mem::take(&mut p.requesting) {
            if let Some(o) = self.table.get_mut(&r) {
                o.remove_requester(pid);
            }
            self.table.remove_if_unused(&r);
        }
    }

    /// Deletes the object of `r` and forgets it in its members' lists.
    fn drop_object(&mut self, r: &Resource) {
        let Some(obj) = self.table.remove(r) else { return };
        for e in obj.providers() {
            if let Some(p) = self.procs.get_mut(&e.pid) {
                p.provides.retain(|x| x != r);
            }
        }
        for q in obj.requesters() {
            if let Some(p) = self.procs.get_mut(q) {
                p.requesting.retain(|x| x != r);
            }
        }
    }

    /// Charges the running time since the last event to what every running task serves.
    fn settle(&mut self, now: Ns) {
        let dt = now.saturating_sub(self.clock);
        if dt == 0 {
            return;
        }
        self.clock = now;
        for cpu in 0..self.running.len() {
            let pid = self.running[cpu];
            if pid != Pid::IDLE {
                self.charge(pid, dt);
            }
        }
    }

    /// Negative feedback: `runner` ran `dt` while requesters waited. Every provider
    /// list entry it serves is charged: its own entries on objects a blocked requester
    /// waits for, and, because a blocked requester it serves may itself be a provider,
    /// that requester's entries too, up the chains (section 3.1: the running time of an
    /// indirect provider counts for the direct provider).
    fn charge(&mut self, runner: Pid, dt: Ns) {
        if self.provides(runner).is_empty() {
            return;
        }
        let (edges, _) = self.served_by(runner);
        for (r, provider) in edges {
            let KindParams { t_ns, .. } = self.params.for_resource(&r);
            let entry = self.table.get_mut(&r).and_then(|o| o.provider_mut(provider));
            if let Some(e) = entry {
                if e.confidence.charge(dt, t_ns, self.clock) {
                    self.seq += 1;
                    e.since = self.seq;
                }
            }
        }
    }

    /// What running `runner` serves: the (object, provider) entries through which it
    /// may provide for a blocked requester, directly or through chains of blocked
    /// providers, each once, and the blocked requesters it so serves, nearest first.
    /// Only entries still considered (confidence above zero) carry dependencies.
    pub(super) fn served_by(&self, runner: Pid) -> (Vec<(Resource, Pid)>, Vec<Pid>) {
        let mut edges = Vec::new();
        let mut served = Vec::new();
        let mut seen = vec![runner];
        let mut queue = std::collections::VecDeque::from([runner]);
        while let Some(p) = queue.pop_front() {
            for r in self.provides(p) {
                let Some(obj) = self.table.get(r) else { continue };
                let waiting = |q: &&Pid| **q != p && self.is_blocked(**q);
                if !obj.requesters().iter().any(|q| waiting(&q))
                    || !obj.provider(p).is_some_and(|e| e.confidence.considered())
                {
                    continue;
                }
                edges.push((*r, p));
                for &q in obj.requesters().iter().filter(waiting) {
                    if !seen.contains(&q) {
                        seen.push(q);
                        served.push(q);
                        queue.push_back(q);
                    }
                }
            }
        }
        (edges, served)
    }
}

impl EventSink for SwapDetector {
    fn event(&mut self, event: &Event) {
        self.observe(event);
    }
}

/// SWAP is the simulator's provider layer: the most confident provider that can run.
impl ProviderLayer for SwapDetector {
    fn stand_in(&mut self, requester: Pid, now: Ns, runnable: &dyn Fn(Pid) -> bool) -> Option<Pid> {
        self.advance_to(now);
        self.most_confident_runnable_provider(requester, runnable).map(|pick| pick.provider())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::{syscall_nr, PrevState, NSEC_PER_MSEC};

    const MS: Ns = NSEC_PER_MSEC;

    /// A detector and a clock to feed it events.
    struct Feed {
        d: SwapDetector,
        t: Ns,
    }

    impl Feed {
        fn new() -> Self {
            Feed { d: SwapDetector::new(SwapParams::default()), t: 0 }
        }
        fn with(params: SwapParams) -> Self {
            Feed { d: SwapDetector::new(params), t: 0 }
        }
        fn ev(&mut self, kind: EventKind) {
            self.d.observe(&Event { time: self.t, kind });
        }
        fn enter(&mut self, pid: u32, nr: u32, args: SyscallArgs) {
            self.ev(EventKind::SyscallEnter { pid: Pid(pid), nr, args });
        }
        fn exit(&mut self, pid: u32, nr: u32, ret: i64) {
            self.ev(EventKind::SyscallExit { pid: Pid(pid), nr, ret });
        }
        /// A complete call on `r`.
        fn call(&mut self, pid: u32, nr: Syscall, r: Resource, ret: i64) {
            self.enter(pid, nr.nr(), on(r));
            self.exit(pid, nr.nr(), ret);
        }
        /// A call on `r` that blocks.
        fn blocks(&mut self, pid: u32, nr: Syscall, r: Resource) {
            self.enter(pid, nr.nr(), on(r));
            self.ev(EventKind::Block { pid: Pid(pid), resource: Some(r) });
        }
        fn wake(&mut self, waker: u32, wakee: u32) {
            self.ev(EventKind::Wakeup { waker: Pid(waker), wakee: Pid(wakee), cpu: 0 });
        }
        fn run(&mut self, cpu: Cpu, pid: u32, ns: Ns) {
            self.ev(EventKind::Switch {
                cpu,
                prev: Pid::IDLE,
                prev_state: PrevState::Runnable,
                next: Pid(pid),
            });
            self.t += ns;
            self.ev(EventKind::Switch {
                cpu,
                prev: Pid(pid),
                prev_state: PrevState::Runnable,
                next: Pid::IDLE,
            });
        }
        fn providers(&self, r: Resource) -> Vec<u32> {
            self.d.object(&r).map_or(vec![], |o| o.providers().iter().map(|e| e.pid.0).collect())
        }
        fn requesters(&self, r: Resource) -> Vec<u32> {
            self.d.object(&r).map_or(vec![], |o| o.requesters().iter().map(|p| p.0).collect())
        }
        fn conf(&self, r: Resource, pid: u32) -> u32 {
            self.d.confidence(&r, Pid(pid)).expect("listed").value()
        }
    }

    fn on(r: Resource) -> SyscallArgs {
        SyscallArgs { resource: Some(r), ..Default::default() }
    }

    fn flock(op: i32, inode: u64) -> SyscallArgs {
        // The simulator reports the kind asked, or exclusive for LOCK_UN.
        let lock = if op == LOCK_SH { FlockKind::Shared } else { FlockKind::Exclusive };
        SyscallArgs {
            flock_op: Some(op),
            resource: Some(Resource::Flock { inode, lock }),
            ..Default::default()
        }
    }

    fn kill(target: u32, signal: i32) -> SyscallArgs {
        SyscallArgs {
            target_pid: Some(target as i32),
            signal: Some(signal),
            resource: Some(Resource::Signal { pid: target }),
            ..Default::default()
        }
    }

    #[test]
    fn call_numbers_match_the_syscall_table() {
        for (name, n) in [
            ("poll", nr::POLL),
            ("readv", nr::READV),
            ("writev", nr::WRITEV),
            ("select", nr::SELECT),
            ("sendfile", nr::SENDFILE),
            ("sendmsg", nr::SENDMSG),
            ("recvmsg", nr::RECVMSG),
            ("rt_sigqueueinfo", nr::RT_SIGQUEUEINFO),
            ("tkill", nr::TKILL),
            ("semtimedop", nr::SEMTIMEDOP),
            ("tgkill", nr::TGKILL),
            ("pselect6", nr::PSELECT6),
            ("ppoll", nr::PPOLL),
            ("rt_tgsigqueueinfo", nr::RT_TGSIGQUEUEINFO),
            ("recvmmsg", nr::RECVMMSG),
            ("sendmmsg", nr::SENDMMSG),
        ] {
            assert_eq!(syscall_nr(name), Some(n), "{name}");
        }
    }

    #[test]
    fn sockets_provide_own_endpoint_and_request_the_peer() {
        let mut f = Feed::new();
        let (a, b) = (Resource::Socket { inode: 100 }, Resource::Socket { inode: 101 });
        f.call(1, Syscall::Write, a, 10); // server writes its endpoint
        f.call(1, Syscall::Recvfrom, a, 10);
        assert_eq!(f.providers(a), vec![1]);
        f.blocks(2, Syscall::Read, b); // client reads its endpoint and blocks
        assert_eq!(f.providers(b), vec![2], "accessing makes the client a provider of its endpoint");
        assert_eq!(f.requesters(a), vec![2], "blocked: requester of the peer endpoint");
        assert_eq!(f.d.requests(Pid(2)), &[a]);
        f.wake(1, 2);
        assert_eq!(f.conf(a, 1), 21);
        f.exit(2, Syscall::Read.nr(), 10);
        assert!(f.requesters(a).is_empty(), "the completed call leaves the requester list");
        // A failed close changes nothing; a successful one removes the endpoint's provider.
        f.call(1, Syscall::Close, a, -9);
        assert_eq!(f.providers(a), vec![1]);
        f.call(1, Syscall::Close, a, 0);
        assert!(f.d.object(&a).is_none(), "no requester or provider left: deleted");
        assert!(f.d.provides(Pid(1)).is_empty());
        // Calls that do not access the socket make nobody a provider.
        f.call(3, Syscall::Getpid, b, 0);
        assert_eq!(f.providers(b), vec![2]);
    }

    #[test]
    fn new_providers_start_at_the_kept_confidence() {
        let mut f = Feed::new();
        f.d.set_initial_confidence(Box::new(|pid, r| (pid == Pid(1) && r.kind() == "socket").then_some(35)));
        let (a, b) = (Resource::Socket { inode: 100 }, Resource::Socket { inode: 101 });
        f.call(1, Syscall::Write, a, 10);
        f.call(2, Syscall::Write, b, 10);
        assert_eq!((f.conf(a, 1), f.conf(b, 2)), (35, 20), "pid 1 kept 35; pid 2 starts at K");
        f.d.set_initial_confidence(Box::new(|_, _| Some(1000)));
        f.call(3, Syscall::Write, a, 10);
        assert_eq!(f.conf(a, 3), 40, "clamped to 2K");
    }

    #[test]
    fn socket_peers_can_come_from_the_observer() {
        let mut d = SwapDetector::with_socket_peer(SwapParams::default(), |i| (i == 7).then_some(42));
        let ev = |kind| Event { time: 0, kind };
        d.observe(&ev(EventKind::SyscallEnter {
            pid: Pid(1),
            nr: 0,
            args: on(Resource::Socket { inode: 7 }),
        }));
        d.observe(&ev(EventKind::Block { pid: Pid(1), resource: Some(Resource::Socket { inode: 7 }) }));
        assert_eq!(d.requests(Pid(1)), &[Resource::Socket { inode: 42 }]);
        d.observe(&ev(EventKind::SyscallEnter {
            pid: Pid(2),
            nr: 0,
            args: on(Resource::Socket { inode: 8 }),
        }));
        d.observe(&ev(EventKind::Block { pid: Pid(2), resource: Some(Resource::Socket { inode: 8 }) }));
        assert!(d.requests(Pid(2)).is_empty(), "unknown peer: no request");
        assert!(d.is_blocked(Pid(2)));
    }

    #[test]
    fn pipes_have_read_and_write_objects() {
        for (rd, wr) in [
            (Resource::Pipe { inode: 5, write: false }, Resource::Pipe { inode: 5, write: true }),
            (Resource::Fifo { inode: 5, write: false }, Resource::Fifo { inode: 5, write: true }),
        ] {
            let mut f = Feed::new();
            f.call(1, Syscall::Write, wr, 4096);
            assert_eq!(f.providers(wr), vec![1], "a writer provides the write object");
            f.blocks(2, Syscall::Read, rd);
            assert_eq!(f.providers(rd), vec![2], "a reader provides the read object");
            assert_eq!(f.requesters(wr), vec![2], "a blocked reader requests the write object");
            f.exit(2, 0, 4096);
            f.blocks(1, Syscall::Write, wr);
            assert_eq!(f.requesters(rd), vec![1], "a blocked writer requests the read object");
            f.wake(2, 1);
            assert_eq!(f.conf(rd, 2), 21);
            f.exit(1, 1, 4096);
            f.call(2, Syscall::Close, rd, 0);
            assert!(f.providers(rd).is_empty());
            assert_eq!(f.providers(wr), vec![1], "closing the read side leaves the write side");
            f.ev(EventKind::Exit { pid: Pid(1), code: 0, life: None });
            assert!(f.d.table().is_empty());
        }
    }

    #[test]
    fn message_queues_and_semaphores_request_themselves() {
        let q = Resource::SysvMsg { id: 3 };
        let mut f = Feed::new();
        f.call(1, Syscall::Msgsnd, q, 0);
        f.blocks(2, Syscall::Msgrcv, q);
        assert_eq!(f.providers(q), vec![1, 2], "both msgsnd and msgrcv provide");
        assert_eq!(f.requesters(q), vec![2]);
        f.wake(1, 2);
        assert_eq!((f.conf(q, 1), f.conf(q, 2)), (21, 20), "only the waker is credited");
        f.exit(2, Syscall::Msgrcv.nr(), 4096);
        // A failed access still makes a provider; only destruction or exit removes one.
        f.call(3, Syscall::Msgsnd, q, -22);
        f.call(1, Syscall::Close, q, 0);
        assert_eq!(f.providers(q), vec![1, 2, 3]);

        let s0 = Resource::SysvSem { id: 4, num: 0 };
        let s1 = Resource::SysvSem { id: 4, num: 1 };
        f.call(1, Syscall::Semop, s0, 0);
        f.call(1, Syscall::Semop, s1, 0);
        f.blocks(2, Syscall::Semop, s0);
        assert_eq!(f.providers(s0), vec![1, 2]);
        assert_eq!(f.requesters(s0), vec![2]);
        let ranked: Vec<Pid> = f.d.object(&s0).unwrap().ranked(Pid(2)).iter().map(|e| e.pid).collect();
        assert_eq!(ranked, vec![Pid(1)], "the requester is not its own provider");
        f.d.destroy(&Resource::SysvSem { id: 4, num: 9 });
        assert!(f.d.object(&s0).is_none() && f.d.object(&s1).is_none(), "the whole set is gone");
        assert!(f.d.requests(Pid(2)).is_empty());
        assert_eq!(f.d.provides(Pid(1)), &[q]);
        f.d.destroy(&q);
        assert!(f.d.table().is_empty());
    }

    #[test]
    fn flock_shared_and_exclusive_objects() {
        let (sh, ex) = (
            Resource::Flock { inode: 9, lock: FlockKind::Shared },
            Resource::Flock { inode: 9, lock: FlockKind::Exclusive },
        );
        let fl = Syscall::Flock.nr();
        let mut f = Feed::new();
        f.enter(1, fl, flock(LOCK_EX, 9));
        f.exit(1, fl, 0);
        assert_eq!(f.providers(ex), vec![1], "LOCK_EX provides the exclusive object");
        f.enter(2, fl, flock(LOCK_SH, 9));
        f.ev(EventKind::Block { pid: Pid(2), resource: Some(sh) });
        assert_eq!(f.providers(sh), vec![2], "LOCK_SH provides the shared object");
        assert_eq!(f.requesters(ex), vec![2], "a blocked LOCK_SH requests the exclusive object");
        assert!(f.requesters(sh).is_empty());
        f.enter(3, fl, flock(LOCK_EX, 9));
        f.ev(EventKind::Block { pid: Pid(3), resource: Some(ex) });
        assert_eq!(f.requesters(ex), vec![2, 3]);
        assert_eq!(f.requesters(sh), vec![3], "a blocked LOCK_EX requests both objects");
        // The unlock grants the lock during the call: the unlocker is credited, then removed.
        f.enter(1, fl, flock(LOCK_UN, 9));
        f.wake(1, 2);
        assert_eq!(f.conf(ex, 1), 21);
        f.exit(1, fl, 0);
        assert!(f.d.provides(Pid(1)).is_empty(), "LOCK_UN ends being a provider of both objects");
        assert_eq!(f.providers(ex), vec![3]);
        f.exit(2, fl, 0);
        f.wake(2, 3);
        assert_eq!(f.conf(sh, 2), 21, "the shared holder provided to the exclusive waiter");
    }

    #[test]
    fn an_unlock_that_wakes_a_waiter_makes_the_unlocker_a_provider_without_seeing_the_lock_taken() {
        // The live daemon's view: no hook on every call, only the call that woke someone.
        let ex = Resource::Flock { inode: 9, lock: FlockKind::Exclusive };
        let fl = Syscall::Flock.nr();
        let mut f = Feed::new();
        f.ev(EventKind::Block { pid: Pid(2), resource: Some(ex) });
        f.enter(1, fl, flock(LOCK_UN, 9));
        f.wake(1, 2);
        assert_eq!(f.providers(ex), vec![1], "the unlocker held the lock");
        assert_eq!(f.conf(ex, 1), 21, "and provided it");
        // Next time the waiter blocks, the holder is known before anyone unlocks.
        f.ev(EventKind::Block { pid: Pid(2), resource: Some(ex) });
        assert_eq!((f.requesters(ex), f.providers(ex)), (vec![2], vec![1]));
        // A wake by a call on another file names no lock of this one.
        let mut g = Feed::new();
        g.ev(EventKind::Block { pid: Pid(2), resource: Some(ex) });
        g.enter(1, fl, flock(LOCK_UN, 10));
        g.wake(1, 2);
        assert!(g.providers(ex).is_empty());
    }

    #[test]
    fn signals_of_interest_make_providers() {
        let (s2, s3) = (Resource::Signal { pid: 2 }, Resource::Signal { pid: 3 });
        let k = Syscall::Kill.nr();
        let mut f = Feed::new();
        f.enter(1, k, kill(2, 10)); // SIGUSR1
        f.exit(1, k, 0);
        f.enter(4, nr::TGKILL, kill(2, 12)); // SIGUSR2, the pthread way
        f.exit(4, nr::TGKILL, 0);
        f.enter(1, k, kill(3, 9)); // SIGKILL: exception handling, ignored
        f.exit(1, k, 0);
        f.enter(1, k, kill(3, 0)); // existence check: no signal sent
        f.exit(1, k, 0);
        assert_eq!(f.providers(s2), vec![1, 4]);
        assert!(f.d.object(&s3).is_none());
        for (pid, call) in [(2, Syscall::Pause), (3, Syscall::RtSigtimedwait)] {
            f.enter(pid, call.nr(), on(Resource::Signal { pid }));
            f.ev(EventKind::Block { pid: Pid(pid), resource: Some(Resource::Signal { pid }) });
        }
        assert_eq!(f.requesters(s2), vec![2]);
        assert_eq!(f.requesters(s3), vec![3]);
        f.wake(1, 2);
        assert_eq!(f.conf(s2, 1), 21);
        // The sender terminating leaves the list; the receiver terminating deletes its object.
        f.ev(EventKind::Exit { pid: Pid(1), code: 0, life: None });
        assert_eq!(f.providers(s2), vec![4]);
        f.ev(EventKind::Exit { pid: Pid(2), code: 0, life: None });
        assert!(f.d.object(&s2).is_none());
        assert!(f.d.provides(Pid(4)).is_empty());
        assert!(!signal_of_interest(None));
        assert!(signal_of_interest(Some(17)), "SIGCHLD");
    }

    #[test]
    fn block_without_resource_uses_the_saved_call() {
        let q = Resource::SysvMsg { id: 1 };
        let mut f = Feed::new();
        f.enter(2, Syscall::Msgrcv.nr(), on(q));
        f.ev(EventKind::Block { pid: Pid(2), resource: None });
        assert_eq!(f.requesters(q), vec![2]);
        // A plain sleep requests nothing.
        f.exit(2, Syscall::Msgrcv.nr(), 0);
        f.enter(2, Syscall::Nanosleep.nr(), SyscallArgs::default());
        f.ev(EventKind::Block { pid: Pid(2), resource: None });
        assert!(f.d.requests(Pid(2)).is_empty());
        assert!(f.d.is_blocked(Pid(2)));
    }

    #[test]
    fn exit_removes_the_process_from_every_list() {
        let (q, s) = (Resource::SysvMsg { id: 1 }, Resource::SysvSem { id: 2, num: 0 });
        let mut f = Feed::new();
        f.call(1, Syscall::Msgsnd, q, 0);
        f.call(1, Syscall::Semop, s, 0);
        f.call(2, Syscall::Semop, s, 0);
        f.blocks(1, Syscall::Semop, s);
        assert_eq!(f.requesters(s), vec![1]);
        f.ev(EventKind::Exit { pid: Pid(1), code: 0, life: None });
        assert!(f.d.object(&q).is_none());
        assert_eq!(f.providers(s), vec![2]);
        assert!(f.requesters(s).is_empty());
        assert_eq!(f.d.table().len(), 1);
    }

    #[test]
    fn providers_lose_one_per_quantum_only_while_a_requester_waits() {
        let s = Resource::SysvSem { id: 1, num: 0 };
        let mut f = Feed::new();
        f.call(1, Syscall::Semop, s, 0);
        f.run(0, 1, 100 * MS);
        assert_eq!(f.conf(s, 1), 20, "nobody waited");
        f.blocks(2, Syscall::Semop, s);
        f.run(0, 1, 45 * MS);
        assert_eq!(f.conf(s, 1), 18, "two whole 20 ms quanta");
        assert_eq!(f.d.confidence(&s, Pid(1)).unwrap().ran_ns(), 5 * MS);
        f.run(1, 1, 15 * MS);
        assert_eq!(f.conf(s, 1), 17, "on any CPU; the remainder carried over");
        // Once woken (later), it no longer waits.
        f.t += MS;
        f.wake(1, 2);
        assert_eq!(f.conf(s, 1), 18);
        f.run(0, 1, 100 * MS);
        assert_eq!(f.conf(s, 1), 18);
    }

    #[test]
    fn running_time_is_cut_at_the_wakeup() {
        let s = Resource::SysvSem { id: 1, num: 0 };
        let mut f = Feed::new();
        f.call(1, Syscall::Semop, s, 0);
        f.blocks(2, Syscall::Semop, s);
        f.ev(EventKind::Switch { cpu: 0, prev: Pid::IDLE, prev_state: PrevState::Runnable, next: Pid(1) });
        f.t = 19 * MS;
        f.wake(1, 2);
        f.t = 60 * MS;
        f.blocks(2, Syscall::Semop, s); // the waker kept running meanwhile, unwaited
        f.t = 75 * MS;
        f.ev(EventKind::Switch { cpu: 0, prev: Pid(1), prev_state: PrevState::Blocked, next: Pid::IDLE });
        let c = f.d.confidence(&s, Pid(1)).unwrap();
        assert_eq!((c.value(), c.ran_ns()), (21, 15 * MS), "19 ms before the reward are forgotten");
    }

    #[test]
    fn providing_at_the_end_of_a_quantum_is_in_time() {
        let (s, q) = (Resource::SysvSem { id: 1, num: 0 }, Resource::SysvMsg { id: 2 });
        let mut f = Feed::new();
        f.call(1, Syscall::Semop, s, 0);
        f.call(1, Syscall::Msgsnd, q, 0);
        f.blocks(2, Syscall::Semop, s);
        f.blocks(3, Syscall::Msgrcv, q);
        f.ev(EventKind::Switch { cpu: 0, prev: Pid::IDLE, prev_state: PrevState::Runnable, next: Pid(1) });
        f.t = 20 * MS;
        f.call(1, Syscall::Semop, s, 0); // the providing call comes first, at the same instant
        assert_eq!(f.conf(s, 1), 19);
        f.wake(1, 2);
        assert_eq!(f.conf(s, 1), 21, "provided within its quantum: no negative feedback");
        assert_eq!(f.conf(q, 1), 19, "the quantum spent for the other requester still counts");
    }

    #[test]
    fn confidence_bounds_and_drop_out() {
        let s = Resource::SysvSem { id: 1, num: 0 };
        let mut f = Feed::with(SwapParams { k: 2, t_ns: 3 * MS, ..Default::default() });
        f.call(1, Syscall::Semop, s, 0);
        f.call(3, Syscall::Semop, s, 0);
        for _ in 0..5 {
            f.blocks(2, Syscall::Semop, s);
            f.wake(1, 2);
            f.exit(2, Syscall::Semop.nr(), 0);
        }
        assert_eq!(f.conf(s, 1), 4, "capped at 2K");
        f.blocks(2, Syscall::Semop, s);
        f.run(0, 3, 10 * MS);
        assert_eq!(f.conf(s, 3), 0, "not below zero");
        assert_eq!(f.d.confidence(&s, Pid(3)).unwrap().ran_ns(), MS);
        assert_eq!(f.providers(s), vec![1, 3, 2], "a dropped provider stays listed");
        let ranked: Vec<Pid> = f.d.object(&s).unwrap().ranked(Pid(2)).iter().map(|e| e.pid).collect();
        assert_eq!(ranked, vec![Pid(1)], "but is not considered");
        f.run(0, 3, 10 * MS); // a dropped provider serves nobody: nothing charged
        assert_eq!(f.d.confidence(&s, Pid(3)).unwrap().ran_ns(), MS);
    }

    #[test]
    fn list_limit_applies_to_detected_providers() {
        let s = Resource::SysvSem { id: 1, num: 0 };
        let mut f = Feed::with(SwapParams { list_limit: 3, ..Default::default() });
        for p in 1..=3 {
            f.call(p, Syscall::Semop, s, 0);
        }
        f.blocks(9, Syscall::Semop, s); // 9 joins as provider: the oldest default (1) goes
        assert_eq!(f.providers(s), vec![2, 3, 9]);
        assert!(f.d.provides(Pid(1)).is_empty(), "the evicted provider forgets the object");
        f.run(0, 2, 20 * MS); // 2 drops to low
        f.call(4, Syscall::Semop, s, 0);
        assert_eq!(f.providers(s), vec![3, 9, 4]);
    }

    #[test]
    fn an_indirect_providers_running_counts_for_the_direct_provider() {
        let (r1, r2) = (Resource::SysvSem { id: 1, num: 0 }, Resource::SysvSem { id: 2, num: 0 });
        let mut f = Feed::new();
        f.call(3, Syscall::Semop, r1, 0);
        f.call(4, Syscall::Semop, r2, 0);
        f.blocks(3, Syscall::Semop, r2);
        f.blocks(1, Syscall::Semop, r1);
        f.run(0, 4, 30 * MS);
        assert_eq!((f.conf(r2, 4), f.conf(r1, 3)), (19, 19));
        let (edges, served) = f.d.served_by(Pid(4));
        assert_eq!(edges, vec![(r2, Pid(4)), (r1, Pid(3))]);
        assert_eq!(served, vec![Pid(3), Pid(1)]);
        // P4 provides R2 to P3: only P4 is credited; P3 has not provided R1 yet.
        f.wake(4, 3);
        assert_eq!((f.conf(r2, 4), f.conf(r1, 3)), (20, 19));
        f.exit(3, Syscall::Semop.nr(), 0);
        f.run(0, 3, 5 * MS);
        assert_eq!(f.d.confidence(&r1, Pid(3)).unwrap().ran_ns(), 15 * MS);
        f.wake(3, 1);
        assert_eq!(f.conf(r1, 3), 20);
        let c = f.d.confidence(&r1, Pid(3)).unwrap();
        assert_eq!(c.ran_ns(), 0);
    }

    #[test]
    fn feedback_ignores_wakeups_of_unrelated_processes() {
        let s = Resource::SysvSem { id: 1, num: 0 };
        let mut f = Feed::new();
        f.call(1, Syscall::Semop, s, 0);
        f.blocks(2, Syscall::Semop, s);
        f.wake(5, 2); // not a provider
        assert_eq!(f.conf(s, 1), 20);
        f.blocks(2, Syscall::Semop, s);
        f.wake(1, 2);
        f.wake(1, 2); // already awake: no second credit
        assert_eq!(f.conf(s, 1), 21);
        f.enter(6, Syscall::Nanosleep.nr(), SyscallArgs::default());
        f.ev(EventKind::Block { pid: Pid(6), resource: None });
        f.wake(1, 6);
        assert_eq!(f.conf(s, 1), 21);
    }
}

//! Virtual runnable requesters (SWAP's mechanism): a provider runs in place of the
//! high-priority task that waits for it, on the requester's share of the CPU.

mod common;

use common::*;
use schedlab_model::{Event, EventSink, Pid, ProviderLayer};
use schedlab_sim::{
    simulate_with, End, FairFlavor, FdTarget, Hooks, ObjectSpec, Op, Policy, Program, Report, SimConfig,
    TaskSpec, Workload,
};

const MS: u64 = 1_000_000;

/// Knows one dependency: `requester` waits for `provider`.
struct Static {
    requester: Pid,
    provider: Pid,
    asked: u32,
}

impl EventSink for Static {
    fn event(&mut self, _: &Event) {}
}

impl ProviderLayer for Static {
    fn stand_in(&mut self, requester: Pid, _now: u64, runnable: &dyn Fn(Pid) -> bool) -> Option<Pid> {
        self.asked += 1;
        (requester == self.requester && runnable(self.provider)).then_some(self.provider)
    }
}

/// A nice −20 client asks a nice 0 server for 100 ms of work over a socket pair, three
/// times, beside three nice 0 CPU hogs, on one CPU.
fn client_server() -> Workload {
    client_server_as(Policy::Other)
}

/// The same with the client under `policy` (a real-time one at priority 50).
fn client_server_as(policy: Policy) -> Workload {
    let mut w = Workload { duration_ns: Some(10_000 * MS), ..Workload::default() };
    let sock = w.add_object(ObjectSpec::SocketPair { capacity: None });
    let client = w.add_program(
        Program::new("client")
            .repeat(3, |p| p.op(Op::Write { fd: 0, bytes: 64 }).op(Op::Read { fd: 0, bytes: 64 })),
    );
    let server = w.add_program(Program::new("server").repeat(3, |p| {
        p.op(Op::Read { fd: 0, bytes: 64 }).op(Op::Compute(100 * MS)).op(Op::Write { fd: 0, bytes: 64 })
    }));
    let hog = w.add_program(Program::new("hog").op(Op::Compute(100_000 * MS)));
    let rt_priority = if policy.is_rt() { 50 } else { 0 };
    let fds = vec![FdTarget { object: sock, end: End::A }];
    w.tasks.push(TaskSpec { policy, rt_priority, nice: -20, fds, ..TaskSpec::new("client", client) });
    w.tasks.push(TaskSpec {
        fds: vec![FdTarget { object: sock, end: End::B }],
        ..TaskSpec::new("server", server)
    });
    for i in 0..3 {
        w.tasks.push(task(&format!("hog{i}"), hog, Policy::Other, 0, 0));
    }
    w
}

/// Runs `w` on one CPU under `fair` without a provider layer and with a layer that
/// knows the client (pid 1) waits for `provider`; returns both reports and how often
/// the layer was asked.
fn vanilla_and_with(w: &Workload, fair: FairFlavor, provider: u32) -> (Report, Report, u32) {
    let cfg = SimConfig::new(1, fair);
    let vanilla = simulate_with(w, &cfg, Hooks::default()).unwrap();
    let mut layer = Static { requester: Pid(1), provider: Pid(provider), asked: 0 };
    let with = simulate_with(w, &cfg, Hooks { provider: Some(&mut layer), ..Hooks::default() }).unwrap();
    (vanilla, with, layer.asked)
}

#[test]
fn a_provider_runs_on_its_requesters_share() {
    for fair in [FairFlavor::Eevdf, FairFlavor::Cfs] {
        let (vanilla, swap, asked) = vanilla_and_with(&client_server(), fair, 2);
        let (v, s) = (turnaround(&vanilla, "client"), turnaround(&swap, "client"));
        // Vanilla: the server gets a quarter of the CPU beside three hogs: ~1.2 s. With
        // the client's weight (88761 vs 3 × 1024) the server's 300 ms take ~310 ms.
        assert!(v > 1_000 * MS, "{fair:?}: vanilla {v}");
        assert!(s < 350 * MS, "{fair:?}: swap {s}");
        assert!(asked > 0);
        // The CPU time is the server's own, not the client's.
        assert!(runtime(&swap, "server") >= 300 * MS);
        assert!(runtime(&swap, "client") < 5 * MS, "{}", runtime(&swap, "client"));
    }
}

#[test]
fn without_a_runnable_provider_a_requester_just_blocks() {
    // A layer that names a task that does not exist, so never runnable.
    let (without, with, _) = vanilla_and_with(&client_server(), FairFlavor::Eevdf, 99);
    assert_eq!(turnaround(&with, "client"), turnaround(&without, "client"));
}

#[test]
fn a_real_time_requester_runs_its_fair_provider_at_real_time_priority() {
    // Paper 004's setting: the client is SCHED_FIFO, the server SCHED_OTHER.
    for fair in [FairFlavor::Timeshare, FairFlavor::Eevdf] {
        let (vanilla, swap, _) = vanilla_and_with(&client_server_as(Policy::Fifo), fair, 2);
        let (v, s) = (turnaround(&vanilla, "client"), turnaround(&swap, "client"));
        assert!(v > 1_000 * MS, "{fair:?}: vanilla {v}");
        // The server runs whenever the client would: 300 ms of work, nothing in between.
        assert!(s < 302 * MS, "{fair:?}: swap {s}");
    }
}

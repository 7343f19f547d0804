//! SWAP (paper 004) against the paper's own example and experiments, through the event
//! stream only.

use schedlab_behavior::swap::{
    figure2_steps, EdgeConfidence, Figure2Step, RunOutcome, SwapDetector, SwapParams, FIGURE2_R1, FIGURE2_R2,
};
use schedlab_model::{
    Event, EventKind, FlockKind, Ns, Pid, PrevState, Resource, Syscall, SyscallArgs, NSEC_PER_MSEC,
};

const MS: Ns = NSEC_PER_MSEC;

/// Section 4, Figure 2: the order the providers run in and the confidences after each
/// step, exactly as the text tells it (K = 20, T = 100 ms).
#[test]
fn figure2_worked_example() {
    let (p1, p2, p3, p4, p5) = (Pid(1), Pid(2), Pid(3), Pid(4), Pid(5));
    let (r1, r2) = (FIGURE2_R1, FIGURE2_R2);
    let after = |c12, c13, c34, c35| {
        vec![
            EdgeConfidence { requester: p1, provider: p2, resource: r1, confidence: c12 },
            EdgeConfidence { requester: p1, provider: p3, resource: r1, confidence: c13 },
            EdgeConfidence { requester: p3, provider: p4, resource: r2, confidence: c34 },
            EdgeConfidence { requester: p3, provider: p5, resource: r2, confidence: c35 },
        ]
    };
    let expected = vec![
        // Step 1: P2 20, P4 20·20/20 = 20, P5 20: the first of the highest, P2, runs a
        // whole quantum without waking P1 and C(P1, P2, R1) becomes 19.
        Figure2Step {
            at_ns: 0,
            candidates: vec![(p2, 20), (p4, 20), (p5, 20)],
            ran: p2,
            chain: vec![p1, p2],
            ran_ns: 100 * MS,
            outcome: RunOutcome::NegativeFeedback,
            confidences: after(19, 20, 20, 20),
        },
        // P4 is now the first with the highest confidence; after 40 ms it provides R2
        // and wakes P3 (Step 2 of the figure).
        Figure2Step {
            at_ns: 100 * MS,
            candidates: vec![(p4, 20), (p5, 20), (p2, 19)],
            ran: p4,
            chain: vec![p1, p3, p4],
            ran_ns: 40 * MS,
            outcome: RunOutcome::Woke(p3),
            confidences: after(19, 20, 21, 20),
        },
        // P3 (20) beats P2 (19), runs 20 ms and wakes P1 (Step 3 of the figure).
        Figure2Step {
            at_ns: 140 * MS,
            candidates: vec![(p3, 20), (p2, 19)],
            ran: p3,
            chain: vec![p1, p3],
            ran_ns: 20 * MS,
            outcome: RunOutcome::Woke(p1),
            confidences: after(19, 21, 21, 20),
        },
    ];
    assert_eq!(figure2_steps(), expected);
}

/// Feeds events to a detector with a clock.
struct World {
    d: SwapDetector,
    now: Ns,
}

impl World {
    fn new(params: SwapParams) -> Self {
        World { d: SwapDetector::new(params), now: 0 }
    }

    fn ev(&mut self, kind: EventKind) {
        self.d.observe(&Event { time: self.now, kind });
    }

    fn call(&mut self, pid: Pid, (nr, args): (Syscall, SyscallArgs)) {
        self.ev(EventKind::SyscallEnter { pid, nr: nr.nr(), args });
    }

    fn ret(&mut self, pid: Pid, nr: Syscall) {
        self.ev(EventKind::SyscallExit { pid, nr: nr.nr(), ret: 0 });
    }

    /// `pid` runs on CPU 0 for `ns`.
    fn run(&mut self, pid: Pid, ns: Ns) {
        self.ev(EventKind::Switch { cpu: 0, prev: Pid::IDLE, prev_state: PrevState::Runnable, next: pid });
        self.now += ns;
    }

    fn stop(&mut self, pid: Pid) {
        self.ev(EventKind::Switch { cpu: 0, prev: pid, prev_state: PrevState::Runnable, next: Pid::IDLE });
    }
}

fn on(r: Resource) -> SyscallArgs {
    SyscallArgs { resource: Some(r), ..Default::default() }
}

/// One of the six mechanisms of the client-server microbenchmark (section 6.1): the
/// server's call before computing, the client's call that blocks (and on what), the
/// server's call that provides.
struct Mechanism {
    name: &'static str,
    before: Option<(Syscall, SyscallArgs)>,
    request: (Syscall, SyscallArgs),
    provide: (Syscall, SyscallArgs),
}

fn mechanisms(client: Pid) -> Vec<Mechanism> {
    let ex = Resource::Flock { inode: 300, lock: FlockKind::Exclusive };
    let lock = |op| SyscallArgs { flock_op: Some(op), ..on(ex) };
    let sem = Resource::SysvSem { id: 4, num: 0 };
    let semop = |delta| SyscallArgs { count: Some(delta), ..on(sem) };
    let signal = Resource::Signal { pid: client.0 };
    let kill = SyscallArgs { target_pid: Some(client.0 as i32), signal: Some(10), ..on(signal) };
    vec![
        Mechanism {
            name: "SOCK",
            before: None,
            request: (Syscall::Read, on(Resource::Socket { inode: 101 })),
            provide: (Syscall::Write, on(Resource::Socket { inode: 100 })),
        },
        Mechanism {
            name: "PIPE",
            before: None,
            request: (Syscall::Read, on(Resource::Pipe { inode: 200, write: false })),
            provide: (Syscall::Write, on(Resource::Pipe { inode: 200, write: true })),
        },
        Mechanism {
            name: "MSG",
            before: None,
            request: (Syscall::Msgrcv, on(Resource::SysvMsg { id: 3 })),
            provide: (Syscall::Msgsnd, on(Resource::SysvMsg { id: 3 })),
        },
        Mechanism {
            name: "SEM",
            before: None,
            request: (Syscall::Semop, semop(-1)),
            provide: (Syscall::Semop, semop(1)),
        },
        Mechanism {
            name: "SIG",
            before: None,
            request: (Syscall::Pause, on(signal)),
            provide: (Syscall::Kill, kill),
        },
        Mechanism {
            name: "FLOCK",
            before: Some((Syscall::Flock, lock(2))),
            request: (Syscall::Flock, lock(2)),
            provide: (Syscall::Flock, lock(8)),
        },
    ]
}

/// Section 6.1, client-server microbenchmark under load: for each of the six
/// mechanisms the blocked client's dependency on the server is detected — after the
/// first exchange, or at once for a lock the server holds — and SWAP runs the server,
/// never one of the ten CPU-bound loaders, in the client's place.
#[test]
fn client_server_dependencies_of_all_six_mechanisms() {
    let (client, server) = (Pid(1), Pid(2));
    let loaders: Vec<Pid> = (10..20).map(Pid).collect();
    for m in mechanisms(client) {
        let mut w = World::new(SwapParams::default());
        for l in &loaders {
            w.ev(EventKind::Exec { pid: *l, tgid: *l, comm: "loop".into(), path: "/bin/loop".into() });
        }
        for iteration in 1..=3 {
            if let Some(call) = m.before {
                w.call(server, call);
                w.ret(server, call.0);
            }
            w.call(client, m.request);
            let resource = m.request.1.resource;
            w.ev(EventKind::Block { pid: client, resource });
            let pick = w.d.most_confident_runnable_provider(client, |p| p != client);
            if iteration == 1 && m.before.is_none() {
                assert_eq!(pick, None, "{}: no history of the server yet", m.name);
            } else {
                let pick =
                    pick.unwrap_or_else(|| panic!("{}: iteration {iteration}: not virtual runnable", m.name));
                assert_eq!(pick.provider(), server, "{}: iteration {iteration}", m.name);
                assert_eq!(pick.chain().len(), 1);
            }
            // The server computes 100 ms, then provides and wakes the client.
            w.run(server, 100 * MS);
            w.call(server, m.provide);
            w.ev(EventKind::Wakeup { waker: server, wakee: client, cpu: 0 });
            w.ret(server, m.provide.0);
            w.stop(server);
            w.ret(client, m.request.0);
            assert!(w.d.requests(client).is_empty());
        }
    }
}

/// Section 6, multi-server microbenchmark: five servers can increment the semaphore the
/// client waits on, after 10, 10, 5, 5 and 2 bubblesorts (100 ms each). With a
/// confidence quantum of 200 ms, SWAP finds the fastest server in the first iteration
/// (about 1 s) and runs it first from then on (200 ms, the optimum); with 20 ms it
/// improves more slowly ("the larger the quantum, the more benefit a process will
/// receive from a positive feedback").
#[test]
fn multi_server_finds_the_fastest_server() {
    let iterations = |t_ns: Ns| -> Vec<Ns> {
        let client = Pid(1);
        let servers: Vec<Pid> = (2..7).map(Pid).collect();
        let needs = [1000 * MS, 1000 * MS, 500 * MS, 500 * MS, 200 * MS];
        let sem = Resource::SysvSem { id: 1, num: 0 };
        let semop = |delta| (Syscall::Semop, SyscallArgs { count: Some(delta), ..on(sem) });
        let mut w = World::new(SwapParams { t_ns, ..SwapParams::default() });
        for &s in &servers {
            w.call(s, semop(1)); // earlier increments: every server is a known provider
            w.ret(s, Syscall::Semop);
        }
        let mut times = Vec::new();
        for _ in 0..2 {
            let start = w.now;
            let mut left = needs;
            w.call(client, semop(-1));
            w.ev(EventKind::Block { pid: client, resource: Some(sem) });
            while w.d.is_blocked(client) {
                let pick =
                    w.d.most_confident_runnable_provider(client, |p| p != client).expect("virtual runnable");
                let s = pick.provider();
                let i = servers.iter().position(|&x| x == s).unwrap();
                let slice = w.d.feedback_due(&pick).unwrap().min(left[i]);
                w.run(s, slice);
                left[i] -= slice;
                if left[i] == 0 {
                    w.call(s, semop(1));
                    w.ev(EventKind::Wakeup { waker: s, wakee: client, cpu: 0 });
                    w.ret(s, Syscall::Semop);
                }
                w.stop(s);
            }
            w.ret(client, Syscall::Semop);
            times.push(w.now - start);
        }
        times
    };
    // By hand (K = 20; ties go to the provider that reached its confidence first, here
    // the servers in the order they were listed, the fastest last; each slice is the
    // rest of the server's quantum T). T = 200 ms: each server runs one quantum and
    // falls to 19, the fastest last, done at 5 × 200 = 1000 ms; its wake-up at the
    // quantum's very end gives that unit back and one more (21), so it runs first in
    // the second iteration: 200 ms.
    assert_eq!(iterations(200 * MS), vec![5 * 200 * MS, 200 * MS]);
    // T = 20 ms: rounds of five 20 ms slices, each costing its server a unit, the fastest
    // last; it needs 10 slices: 10 × 100 = 1000 ms. Its 10 charges take it to 10 and its
    // wake-up, at the end of the 10th quantum, to 12; the others are at 10. Second
    // iteration: it runs twice (12 → 10, 40 ms), the four that reached 10 first
    // run once (→ 9, 80 ms), then it (→ 9, 20 ms; 60 of its 200 ms done), then rounds of
    // five with it last until its other 140 ms are done (7 × 100 ms): 840 ms.
    assert_eq!(iterations(20 * MS), vec![10 * 5 * 20 * MS, (40 + 80 + 20 + 7 * 100) * MS]);
}

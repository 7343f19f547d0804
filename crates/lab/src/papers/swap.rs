//! Paper 004's experiments (SWAP): the section 4 example (Figure 2) and the client-server
//! and multi-server microbenchmarks of section 6, on one CPU (the paper's Netfinity
//! server) whose `SCHED_OTHER` behaves, as the paper describes Linux 2.4's, like round
//! robin with a 150 ms quantum: the `timeshare` class. The client is `SCHED_FIFO`, as in
//! the paper; a bubble sort of a 4 KB array takes 100 ms (the paper's low-load client
//! time).

use std::collections::BTreeMap;

use schedlab_behavior::swap::{figure2_steps, RunOutcome, SwapDetector, SwapParams};
use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, Syscall, NSEC_PER_MSEC, NSEC_PER_SEC};
use schedlab_sim::{
    simulate_with, End, FairFlavor, FdTarget, Hooks, ObjectSpec, Op, Policy, Program, Report, SignalTarget,
    SimConfig, TaskSpec, Workload,
};

use crate::papers::{Experiment, Figure, Series};

const MS: Ns = NSEC_PER_MSEC;
const SEC: Ns = NSEC_PER_SEC;
/// One bubble sort of a 4 KB array.
const SORT: Ns = 100 * MS;
/// The paper's background load: ten busy loops.
const LOADERS: usize = 10;

fn config() -> SimConfig {
    let mut c = SimConfig::new(1, FairFlavor::Timeshare);
    c.tunables.timeshare_quantum_ns = 150 * MS;
    c
}

/// Runs `w` plain ("vanilla") or with a SWAP detector as the provider layer; `sink` sees
/// every event.
fn run(w: &Workload, params: Option<SwapParams>, sink: &mut dyn EventSink) -> Report {
    let mut swap = params.map(SwapDetector::new);
    let provider = swap.as_mut().map(|s| s as &mut dyn schedlab_model::ProviderLayer);
    let hooks = Hooks { sink: Some(sink), provider, ..Hooks::default() };
    simulate_with(w, &config(), hooks).expect("the papers' workloads are valid")
}

fn seconds(r: &Report, name: &str) -> f64 {
    let t = r.tasks.iter().find(|t| t.name == name).expect("task of the experiment");
    assert!(t.exited, "{name} did not finish within the run");
    t.turnaround_ns as f64 / SEC as f64
}

fn add_loaders(w: &mut Workload, load: bool) {
    if load {
        let hog = w.add_program(Program::new("loop").op(Op::Compute(1_000 * SEC)));
        for i in 0..LOADERS {
            w.tasks.push(TaskSpec::new(format!("loop{i}"), hog));
        }
    }
}

fn client_spec(program: u32, fds: Vec<FdTarget>) -> TaskSpec {
    TaskSpec { policy: Policy::Fifo, rt_priority: 50, fds, ..TaskSpec::new("client", program) }
}

/// The six communication mechanisms of the client-server microbenchmark.
pub const MECHANISMS: [&str; 6] = ["sock", "pipe", "msg", "sem", "sig", "flock"];

/// The client-server microbenchmark over `kind`: the server (`SCHED_OTHER`) bubble-sorts
/// and answers the `SCHED_FIFO` client, beside ten busy loops when `load`.
///
/// "Synchronized to start at the same time" is modelled as one exchange over the same
/// mechanism (the server provides once, the client takes it) after which the server
/// yields, joining the run queue behind the loads that were already running; the
/// client starts 1 ms later. For flock the server takes the lock instead, as the paper's
/// server does before computing.
pub fn client_server_workload(kind: &str, load: bool) -> Workload {
    let mut w = Workload { name: format!("swap client-server {kind}"), ..Workload::default() };
    let (client, server, cfds, sfds): (Program, Program, Vec<FdTarget>, Vec<FdTarget>) = match kind {
        "sock" | "pipe" => {
            let (obj, cend, send) = if kind == "sock" {
                (w.add_object(ObjectSpec::SocketPair { capacity: None }), End::A, End::B)
            } else {
                (w.add_object(ObjectSpec::Pipe { capacity: None }), End::Read, End::Write)
            };
            let c =
                Program::new("client").op(Op::Read { fd: 0, bytes: 64 }).op(Op::Read { fd: 0, bytes: 4096 });
            let s = Program::new("server")
                .op(Op::Write { fd: 0, bytes: 64 })
                .op(Op::Yield)
                .op(Op::Compute(SORT))
                .op(Op::Write { fd: 0, bytes: 4096 });
            (c, s, vec![FdTarget { object: obj, end: cend }], vec![FdTarget { object: obj, end: send }])
        }
        "msg" => {
            let q = w.add_object(ObjectSpec::MsgQueue { max_bytes: None });
            let c = Program::new("client").op(Op::MsgRcv { fd: 0 }).op(Op::MsgRcv { fd: 0 });
            let s = Program::new("server")
                .op(Op::MsgSnd { fd: 0, bytes: 64 })
                .op(Op::Yield)
                .op(Op::Compute(SORT))
                .op(Op::MsgSnd { fd: 0, bytes: 4096 });
            let fd = vec![FdTarget { object: q, end: End::Whole }];
            (c, s, fd.clone(), fd)
        }
        "sem" => {
            let sem = w.add_object(ObjectSpec::SemSet { values: vec![0] });
            let down = Op::SemOp { fd: 0, num: 0, delta: -1 };
            let up = Op::SemOp { fd: 0, num: 0, delta: 1 };
            let c = Program::new("client").op(down).op(down);
            let s = Program::new("server").op(up).op(Op::Yield).op(Op::Compute(SORT)).op(up);
            let fd = vec![FdTarget { object: sem, end: End::Whole }];
            (c, s, fd.clone(), fd)
        }
        "sig" => {
            let kill = Op::Kill { target: SignalTarget::Task(0), sig: 10 }; // SIGUSR1
            let c = Program::new("client").op(Op::Pause).op(Op::Pause);
            let s = Program::new("server").op(kill).op(Op::Yield).op(Op::Compute(SORT)).op(kill);
            (c, s, Vec::new(), Vec::new())
        }
        "flock" => {
            let f = w.add_object(ObjectSpec::File);
            let lock = |op| Op::Flock { fd: 0, op };
            use schedlab_sim::FlockOp::{Exclusive, Unlock};
            let c = Program::new("client").op(lock(Exclusive)).op(lock(Unlock));
            let s = Program::new("server")
                .op(lock(Exclusive))
                .op(Op::Yield)
                .op(Op::Compute(SORT))
                .op(lock(Unlock));
            let fd = vec![FdTarget { object: f, end: End::Whole }];
            (c, s, fd.clone(), fd)
        }
        other => panic!("unknown mechanism {other}"),
    };
    let (c, s) = (w.add_program(client), w.add_program(server));
    w.tasks.push(TaskSpec { start_ns: MS, ..client_spec(c, cfds) });
    w.tasks.push(TaskSpec { fds: sfds, ..TaskSpec::new("server", s) });
    add_loaders(&mut w, load);
    w.duration_ns = Some(60 * SEC);
    w
}

/// Figure 3: the client's completion time for each mechanism, vanilla and SWAP, alone
/// and beside ten busy loops.
pub fn client_server() -> Experiment {
    let mut results = BTreeMap::new();
    let mut paper = BTreeMap::new();
    let mut series: Vec<Series> = ["vanilla low", "SWAP low", "vanilla high", "SWAP high"]
        .iter()
        .map(|n| Series { name: n.to_string(), points: Vec::new() })
        .collect();
    for (i, kind) in MECHANISMS.iter().enumerate() {
        for (j, (load, swap)) in
            [(false, false), (false, true), (true, false), (true, true)].into_iter().enumerate()
        {
            let w = client_server_workload(kind, load);
            let r = run(&w, swap.then(SwapParams::default), &mut ());
            let t = seconds(&r, "client");
            let key = format!(
                "{kind}.{}_{}_s",
                if swap { "swap" } else { "vanilla" },
                if load { "high" } else { "low" }
            );
            results.insert(key.clone(), t);
            // Alone, the client's time is the sort's, an input: only SWAP under load
            // is judged by the paper's 100 ms.
            if load && swap {
                paper.insert(key, 0.1);
            }
            series[j].points.push((i as f64, t));
        }
    }
    Experiment {
        name: "swap_client_server".into(),
        setup: "SCHED_FIFO client waits for a SCHED_OTHER server's 100 ms bubble sort over each mechanism; \
                one CPU, round robin with a 150 ms quantum; alone (low) and beside ten busy loops (high); \
                vanilla vs SWAP (K 20, T 20 ms, L 20)."
            .into(),
        results,
        paper,
        inputs: BTreeMap::from([
            ("sort_s".to_string(), SORT as f64 / SEC as f64),
            ("quantum_s".to_string(), 0.15),
        ]),
        paper_says: "Low load: about 100 ms for every mechanism, vanilla and SWAP alike. High load: vanilla \
                     balloons to over 1 s (ten times worse); SWAP stays at about 100 ms."
            .into(),
        figures: vec![Figure {
            title: "Figure 3: client completion time".into(),
            x_label: "mechanism".into(),
            y_label: "client completion time (s)".into(),
            categories: MECHANISMS.iter().map(|m| m.to_string()).collect(),
            series,
        }],
    }
}

/// The multi-server microbenchmark: five `SCHED_OTHER` servers bubble-sort 2, 5, 5, 10
/// and 10 times and then post the `SCHED_FIFO` client's semaphore, for ever (15 times
/// each suffices); the client takes the semaphore 15 times.
pub fn multiserver_workload(load: bool) -> Workload {
    let mut w = Workload { name: "swap multi-server".into(), ..Workload::default() };
    let sem = w.add_object(ObjectSpec::SemSet { values: vec![0] });
    let fd = vec![FdTarget { object: sem, end: End::Whole }];
    let client =
        w.add_program(Program::new("client").repeat(15, |p| p.op(Op::SemOp { fd: 0, num: 0, delta: -1 })));
    w.tasks.push(client_spec(client, fd.clone()));
    for (i, sorts) in [2u64, 5, 5, 10, 10].into_iter().enumerate() {
        let name = format!("server{i}");
        let prog = Program::new(name.clone())
            .repeat(15, |p| p.op(Op::Compute(sorts * SORT)).op(Op::SemOp { fd: 0, num: 0, delta: 1 }));
        let p = w.add_program(prog);
        w.tasks.push(TaskSpec { fds: fd.clone(), ..TaskSpec::new(name, p) });
    }
    add_loaders(&mut w, load);
    w.duration_ns = Some(120 * SEC);
    w
}

/// The times at which the client's semops return.
struct Iterations {
    at: Vec<Ns>,
}

impl EventSink for Iterations {
    fn event(&mut self, e: &Event) {
        if let EventKind::SyscallExit { pid: Pid(1), nr, ret } = e.kind {
            if nr == Syscall::Semop.nr() && ret == 0 {
                self.at.push(e.time);
            }
        }
    }
}

/// The client's iteration times in seconds.
pub fn multiserver_iterations(load: bool, swap: Option<SwapParams>) -> Vec<f64> {
    let mut it = Iterations { at: Vec::new() };
    run(&multiserver_workload(load), swap, &mut it);
    let mut last = 0;
    it.at
        .iter()
        .map(|&t| {
            let d = t - last;
            last = t;
            d as f64 / SEC as f64
        })
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Figures 4 and 5: the client's iteration times, vanilla and SWAP with T = 20 ms and
/// 200 ms, alone and beside ten busy loops. The `*_iter_s` keys are the mean over
/// iterations 2–15 (the first finds no provider known yet).
pub fn multiserver() -> Experiment {
    let mut results = BTreeMap::new();
    let mut figures = Vec::new();
    let variants: [(&str, Option<Ns>); 3] =
        [("vanilla", None), ("swap20", Some(20 * MS)), ("swap200", Some(200 * MS))];
    for (load, prefix, fig) in [(false, "", "Figure 4 (low load)"), (true, "high.", "Figure 5 (high load)")] {
        let mut series = Vec::new();
        for (name, t) in variants {
            let params = t.map(|t_ns| SwapParams { t_ns, ..SwapParams::default() });
            let iters = multiserver_iterations(load, params);
            results.insert(format!("{prefix}{name}_iter_s"), mean(&iters[1..]));
            results.insert(format!("{prefix}{name}_first_iter_s"), iters[0]);
            let points = iters.iter().enumerate().map(|(i, &s)| ((i + 1) as f64, s)).collect();
            series.push(Series { name: name.into(), points });
        }
        figures.push(Figure {
            title: format!("{fig}: client iteration time"),
            x_label: "iteration".into(),
            y_label: "iteration time (s)".into(),
            categories: Vec::new(),
            series,
        });
    }
    Experiment {
        name: "swap_multiserver".into(),
        setup: "SCHED_FIFO client takes a semaphore 15 times; five SCHED_OTHER servers post it after 2, 5, 5, 10 \
                and 10 bubble sorts of 100 ms; one CPU, round robin with a 150 ms quantum; vanilla vs SWAP with \
                T = 20 ms and 200 ms; alone and beside ten busy loops."
            .into(),
        results,
        paper: BTreeMap::from([("vanilla_iter_s".to_string(), 1.0), ("swap200_iter_s".to_string(), 0.2)]),
        inputs: BTreeMap::from([
            ("sort_s".to_string(), SORT as f64 / SEC as f64),
            ("quantum_s".to_string(), 0.15),
        ]),
        paper_says: "Vanilla: about 1 s every iteration (800 to 1400 ms, depending on when the fastest server \
                     runs in the round robin). SWAP: about 1 s for the first iteration, then about 200 ms once it \
                     has found the fastest server, sooner with T = 200 ms than with T = 20 ms. (Here every \
                     server's post counts, so vanilla iterations alternate between the fastest server's 0.2 s and \
                     0.8 s; the paper's 800-1400 ms reasoning counts the fastest server only.)"
            .into(),
        figures,
    }
}

/// Section 4's example (Figure 2): which provider runs in P1's place, for how long, and
/// the confidences after each step (K 20, T 100 ms).
pub fn fig2() -> Experiment {
    let steps = figure2_steps();
    let mut results = BTreeMap::new();
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (i, s) in steps.iter().enumerate() {
        let n = i + 1;
        results.insert(format!("step{n}.ran"), f64::from(s.ran.0));
        results.insert(format!("step{n}.ran_ms"), (s.ran_ns / MS) as f64);
        let woke = match s.outcome {
            RunOutcome::Woke(p) => f64::from(p.0),
            RunOutcome::NegativeFeedback => 0.0,
        };
        results.insert(format!("step{n}.woke"), woke);
        for c in &s.confidences {
            let edge = format!("C(P{},P{})", c.requester.0, c.provider.0);
            results.insert(format!("step{n}.{edge}"), f64::from(c.confidence));
            series.entry(edge).or_default().push((n as f64, f64::from(c.confidence)));
        }
    }
    let paper = BTreeMap::from([
        ("step1.ran".to_string(), 2.0),
        ("step1.ran_ms".to_string(), 100.0),
        ("step1.woke".to_string(), 0.0),
        ("step1.C(P1,P2)".to_string(), 19.0),
        ("step2.ran".to_string(), 4.0),
        ("step2.ran_ms".to_string(), 40.0),
        ("step2.woke".to_string(), 3.0),
        ("step3.ran".to_string(), 3.0),
        ("step3.ran_ms".to_string(), 20.0),
        ("step3.woke".to_string(), 1.0),
    ]);
    Experiment {
        name: "swap_fig2".into(),
        setup:
            "P1 requests R1 (providers P2, P3); P3 requests R2 (providers P4, P5); P4 needs 40 ms to provide \
                R2, P3 20 ms to provide R1; K 20, T 100 ms; every confidence starts at K."
                .into(),
        results,
        paper,
        inputs: BTreeMap::from([
            ("P4.provide_ms".to_string(), 40.0),
            ("P3.provide_ms".to_string(), 20.0),
            ("T_ms".to_string(), 100.0),
        ]),
        paper_says:
            "P2 runs first (all confidences 20), gets −1 after 100 ms (19); P4 (indirect 20·20/20 = 20) \
                     runs 40 ms and wakes P3; P3 runs 20 ms and wakes P1."
                .into(),
        figures: vec![Figure {
            title: "Figure 2: confidence after each step".into(),
            x_label: "step".into(),
            y_label: "confidence".into(),
            categories: Vec::new(),
            series: series.into_iter().map(|(name, points)| Series { name, points }).collect(),
        }],
    }
}

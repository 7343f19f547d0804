//! Paper 001's experiments (PFS): Figure 1's example and the test-program experiments of
//! section 5.1 (Figures 6 and 7), on one CPU under time sharing, as on the paper's
//! BSD/OS machine: slices of 100 ms (1 s in Figure 1), a timeslot of 1 ms, and free
//! context switches and system calls, so that times are the programs' own.

use std::collections::BTreeMap;

use schedlab_behavior::pfs::{PfsParams, PfsScheduler, PfsStore};
use schedlab_model::{Event, EventKind, EventSink, Ns, Pid, NSEC_PER_MSEC, NSEC_PER_SEC};
use schedlab_sim::{simulate_with, FairFlavor, Hooks, Op, Program, Report, SimConfig, TaskSpec, Workload};

use crate::papers::{Experiment, Figure, Series};

const MS: Ns = NSEC_PER_MSEC;
const SEC: Ns = NSEC_PER_SEC;

/// One CPU, time sharing with quantum `slice`, every overhead zero.
fn config(slice: Ns) -> SimConfig {
    let mut c = SimConfig::new(1, FairFlavor::Timeshare);
    for (k, v) in
        [("context_switch_ns", "0"), ("syscall_ns", "0"), ("copy_ns_per_kib", "0"), ("migration_ns", "0")]
    {
        c.tunables.set(k, v).expect("known tunable");
    }
    c.tunables.timeshare_quantum_ns = slice;
    c
}

/// Counts the switches in and out of one task.
struct SwitchCount {
    pid: Pid,
    count: u64,
}

impl EventSink for SwitchCount {
    fn event(&mut self, e: &Event) {
        if let EventKind::Switch { prev, next, .. } = e.kind {
            self.count += u64::from(prev == self.pid) + u64::from(next == self.pid);
        }
    }
}

/// Runs `w`, under PFS when `pfs` is given; returns the report and the switches of `pid`.
fn run(w: &Workload, cfg: &SimConfig, pfs: Option<&mut PfsScheduler>, pid: u32) -> (Report, u64) {
    let mut count = SwitchCount { pid: Pid(pid), count: 0 };
    let layer = pfs.map(|p| p as &mut dyn schedlab_model::SliceLayer);
    let hooks = Hooks { sink: Some(&mut count), layer, ..Hooks::default() };
    let r = simulate_with(w, cfg, hooks).expect("the papers' workloads are valid");
    (r, count.count)
}

fn turnaround_s(r: &Report, name: &str) -> f64 {
    let t = r.tasks.iter().find(|t| t.name == name).expect("task of the experiment");
    assert!(t.exited, "{name} did not finish within the run");
    t.turnaround_ns as f64 / SEC as f64
}

/// A scheduler whose store holds the PFS of a run of `w` (the logger's first run).
fn learned(w: &Workload, cfg: &SimConfig, params: PfsParams) -> PfsScheduler {
    let mut s = PfsScheduler::new(params, PfsStore::default());
    run(w, cfg, Some(&mut s), 0);
    s
}

/// Figure 1: A needs 3.4 s and B 2.1 s of CPU, same priority, 1 s slices, B first.
/// Under PFS, B — knowing it needs only 0.1 s more at the end of its second slice —
/// keeps the CPU. `T_m` is not given for this example; 100 ms (any `T_m ≥ 0.1 s`) is
/// used.
pub fn fig1() -> Experiment {
    let mut w = Workload { name: "pfs_fig1".into(), ..Workload::default() };
    let b = w.add_program(Program::new("B").op(Op::Compute(2_100 * MS)));
    let a = w.add_program(Program::new("A").op(Op::Compute(3_400 * MS)));
    w.tasks.push(TaskSpec::new("B", b));
    w.tasks.push(TaskSpec::new("A", a));
    let cfg = config(SEC);
    let (tss, tss_b) = run(&w, &cfg, None, 1);
    let params = PfsParams { t_m_ns: 100 * MS, ..PfsParams::default() };
    let mut pfs = learned(&w, &cfg, params);
    let (with, pfs_b) = run(&w, &cfg, Some(&mut pfs), 1);
    let results = BTreeMap::from([
        ("tss.A_s".to_string(), turnaround_s(&tss, "A")),
        ("tss.B_s".to_string(), turnaround_s(&tss, "B")),
        ("pfs.A_s".to_string(), turnaround_s(&with, "A")),
        ("pfs.B_s".to_string(), turnaround_s(&with, "B")),
        ("tss.B_switches".to_string(), tss_b as f64),
        ("pfs.B_switches".to_string(), pfs_b as f64),
    ]);
    let paper = BTreeMap::from([
        ("tss.A_s".to_string(), 5.5),
        ("tss.B_s".to_string(), 4.1),
        ("pfs.A_s".to_string(), 5.5),
        ("pfs.B_s".to_string(), 3.1),
        ("tss.B_switches".to_string(), 6.0),
        ("pfs.B_switches".to_string(), 4.0),
    ]);
    let bars = |r: &Report| vec![(0.0, turnaround_s(r, "A")), (1.0, turnaround_s(r, "B"))];
    Experiment {
        name: "pfs_fig1".into(),
        setup: "A 3.4 s and B 2.1 s of CPU, one CPU, time sharing with 1 s slices, B dispatched first; \
                PFS learned from a first run, T_m 100 ms."
            .into(),
        results,
        paper,
        inputs: BTreeMap::from([
            ("A.cpu_s".to_string(), 3.4),
            ("B.cpu_s".to_string(), 2.1),
            ("slice_s".to_string(), 1.0),
        ]),
        paper_says: "Processing times A 5.5 s, B 4.1 s under time sharing; B 3.1 s under PFS (A unchanged); \
                     B's process switches drop from 6 to 4."
            .into(),
        figures: vec![Figure {
            title: "Figure 1: processing time".into(),
            x_label: "process".into(),
            y_label: "processing time (s)".into(),
            categories: vec!["A".into(), "B".into()],
            series: vec![
                Series { name: "time sharing".into(), points: bars(&tss) },
                Series { name: "PFS".into(), points: bars(&with) },
            ],
        }],
    }
}

/// The test program of section 5.1: 20 loops of work A (CPU for `work`) and work B
/// (sleep 1 s), beside the loop program (an endless CPU loop), the test program second.
fn test_workload(work: Ns) -> Workload {
    let mut w =
        Workload { name: format!("pfs test program, work A {} ms", work / MS), ..Workload::default() };
    let lp = w.add_program(Program::new("loop").op(Op::Compute(1_000_000 * SEC)));
    let test = w.add_program(Program::new("test").repeat(20, |p| p.op(Op::Compute(work)).op(Op::Sleep(SEC))));
    w.tasks.push(TaskSpec::new("loop", lp));
    w.tasks.push(TaskSpec::new("test", test));
    // Long enough for the test program even if it waited a whole slice at every turn.
    w.duration_ns = Some(20 * (work + SEC + 300 * MS) + 10 * SEC);
    w
}

const TEST: u32 = 2;

/// Figure 6: the test program's processing time, normalized to time sharing, for work A
/// of 75, 125, 150 and 200 ms and `T_m` of 0, 10, 40 and 70 ms (100 ms slices).
pub fn fig6() -> Experiment {
    let cfg = config(100 * MS);
    let mut results = BTreeMap::new();
    let mut series = Vec::new();
    for work_ms in [75u64, 125, 150, 200] {
        let w = test_workload(work_ms * MS);
        let tss = turnaround_s(&run(&w, &cfg, None, TEST).0, "test");
        let mut points = Vec::new();
        for tm in [0u64, 10, 40, 70] {
            let params = PfsParams { t_m_ns: tm * MS, ..PfsParams::default() };
            let mut pfs = learned(&w, &cfg, params);
            let t = turnaround_s(&run(&w, &cfg, Some(&mut pfs), TEST).0, "test");
            results.insert(format!("work{work_ms:03}.tm{tm:02}"), t / tss);
            points.push((tm as f64, t / tss));
        }
        series.push(Series { name: format!("work A {work_ms} ms"), points });
    }
    Experiment {
        name: "pfs_fig6".into(),
        setup: "Test program (20 × [work A, sleep 1 s]) beside the loop program, one CPU, 100 ms slices, \
                timeslot 1 ms; PFS learned from a first run; processing time normalized to time sharing."
            .into(),
        results,
        paper: BTreeMap::new(),
        inputs: BTreeMap::new(),
        paper_says: "Processing time is shorter exactly when work A exceeds the 100 ms slice by no more than \
                     T_m: work A 125 ms with T_m 40 and 70 ms, and 150 ms with T_m 70 ms; otherwise it equals \
                     time sharing's."
            .into(),
        figures: vec![Figure {
            title: "Figure 6: processing time vs maximum dispatch delay".into(),
            x_label: "T_m (ms)".into(),
            y_label: "processing time / time sharing".into(),
            categories: Vec::new(),
            series,
        }],
    }
}

/// Figure 7: the PFS was made from a 210 ms run; the program now works 310 ms (a) or
/// 110 ms (b) per loop. Over 20 executions with `x = y` of 10, 20 and 30 % and `T_m`
/// 20 ms, the processing time normalized to that with an exact PFS.
pub fn fig7() -> Experiment {
    let cfg = config(100 * MS);
    let mut results = BTreeMap::new();
    let mut figures = Vec::new();
    for (case, actual_ms) in [("a", 310u64), ("b", 110)] {
        let w = test_workload(actual_ms * MS);
        let exact = {
            let mut pfs = learned(&w, &cfg, PfsParams::default());
            turnaround_s(&run(&w, &cfg, Some(&mut pfs), TEST).0, "test")
        };
        let mut series = Vec::new();
        for factor in [10u32, 20, 30] {
            let params = PfsParams { x_pct: factor, y_pct: factor, ..PfsParams::default() };
            let mut pfs = learned(&test_workload(210 * MS), &cfg, params);
            let mut points = Vec::new();
            for exec in 1..=20 {
                let t = turnaround_s(&run(&w, &cfg, Some(&mut pfs), TEST).0, "test") / exact;
                results.insert(format!("{case}.x{factor}.exec{exec:02}"), t);
                points.push((f64::from(exec), t));
            }
            series.push(Series { name: format!("x = y = {factor} %"), points });
        }
        figures.push(Figure {
            title: format!("Figure 7({case}): actual work A {actual_ms} ms, initial PFS 210 ms"),
            x_label: "execution".into(),
            y_label: "processing time / exact PFS".into(),
            categories: Vec::new(),
            series,
        });
    }
    Experiment {
        name: "pfs_fig7".into(),
        setup: "Test program beside the loop program, one CPU, 100 ms slices, T_m 20 ms; PFS learned from a \
                210 ms run, then 20 executions at 310 ms (a) and 110 ms (b); normalized to an exact PFS."
            .into(),
        results,
        paper: BTreeMap::new(),
        inputs: BTreeMap::new(),
        paper_says: "(a) 1 at the first execution, above 1 once T_p grows past 220 ms (sooner for larger x: at \
                     the second execution 20 % and 30 % are above 1, 10 % still about 1), back to 1 as T_p \
                     nears 310 ms (past 13 executions for 20 % and 30 %, 10 % still above 1). (b) above 1 while \
                     T_p is far above 110 ms, falling to 1 as it is decreased."
            .into(),
        figures,
    }
}

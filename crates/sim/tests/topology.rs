//! Machines with SMT, several LLCs and NUMA nodes: where waking tasks land, how load
//! spreads over nodes, and that a 1,024-CPU machine simulates.

mod common;

use common::*;
use schedlab_model::{Event, EventKind, Pid};
use schedlab_sim::{
    simulate, FairFlavor, Op, Policy, Program, Report, SimConfig, TaskSpec, Topology, Workload,
};

const MS: u64 = 1_000_000;

fn run_on(w: &Workload, topology: Topology) -> (Report, Vec<Event>) {
    let cfg = SimConfig::with_topology(topology, FairFlavor::Eevdf);
    let mut events = Vec::new();
    let r = simulate(w, &cfg, Some(&mut events)).expect("the workload is valid");
    (r, events)
}

/// The CPUs task `pid` was woken onto, in order.
fn wakeup_cpus(events: &[Event], pid: u32) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Wakeup { wakee, cpu, .. } if wakee == Pid(pid) => Some(cpu),
            _ => None,
        })
        .collect()
}

/// A sleeper runs 1 ms on CPU 0 and sleeps 5 ms; meanwhile a hog pinned to CPU 0
/// takes that CPU. When the sleeper wakes, its CPU is busy and CPUs 1, 2 and 3 are idle.
fn sleeper_and_pinned_hog() -> Workload {
    let mut w = Workload::default();
    let sleeper =
        w.add_program(Program::new("sleeper").op(Op::Compute(MS)).op(Op::Sleep(5 * MS)).op(Op::Compute(MS)));
    let hog = hog(&mut w, "hog", 20 * MS);
    w.tasks.push(TaskSpec::new("sleeper", sleeper));
    w.tasks.push(TaskSpec { affinity: Some(vec![0]), start_ns: 2 * MS, ..TaskSpec::new("hog", hog) });
    w
}

#[test]
fn a_wakeup_prefers_an_idle_core_to_the_idle_sibling_of_a_busy_one() {
    // Cores {0,1} and {2,3} in one LLC. Scanning from CPU 1, the kernel passes CPU 1
    // (idle, but its sibling 0 runs the hog) and takes CPU 2, the first wholly idle core.
    let smt = Topology::from_lscpu("# CPU,Core,Socket,Node,L3\n0,0,0,0,0\n1,0,0,0,0\n2,1,0,0,0\n3,1,0,0,0\n")
        .unwrap();
    let w = sleeper_and_pinned_hog();
    let (r, ev) = run_on(&w, smt);
    assert_eq!(wakeup_cpus(&ev, 1), [2]);
    assert!(r.tasks.iter().all(|t| t.exited));
    // Without SMT the first idle CPU after the busy one wins: CPU 1.
    let (_, ev) = run_on(&w, Topology::flat(4));
    assert_eq!(wakeup_cpus(&ev, 1), [1]);
}

#[test]
fn a_wakeup_stays_on_its_idle_cpu_even_when_its_sibling_is_busy() {
    // select_idle_sibling takes an idle target before looking for idle cores: the hog
    // runs on CPU 1 (the sibling), the sleeper's own CPU 0 is idle, so it stays there.
    let smt = Topology::from_lscpu("# CPU,Core,Socket,Node,L3\n0,0,0,0,0\n1,0,0,0,0\n2,1,0,0,0\n3,1,0,0,0\n")
        .unwrap();
    let mut w = sleeper_and_pinned_hog();
    w.tasks[1].affinity = Some(vec![1]);
    let (_, ev) = run_on(&w, smt);
    assert_eq!(wakeup_cpus(&ev, 1), [0]);
}

#[test]
fn an_overloaded_node_sheds_load_to_an_idle_one() {
    // Two nodes of two CPUs. Node 1 starts with four 10 ms hogs pinned two to a CPU
    // (overloaded) when eight 50 ms workers start from CPU 0. Fork placement
    // (find_idlest_group) keeps a worker on node 0 until node 0's average load exceeds
    // node 1's by the imbalance percentage: workers 1-5 stay, 6 goes to node 1, 7 stays,
    // 8 goes: 6 workers on node 0, 300 ms of work for 2 CPUs, 150 ms if nothing moved.
    // When node 1's hogs are done (20 ms), NUMA-level balancing moves workers over: all
    // 440 ms of work on 4 CPUs is 110 ms.
    let mut w = Workload::default();
    let short = hog(&mut w, "pinned", 10 * MS);
    let long = hog(&mut w, "worker", 50 * MS);
    for cpu in [2, 2, 3, 3] {
        w.tasks.push(TaskSpec { affinity: Some(vec![cpu]), ..TaskSpec::new("pinned", short) });
    }
    for _ in 0..8 {
        w.tasks.push(TaskSpec::new("worker", long));
    }
    let (r, _) = run_on(&w, Topology::parse_spec("2x2x1").unwrap());
    assert!(r.makespan_ns < 125 * MS, "makespan {} ms", r.makespan_ns / MS);
    for cpu in [2, 3] {
        assert!(r.cpu_busy_ns[cpu] > 95 * MS, "CPU {cpu} busy {} ms", r.cpu_busy_ns[cpu] / MS);
    }
    let moved: u64 = r.tasks.iter().filter(|t| t.name == "worker").map(|t| t.migrations).sum();
    assert!(moved >= 2, "{moved} worker migrations");
}

/// The CPU `pid` first ran on.
fn first_cpu(events: &[Event], pid: u32) -> u32 {
    events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::Switch { cpu, next, .. } if next == Pid(pid) => Some(cpu),
            _ => None,
        })
        .unwrap_or_else(|| panic!("pid {pid} never ran"))
}

#[test]
fn a_1024_cpu_machine_of_four_nodes_simulates() {
    // Few events, so that a debug build runs it quickly: 2 hackbench groups (80 tasks)
    // of 2 loops on 4 nodes × 128 cores × 2 threads.
    let w = schedlab_sim::workloads::load("hackbench:groups=2,fds=20,loops=2,size=100,ipc=pipe").unwrap();
    let (r, ev) = run_on(&w, Topology::parse_spec("4x128x2").unwrap());
    assert_eq!((r.cpus, r.cpu_busy_ns.len()), (1024, 1024));
    assert_eq!(r.topology, "4 nodes, 4 LLCs, 512 cores, 1024 CPUs");
    assert!(r.tasks.iter().all(|t| t.exited));
    // 80 tasks on 1024 idle CPUs: each starts on a CPU of its own.
    let mut firsts: Vec<u32> = (1..=80).map(|pid| first_cpu(&ev, pid)).collect();
    firsts.sort_unstable();
    firsts.dedup();
    assert_eq!(firsts.len(), 80);
}

#[test]
fn pinned_real_time_tasks_keep_to_their_cpus_on_a_big_machine() {
    // Affinity beyond CPU 63 (the old 64-bit mask's end) is honoured.
    let mut w = Workload::default();
    let p = hog(&mut w, "rt", MS);
    for cpu in [63, 64, 500, 1023] {
        w.tasks.push(TaskSpec { affinity: Some(vec![cpu]), ..task("rt", p, Policy::Fifo, 0, 10) });
    }
    let (r, ev) = run_on(&w, Topology::parse_spec("4x128x2").unwrap());
    assert_eq!((1..=4).map(|pid| first_cpu(&ev, pid)).collect::<Vec<_>>(), [63, 64, 500, 1023]);
    assert!(r.cpu_busy_ns[1023] >= MS);
}

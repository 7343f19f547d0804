//! Helpers shared by the simulator's integration tests.
#![allow(dead_code)]

use schedlab_model::Event;
use schedlab_sim::{FairFlavor, Op, Policy, Program, Report, SimConfig, TaskSpec, Workload};

/// A CPU hog computing `ns`.
pub fn hog(w: &mut Workload, name: &str, ns: u64) -> u32 {
    w.add_program(Program::new(name).op(Op::Compute(ns)))
}

/// A task spec with a policy and nice / rt priority.
pub fn task(name: &str, program: u32, policy: Policy, nice: i8, rt: u8) -> TaskSpec {
    TaskSpec { policy, nice, rt_priority: rt, ..TaskSpec::new(name, program) }
}

/// Runs with `cpus` CPUs, `fair`, and `sets` tunables; returns the report and events.
pub fn run(w: &Workload, cpus: u32, fair: FairFlavor, sets: &[(&str, &str)]) -> (Report, Vec<Event>) {
    let mut cfg = SimConfig::new(cpus, fair);
    for (k, v) in sets {
        cfg.tunables.set(k, v).unwrap();
    }
    let mut events = Vec::new();
    let r = schedlab_sim::simulate(w, &cfg, Some(&mut events)).unwrap();
    (r, events)
}

pub fn runtime(r: &Report, name: &str) -> u64 {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}")).runtime_ns
}

pub fn turnaround(r: &Report, name: &str) -> u64 {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}")).turnaround_ns
}

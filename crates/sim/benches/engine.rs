//! The simulator's throughput: events taken off the queue per second of host time.
//!
//! `cargo bench -p schedlab-sim` (or `make bench`). Each case runs a whole simulation;
//! criterion reports the time per run and, from the event count of a first run, the
//! events per second. `-- 2x16x2` runs only the 64-CPU cases.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab_sim::workloads::load;
use schedlab_sim::{simulate, FairFlavor, SimConfig, Topology};

fn bench(c: &mut Criterion) {
    // Name, workload, fair class, machine (a flat CPU count or a NxCxT topology).
    let cases = [
        (
            "hackbench-pipe-g10-l10",
            "hackbench:groups=10,fds=20,loops=10,size=100,ipc=pipe",
            FairFlavor::Eevdf,
            "2",
        ),
        (
            "hackbench-socket-g10-l10",
            "hackbench:groups=10,fds=20,loops=10,size=100,ipc=socket",
            FairFlavor::Eevdf,
            "2",
        ),
        (
            "hackbench-pipe-g10-l10-cfs",
            "hackbench:groups=10,fds=20,loops=10,size=100,ipc=pipe",
            FairFlavor::Cfs,
            "2",
        ),
        ("mixed-50", "mixed:procs=50", FairFlavor::Eevdf, "2"),
        // 64 CPUs: two nodes of 16 SMT-2 cores, one LLC each (issue 14: >= 10 M events/s).
        (
            "hackbench-pipe-g64-l10-2x16x2",
            "hackbench:groups=64,fds=20,loops=10,size=100,ipc=pipe",
            FairFlavor::Eevdf,
            "2x16x2",
        ),
        // The same in one autogroup: fair group scheduling, two levels.
        (
            "hackbench-pipe-g64-l10-session-2x16x2",
            "hackbench:groups=64,fds=20,loops=10,size=100,ipc=pipe,session=yes",
            FairFlavor::Eevdf,
            "2x16x2",
        ),
    ];
    let mut group = c.benchmark_group("simulate");
    group.sample_size(20);
    for (name, spec, fair, machine) in cases {
        let workload = load(spec).expect("built-in workload");
        let topology = match machine.parse() {
            Ok(cpus) => Topology::flat(cpus),
            Err(_) => Topology::parse_spec(machine).expect("a valid spec"),
        };
        let config = SimConfig::with_topology(topology, fair);
        let events = simulate(&workload, &config, None).expect("runs").events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(name, |b| b.iter(|| simulate(&workload, &config, None).expect("runs")));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! The simulator's throughput: events taken off the queue per second of host time.
//!
//! `cargo bench -p schedlab-sim` (or `make bench`). Each case runs a whole simulation;
//! criterion reports the time per run and, from the event count of a first run, the
//! events per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab_sim::workloads::load;
use schedlab_sim::{simulate, FairFlavor, SimConfig};

fn bench(c: &mut Criterion) {
    let cases = [
        (
            "hackbench-pipe-g10-l10",
            "hackbench:groups=10,fds=20,loops=10,size=100,ipc=pipe",
            FairFlavor::Eevdf,
        ),
        (
            "hackbench-socket-g10-l10",
            "hackbench:groups=10,fds=20,loops=10,size=100,ipc=socket",
            FairFlavor::Eevdf,
        ),
        (
            "hackbench-pipe-g10-l10-cfs",
            "hackbench:groups=10,fds=20,loops=10,size=100,ipc=pipe",
            FairFlavor::Cfs,
        ),
        ("mixed-50", "mixed:procs=50", FairFlavor::Eevdf),
    ];
    let mut group = c.benchmark_group("simulate");
    group.sample_size(20);
    for (name, spec, fair) in cases {
        let workload = load(spec).expect("built-in workload");
        let config = SimConfig::new(2, fair);
        let events = simulate(&workload, &config, None).expect("runs").events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(name, |b| b.iter(|| simulate(&workload, &config, None).expect("runs")));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

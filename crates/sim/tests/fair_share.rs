//! Fair-class cases a person can work out by hand.

mod common;

use common::*;
use schedlab_sim::{FairFlavor, Policy, Workload};

const SEC: u64 = 1_000_000_000;

/// Two hogs on one CPU for 10 s: long enough that tick-sized rounding (4 ms at
/// HZ=250) is far below 1 %.
fn two_hogs(nice_b: i8) -> Workload {
    let mut w = Workload { duration_ns: Some(10 * SEC), ..Default::default() };
    let p = hog(&mut w, "hog", 100 * SEC);
    w.tasks.push(task("a", p, Policy::Other, 0, 0));
    w.tasks.push(task("b", p, Policy::Other, nice_b, 0));
    w
}

#[test]
fn two_nice0_hogs_split_one_cpu_evenly() {
    for fair in [FairFlavor::Cfs, FairFlavor::Eevdf] {
        let (r, _) = run(&two_hogs(0), 1, fair, &[]);
        let (a, b) = (runtime(&r, "a") as f64, runtime(&r, "b") as f64);
        assert!((a / (a + b) - 0.5).abs() < 0.01, "{fair:?}: a {a} b {b}");
        assert!(a + b > 9.9 * SEC as f64, "{fair:?}: the CPU idled: {}", a + b);
    }
}

#[test]
fn nice0_vs_nice1_split_1024_to_820() {
    for fair in [FairFlavor::Cfs, FairFlavor::Eevdf] {
        let (r, _) = run(&two_hogs(1), 1, fair, &[]);
        let ratio = runtime(&r, "a") as f64 / runtime(&r, "b") as f64;
        let want = 1024.0 / 820.0;
        assert!((ratio / want - 1.0).abs() < 0.01, "{fair:?}: ratio {ratio}, want {want}");
    }
}

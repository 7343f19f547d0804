//! Paper 003's comparison in the simulator: the kernel's defaults against the paper's
//! optimized particle swarm and golden section with its two parameter discovery
//! algorithms (Figures 4 and 5).

use std::collections::BTreeMap;

use schedlab_sim::{workloads, FairFlavor, SimConfig};
use schedlab_tune::{
    particle_swarm, search_period, GoldenOutcome, PeriodSearch, PsoOutcome, PsoParams, SimObjective, Trace,
};

use crate::papers::{Experiment, Figure, Series};

/// The paper's workload: hackbench with 5 groups of 20 senders and 20 receivers (200
/// tasks), each sender sending one message to each receiver of its group (1 loop).
pub const PAPER_WORKLOAD: &str = "hackbench:groups=5,fds=20,loops=1,ipc=pipe";

/// Best makespan so far (µs) against evaluations, one line per search.
pub fn convergence_figure(title: &str, traces: &[(&str, &Trace)]) -> Figure {
    Figure {
        title: title.into(),
        x_label: "evaluations".into(),
        y_label: "best makespan so far (µs)".into(),
        categories: Vec::new(),
        series: traces
            .iter()
            .map(|(name, t)| Series {
                name: (*name).into(),
                points: t.best_so_far().iter().enumerate().map(|(i, v)| ((i + 1) as f64, v / 1e3)).collect(),
            })
            .collect(),
    }
}

/// Paper 003's comparison, run: the objective every method minimized, and what each
/// method found on it. [`experiment`] turns it into the report's values and figures.
pub struct Comparison {
    /// What was minimized ([`objective`]); its cache holds every candidate evaluated.
    pub objective: SimObjective,
    /// The makespan at the kernel's defaults (`objective.defaults()`), in ns.
    pub default: f64,
    /// The paper's optimized swarm ([`PsoParams::default`]) over the objective's bounds.
    pub pso: PsoOutcome,
    /// Golden section over SchedPeriod with discovery algorithm 1, and what it found.
    pub golden1: (GoldenOutcome, PeriodSearch),
    /// Golden section over SchedPeriod with discovery algorithm 2, and what it found.
    pub golden2: (GoldenOutcome, PeriodSearch),
}

/// The objective paper 003's methods minimize: the makespan of [`PAPER_WORKLOAD`] on 2
/// simulated CPUs under CFS, with seed 1. A new one has an empty cache, so it simulates
/// every candidate afresh (which is how a test re-checks what a search reports).
pub fn objective() -> SimObjective {
    let workload = workloads::load(PAPER_WORKLOAD).expect("the paper's workload is built in");
    SimObjective::new(workload, SimConfig::new(2, FairFlavor::Cfs), vec![1]).expect("a cfs objective")
}

/// Runs paper 003's comparison: the paper's hackbench on 2 CPUs under CFS at the kernel's
/// defaults, then tuned by the paper's optimized swarm (20 × 30, w = 0.4365, φp = φg =
/// 3.020) and by golden section with discovery algorithms 1 and 2 (default tolerance).
/// Full budgets: the whole comparison takes well under a second in release mode.
pub fn comparison() -> Comparison {
    let objective = objective();
    let (lower, upper) = objective.space().bounds();
    let default = objective.evaluate(&objective.defaults()).expect("the defaults simulate");
    let pso = particle_swarm(&objective, &lower, &upper, &PsoParams::default()).expect("the swarm runs");
    let golden1 = search_period(&objective, 1, None, &mut || {}).expect("golden section 1 runs");
    let golden2 = search_period(&objective, 2, None, &mut || {}).expect("golden section 2 runs");
    Comparison { objective, default, pso, golden1, golden2 }
}

/// Paper 003's comparison in the simulator (the `tune_paper003` experiment of `schedlab
/// reproduce`): [`comparison`]'s turnaround and evaluations to the best, beside the
/// paper's.
pub fn paper003() -> Experiment {
    experiment(&comparison())
}

/// The experiment from a run comparison: the default's makespan, the swarm's outcome and
/// each golden section's outcome with what it found, as values (makespans in µs,
/// tunables in ms rounded to the µs), the paper's values, and Figures 4, 5 and the
/// convergence curves.
pub fn experiment(comparison: &Comparison) -> Experiment {
    let Comparison { default, pso, golden1: (g1, s1), golden2: (g2, s2), .. } = comparison;
    let default = *default;
    let mut results = BTreeMap::new();
    let mut put = |k: &str, v: f64| results.insert(k.to_string(), v);
    // The tunables each found, in ms: latency, min_granularity, wakeup_granularity.
    let mut knobs = |name: &str, ns: [f64; 3]| {
        for (knob, v) in ["latency_ms", "min_granularity_ms", "wakeup_granularity_ms"].iter().zip(ns) {
            put(&format!("{name}.{knob}"), (v / 1e3).round() / 1e3);
        }
    };
    knobs("pso", [pso.best[0], pso.best[1], pso.best[2]]);
    for (name, s) in [("golden1", s1), ("golden2", s2)] {
        let d = &s.discovered;
        knobs(name, [d.latency as f64, d.min_granularity as f64, d.wakeup_granularity as f64]);
    }
    put("default.makespan_us", default / 1e3);
    put("pso.makespan_us", pso.best_value / 1e3);
    put("pso.evaluations", pso.evaluations() as f64);
    put("pso.evaluations_to_best", pso.evaluations_to_best() as f64);
    let golden_best = g1.value.min(g2.value);
    if let Some(n) = pso.trace.evaluations_to_reach(golden_best) {
        put("pso.evaluations_to_golden_best", n as f64);
    }
    for (name, g) in [("golden1", g1), ("golden2", g2)] {
        put(&format!("{name}.makespan_us"), g.value / 1e3);
        put(&format!("{name}.evaluations"), g.trace.evaluations() as f64);
        put(&format!("{name}.evaluations_to_best"), g.trace.evaluations_to_best() as f64);
        put(&format!("{name}.turnaround_over_pso"), g.value / pso.best_value);
    }
    let paper = BTreeMap::from([
        ("golden1.evaluations_to_best".to_string(), 8.0),
        ("golden2.evaluations_to_best".to_string(), 9.0),
        ("pso.evaluations_to_golden_best".to_string(), 31.0),
        ("golden1.turnaround_over_pso".to_string(), 5939.0 / 3028.0),
        ("golden2.turnaround_over_pso".to_string(), 5939.0 / 3028.0),
    ]);
    let bars = |title: &str, y: &str, cats: &[&str], series: Vec<Series>| Figure {
        title: title.into(),
        x_label: String::new(),
        y_label: y.into(),
        categories: cats.iter().map(|c| c.to_string()).collect(),
        series,
    };
    let turnaround = bars(
        "Minimum turnaround achieved (paper Fig. 4)",
        "makespan (µs)",
        &["default", "PSO", "golden 1", "golden 2"],
        vec![Series {
            name: "schedlab".into(),
            points: [default, pso.best_value, g1.value, g2.value]
                .iter()
                .enumerate()
                .map(|(i, v)| (i as f64, v / 1e3))
                .collect(),
        }],
    );
    let evaluations = bars(
        "Evaluations to reach the best (paper Fig. 5)",
        "evaluations",
        &["PSO", "golden 1", "golden 2"],
        vec![
            Series {
                name: "schedlab".into(),
                points: [
                    pso.evaluations_to_best(),
                    g1.trace.evaluations_to_best(),
                    g2.trace.evaluations_to_best(),
                ]
                .iter()
                .enumerate()
                .map(|(i, &v)| (i as f64, v as f64))
                .collect(),
            },
            Series {
                name: "paper (PSO: to golden's best)".into(),
                points: vec![(0.0, 31.0), (1.0, 8.0), (2.0, 9.0)],
            },
        ],
    );
    let convergence = convergence_figure(
        "Best makespan so far",
        &[("PSO", &pso.trace), ("golden 1", &g1.trace), ("golden 2", &g2.trace)],
    );
    Experiment {
        name: "tune_paper003".into(),
        setup: format!(
            "paper 003: CFS latency, min_granularity and wakeup_granularity tuned for the makespan of {PAPER_WORKLOAD} \
             (200 tasks) on 2 simulated CPUs: kernel defaults; the paper's optimized PSO (20 particles x 30 iterations, \
             w = 0.4365, phi_p = phi_g = 3.020, seed 1); golden section over SchedPeriod with discovery algorithms 1 and 2 \
             (tolerance 1 % of the interval). Paper values are in LinSched jiffies, so only ratios and counts are compared."
        ),
        results,
        paper,
        inputs: BTreeMap::new(),
        paper_says: "The optimized PSO reached the smallest turnaround, 3028 jiffies; golden section algorithms 1 and 2 \
                     both reached 5939 jiffies, in 8 and 9 benchmark executions, while the PSO needed 31 executions \
                     to reach 5939."
            .into(),
        figures: vec![turnaround, evaluations, convergence],
    }
}

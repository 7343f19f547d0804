//! Paper 003's comparison in the simulator (`schedlab reproduce --only tune_paper003`),
//! checked without pinning what the simulator outputs: the evaluation counts follow from
//! the searches' settings, every reported makespan is what a fresh simulation of the
//! reported tunables gives, the traces, figures and values agree with one another, and
//! the paper's shape holds — golden section needs a fraction of the swarm's evaluations,
//! and the swarm is never worse.

use std::collections::HashSet;
use std::sync::OnceLock;

use schedlab_lab::papers::tuning::{self, Comparison};
use schedlab_lab::papers::Experiment;
use schedlab_tune::{discover, interval, GoldenOutcome, Knobs, PeriodSearch, PsoParams, GOLDEN_RHO};

/// The comparison, run once for all the tests of this file.
fn run() -> &'static Comparison {
    static RUN: OnceLock<Comparison> = OnceLock::new();
    RUN.get_or_init(tuning::comparison)
}

/// Golden section 1 and 2, with their discovery algorithm's number.
fn goldens(c: &Comparison) -> [(u8, &GoldenOutcome, &PeriodSearch); 2] {
    [(1, &c.golden1.0, &c.golden1.1), (2, &c.golden2.0, &c.golden2.1)]
}

/// The tunables a golden section reports, as the objective's candidate.
fn knobs_of(s: &PeriodSearch) -> Knobs {
    vec![s.discovered.latency, s.discovered.min_granularity, s.discovered.wakeup_granularity]
}

/// Whether `values` never increase.
fn non_increasing(values: &[f64]) -> bool {
    values.windows(2).all(|w| w[1] <= w[0])
}

/// How many evaluations each search makes follows from its settings alone, whatever the
/// makespans are: the swarm evaluates its initial swarm and then every particle once per
/// iteration; a golden section evaluates its two inner points and then one point per
/// further iteration until the interval is within the tolerance.
#[test]
fn the_evaluation_counts_follow_from_the_settings() {
    let c = run();
    let p = PsoParams::default();
    assert_eq!(
        c.pso.evaluations(),
        p.particles * (p.iterations as usize + 1),
        "particles × (iterations + 1)"
    );
    assert_eq!(
        c.pso.per_iteration_best.len(),
        p.iterations as usize + 1,
        "the initial swarm and each iteration"
    );
    // hackbench's tasks: a receiver and a sender per fd of each group, 2 × 5 × 20.
    let tasks = c.objective.tasks();
    assert_eq!(tasks, 2 * 5 * 20, "{}", tuning::PAPER_WORKLOAD);
    for (algorithm, g, s) in goldens(c) {
        let (a, b) = interval(algorithm, tasks);
        assert_eq!((s.algorithm, s.tasks, s.interval_ns), (algorithm, tasks, (a, b)));
        assert_eq!(s.tolerance_ns, (b - a) / 100, "the default tolerance is 1 % of the interval");
        // Each iteration keeps 1 − ρ of the interval, so N iterations are needed for
        // (1 − ρ)^N ≤ tolerance / width: 0.618^9 = 0.0132 > 1 % ≥ 0.618^10 = 0.0081, so
        // N = 10 and 11 evaluations, for either interval.
        let (width, tol) = ((b - a) as f64, s.tolerance_ns as f64);
        let n = ((tol / width).ln() / (1.0 - GOLDEN_RHO).ln()).ceil() as usize;
        assert_eq!((g.iterations, s.iterations), (n, n), "golden {algorithm}: iterations");
        assert_eq!(
            g.trace.evaluations(),
            n + 1,
            "golden {algorithm}: one evaluation per iteration, two first"
        );
        assert_eq!(g.points.len(), n + 1, "golden {algorithm}");
        assert!(g.interval.1 - g.interval.0 <= tol, "golden {algorithm}: {:?}", g.interval);
        // The first two points divide the interval in the golden ratio, whatever f is.
        let (a, b) = (a as f64, b as f64);
        assert_eq!(g.points[..2], [a + GOLDEN_RHO * (b - a), a + (1.0 - GOLDEN_RHO) * (b - a)]);
    }
}

/// Every makespan reported is what a fresh objective (empty cache: it simulates again)
/// gives for the tunables reported with it; the simulator is deterministic, so they are
/// equal exactly. The defaults are the kernel's for 2 CPUs.
#[test]
fn each_reported_makespan_is_a_fresh_simulation_of_its_tunables() {
    let c = run();
    let fresh = tuning::objective();
    // The kernel's 6 ms, 0.75 ms and 1 ms, scaled by 1 + log2(2 CPUs) = 2.
    assert_eq!(c.objective.defaults(), vec![12_000_000, 1_500_000, 2_000_000]);
    let mut candidates = vec![(fresh.defaults(), c.default, "default".to_string())];
    candidates.push((fresh.knobs(&c.pso.best), c.pso.best_value, "pso".into()));
    for (algorithm, g, s) in goldens(c) {
        // The reported tunables are the discovery algorithm's for the best period.
        assert_eq!(s.sched_period_ns, g.x.round() as u64, "golden {algorithm}");
        assert_eq!(s.discovered, discover(algorithm, s.sched_period_ns, s.tasks), "golden {algorithm}");
        candidates.push((knobs_of(s), g.value, format!("golden {algorithm}")));
    }
    for (knobs, reported, name) in &candidates {
        assert_eq!(fresh.evaluate(knobs).unwrap(), *reported, "{name} at {knobs:?}");
    }
    let distinct: HashSet<&Knobs> = candidates.iter().map(|(k, _, _)| k).collect();
    assert_eq!(fresh.simulations(), distinct.len(), "each distinct candidate was simulated afresh");
}

/// Each search's best is the smallest value of its trace, first reached at its
/// evaluations to the best, at the point it reports; the swarm's lies within the
/// objective's bounds, each golden section's period within its interval.
#[test]
fn each_search_reports_the_best_of_its_own_trace() {
    let c = run();
    let pso = &c.pso;
    assert_eq!(pso.trace.best(), Some(pso.best_value), "the swarm's best is ≤ every value it saw");
    let n = pso.evaluations_to_best();
    assert!((1..=pso.evaluations()).contains(&n), "{n}");
    assert_eq!(pso.trace.values[n - 1], pso.best_value);
    assert!(pso.trace.values[..n - 1].iter().all(|&v| v > pso.best_value), "first reached at {n}");
    // The observer's iteration of the best is the batch of the trace's evaluation.
    let particles = PsoParams::default().particles;
    assert_eq!(pso.iteration_of_best(), (n - 1) / particles + 1);
    assert!(non_increasing(&pso.per_iteration_best), "{:?}", pso.per_iteration_best);
    assert_eq!(pso.per_iteration_best.last(), Some(&pso.best_value));
    let (lower, upper) = c.objective.space().bounds();
    for i in 0..3 {
        assert!((lower[i]..=upper[i]).contains(&pso.best[i]), "knob {i}: {:?}", pso.best);
    }
    for (algorithm, g, s) in goldens(c) {
        assert_eq!(g.trace.best(), Some(g.value), "golden {algorithm}");
        let n = g.trace.evaluations_to_best();
        assert!((1..=g.trace.evaluations()).contains(&n), "golden {algorithm}: {n}");
        assert_eq!((g.points[n - 1], g.trace.values[n - 1]), (g.x, g.value), "golden {algorithm}");
        let (a, b) = s.interval_ns;
        assert!((a..=b).contains(&s.sched_period_ns), "golden {algorithm}: {}", s.sched_period_ns);
    }
}

/// The report's values and figures are the outcomes in the stated units, and show the
/// paper's shape.
#[test]
fn the_report_states_the_outcomes_and_the_papers_shape() {
    let c = run();
    let e = tuning::experiment(c);
    let v = |k: &str| e.get(k).unwrap_or_else(|| panic!("no {k}"));
    assert_eq!(v("default.makespan_us"), c.default / 1e3);
    assert_eq!(v("pso.makespan_us"), c.pso.best_value / 1e3);
    assert_eq!(v("pso.evaluations"), c.pso.evaluations() as f64);
    assert_eq!(v("pso.evaluations_to_best"), c.pso.evaluations_to_best() as f64);
    let golden_best = c.golden1.0.value.min(c.golden2.0.value);
    // The swarm's best is no worse than golden's, so it reaches golden's best no later.
    let to_golden = c.pso.trace.evaluations_to_reach(golden_best).expect("the swarm reaches golden's best");
    assert_eq!(v("pso.evaluations_to_golden_best"), to_golden as f64);
    assert!(to_golden <= c.pso.evaluations_to_best(), "{to_golden}");
    // Tunables in ms, rounded to the µs: within half a µs of the ns found.
    let near = |key: String, ns: f64| assert!((v(&key) * 1e6 - ns).abs() <= 500.0 + 1e-6, "{key}: {ns} ns");
    let names = ["latency_ms", "min_granularity_ms", "wakeup_granularity_ms"];
    for (name, ns) in names.iter().zip(&c.pso.best) {
        near(format!("pso.{name}"), *ns);
    }
    for (algorithm, g, s) in goldens(c) {
        let key = |k: &str| format!("golden{algorithm}.{k}");
        for (name, ns) in names.iter().zip(knobs_of(s)) {
            near(key(name), ns as f64);
        }
        assert_eq!(v(&key("makespan_us")), g.value / 1e3);
        assert_eq!(v(&key("evaluations")), g.trace.evaluations() as f64);
        assert_eq!(v(&key("evaluations_to_best")), g.trace.evaluations_to_best() as f64);
        assert_eq!(v(&key("turnaround_over_pso")), g.value / c.pso.best_value);
    }
    figures_show_the_outcomes(c, &e);
    // The paper's shape.
    for g in ["golden1", "golden2"] {
        assert!(v(&format!("{g}.evaluations")) < v("pso.evaluations") / 10.0, "{g}");
        assert!(v(&format!("{g}.turnaround_over_pso")) >= 1.0, "{g}: the swarm is never worse");
    }
    assert!(v("pso.makespan_us") < v("default.makespan_us"));
    assert_eq!(e.paper.len(), 5, "the paper's five comparable values");
}

/// Figure 4's bars are the four makespans, Figure 5's the evaluations to the best, and
/// each convergence curve has one point per evaluation, never rises and ends at its
/// search's best.
fn figures_show_the_outcomes(c: &Comparison, e: &Experiment) {
    assert_eq!(e.figures.len(), 3);
    let ys = |figure: usize, series: usize| -> Vec<f64> {
        e.figures[figure].series[series].points.iter().map(|p| p.1).collect()
    };
    let makespans = [c.default, c.pso.best_value, c.golden1.0.value, c.golden2.0.value];
    assert_eq!(ys(0, 0), makespans.map(|v| v / 1e3));
    let to_best = [
        c.pso.evaluations_to_best(),
        c.golden1.0.trace.evaluations_to_best(),
        c.golden2.0.trace.evaluations_to_best(),
    ];
    assert_eq!(ys(1, 0), to_best.map(|n| n as f64));
    let traces = [
        (&c.pso.trace, c.pso.best_value),
        (&c.golden1.0.trace, c.golden1.0.value),
        (&c.golden2.0.trace, c.golden2.0.value),
    ];
    for (i, (trace, best)) in traces.into_iter().enumerate() {
        let curve = ys(2, i);
        assert_eq!(curve.len(), trace.evaluations(), "curve {i}");
        assert!(non_increasing(&curve), "curve {i}");
        assert_eq!(curve.last(), Some(&(best / 1e3)), "curve {i}");
    }
}

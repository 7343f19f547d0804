//! Paper 003's comparison in the simulator, pinned: the values the README reports
//! (`schedlab reproduce --only tune_paper003`), and the paper's shape — golden section
//! needs a fraction of the swarm's evaluations, and the swarm is never worse.

use schedlab_lab::papers::tuning;

#[test]
fn the_comparison_gives_the_readmes_values_and_the_papers_shape() {
    let e = tuning::paper003();
    let v = |k: &str| e.get(k).unwrap_or_else(|| panic!("no {k}"));
    let close =
        |k: &str, want: f64| assert!((v(k) - want).abs() < 1e-3 * want.abs().max(1.0), "{k}: {}", v(k));
    close("default.makespan_us", 888.051);
    close("pso.makespan_us", 811.791);
    close("pso.evaluations", 620.0);
    close("pso.evaluations_to_best", 527.0);
    close("pso.evaluations_to_golden_best", 527.0);
    close("golden1.makespan_us", 1089.19);
    close("golden1.evaluations", 11.0);
    close("golden1.evaluations_to_best", 1.0);
    close("golden2.makespan_us", 813.291);
    close("golden2.evaluations", 11.0);
    close("golden2.evaluations_to_best", 2.0);
    for (method, knobs) in [
        ("pso", [658.204, 0.1, 642.923]),
        ("golden1", [19.9, 383.938, 0.0]),
        ("golden2", [1000.0, 0.1, 236.106]),
    ] {
        for (knob, want) in ["latency_ms", "min_granularity_ms", "wakeup_granularity_ms"].iter().zip(knobs) {
            close(&format!("{method}.{knob}"), want);
        }
    }
    // The paper's shape.
    for g in ["golden1", "golden2"] {
        assert!(v(&format!("{g}.evaluations")) < v("pso.evaluations") / 10.0, "{g}");
        assert!(v(&format!("{g}.turnaround_over_pso")) >= 1.0, "{g}: the swarm is never worse");
    }
    assert!(v("pso.makespan_us") < v("default.makespan_us"));
    assert_eq!(e.paper.len(), 5, "the paper's five comparable values");
    assert_eq!(e.figures.len(), 3);
}

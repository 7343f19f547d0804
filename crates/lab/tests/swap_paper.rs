//! Paper 004's values: Figure 2's sequence exactly, the microbenchmarks by the ranges
//! the paper states.

use schedlab_lab::papers::swap;

#[test]
fn figure2_sequence_exactly() {
    let e = swap::fig2();
    for (key, want) in &e.paper {
        assert_eq!(e.get(key), Some(*want), "{key}");
    }
    assert_eq!(e.get("step4.ran"), None, "P1 is awake after three steps");
}

#[test]
fn client_server_as_the_paper_reports() {
    let e = swap::client_server();
    for kind in swap::MECHANISMS {
        let v = |k: &str| e.get(&format!("{kind}.{k}")).unwrap();
        // Low load: about 100 ms either way.
        for k in ["vanilla_low_s", "swap_low_s", "swap_high_s"] {
            assert!((0.095..0.12).contains(&v(k)), "{kind} {k}: {}", v(k));
        }
        // High load: vanilla over 1 s, about ten times SWAP's.
        assert!(v("vanilla_high_s") > 1.0, "{kind}: vanilla high {}", v("vanilla_high_s"));
        assert!(v("vanilla_high_s") > 8.0 * v("swap_high_s"), "{kind}");
    }
}

#[test]
fn multiserver_finds_the_fastest_server() {
    let e = swap::multiserver();
    let v = |k: &str| e.get(k).unwrap();
    for prefix in ["", "high."] {
        // The first iteration knows no provider: the same for all three.
        let first = v(&format!("{prefix}vanilla_first_iter_s"));
        assert_eq!(v(&format!("{prefix}swap200_first_iter_s")), first);
        assert_eq!(v(&format!("{prefix}swap20_first_iter_s")), first);
        // Then SWAP-200 runs the fastest server: 200 ms per iteration.
        assert!((v(&format!("{prefix}swap200_iter_s")) - 0.2).abs() < 0.01, "{prefix}");
        // SWAP-20 loses confidence in it ten times per iteration: it does worse.
        assert!(
            v(&format!("{prefix}swap20_iter_s")) > v(&format!("{prefix}swap200_iter_s")) + 0.05,
            "{prefix}"
        );
        assert!(
            v(&format!("{prefix}vanilla_iter_s")) > v(&format!("{prefix}swap200_iter_s")) * 2.0,
            "{prefix}"
        );
    }
    // Low load, vanilla: the fastest server needs 800 to 1400 ms in the round robin.
    assert!((0.8..=1.4).contains(&v("vanilla_first_iter_s")));
    let iters = swap::multiserver_iterations(false, None);
    assert!(iters.iter().all(|&s| s <= 1.4), "{iters:?}");
}

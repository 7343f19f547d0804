//! Paper 001's values, asserted.

use schedlab_lab::papers::pfs;

#[test]
fn figure1_exactly() {
    let e = pfs::fig1();
    for (key, want) in &e.paper {
        let got = e.get(key).unwrap();
        assert!((got - want).abs() < 1e-9, "{key}: got {got}, paper {want}");
    }
}

#[test]
fn figure6_improves_exactly_where_the_paper_says() {
    let e = pfs::fig6();
    for work in [75, 125, 150, 200] {
        for tm in [0, 10, 40, 70] {
            let v = e.get(&format!("work{work:03}.tm{tm:02}")).unwrap();
            let improves = (work == 125 && tm >= 40) || (work == 150 && tm == 70);
            if improves {
                assert!(v < 0.97, "work {work} T_m {tm}: {v} should be shorter");
            } else {
                assert!((v - 1.0).abs() < 0.01, "work {work} T_m {tm}: {v} should equal time sharing");
            }
        }
    }
}

#[test]
fn figure7_adapts_as_the_paper_describes() {
    let e = pfs::fig7();
    let v = |k: &str| e.get(k).unwrap();
    for x in [10, 20, 30] {
        assert!((v(&format!("a.x{x}.exec01")) - 1.0).abs() < 0.01, "(a) x {x}: first execution is 1");
    }
    assert!(v("a.x20.exec02") > 1.01 && v("a.x30.exec02") > 1.01, "(a) 20 % and 30 % rise at once");
    assert!((v("a.x10.exec02") - 1.0).abs() < 0.01, "(a) 10 % is still about 1 at the second execution");
    for x in [20, 30] {
        assert!((v(&format!("a.x{x}.exec20")) - 1.0).abs() < 0.01, "(a) x {x} is back to 1");
    }
    assert!(v("a.x10.exec14") > 1.01, "(a) 10 % is still above 1 past 13 executions");
    // (b): T_p falls from 210 ms by y of the 100 ms error each time; the CPU is kept
    // once T_p ≤ 120 ms (10 ms left ≤ T_m 20 ms at the first slice end): 0.8ⁿ ≤ 0.1 after
    // 11 executions, 0.7ⁿ after 7, 0.9ⁿ only after 22.
    for x in [10, 20, 30] {
        assert!(v(&format!("b.x{x}.exec01")) > 1.01, "(b) x {x}: starts above 1");
    }
    for (x, from) in [(20, 12), (30, 8)] {
        assert!(v(&format!("b.x{x}.exec{:02}", from - 1)) > 1.01, "(b) x {x}: above 1 until {from}");
        assert!(
            (v(&format!("b.x{x}.exec{from:02}")) - 1.0).abs() < 0.01,
            "(b) x {x}: 1 from execution {from}"
        );
    }
    assert!(v("b.x10.exec20") > 1.01, "(b) 10 %: still above 1 after 20 executions");
}

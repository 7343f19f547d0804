//! Golden-section search, the paper's local method (its Section V-B, after Chong & Zak
//! §7.2), and the paper's two parameter discovery algorithms (its Figures 2 and 3) that
//! turn CFS's three tunables into one variable, SchedPeriod.
//!
//! CFS's period (paper eqs. 3–6): `NrLatency = Latency / MinGran`; with
//! `NumTasks ≤ NrLatency` the period is `Latency`, otherwise
//! `Latency × NumTasks / NrLatency` (= `NumTasks × MinGran`). The search varies
//! SchedPeriod and a discovery algorithm gives the Latency, MinGran and WakeupGran that
//! produce it; the part of SchedPeriod beyond what the ranges allow (the paper's
//! ranges: Latency and MinGran 100,000..1,000,000,000 ns, WakeupGran 0..1,000,000,000
//! ns) goes to WakeupGran.

use serde::Serialize;

use crate::error::TuneError;
use crate::objective::SimObjective;
use crate::trace::Trace;

/// ρ = (3 − √5)/2 ≈ 0.381966: the golden section's short part,
/// `ρ/(1 − ρ) = (1 − ρ)/1`.
pub const GOLDEN_RHO: f64 = 0.381_966_011_250_105_1;

/// The paper's lower end of the Latency and MinGran ranges, in ns.
pub const RANGE_MIN_NS: u64 = 100_000;
/// The paper's upper end of all three ranges, in ns.
pub const RANGE_MAX_NS: u64 = 1_000_000_000;

/// The CFS tunables a discovery algorithm gives for a SchedPeriod, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Discovery {
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
}

/// The paper's parameter discovery algorithm `algorithm` (1 or 2) for `sched_period` ns
/// and `tasks` runnable tasks, verbatim. The paper writes its constants for its 200
/// tasks (5 hackbench groups of 40); they are these expressions in `tasks`, and equal
/// the paper's numbers for 200:
///
/// - Algorithm 1 (Figure 2), many tasks (`NumTasks > NrLatency`): the period is
///   `tasks × MinGran`, capped at `tasks × 1,000,000,000` = 200,000,000,000 (MinGran's
///   maximum), the excess going to WakeupGran; `Latency = (tasks − 1) × 100,000` =
///   19,900,000, the most that keeps `NrLatency = Latency/MinGran < tasks` at the
///   smallest MinGran; `MinGran = SchedPeriod / tasks` (`/200`).
/// - Algorithm 2 (Figure 3), few tasks (`NumTasks ≤ NrLatency`): the period is Latency,
///   capped at 1,000,000,000 with the excess going to WakeupGran; MinGran is
///   `SchedPeriod / tasks` while `Latency < tasks × 100,000` = 20,000,000, else 100,000.
///   (Below 20,000,000 this gives a MinGran under the paper's own 100,000 minimum, as
///   the figure says; kept verbatim.)
///
/// Divisions are the kernel's integer divisions (rounding down). Panics on another
/// algorithm number or on zero tasks.
pub fn discover(algorithm: u8, sched_period: u64, tasks: u64) -> Discovery {
    assert!(tasks > 0, "discovery needs at least one task");
    match algorithm {
        1 => {
            let cap = tasks * RANGE_MAX_NS;
            let (period, wakeup) =
                if sched_period > cap { (cap, sched_period - cap) } else { (sched_period, 0) };
            Discovery {
                latency: (tasks - 1) * RANGE_MIN_NS,
                min_granularity: period / tasks,
                wakeup_granularity: wakeup,
            }
        }
        2 => {
            let cap = RANGE_MAX_NS;
            let (period, wakeup) =
                if sched_period > cap { (cap, sched_period - cap) } else { (sched_period, 0) };
            let latency = period;
            let min_granularity = if latency < tasks * RANGE_MIN_NS { period / tasks } else { RANGE_MIN_NS };
            Discovery { latency, min_granularity, wakeup_granularity: wakeup }
        }
        other => panic!("there is no parameter discovery algorithm {other} (the paper has 1 and 2)"),
    }
}

/// The SchedPeriod interval [a0, b0] searched with discovery algorithm `algorithm`.
///
/// The paper does not give it; ours spans everything the algorithm can produce within
/// the paper's ranges: Algorithm 1 from `tasks × 100,000` (MinGran at its minimum) to
/// `tasks × 1,000,000,000 + 1,000,000,000` (MinGran and WakeupGran at their maximum);
/// Algorithm 2 from 100,000 (Latency at its minimum) to 2,000,000,000 (Latency and
/// WakeupGran at their maximum).
pub fn interval(algorithm: u8, tasks: u64) -> (u64, u64) {
    match algorithm {
        1 => (tasks * RANGE_MIN_NS, tasks * RANGE_MAX_NS + RANGE_MAX_NS),
        _ => (RANGE_MIN_NS, 2 * RANGE_MAX_NS),
    }
}

/// What a golden-section search found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GoldenOutcome {
    /// The best point evaluated.
    pub x: f64,
    /// Its value.
    pub value: f64,
    /// Iterations (interval reductions) made.
    pub iterations: usize,
    /// The final interval, which holds the minimum of a unimodal function.
    pub interval: (f64, f64),
    /// The points evaluated, in order.
    pub points: Vec<f64>,
    /// Their values, in order.
    pub trace: Trace,
}

/// Golden-section search for a minimum of `f` on `[a, b]`, until the interval is at
/// most `tol` wide.
///
/// As the paper (and Chong & Zak) describe: the inner points `a1 = a0 + ρ(b0 − a0)` and
/// `b1 = a0 + (1 − ρ)(b0 − a0)` are evaluated; if `f(a1) < f(b1)` the minimum lies in
/// `[a0, b1]`, otherwise in `[a1, b0]`; the surviving inner point is one of the next
/// two, so after the first iteration each iteration evaluates `f` once ("the benchmark
/// only runs once per iteration"). N iterations shrink the interval by `(1 − ρ)^N` and
/// cost N + 1 evaluations. The result is the best point evaluated.
///
/// An error of `f` ends the search and is returned as it is; an invalid interval or
/// tolerance is a [`TuneError::Interval`] turned into `f`'s error type, which may be
/// [`TuneError`] itself or any error that can hold one (`Box<dyn Error>`,
/// `anyhow::Error`).
pub fn golden_section<F, E>(mut f: F, a: f64, b: f64, tol: f64) -> Result<GoldenOutcome, E>
where
    F: FnMut(f64) -> Result<f64, E>,
    E: From<TuneError>,
{
    let valid = a < b && tol > 0.0; // false for NaN too
    if !valid {
        return Err(TuneError::Interval { a, b, tol }.into());
    }
    let mut points = Vec::new();
    let mut trace = Trace::default();
    let mut eval = |x: f64, points: &mut Vec<f64>| -> Result<f64, E> {
        let v = f(x)?;
        points.push(x);
        trace.extend(&[v]);
        Ok(v)
    };
    let (mut lo, mut hi) = (a, b);
    let mut x1 = lo + GOLDEN_RHO * (hi - lo);
    let mut x2 = lo + (1.0 - GOLDEN_RHO) * (hi - lo);
    let mut f1 = eval(x1, &mut points)?;
    let mut f2 = eval(x2, &mut points)?;
    let mut iterations = 0;
    loop {
        iterations += 1;
        if f1 < f2 {
            hi = x2;
            (x2, f2) = (x1, f1);
            if hi - lo <= tol {
                break;
            }
            x1 = lo + GOLDEN_RHO * (hi - lo);
            f1 = eval(x1, &mut points)?;
        } else {
            lo = x1;
            (x1, f1) = (x2, f2);
            if hi - lo <= tol {
                break;
            }
            x2 = lo + (1.0 - GOLDEN_RHO) * (hi - lo);
            f2 = eval(x2, &mut points)?;
        }
    }
    let best = (0..points.len())
        .min_by(|&i, &j| trace.values[i].total_cmp(&trace.values[j]))
        .expect("two points at least");
    Ok(GoldenOutcome {
        x: points[best],
        value: trace.values[best],
        iterations,
        interval: (lo, hi),
        points,
        trace,
    })
}

/// What a golden-section search over SchedPeriod found, besides its outcome.
#[derive(Clone, Debug, Serialize)]
pub struct PeriodSearch {
    /// The discovery algorithm (1: many tasks, 2: few).
    pub algorithm: u8,
    /// The workload's tasks, which the algorithms divide the period among.
    pub tasks: u64,
    /// The searched SchedPeriod interval and the tolerance, in ns.
    pub interval_ns: (u64, u64),
    pub tolerance_ns: u64,
    pub iterations: usize,
    /// The best SchedPeriod and the tunables discovered from it.
    pub sched_period_ns: u64,
    pub discovered: Discovery,
}

/// Paper 003's golden-section search: over SchedPeriod in the `algorithm`'s interval,
/// to `tolerance` ns (default 1 % of the interval), each period turned into CFS's three
/// tunables by discovery `algorithm` and evaluated by `objective`; `each` is called
/// after every evaluation (a progress bar).
pub fn search_period(
    objective: &SimObjective,
    algorithm: u8,
    tolerance: Option<u64>,
    each: &mut dyn FnMut(),
) -> Result<(GoldenOutcome, PeriodSearch), TuneError> {
    let tasks = objective.tasks();
    let (a, b) = interval(algorithm, tasks);
    let tol = tolerance.unwrap_or((b - a) / 100).max(1);
    let knobs = |period: f64| {
        let d = discover(algorithm, period.round() as u64, tasks);
        vec![d.latency, d.min_granularity, d.wakeup_granularity]
    };
    let out = golden_section(
        |p| {
            let v = objective.evaluate(&knobs(p));
            each();
            v
        },
        a as f64,
        b as f64,
        tol as f64,
    )?;
    let period = out.x.round() as u64;
    let search = PeriodSearch {
        algorithm,
        tasks,
        interval_ns: (a, b),
        tolerance_ns: tol,
        iterations: out.iterations,
        sched_period_ns: period,
        discovered: discover(algorithm, period, tasks),
    };
    Ok((out, search))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rho_is_the_golden_section() {
        assert!((GOLDEN_RHO / (1.0 - GOLDEN_RHO) - (1.0 - GOLDEN_RHO)).abs() < 1e-15);
    }

    /// Chong & Zak's Example 7.1: f(x) = x⁴ − 14x³ + 60x² − 70x on [0, 2] to within 0.3:
    /// N = 4 iterations (0.618⁴ × 2 = 0.292), 5 evaluations, first points 0.7639 and
    /// 1.2361, final interval [0.6525, 0.9443].
    #[test]
    fn chong_and_zak_example() {
        let f = |x: f64| Ok::<_, TuneError>(x.powi(4) - 14.0 * x.powi(3) + 60.0 * x * x - 70.0 * x);
        let out = golden_section(f, 0.0, 2.0, 0.3).unwrap();
        assert_eq!(out.iterations, 4);
        assert_eq!(out.trace.evaluations(), 5);
        assert!((out.points[0] - 0.7639).abs() < 1e-4 && (out.points[1] - 1.2361).abs() < 1e-4);
        assert!((out.interval.0 - 0.6525).abs() < 1e-4, "{:?}", out.interval);
        assert!((out.interval.1 - 0.9443).abs() < 1e-4, "{:?}", out.interval);
        // f(0.7639) = -24.36 is the best of the five points.
        assert!((out.x - 0.7639).abs() < 1e-4 && (out.value + 24.36).abs() < 0.01, "{out:?}");
    }

    /// (x − 2)² on [0, 5] to 0.001: 0.618^17 × 5 = 0.0014 > 0.001 ≥ 0.618^18 × 5 =
    /// 0.00087, so 18 iterations and 19 evaluations.
    #[test]
    fn parabola_minimum_and_evaluation_count() {
        let mut calls = 0;
        let out = golden_section(
            |x| {
                calls += 1;
                Ok::<_, TuneError>((x - 2.0) * (x - 2.0))
            },
            0.0,
            5.0,
            1e-3,
        )
        .unwrap();
        assert_eq!((out.iterations, out.trace.evaluations(), calls), (18, 19, 19));
        assert!((out.x - 2.0).abs() < 1e-3 && out.interval.0 <= 2.0 && 2.0 <= out.interval.1);
        assert!(golden_section(Ok::<_, TuneError>, 1.0, 1.0, 0.1).is_err());
        let boom = |_: f64| Err::<f64, Box<dyn std::error::Error + Send + Sync>>("boom".into());
        assert_eq!(golden_section(boom, 0.0, 1.0, 0.1).unwrap_err().to_string(), "boom");
    }

    #[test]
    fn algorithm_1_with_the_papers_constants() {
        let d = |p| discover(1, p, 200);
        // Latency is always 19,900,000; MinGran = SchedPeriod / 200.
        assert_eq!(
            d(40_000_000),
            Discovery { latency: 19_900_000, min_granularity: 200_000, wakeup_granularity: 0 }
        );
        assert_eq!(
            d(200_000_000_000),
            Discovery { latency: 19_900_000, min_granularity: 1_000_000_000, wakeup_granularity: 0 }
        );
        // Beyond 200,000,000,000 the rest is WakeupGran.
        assert_eq!(
            d(200_500_000_000),
            Discovery {
                latency: 19_900_000,
                min_granularity: 1_000_000_000,
                wakeup_granularity: 500_000_000
            }
        );
        // NumTasks > NrLatency holds over the whole interval: 19,900,000 / MinGran < 200.
        let (a, b) = interval(1, 200);
        assert_eq!((a, b), (20_000_000, 201_000_000_000));
        assert!(19_900_000 / d(a).min_granularity < 200);
    }

    #[test]
    fn algorithm_2_with_the_papers_constants() {
        let d = |p| discover(2, p, 200);
        // Small latency (< 20,000,000): MinGran = SchedPeriod / 200.
        assert_eq!(
            d(10_000_000),
            Discovery { latency: 10_000_000, min_granularity: 50_000, wakeup_granularity: 0 }
        );
        assert_eq!(
            d(19_999_999),
            Discovery { latency: 19_999_999, min_granularity: 99_999, wakeup_granularity: 0 }
        );
        // From 20,000,000: MinGran = 100,000.
        assert_eq!(
            d(20_000_000),
            Discovery { latency: 20_000_000, min_granularity: 100_000, wakeup_granularity: 0 }
        );
        // Beyond 1,000,000,000 the rest is WakeupGran.
        assert_eq!(
            d(1_500_000_000),
            Discovery { latency: 1_000_000_000, min_granularity: 100_000, wakeup_granularity: 500_000_000 }
        );
        assert_eq!(interval(2, 200), (100_000, 2_000_000_000));
        // NumTasks ≤ NrLatency: Latency / MinGran ≥ 200 everywhere.
        for p in [100_000, 5_000_000, 20_000_000, 999_000_000] {
            let x = d(p);
            assert!(x.latency / x.min_granularity >= 200, "{p}: {x:?}");
        }
    }
}

//! How far the simulator is from the kernel, in the terms issue 14 sets as the
//! simulator's fidelity targets: relative errors per workload (makespan, CPU time,
//! context switches, each task's runtime and share), and a verdict per target.
//!
//! A relative error is `simulated / real − 1`: −0.20 means the simulator predicts 20 %
//! less than the kernel did. A share error is in percentage points of the threads'
//! total CPU time.

use serde::Serialize;

use super::pairs::{HackbenchSection, RtAppSection};

/// `simulated / real − 1`, when the real value is not zero.
pub fn relative_error(sim: u64, real: u64) -> Option<f64> {
    (real > 0).then(|| sim as f64 / real as f64 - 1.0)
}

/// The fidelity targets: what the simulator must predict on this machine.
pub mod target {
    /// hackbench: the slope of real over simulated makespans through the origin is
    /// within this of 1.
    pub const HACKBENCH_SLOPE: f64 = 0.10;
    /// hackbench: every group count's makespan within this relative error.
    pub const HACKBENCH_MAKESPAN: f64 = 0.15;
    /// hackbench: every group count's voluntary context switches within this.
    pub const HACKBENCH_VOLUNTARY_SWITCHES: f64 = 0.30;
    /// rt-app: every file's makespan within this relative error.
    pub const RTAPP_MAKESPAN: f64 = 0.10;
    /// rt-app: every thread's share of the threads' CPU time within this many points.
    pub const RTAPP_SHARE_POINTS: f64 = 2.0;
}

/// One fidelity target and how the run fared against it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// What is measured, e.g. "hackbench makespan (every G)".
    pub target: &'static str,
    /// The largest allowed error, in `unit`.
    pub limit: f64,
    /// The worst error found (absolute), in `unit`; `None` when nothing was measured.
    pub worst: Option<f64>,
    /// Where the worst error is (a group count, a file and thread).
    pub at: Option<String>,
    /// `ratio` (relative error), `points` (percentage points) or `slope`.
    pub unit: &'static str,
    /// The worst error is within the limit.
    pub met: bool,
}

impl Verdict {
    /// The verdict over `(where, error)` pairs: the largest absolute error against `limit`.
    fn over(
        target: &'static str,
        unit: &'static str,
        limit: f64,
        errors: impl IntoIterator<Item = (String, f64)>,
    ) -> Self {
        let worst = errors.into_iter().max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
        Verdict {
            target,
            limit,
            worst: worst.as_ref().map(|w| w.1.abs()),
            met: worst.as_ref().is_some_and(|w| w.1.abs() <= limit),
            at: worst.map(|w| w.0),
            unit,
        }
    }
}

/// The verdicts on the hackbench half.
pub fn hackbench_verdicts(h: &HackbenchSection) -> Vec<Verdict> {
    let at = |g: u32| format!("G={g}");
    vec![
        Verdict::over(
            "hackbench slope of real over simulated makespan through the origin, off 1",
            "slope",
            target::HACKBENCH_SLOPE,
            h.fit.iter().map(|f| ("fit".to_string(), f.slope_through_origin - 1.0)),
        ),
        Verdict::over(
            "hackbench makespan, every group count",
            "ratio",
            target::HACKBENCH_MAKESPAN,
            h.rows.iter().filter_map(|r| Some((at(r.groups), r.makespan_error?))),
        ),
        Verdict::over(
            "hackbench voluntary context switches, every group count",
            "ratio",
            target::HACKBENCH_VOLUNTARY_SWITCHES,
            h.rows.iter().filter_map(|r| Some((at(r.groups), r.voluntary_switch_error?))),
        ),
    ]
}

/// The verdicts on the rt-app half.
pub fn rtapp_verdicts(rt: &RtAppSection) -> Vec<Verdict> {
    vec![
        Verdict::over(
            "rt-app makespan, every file",
            "ratio",
            target::RTAPP_MAKESPAN,
            rt.files.iter().filter_map(|f| Some((f.file.clone(), f.makespan_error?))),
        ),
        Verdict::over(
            "rt-app share of the threads' CPU time, every thread",
            "points",
            target::RTAPP_SHARE_POINTS,
            rt.files.iter().flat_map(|f| {
                f.tasks.iter().filter_map(|t| Some((format!("{} {}", f.file, t.name), t.share_error_points?)))
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_errors_are_sim_over_real() {
        assert_eq!(relative_error(80, 100), Some(-0.19999999999999996));
        assert_eq!(relative_error(150, 100), Some(0.5));
        assert_eq!(relative_error(5, 0), None);
    }

    #[test]
    fn a_verdict_takes_the_worst_absolute_error() {
        let v = Verdict::over("t", "ratio", 0.15, [("G=1".to_string(), 0.05), ("G=2".to_string(), -0.2)]);
        assert_eq!((v.worst, v.at.as_deref(), v.met), (Some(0.2), Some("G=2"), false));
        let v = Verdict::over("t", "ratio", 0.15, [("G=1".to_string(), -0.1)]);
        assert!(v.met);
        // Nothing measured is not a pass.
        let v = Verdict::over("t", "ratio", 0.15, []);
        assert_eq!((v.worst, v.met), (None, false));
    }
}

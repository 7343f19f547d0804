//! Least-squares line through (simulated, real) pairs and its coefficient of
//! determination, as paper 003's Figure 1 relates LinSched's jiffies to hackbench's
//! seconds; and the median of repetitions.

use serde::Serialize;

/// The least-squares line `y = slope * x + intercept` through some points.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinearFit {
    /// How many points the line was fitted to.
    pub n: usize,
    pub slope: f64,
    pub intercept: f64,
    /// Coefficient of determination, `1 - SS_res / SS_tot` (equal to Pearson's r²
    /// for a least-squares line with an intercept); 1 when the points have no spread
    /// and the line goes through them all.
    pub r2: f64,
    /// The least-squares slope of the line through the origin, `Σxy / Σx²`: how many
    /// times the real value is the simulated one.
    pub slope_through_origin: f64,
}

/// Fits `y = slope * x + intercept` to `points` (x, y) by least squares; `None` with
/// fewer than two points, non-finite values, or when every x is the same.
pub fn linear_fit(points: &[(f64, f64)]) -> Option<LinearFit> {
    let n = points.len();
    if n < 2 || points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|(x, _)| (x - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (x - mean_x) * (y - mean_y)).sum();
    let syy: f64 = points.iter().map(|(_, y)| (y - mean_y).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let ss_res: f64 = points.iter().map(|(x, y)| (y - (slope * x + intercept)).powi(2)).sum();
    let r2 = if syy > 0.0 {
        1.0 - ss_res / syy
    } else if ss_res == 0.0 {
        1.0
    } else {
        0.0
    };
    let sx2: f64 = points.iter().map(|(x, _)| x * x).sum();
    let sxy0: f64 = points.iter().map(|(x, y)| x * y).sum();
    let slope_through_origin = if sx2 > 0.0 { sxy0 / sx2 } else { 0.0 };
    Some(LinearFit { n, slope, intercept, r2, slope_through_origin })
}

/// The median of `values` (the mean of the middle two for an even count); `None` when
/// empty. NaNs sort last.
pub fn median(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| crate::bench::stats::median(values))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn points_on_a_line_fit_exactly() {
        // y = 2x + 1
        let f = linear_fit(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0), (3.0, 7.0)]).unwrap();
        assert_eq!(f.n, 4);
        assert!(close(f.slope, 2.0) && close(f.intercept, 1.0) && close(f.r2, 1.0), "{f:?}");
        // Through the origin: Σxy / Σx² = (0 + 3 + 10 + 21) / (0 + 1 + 4 + 9) = 34 / 14.
        assert!(close(f.slope_through_origin, 34.0 / 14.0), "{f:?}");
    }

    #[test]
    fn scattered_points_fit_by_hand() {
        // x = 1,2,3; y = 1,3,2: mean x 2, mean y 2; Sxx = 2, Sxy = 1, Syy = 2.
        // slope 0.5, intercept 1; residuals -0.5, 1, -0.5: SS_res 1.5; R² = 1 - 1.5/2.
        let f = linear_fit(&[(1.0, 1.0), (2.0, 3.0), (3.0, 2.0)]).unwrap();
        assert!(close(f.slope, 0.5) && close(f.intercept, 1.0), "{f:?}");
        assert!(close(f.r2, 0.25), "{f:?}");
        // Σxy = 1 + 6 + 6 = 13, Σx² = 14.
        assert!(close(f.slope_through_origin, 13.0 / 14.0), "{f:?}");
    }

    #[test]
    fn a_flat_line_and_degenerate_inputs() {
        let f = linear_fit(&[(1.0, 4.0), (2.0, 4.0)]).unwrap();
        assert!(close(f.slope, 0.0) && close(f.intercept, 4.0) && close(f.r2, 1.0), "{f:?}");
        assert!(linear_fit(&[(1.0, 1.0)]).is_none());
        assert!(linear_fit(&[(1.0, 1.0), (1.0, 2.0)]).is_none(), "no spread in x");
        assert!(linear_fit(&[(1.0, f64::NAN), (2.0, 2.0)]).is_none());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}

//! Order statistics the benchmarks share.

/// The `q` quantile (0..=1) of sorted samples, interpolated between neighbours; 0 for
/// no samples.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            if sorted[lo] == sorted[hi] {
                // Also where both are infinite (a ratio over a bare 0), which the
                // interpolation would make NaN.
                return sorted[lo];
            }
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        }
    }
}

/// The median of `v` (the mean of the middle two for an even count); 0 for none.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    quantile(&s, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.9), 3.7);
        assert_eq!(quantile(&[7.0], 0.9), 7.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(quantile(&[1.0, f64::INFINITY, f64::INFINITY], 0.9), f64::INFINITY);
        assert_eq!(median(&[1.0, 2.0, f64::INFINITY]), 2.0);
    }
}

//! Numbers for people: durations with a unit, large counts and rates with a prefix.

use schedlab_model::{Ns, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};

/// A duration in the largest unit that keeps it at least 1, with three decimals:
/// `950 ns`, `12.500 µs`, `1.234 ms`, `2.000 s`.
pub fn duration(ns: Ns) -> String {
    let (unit, div) = if ns >= NSEC_PER_SEC {
        ("s", NSEC_PER_SEC)
    } else if ns >= NSEC_PER_MSEC {
        ("ms", NSEC_PER_MSEC)
    } else if ns >= NSEC_PER_USEC {
        ("µs", NSEC_PER_USEC)
    } else {
        return format!("{ns} ns");
    };
    format!("{:.3} {unit}", ns as f64 / div as f64)
}

/// A count, mean or rate with an SI prefix past ten thousand: `9999`, `0.05`, `12.3 k`,
/// `4.56 M`.
pub fn count(n: f64) -> String {
    if n.fract() == 0.0 && n < 10_000.0 {
        format!("{n:.0}")
    } else if n < 10.0 {
        format!("{n:.2}")
    } else if n < 10_000.0 {
        format!("{n:.1}")
    } else if n < 1e6 {
        format!("{:.1} k", n / 1e3)
    } else if n < 1e9 {
        format!("{:.2} M", n / 1e6)
    } else {
        format!("{:.2} G", n / 1e9)
    }
}

/// `part` as a percentage of `whole` with one decimal (`0.0%` when `whole` is 0).
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0%".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(duration(0), "0 ns");
        assert_eq!(duration(999), "999 ns");
        assert_eq!(duration(1_000), "1.000 µs");
        assert_eq!(duration(12_500), "12.500 µs");
        assert_eq!(duration(1_234_567), "1.235 ms");
        assert_eq!(duration(2 * NSEC_PER_SEC), "2.000 s");
        assert_eq!(duration(3_600 * NSEC_PER_SEC), "3600.000 s");
    }

    #[test]
    fn counts_get_prefixes() {
        assert_eq!(count(0.0), "0");
        assert_eq!(count(9_999.0), "9999");
        assert_eq!(count(2.5), "2.50");
        assert_eq!(count(0.045), "0.04");
        assert_eq!(count(12.25), "12.2");
        assert_eq!(count(12_345.0), "12.3 k");
        assert_eq!(count(4_560_000.0), "4.56 M");
        assert_eq!(count(7.1e9), "7.10 G");
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(5, 0), "0.0%");
    }
}

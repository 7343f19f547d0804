//! The kernel's load-weight arithmetic: `sched_prio_to_weight`, `sched_prio_to_wmult`
//! and `__calc_delta`, bit for bit (kernel/sched/core.c and fair.c).
//!
//! Weights here are the kernel's *unscaled* values (`scale_load_down`): nice 0 is 1024.
//! Each nice level is ~1.25x the next, so that one nice step moves ~10 % of CPU time
//! between two competing tasks. A 64-bit kernel keeps `load.weight` with 10 more bits
//! (`SCHED_FIXEDPOINT_SHIFT`): a task's is its weight shifted, but a task group's entity
//! gets a share of its group's `shares` computed at that resolution, and a run queue's
//! total is the sum of those; [`LoadWeight::scaled`] keeps it, so that the sums and their
//! `scale_load_down` round as the kernel's do.

/// `sched_prio_to_weight[nice + 20]`.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, //  -20 .. -16
    29154, 23254, 18705, 14949, 11916, //  -15 .. -11
    9548, 7620, 6100, 4904, 3906, //  -10 ..  -6
    3121, 2501, 1991, 1586, 1277, //   -5 ..  -1
    1024, 820, 655, 526, 423, //    0 ..   4
    335, 272, 215, 172, 137, //    5 ..   9
    110, 87, 70, 56, 45, //   10 ..  14
    36, 29, 23, 18, 15, //   15 ..  19
];

/// `sched_prio_to_wmult[nice + 20]`: 2^32 / weight, precomputed.
pub const PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, //  -20 .. -16
    147320, 184698, 229616, 287308, 360437, //  -15 .. -11
    449829, 563644, 704093, 875809, 1099582, //  -10 ..  -6
    1376151, 1717300, 2157191, 2708050, 3363326, //   -5 ..  -1
    4194304, 5237765, 6557202, 8165337, 10153587, //    0 ..   4
    12820798, 15790321, 19976592, 24970740, 31350126, //    5 ..   9
    39045157, 49367440, 61356676, 76695844, 95443717, //   10 ..  14
    119304647, 148102320, 186737708, 238609294, 286331153, //   15 ..  19
];

/// The weight of a task at nice 0 (`NICE_0_LOAD` scaled down).
pub const NICE_0_LOAD: u64 = 1024;
/// `WEIGHT_IDLEPRIO`: the weight of a `SCHED_IDLE` task.
pub const WEIGHT_IDLEPRIO: u64 = 3;
/// `WMULT_IDLEPRIO`: 2^32 / 3.
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;
/// `SCHED_FIXEDPOINT_SHIFT`: the extra bits of a 64-bit kernel's `load.weight`.
pub const SCHED_FIXEDPOINT_SHIFT: u32 = 10;
const WMULT_CONST: u64 = 0xffff_ffff;
const WMULT_SHIFT: u32 = 32;

/// `scale_load_down`: a 64-bit kernel's `load.weight` as its arithmetic uses it, at
/// least 2 unless 0.
pub fn scale_load_down(scaled: u64) -> u64 {
    if scaled == 0 {
        0
    } else {
        (scaled >> SCHED_FIXEDPOINT_SHIFT).max(2)
    }
}

/// A load weight and its cached inverse, as `struct load_weight`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadWeight {
    /// The weight the arithmetic uses (`scale_load_down(load.weight)`): nice 0 is 1024.
    pub weight: u64,
    pub inv_weight: u32,
    /// The kernel's `load.weight` itself, [`SCHED_FIXEDPOINT_SHIFT`] bits finer: what run
    /// queues sum and reweighting scales by.
    pub scaled: u64,
}

impl LoadWeight {
    /// The weight of a fair task at `nice`, or of a `SCHED_IDLE` task.
    pub fn for_task(nice: i8, idle_policy: bool) -> Self {
        let (weight, inv_weight) = if idle_policy {
            (WEIGHT_IDLEPRIO, WMULT_IDLEPRIO)
        } else {
            let i = (i32::from(nice) + 20).clamp(0, 39) as usize;
            (PRIO_TO_WEIGHT[i], PRIO_TO_WMULT[i])
        };
        LoadWeight { weight, inv_weight, scaled: weight << SCHED_FIXEDPOINT_SHIFT }
    }

    /// The weight of a task group's entity whose `load.weight` is `scaled`
    /// (`reweight_entity` with a share of the group's `shares`), its inverse computed as
    /// `__update_inv_weight` does.
    pub fn for_shares(scaled: u64) -> Self {
        LoadWeight { scaled, ..Self::for_load(scale_load_down(scaled)) }
    }

    /// The weight of a run queue's total load, whose inverse the kernel computes on
    /// demand (`__update_inv_weight`).
    pub fn for_load(weight: u64) -> Self {
        let inv_weight = if weight >= WMULT_CONST {
            1
        } else {
            WMULT_CONST.checked_div(weight).map_or(WMULT_CONST as u32, |inv| inv as u32)
        };
        LoadWeight { weight, inv_weight, scaled: weight << SCHED_FIXEDPOINT_SHIFT }
    }
}

/// `__calc_delta`: `delta * weight / lw.weight` in fixed point, with the kernel's shifts
/// so that the product never overflows 64 bits and the rounding is the kernel's.
pub fn calc_delta(delta: u64, weight: u64, lw: LoadWeight) -> u64 {
    let mut fact = weight;
    let mut shift = WMULT_SHIFT;
    let fact_hi = (fact >> 32) as u32;
    if fact_hi != 0 {
        let fs = 32 - fact_hi.leading_zeros();
        shift -= fs;
        fact >>= fs;
    }
    fact = (fact & 0xffff_ffff) * u64::from(lw.inv_weight);
    let fact_hi = (fact >> 32) as u32;
    if fact_hi != 0 {
        let fs = 32 - fact_hi.leading_zeros();
        shift -= fs;
        fact >>= fs;
    }
    ((u128::from(delta) * u128::from(fact)) >> shift) as u64
}

/// `calc_delta_fair`: real time `delta` as virtual time of an entity of weight `lw`.
pub fn calc_delta_fair(delta: u64, lw: LoadWeight) -> u64 {
    if lw.weight == NICE_0_LOAD {
        delta
    } else {
        calc_delta(delta, NICE_0_LOAD, lw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wmult_is_the_inverse_of_weight() {
        for i in 0..40 {
            let exact = (1u64 << 32) / PRIO_TO_WEIGHT[i];
            let d = exact.abs_diff(u64::from(PRIO_TO_WMULT[i]));
            assert!(d <= 1, "nice {}: {} vs {}", i as i32 - 20, exact, PRIO_TO_WMULT[i]);
        }
    }

    #[test]
    fn neighbouring_nice_levels_are_about_1_25_apart() {
        for i in 0..39 {
            let r = PRIO_TO_WEIGHT[i] as f64 / PRIO_TO_WEIGHT[i + 1] as f64;
            assert!((1.2..1.3).contains(&r), "nice {}: ratio {r}", i as i32 - 20);
        }
    }

    #[test]
    fn calc_delta_matches_exact_division_closely() {
        let nice1 = LoadWeight::for_task(1, false);
        // 1 ms of a nice-1 task is 1024/820 ms of virtual time.
        let v = calc_delta_fair(1_000_000, nice1);
        assert!(v.abs_diff(1_248_780) <= 2, "{v}");
        let load = LoadWeight::for_load(1024 + 820);
        let slice = calc_delta(6_000_000, 1024, load);
        assert!(slice.abs_diff(6_000_000 * 1024 / 1844) <= 2, "{slice}");
        assert_eq!(calc_delta_fair(12345, LoadWeight::for_task(0, false)), 12345);
        let idle = LoadWeight::for_task(0, true);
        assert!(calc_delta_fair(3, idle).abs_diff(1024) <= 1);
    }
}

//! SWAP's confidence arithmetic (paper 004, sections 3.1 and 5): the parameters K, T and
//! L, the feedback state of one provider, and the indirect confidence of a chain.

use std::collections::BTreeMap;

use schedlab_model::{Ns, Resource, NSEC_PER_MSEC};
use serde::{Deserialize, Serialize};

/// The configurable parameters of SWAP, with the defaults of the paper's prototype
/// (section 5: "the default values of L, K, and T were set to 20, 20, and 20 ms").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SwapParams {
    /// K, the base confidence a provider gets when it joins a provider list; feedback
    /// keeps its confidence within `0..=2K`, and an indirect confidence is divided by K.
    pub k: u32,
    /// T, the confidence quantum in nanoseconds: a provider loses one unit of confidence
    /// for every T it runs while a requester waits without being provided for.
    pub t_ns: Ns,
    /// L, the most providers a resource object keeps; `0` means no limit (the paper
    /// applies the limit "when this parameter L is set").
    pub list_limit: usize,
    /// Buckets of the resource object hash table. The paper does not give its size;
    /// 1024 buckets keep chains short for thousands of objects.
    pub table_size: usize,
    /// K and T for one kind of resource, keyed by [`Resource::kind`] (`socket`, `pipe`,
    /// `fifo`, `sysv_msg`, `sysv_sem`, `flock`, `signal`): the paper lets both "be
    /// configured on a per resource basis".
    pub per_kind: BTreeMap<String, KindParams>,
}

/// K and T for one kind of resource (see [`SwapParams::per_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindParams {
    /// The base confidence K for this kind.
    pub k: u32,
    /// The confidence quantum T for this kind, in nanoseconds.
    pub t_ns: Ns,
}

impl Default for SwapParams {
    fn default() -> Self {
        SwapParams {
            k: 20,
            t_ns: 20 * NSEC_PER_MSEC,
            list_limit: 20,
            table_size: 1024,
            per_kind: BTreeMap::new(),
        }
    }
}

impl SwapParams {
    /// K and T for `resource`: its kind's override, else the global values.
    pub fn for_resource(&self, resource: &Resource) -> KindParams {
        self.per_kind.get(resource.kind()).copied().unwrap_or(KindParams { k: self.k, t_ns: self.t_ns })
    }

    /// Checks that the arithmetic is defined: K ≥ 1 (it divides indirect confidences),
    /// T ≥ 1 ns (it divides running time) and at least one hash bucket.
    pub fn check(&self) -> Result<(), SwapParamsError> {
        let kinds = std::iter::once((None, KindParams { k: self.k, t_ns: self.t_ns }))
            .chain(self.per_kind.iter().map(|(name, p)| (Some(name), *p)));
        for (kind, p) in kinds {
            if p.k == 0 {
                return Err(SwapParamsError::ZeroK { kind: kind.cloned() });
            }
            if p.t_ns == 0 {
                return Err(SwapParamsError::ZeroT { kind: kind.cloned() });
            }
        }
        if self.table_size == 0 {
            return Err(SwapParamsError::ZeroTableSize);
        }
        Ok(())
    }
}

/// Why [`SwapParams::check`] refused the parameters: a value that would divide by zero.
/// `kind` is the resource kind whose override is at fault (`None`: the global value).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SwapParamsError {
    /// A base confidence K is 0.
    #[error("SWAP base confidence K{} is 0; it must be at least 1", of_kind(.kind))]
    ZeroK { kind: Option<String> },
    /// A confidence quantum T is 0 ns.
    #[error("SWAP confidence quantum T{} is 0 ns; it must be at least 1 ns", of_kind(.kind))]
    ZeroT { kind: Option<String> },
    /// The resource object hash table has no bucket.
    #[error("SWAP hash table size is 0; it must be at least 1 bucket")]
    ZeroTableSize,
}

/// ` of kind NAME` for a per-kind parameter, nothing for a global one.
fn of_kind(kind: &Option<String>) -> String {
    kind.as_ref().map_or(String::new(), |name| format!(" of kind {name}"))
}

/// The three groups a provider list is kept in (section 3.1): above, at, or below the
/// base confidence K. The list limit L evicts from the lowest non-empty group first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Confidence below K: providers that ran without providing.
    Low,
    /// Confidence exactly K: new providers, or providers whose feedback evened out.
    Default,
    /// Confidence above K: providers that provided more often than they failed.
    High,
}

impl Category {
    /// The group of a provider with confidence `value` when the base is `k`.
    pub fn of(value: u32, k: u32) -> Category {
        match value.cmp(&k) {
            std::cmp::Ordering::Less => Category::Low,
            std::cmp::Ordering::Equal => Category::Default,
            std::cmp::Ordering::Greater => Category::High,
        }
    }
}

/// The feedback state of one provider on one resource object: its confidence value and
/// the running time it has accumulated towards its next negative feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confidence {
    value: u32,
    ran_ns: Ns,
    /// When the last quantum ended exactly at the end of a charge, with a decrement: a
    /// reward at that same instant undoes it (the provider provided within the quantum).
    quantum_ended_at: Option<Ns>,
}

impl Confidence {
    /// A new provider's confidence: the base K, nothing run yet.
    pub fn base(k: u32) -> Self {
        Confidence { value: k, ran_ns: 0, quantum_ended_at: None }
    }

    /// A new provider's confidence starting at `value` (clamped to `0..=2K`): what was
    /// learned of the same program as a provider of the same kind in earlier runs.
    pub fn starting_at(value: u32, k: u32) -> Self {
        Confidence { value: value.min(2 * k), ..Confidence::base(k) }
    }

    /// The confidence value, within `0..=2K`.
    pub fn value(&self) -> u32 {
        self.value
    }

    /// Running time, since the last feedback, that has not yet amounted to a whole
    /// quantum T (always below T).
    pub fn ran_ns(&self) -> Ns {
        self.ran_ns
    }

    /// Whether the provider is still considered: a confidence of zero drops it out of
    /// every decision (it stays listed, so positive feedback can bring it back).
    pub fn considered(&self) -> bool {
        self.value > 0
    }

    /// Positive feedback at time `now`: the provider woke a requester. One more unit
    /// (capped at 2K), and a new quantum starts. A quantum that ended exactly at `now`
    /// was not run "without providing": its decrement is undone first. Returns whether
    /// the value changed.
    pub fn reward(&mut self, k: u32, now: Ns) -> bool {
        let old = self.value;
        if self.quantum_ended_at.take() == Some(now) {
            self.value += 1;
        }
        self.ran_ns = 0;
        self.value = (self.value + 1).min(2 * k);
        self.value != old
    }

    /// Negative feedback: the provider ran `ns` more, up to time `now`, while a
    /// requester waited. One unit less for every whole quantum `t_ns` accumulated (not
    /// below 0); the remainder is kept for the next call. Returns whether the value
    /// changed.
    pub fn charge(&mut self, ns: Ns, t_ns: Ns, now: Ns) -> bool {
        let total = self.ran_ns + ns;
        let quanta = u32::try_from(total / t_ns).unwrap_or(u32::MAX);
        self.ran_ns = total % t_ns;
        let old = self.value;
        self.value = self.value.saturating_sub(quanta);
        if quanta > 0 {
            // The last quantum ends exactly now, and took a unit off: undoable.
            let last_took_one = old >= quanta;
            self.quantum_ended_at = (self.ran_ns == 0 && last_took_one).then_some(now);
        }
        self.value != old
    }

    /// The running time left before the next negative feedback, with quantum `t_ns`.
    pub fn quantum_left(&self, t_ns: Ns) -> Ns {
        t_ns - self.ran_ns
    }
}

/// The indirect confidence `C(P, P2, R) = C(P, P1, R) · C(P1, P2, R1) / K` of a provider
/// P2 reached through a blocked provider P1 (section 3.1), where `outer` is the
/// (possibly already indirect) confidence of P1 for P, `inner` that of P2 for P1, and
/// `k` the base of `inner`'s resource R1. Integer arithmetic, rounding down, as a
/// kernel would compute it.
pub fn indirect(outer: u32, inner: u32, k: u32) -> u32 {
    u32::try_from(u64::from(outer) * u64::from(inner) / u64::from(k)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers() {
        let p = SwapParams::default();
        assert_eq!((p.k, p.t_ns, p.list_limit), (20, 20_000_000, 20));
        assert_eq!(p.check(), Ok(()));
    }

    #[test]
    fn per_kind_parameters_override_the_global_ones() {
        let mut p = SwapParams::default();
        p.per_kind.insert("sysv_sem".into(), KindParams { k: 10, t_ns: 200 * NSEC_PER_MSEC });
        let sem = p.for_resource(&Resource::SysvSem { id: 1, num: 0 });
        assert_eq!((sem.k, sem.t_ns), (10, 200_000_000));
        let pipe = p.for_resource(&Resource::Pipe { inode: 1, write: false });
        assert_eq!((pipe.k, pipe.t_ns), (20, 20_000_000));
    }

    #[test]
    fn check_rejects_undefined_arithmetic() {
        let says = |p: SwapParams| p.check().unwrap_err().to_string();
        assert!(says(SwapParams { k: 0, ..Default::default() }).contains("K is 0"));
        assert!(says(SwapParams { t_ns: 0, ..Default::default() }).contains("T is 0"));
        assert!(SwapParams { table_size: 0, ..Default::default() }.check().is_err());
        let mut p = SwapParams::default();
        p.per_kind.insert("flock".into(), KindParams { k: 0, t_ns: 1 });
        assert!(says(p).contains("of kind flock"));
    }

    #[test]
    fn reward_adds_one_up_to_twice_k() {
        let mut c = Confidence::base(3);
        c.charge(5, 10, 5);
        assert!(c.reward(3, 5));
        assert_eq!((c.value(), c.ran_ns()), (4, 0), "a reward restarts the quantum");
        assert!(c.reward(3, 6));
        assert_eq!(c.value(), 5);
        assert!(c.reward(3, 7));
        assert_eq!(c.value(), 6);
        assert!(!c.reward(3, 8), "2K is the ceiling");
        assert_eq!(c.value(), 6);
    }

    #[test]
    fn charge_takes_one_per_whole_quantum_and_keeps_the_rest() {
        let mut c = Confidence::base(20);
        assert!(!c.charge(99, 100, 99));
        assert_eq!((c.value(), c.ran_ns(), c.quantum_left(100)), (20, 99, 1));
        assert!(c.charge(1, 100, 100));
        assert_eq!((c.value(), c.ran_ns()), (19, 0));
        assert!(c.charge(350, 100, 450));
        assert_eq!((c.value(), c.ran_ns()), (16, 50));
    }

    #[test]
    fn providing_exactly_at_the_end_of_a_quantum_is_in_time() {
        let mut c = Confidence::base(20);
        assert!(c.charge(300, 100, 300));
        assert_eq!(c.value(), 17);
        assert!(c.reward(20, 300), "at the same instant");
        assert_eq!((c.value(), c.ran_ns()), (19, 0), "the third quantum's unit is given back, then +1");
        c.charge(100, 100, 400);
        c.reward(20, 401);
        assert_eq!(c.value(), 19, "a nanosecond later the quantum was spent without providing");
        c.charge(150, 100, 551);
        c.reward(20, 551);
        assert_eq!(c.value(), 19, "the quantum ended before this instant");
        // A quantum that ended at zero took nothing: nothing to give back.
        let mut z = Confidence::base(1);
        z.charge(200, 100, 200);
        assert_eq!(z.value(), 0);
        z.reward(1, 200);
        assert_eq!(z.value(), 1);
    }

    #[test]
    fn charge_stops_at_zero_and_zero_drops_out() {
        let mut c = Confidence::base(2);
        assert!(c.considered());
        c.charge(10_000, 1, 10_000);
        assert_eq!(c.value(), 0);
        assert!(!c.considered());
        assert!(!c.charge(5, 1, 10_005), "no lower than zero");
        assert!(c.reward(2, 20_000));
        assert!(c.considered(), "positive feedback brings a dropped provider back");
    }

    #[test]
    fn indirect_is_the_product_over_k() {
        assert_eq!(indirect(20, 20, 20), 20);
        assert_eq!(indirect(19, 21, 20), 19, "399 / 20 rounds down");
        assert_eq!(indirect(40, 40, 20), 80, "a confident chain can beat a direct provider");
        assert_eq!(indirect(1, 1, 20), 0);
        assert_eq!(indirect(u32::MAX, u32::MAX, 1), u32::MAX);
    }

    #[test]
    fn categories_split_at_k() {
        assert_eq!(Category::of(19, 20), Category::Low);
        assert_eq!(Category::of(20, 20), Category::Default);
        assert_eq!(Category::of(21, 20), Category::High);
        assert!(Category::Low < Category::Default && Category::Default < Category::High);
    }
}

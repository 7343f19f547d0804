//! A set of CPU numbers (`struct cpumask`): one bit per CPU in 64-bit words, as many
//! words as the machine needs, so the number of CPUs is bounded only by memory.

/// A set of CPUs of a machine with a fixed number of CPUs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CpuSet {
    words: Vec<u64>,
}

impl CpuSet {
    /// The empty set on a machine of `cpus` CPUs.
    pub fn empty(cpus: u32) -> Self {
        CpuSet { words: vec![0; (cpus as usize).div_ceil(64)] }
    }

    /// Every CPU of a machine of `cpus` CPUs.
    pub fn full(cpus: u32) -> Self {
        let mut s = CpuSet::empty(cpus);
        for c in 0..cpus {
            s.insert(c);
        }
        s
    }

    /// The set of `members` on a machine of `cpus` CPUs (each member below `cpus`).
    pub fn of(cpus: u32, members: impl IntoIterator<Item = u32>) -> Self {
        let mut s = CpuSet::empty(cpus);
        for c in members {
            s.insert(c);
        }
        s
    }

    pub fn contains(&self, cpu: u32) -> bool {
        self.words.get(cpu as usize / 64).is_some_and(|w| w & (1 << (cpu % 64)) != 0)
    }

    /// Adds `cpu`; it must be below the machine's CPU count.
    pub fn insert(&mut self, cpu: u32) {
        self.words[cpu as usize / 64] |= 1 << (cpu % 64);
    }

    pub fn remove(&mut self, cpu: u32) {
        if let Some(w) = self.words.get_mut(cpu as usize / 64) {
            *w &= !(1 << (cpu % 64));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The number of CPUs in the set.
    pub fn count(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// The lowest CPU in the set.
    pub fn first(&self) -> Option<u32> {
        let (i, w) = self.words.iter().enumerate().find(|(_, &w)| w != 0)?;
        Some(i as u32 * 64 + w.trailing_zeros())
    }

    /// The lowest CPU that is in both sets.
    pub fn first_common(&self, other: &CpuSet) -> Option<u32> {
        self.words.iter().zip(&other.words).enumerate().find_map(|(i, (&a, &b))| {
            let w = a & b;
            (w != 0).then(|| i as u32 * 64 + w.trailing_zeros())
        })
    }

    /// Whether the sets share a CPU.
    pub fn intersects(&self, other: &CpuSet) -> bool {
        self.first_common(other).is_some()
    }

    /// The CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    i as u32 * 64 + b
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_span_many_words() {
        let mut s = CpuSet::empty(1024);
        assert!(s.is_empty());
        for c in [0, 63, 64, 700, 1023] {
            s.insert(c);
        }
        assert_eq!(s.count(), 5);
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 63, 64, 700, 1023]);
        assert!(s.contains(700) && !s.contains(701) && !s.contains(5000));
        s.remove(0);
        assert_eq!(s.first(), Some(63));
        let other = CpuSet::of(1024, [1, 700]);
        assert_eq!(s.first_common(&other), Some(700));
        assert!(!CpuSet::of(1024, [1]).intersects(&s));
        assert_eq!(CpuSet::full(130).count(), 130);
        assert!(!CpuSet::full(130).contains(130));
    }
}

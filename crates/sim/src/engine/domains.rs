//! Sched domains built from the topology as `build_sched_domains()` builds them with the
//! default topology table: SMT (the threads of a core) → MC (the CPUs sharing an LLC)
//! → PKG (the CPUs of a node, `cpu_cpu_mask`) → NUMA (the whole machine, when there is
//! more than one node). A level whose span equals its child's, or that has a single
//! group, degenerates and is left out (`sd_degenerate`, `sd_parent_degenerate`). The
//! groups of a domain are its child level's spans (single CPUs at SMT).
//!
//! Simplified: one NUMA level (every remote node at the same distance, as on a machine
//! with a fully connected interconnect); no asymmetric capacities, clusters or
//! overlapping NUMA groups.

use schedlab_model::Ns;

use crate::cpuset::CpuSet;
use crate::topology::Topology;

/// A domain level of the default topology table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Smt,
    Mc,
    Pkg,
    Numa,
}

/// What CPUs of one span of a level have in common.
type LevelKey = fn(&Topology, u32) -> u32;

/// A domain's group (`struct sched_group`): the CPUs of one child span.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    /// Its CPUs in increasing order.
    pub cpus: Vec<u32>,
    /// The number of cores among them (`sg->cores`).
    pub cores: u32,
    /// The unit this group is, for its shared imbalance flag (`sgc->imbalance`).
    pub unit: u32,
}

/// One sched domain, shared by the CPUs it spans; the per-CPU balancing state is in
/// [`CpuDomain`].
#[derive(Clone, Debug)]
pub(crate) struct Domain {
    pub level: Level,
    pub span: CpuSet,
    pub weight: u32,
    pub groups: Vec<Group>,
    /// The unit this domain's span is (its flag is read by the parent as a group).
    pub unit: u32,
    /// `imbalance_pct`: 110 at SMT, 117 above.
    pub imbalance_pct: u64,
    /// `cache_nice_tries`: failed balances before cache-hot tasks may move.
    pub cache_nice_tries: u32,
    /// `imb_numa_nr`: tasks a NUMA (or multi-LLC) domain lets stay imbalanced.
    pub imb_numa_nr: u32,
    /// Whether the child domain has `SD_PREFER_SIBLING` (spread tasks over groups).
    pub prefer_sibling: bool,
}

impl Domain {
    /// `SD_SHARE_CPUCAPACITY`: the SMT level.
    pub fn shares_capacity(&self) -> bool {
        self.level == Level::Smt
    }

    /// `SD_SHARE_LLC`: SMT and MC.
    pub fn shares_llc(&self) -> bool {
        self.level <= Level::Mc
    }

    /// `SD_NUMA`.
    pub fn numa(&self) -> bool {
        self.level == Level::Numa
    }

    /// `min_interval` in ms: the span's weight (`sd_init`); `max_interval` is twice it.
    pub fn min_interval_ms(&self) -> u64 {
        u64::from(self.weight)
    }
}

/// A CPU's view of one of its domains (the kernel's per-CPU `struct sched_domain`).
#[derive(Clone, Debug)]
pub(crate) struct CpuDomain {
    pub domain: u32,
    /// The index of the group holding this CPU in the domain's groups.
    pub local: u32,
    pub last_balance: Ns,
    /// `balance_interval` in ms.
    pub interval_ms: u64,
    pub nr_balance_failed: u32,
}

/// Every domain of the machine and each CPU's chain of them, bottom-up; with the LLC
/// and core layout the wake-up path needs.
#[derive(Clone, Debug)]
pub(crate) struct Domains {
    pub domains: Vec<Domain>,
    pub per_cpu: Vec<Vec<CpuDomain>>,
    /// Per CPU: its LLC id; per LLC: its CPUs in increasing order; per CPU: its index
    /// there.
    pub llc: Vec<u32>,
    pub llc_cpus: Vec<Vec<u32>>,
    pub llc_pos: Vec<u32>,
    /// Per CPU: its core id; per core: its SMT threads.
    pub core: Vec<u32>,
    pub core_cpus: Vec<Vec<u32>>,
    /// Whether any core has more than one thread.
    pub smt: bool,
    /// How many units (group spans) there are, for per-group flags.
    pub units: u32,
}

impl Domains {
    pub fn build(topo: &Topology) -> Self {
        let n = topo.cpus();
        let (_, llcs, cores, _) = topo.counts();
        let nodes_many = topo.counts().0 > 1;
        let mut llc_cpus = vec![Vec::new(); llcs as usize];
        let mut core_cpus = vec![Vec::new(); cores as usize];
        let (mut llc, mut core, mut llc_pos) = (Vec::new(), Vec::new(), Vec::new());
        for c in 0..n {
            let p = topo.place(c);
            llc.push(p.llc);
            core.push(p.core);
            llc_pos.push(llc_cpus[p.llc as usize].len() as u32);
            llc_cpus[p.llc as usize].push(c);
            core_cpus[p.core as usize].push(c);
        }
        let smt = core_cpus.iter().any(|c| c.len() > 1);

        // Units level by level: single CPUs, then cores, LLCs, nodes and the machine,
        // each a list of (unit id, CPUs); `unit_of[c]` is CPU c's unit at the last level.
        let mut units = n;
        let mut unit_of: Vec<u32> = (0..n).collect();
        let (mut lower, mut lower_first): (Vec<Vec<u32>>, u32) = ((0..n).map(|c| vec![c]).collect(), 0);
        let mut domains: Vec<Domain> = Vec::new();
        let mut per_cpu: Vec<Vec<CpuDomain>> = vec![Vec::new(); n as usize];
        let levels: &[(Level, LevelKey)] = &[
            (Level::Smt, |t, c| t.place(c).core),
            (Level::Mc, |t, c| t.place(c).llc),
            (Level::Pkg, |t, c| t.place(c).node),
            (Level::Numa, |_, _| 0),
        ];
        for &(level, key) in levels {
            if level == Level::Numa && !nodes_many {
                break;
            }
            // The spans of this level, keyed by the topology, in order of first CPU.
            let mut index = std::collections::HashMap::new();
            let mut spans: Vec<Vec<u32>> = Vec::new();
            let mut span_of = Vec::with_capacity(n as usize);
            for c in 0..n {
                let i = *index.entry(key(topo, c)).or_insert_with(|| {
                    spans.push(Vec::new());
                    spans.len() - 1
                });
                spans[i].push(c);
                span_of.push(i as u32);
            }
            let first_unit = units;
            units += spans.len() as u32;
            for (i, cpus) in spans.iter().enumerate() {
                // Its groups: the lower level's spans within it, in order of first CPU.
                let mut groups: Vec<Group> = Vec::new();
                for &c in cpus {
                    let u = unit_of[c as usize];
                    if !groups.iter().any(|g| g.unit == u) {
                        let members = lower[(u - lower_first) as usize].clone();
                        let mut group_cores: Vec<u32> = members.iter().map(|&m| core[m as usize]).collect();
                        group_cores.sort_unstable();
                        group_cores.dedup();
                        groups.push(Group { cpus: members, cores: group_cores.len() as u32, unit: u });
                    }
                }
                if groups.len() < 2 {
                    continue; // degenerate
                }
                let id = domains.len() as u32;
                let child_prefers = cpus
                    .first()
                    .and_then(|&c| per_cpu[c as usize].last())
                    .is_some_and(|cd| domains[cd.domain as usize].level != Level::Numa);
                domains.push(Domain {
                    level,
                    span: CpuSet::of(n, cpus.iter().copied()),
                    weight: cpus.len() as u32,
                    groups,
                    unit: first_unit + i as u32,
                    imbalance_pct: if level == Level::Smt { 110 } else { 117 },
                    cache_nice_tries: match level {
                        Level::Smt => 0,
                        Level::Mc | Level::Pkg => 1,
                        Level::Numa => 2,
                    },
                    imb_numa_nr: 0,
                    prefer_sibling: child_prefers,
                });
                for &c in cpus {
                    let d = &domains[id as usize];
                    let local =
                        d.groups.iter().position(|g| g.unit == unit_of[c as usize]).expect("a group holds c");
                    per_cpu[c as usize].push(CpuDomain {
                        domain: id,
                        local: local as u32,
                        last_balance: 0,
                        interval_ms: d.min_interval_ms(),
                        nr_balance_failed: 0,
                    });
                }
            }
            lower = spans;
            lower_first = first_unit;
            unit_of = span_of.iter().map(|&i| first_unit + i).collect();
        }
        let mut d = Domains { domains, per_cpu, llc, llc_cpus, llc_pos, core, core_cpus, smt, units };
        d.set_imb_numa_nr();
        d
    }

    /// `imb_numa_nr` as `build_sched_domains` sets it: at the first level above the
    /// LLC, an eighth of its span with one LLC per child, else its number of LLCs; above
    /// that, scaled by how many of the first NUMA domain's spans it covers.
    fn set_imb_numa_nr(&mut self) {
        for cpu in 0..self.per_cpu.len() {
            let chain: Vec<u32> = self.per_cpu[cpu].iter().map(|cd| cd.domain).collect();
            let (mut imb, mut imb_span) = (0u32, 1u32);
            for (i, &d) in chain.iter().enumerate() {
                let child = i.checked_sub(1).map(|j| chain[j]);
                let (weight, shares_llc) =
                    (self.domains[d as usize].weight, self.domains[d as usize].shares_llc());
                let child_llc = child.filter(|&c| self.domains[c as usize].shares_llc());
                let value = if let (false, Some(c)) = (shares_llc, child_llc) {
                    let nr_llcs = weight / self.domains[c as usize].weight;
                    imb = if nr_llcs == 1 { weight >> 3 } else { nr_llcs }.max(1);
                    let top_numa = chain[i..].iter().find(|&&p| self.domains[p as usize].numa());
                    imb_span = top_numa.map_or(weight, |&p| self.domains[p as usize].weight);
                    imb
                } else {
                    imb * (weight / imb_span).max(1)
                };
                self.domains[d as usize].imb_numa_nr = value;
            }
        }
    }

    /// Whether `a` and `b` share a last-level cache (`cpus_share_cache`).
    pub fn share_cache(&self, a: u32, b: u32) -> bool {
        self.llc[a as usize] == self.llc[b as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(d: &Domains, cpu: u32) -> Vec<(Level, Vec<u32>)> {
        d.per_cpu[cpu as usize]
            .iter()
            .map(|cd| {
                let dom = &d.domains[cd.domain as usize];
                (dom.level, dom.span.iter().collect())
            })
            .collect()
    }

    #[test]
    fn a_flat_machine_has_one_mc_domain_of_single_cpus() {
        let d = Domains::build(&Topology::flat(2));
        assert_eq!(chain(&d, 0), [(Level::Mc, vec![0, 1])]);
        let mc = &d.domains[0];
        assert_eq!(mc.groups.iter().map(|g| g.cpus.clone()).collect::<Vec<_>>(), [vec![0], vec![1]]);
        assert!(!mc.prefer_sibling, "no child domain");
        assert!(!d.smt);
        assert!(Domains::build(&Topology::flat(1)).per_cpu[0].is_empty());
    }

    #[test]
    fn two_nodes_of_16_smt_cores_have_smt_mc_numa() {
        let d = Domains::build(&Topology::parse_spec("2x16x2").unwrap());
        let c = chain(&d, 5);
        assert_eq!(c.iter().map(|(l, _)| *l).collect::<Vec<_>>(), [Level::Smt, Level::Mc, Level::Numa]);
        // CPU 5's SMT sibling is 37; its LLC (and node) is CPUs 0-15 and 32-47.
        assert_eq!(c[0].1, [5, 37]);
        let node0: Vec<u32> = (0..16).chain(32..48).collect();
        assert_eq!(c[1].1, node0);
        assert_eq!(c[2].1, (0..64).collect::<Vec<_>>());
        let mc = &d.domains[d.per_cpu[5][1].domain as usize];
        assert_eq!(mc.groups.len(), 16);
        assert_eq!(mc.groups[d.per_cpu[5][1].local as usize].cpus, [5, 37]);
        assert_eq!(mc.groups[0].cores, 1);
        let numa = &d.domains[d.per_cpu[5][2].domain as usize];
        assert_eq!(numa.groups.len(), 2);
        assert_eq!(numa.groups[1].cpus, (16..32).chain(48..64).collect::<Vec<_>>());
        assert_eq!(numa.groups[1].cores, 16);
        // sd_init: SMT 110, above 117; cache_nice_tries 0, 1, 2; prefer sibling below NUMA.
        let smt = &d.domains[d.per_cpu[5][0].domain as usize];
        assert_eq!((smt.imbalance_pct, mc.imbalance_pct, numa.imbalance_pct), (110, 117, 117));
        assert_eq!((smt.cache_nice_tries, mc.cache_nice_tries, numa.cache_nice_tries), (0, 1, 2));
        assert!(!smt.prefer_sibling && mc.prefer_sibling && numa.prefer_sibling);
        // Two LLCs under the NUMA domain: imb_numa_nr = 2.
        assert_eq!(numa.imb_numa_nr, 2);
        assert!(d.share_cache(5, 47) && !d.share_cache(5, 16));
        assert_eq!(d.per_cpu[5][2].interval_ms, 64);
    }

    #[test]
    fn one_node_of_smt_cores_drops_pkg_and_numa() {
        let d = Domains::build(&Topology::parse_spec("1x4x2").unwrap());
        let c = chain(&d, 0);
        assert_eq!(c, [(Level::Smt, vec![0, 4]), (Level::Mc, (0..8).collect())]);
    }
}

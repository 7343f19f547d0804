//! The CPU distribution planner of paper 000 (the MSc thesis on behavior-based SMP
//! scheduling): once every process has a group (a class from classification or a
//! cluster), decide which CPU(s) each process may run on.
//!
//! The thesis (sections 3.5 and 4.5) uses *fair distribution*, "where each processor
//! core has same number of processes from each group", and after distribution "each
//! process will be bound to one processor core" (Table 4-7: on a dual-core machine each
//! core gets nearly half of the interactive and half of the background processes).
//! Bound to one core, a multi-threaded process loses its parallelism (a 2-thread `xz`
//! on one of two CPUs runs 1.8 times slower), so here a process is bound to a CPU *set*
//! of one CPU per thread, at most the class's CPUs; a single-threaded process gets one
//! CPU, as in the thesis. It
//! names two other distributions that users may want: a weighted split ("30% of group
//! A to processor 1 and 70% ..."), and real-time processes "on a separate processor".
//! Its pipe benchmarks (section 4.6 C) lose to the unmodified system "due to
//! communication overhead between different CPU cores", and its future work asks for
//! inter-communicating processes on the same core. This module implements the three
//! plans ([`Plan`]) plus that communication-aware co-location, as pure data in, data
//! out ([`plan`]); applying the result (affinity calls) is the actuator's job.
//!
//! Decisions where the thesis is vague, applied consistently:
//! - Classes are handled in name order, never in input order, and processes in a class
//!   with most CPUs first, then heaviest, then by id, so the result depends only on the
//!   input *sets* (shuffling classes, tasks or edges gives the same placements).
//! - How many CPUs a process needs comes from its thread count ([`PlanTask::threads`],
//!   cheap to read from /proc/PID/stat): an upper bound of what it can run at once, so
//!   giving it that many CPUs never limits its parallelism. A count taken from its
//!   recent activity would trap it instead: bound to one CPU, a process can never show
//!   that it could use two. A process with `k = min(threads, class CPUs)` gets `k`
//!   distinct CPUs of its class; its load is counted evenly on them.
//! - "Same number of processes from each group" counts *units*: a process bound to `k`
//!   CPUs is one unit on each of them (a single-threaded process is one unit, as in the
//!   thesis). Units are balanced per CPU to ±1 (Table 4-7 itself has 3 and 2 background
//!   processes): a process takes the `k` CPUs with the fewest units of the class, then
//!   the least loaded (all classes counted), then the lower CPU numbers. Taking the
//!   fewest keeps the ±1 whatever `k` is, so the order of the processes only matters
//!   for the load.
//! - A weighted split is a split of the class's *units* (the thesis speaks of
//!   percentages of a group; with single-threaded processes, units are processes),
//!   rounded by largest remainder into a quota per CPU. Processes needing several CPUs
//!   are placed first, each on the CPUs with the most quota left (then least loaded,
//!   then lower number): by Ryser's construction for 0-1 matrices with given row and
//!   column sums, this meets every quota whenever any placement can; single-CPU
//!   processes then fill the room left as before (the CPU whose quota is least filled).
//!   When no placement meets the quotas (a 2-thread process in a class whose shares
//!   give one CPU all its quota), the process still gets its `k` CPUs: the thread rule
//!   wins over the shares.
//! - Isolation ("a separate processor") keeps every other class off the isolated
//!   class's CPUs, except a class that would be left with no CPU at all: that class
//!   keeps its CPUs (the isolation is *waived* for it, see [`ClassCpus::waived`]), since
//!   a process with an empty CPU set cannot run.
//! - Co-location is attempted after the normal placement, so that the load check sees
//!   everything else already placed; it may break the ±1 balance of the classes
//!   involved, which is the trade the thesis's future work asks for.
//! - Only processes bound to a single CPU are co-located: a process bound to several
//!   CPUs (it has several threads) is never squeezed onto one, and its edges are ignored
//!   as an isolated process's are; the single-CPU processes it talks to may still be
//!   grouped among themselves.
//! - Loads that are negative or not finite count as 0.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

/// How one class's processes are distributed over the class's CPUs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Plan {
    /// The thesis's fair distribution: each process is bound to one CPU per thread (at
    /// most the class's CPUs) and every CPU of the class gets the same number of the
    /// class's processes (±1), a process counting once on each of its CPUs.
    FairShare,
    /// One share per CPU of the class's CPU list, in list order: `[3, 7]` puts 30 % of
    /// the class's processes on the first CPU and 70 % on the second, a process counting
    /// once on each of its CPUs (one per thread, at most the class's CPUs with a
    /// positive share). A share of 0 keeps the class off that CPU. The length must equal
    /// the class's CPU count (all online CPUs, ascending, when the class lists none); see
    /// [`check`].
    Weighted(Vec<u32>),
    /// The thesis's "real-time processes on a separate processor": the class's
    /// processes may run on any of the class's CPUs (not bound to one), and every other
    /// class is kept off those CPUs unless that would leave it with none.
    Isolate,
}

/// The distribution configuration of one class (process group).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassPlan {
    /// The class name, as in [`PlanTask::class`]; unique among the classes.
    pub name: String,
    /// The CPUs the class may use, all online, no duplicates; `None` means all online
    /// CPUs (ascending). The order matters only for [`Plan::Weighted`] shares.
    pub cpus: Option<Vec<u32>>,
    /// How the class's processes are spread over those CPUs.
    pub plan: Plan,
}

/// One process to place.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanTask {
    /// The process id; unique among the tasks.
    pub id: u32,
    /// Its class; a task whose class is not configured is not placed.
    pub class: String,
    /// How many CPUs it used recently (about 0..=1 per thread, more than 1 for a
    /// multithreaded process); used to balance and for the co-location load check.
    pub load: f64,
    /// How many threads it can run at once: the caller passes its thread count (an
    /// upper bound, see the module docs); 0 counts as 1. A fair-share or weighted
    /// process gets this many CPUs, at most its class's.
    pub threads: u32,
}

/// Communication between two processes (undirected), e.g. wakeups per second through
/// pipes or sockets. Several edges between the same pair add up (`a → b` and `b → a`
/// are the same pair).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// One process id.
    pub a: u32,
    /// The other process id (an edge from a process to itself is ignored).
    pub b: u32,
    /// How strongly they communicate; compared with [`PlanInput::min_edge_strength`].
    pub strength: f64,
}

/// Everything the planner looks at.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput<'a> {
    /// The online CPUs (order and duplicates do not matter).
    pub cpus: &'a [u32],
    /// The class configurations.
    pub classes: &'a [ClassPlan],
    /// The processes to place.
    pub tasks: &'a [PlanTask],
    /// Communication between processes, for co-location.
    pub edges: &'a [Edge],
    /// Pairs communicating less than this (summed over their edges) are not co-located.
    pub min_edge_strength: f64,
    /// Co-location may not push a CPU's total load (all classes) past this, e.g. 1.0.
    pub max_cpu_load: f64,
}

/// Where one process may run, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Placement {
    /// The process id.
    pub id: u32,
    /// Its class.
    pub class: String,
    /// The CPUs it may run on, ascending: one per thread, at most the class's, for fair
    /// share and weighted; all the class's CPUs when isolated; one when co-located.
    pub cpus: Vec<u32>,
    /// Which rule chose them.
    pub reason: PlacementReason,
}

/// Which rule of the planner chose a [`Placement`], for reports and debugging.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum PlacementReason {
    /// [`Plan::FairShare`]: the process was the `index_in_class`-th (0-based, most CPUs
    /// first, then heaviest, then by id) of its class's `class_size` processes, and got
    /// one CPU per thread (`threads`), at most the class's CPUs.
    FairShare {
        /// Position in the class's placement order.
        index_in_class: usize,
        /// Number of processes of the class.
        class_size: usize,
        /// The threads the planner counted for it (at least 1).
        threads: u32,
    },
    /// [`Plan::Weighted`]: as for fair share, on CPUs holding `share` of the class's
    /// `total_shares` (after isolation removed CPUs).
    Weighted {
        /// Position in the class's placement order.
        index_in_class: usize,
        /// Number of processes of the class.
        class_size: usize,
        /// The threads the planner counted for it (at least 1).
        threads: u32,
        /// The summed share of the chosen CPUs.
        share: u32,
        /// The sum of the class's shares over its usable CPUs.
        total_shares: u32,
    },
    /// [`Plan::Isolate`]: the process may use all of its class's CPUs.
    Isolated,
    /// Bound to the same CPU as the other `group_size - 1` processes it communicates
    /// with; `with` is its strongest partner (ties to the lower id), `strength` their
    /// summed edge strength.
    CoLocated {
        /// The strongest communication partner.
        with: u32,
        /// The summed strength of the edges between the two.
        strength: f64,
        /// How many processes were bound together.
        group_size: usize,
    },
}

/// The CPUs a class ends up with after isolation, as [`class_cpus`] reports them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClassCpus {
    /// The class name.
    pub name: String,
    /// The CPUs its processes may be placed on, ascending (for a weighted class only
    /// those with a positive share).
    pub cpus: Vec<u32>,
    /// For a weighted class, the share of each of `cpus`, aligned with it.
    pub shares: Option<Vec<u32>>,
    /// Isolated classes whose CPUs this class keeps because excluding them would leave
    /// it with no CPU (in name order).
    pub waived: Vec<String>,
}

/// Why a configuration cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The online CPU list is empty.
    #[error("no online CPUs")]
    NoOnlineCpus,
    /// Two classes have the same name.
    #[error("class {0:?} is configured twice")]
    DuplicateClass(String),
    /// A class lists no CPU.
    #[error("class {class:?} lists no CPU")]
    EmptyCpuSet {
        /// The class.
        class: String,
    },
    /// A class lists a CPU that is not online.
    #[error("class {class:?} lists CPU {cpu}, which is not online")]
    CpuNotOnline {
        /// The class.
        class: String,
        /// The CPU.
        cpu: u32,
    },
    /// A class lists a CPU twice.
    #[error("class {class:?} lists CPU {cpu} twice")]
    DuplicateCpu {
        /// The class.
        class: String,
        /// The CPU.
        cpu: u32,
    },
    /// A weighted class has not exactly one share per CPU.
    #[error("class {class:?} has {shares} shares for {cpus} CPUs")]
    ShareCount {
        /// The class.
        class: String,
        /// How many shares it has.
        shares: usize,
        /// How many CPUs it has.
        cpus: usize,
    },
    /// A weighted class's shares are all 0.
    #[error("class {class:?} has only zero shares")]
    ZeroShares {
        /// The class.
        class: String,
    },
    /// Two tasks have the same id.
    #[error("process {0} is listed twice")]
    DuplicateTask(u32),
}

/// Validates a configuration against the online CPUs without placing anything: every
/// check [`plan`] makes except for duplicate task ids. Useful when a configuration is
/// loaded, before any process is seen.
pub fn check(cpus: &[u32], classes: &[ClassPlan]) -> Result<(), PlanError> {
    let online: BTreeSet<u32> = cpus.iter().copied().collect();
    if online.is_empty() {
        return Err(PlanError::NoOnlineCpus);
    }
    let mut names = HashSet::new();
    for class in classes {
        if !names.insert(class.name.as_str()) {
            return Err(PlanError::DuplicateClass(class.name.clone()));
        }
        let count = match &class.cpus {
            None => online.len(),
            Some(list) => {
                if list.is_empty() {
                    return Err(PlanError::EmptyCpuSet { class: class.name.clone() });
                }
                let mut seen = HashSet::new();
                for &cpu in list {
                    if !online.contains(&cpu) {
                        return Err(PlanError::CpuNotOnline { class: class.name.clone(), cpu });
                    }
                    if !seen.insert(cpu) {
                        return Err(PlanError::DuplicateCpu { class: class.name.clone(), cpu });
                    }
                }
                list.len()
            }
        };
        if let Plan::Weighted(shares) = &class.plan {
            if shares.len() != count {
                return Err(PlanError::ShareCount {
                    class: class.name.clone(),
                    shares: shares.len(),
                    cpus: count,
                });
            }
            if shares.iter().all(|&s| s == 0) {
                return Err(PlanError::ZeroShares { class: class.name.clone() });
            }
        }
    }
    Ok(())
}

/// The kind of a class, without the shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Fair,
    Weighted,
    Isolate,
}

/// A class after validation and isolation.
#[derive(Clone, Debug)]
struct Resolved<'a> {
    name: &'a str,
    kind: Kind,
    /// The configured CPU set (what an isolating class reserves).
    configured: BTreeSet<u32>,
    /// (CPU, share) ascending by CPU, shares positive (1 for non-weighted classes).
    effective: Vec<(u32, u32)>,
    waived: Vec<String>,
}

impl Resolved<'_> {
    fn cpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.effective.iter().map(|&(cpu, _)| cpu)
    }
}

/// Validates, then applies isolation: classes in name order.
fn resolve<'a>(cpus: &[u32], classes: &'a [ClassPlan]) -> Result<Vec<Resolved<'a>>, PlanError> {
    check(cpus, classes)?;
    let online: Vec<u32> = cpus.iter().copied().collect::<BTreeSet<_>>().into_iter().collect();
    let mut sorted: Vec<&ClassPlan> = classes.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut resolved: Vec<Resolved<'a>> = sorted
        .into_iter()
        .map(|class| {
            let list = class.cpus.clone().unwrap_or_else(|| online.clone());
            let (kind, shares) = match &class.plan {
                Plan::FairShare => (Kind::Fair, vec![1; list.len()]),
                Plan::Weighted(shares) => (Kind::Weighted, shares.clone()),
                Plan::Isolate => (Kind::Isolate, vec![1; list.len()]),
            };
            let mut effective: Vec<(u32, u32)> =
                list.iter().copied().zip(shares).filter(|&(_, share)| share > 0).collect();
            effective.sort_unstable();
            Resolved {
                name: class.name.as_str(),
                kind,
                configured: list.into_iter().collect(),
                effective,
                waived: Vec::new(),
            }
        })
        .collect();
    let isolating: Vec<(String, BTreeSet<u32>)> = resolved
        .iter()
        .filter(|c| c.kind == Kind::Isolate)
        .map(|c| (c.name.to_owned(), c.configured.clone()))
        .collect();
    for class in &mut resolved {
        for (name, reserved) in &isolating {
            if name == class.name {
                continue;
            }
            let remaining: Vec<(u32, u32)> =
                class.effective.iter().copied().filter(|(cpu, _)| !reserved.contains(cpu)).collect();
            if remaining.is_empty() {
                class.waived.push(name.clone());
            } else {
                class.effective = remaining;
            }
        }
    }
    Ok(resolved)
}

/// The CPUs each class may use after isolation, in class-name order; errors as
/// [`check`].
pub fn class_cpus(input: &PlanInput) -> Result<Vec<ClassCpus>, PlanError> {
    Ok(resolve(input.cpus, input.classes)?
        .into_iter()
        .map(|c| ClassCpus {
            name: c.name.to_owned(),
            cpus: c.cpus().collect(),
            shares: (c.kind == Kind::Weighted).then(|| c.effective.iter().map(|&(_, s)| s).collect()),
            waived: c.waived,
        })
        .collect())
}

/// A load as the planner counts it.
fn clean_load(load: f64) -> f64 {
    if load.is_finite() && load > 0.0 {
        load
    } else {
        0.0
    }
}

/// Largest-remainder split of `n` units over `shares`; ties to the earlier entry.
fn quotas(n: usize, shares: &[u32]) -> Vec<usize> {
    let total: u64 = shares.iter().map(|&s| u64::from(s)).sum();
    let n64 = n as u64;
    let mut quota: Vec<usize> = shares.iter().map(|&s| (n64 * u64::from(s) / total) as usize).collect();
    let left = n - quota.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(n64 * u64::from(shares[i]) % total), i));
    for &i in order.iter().take(left) {
        quota[i] += 1;
    }
    quota
}

/// The `k` indices of `0..n` that come first by `order`, ascending (so the CPUs they
/// stand for are ascending too, as `Resolved::effective` is).
fn first(n: usize, k: usize, order: impl FnMut(&usize, &usize) -> Ordering) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    all.sort_by(order);
    all.truncate(k);
    all.sort_unstable();
    all
}

/// Minimal union-find over dense indices.
struct UnionFind(Vec<usize>);

impl UnionFind {
    fn find(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        // The smaller root wins, so groups do not depend on the union order.
        match ra.cmp(&rb) {
            Ordering::Less => self.0[rb] = ra,
            Ordering::Greater => self.0[ra] = rb,
            Ordering::Equal => {}
        }
    }
}

/// One process of a class, before placement.
struct Member {
    id: u32,
    load: f64,
    /// Its thread count, at least 1.
    threads: u32,
    /// How many CPUs it gets in a fair-share or weighted class: its threads, at most the
    /// class's CPUs (unused for an isolated class, whose processes get all its CPUs).
    width: usize,
}

/// One placed process while planning.
struct Slot {
    class: usize,
    load: f64,
    /// Its CPUs, ascending.
    cpus: Vec<u32>,
    reason: PlacementReason,
}

/// Plans the distribution: one [`Placement`] per task whose class is configured,
/// sorted by id. Deterministic: the same sets of CPUs, classes, tasks and edges give
/// the same placements whatever their order.
///
/// Steps: (1) validation ([`check`], plus duplicate task ids) and isolation (see
/// [`class_cpus`]); (2) isolated classes get all their CPUs, their load counted evenly
/// on them; (3) fair-share and weighted classes, in name order, bind each process (most
/// CPUs first, then heaviest, then by id) to `k` distinct CPUs, `k` its threads at most
/// the class's CPUs, its load counted evenly on them — fair share to the CPUs with the
/// fewest units of the class (a process is one unit on each of its CPUs), then the
/// least loaded, then the lower numbers; weighted by a largest-remainder quota of units
/// per CPU: a process with `k > 1` to the CPUs with the most quota left, then the least
/// loaded, then the lower numbers, a process with `k = 1` to the CPU with room whose
/// quota is least filled (ratio of units to quota), then the least loaded, then the
/// lower number; (4) co-location: processes bound to a single CPU of a fair-share or
/// weighted class, joined by pairs whose summed strength is at least
/// [`PlanInput::min_edge_strength`], are grouped (transitively), and each group —
/// strongest total first, then lowest id — is bound to one CPU common to all its
/// members' classes on which the group's load plus everything else already there stays
/// within [`PlanInput::max_cpu_load`]; among such CPUs the one already holding most of
/// the group's load wins, then the least loaded one, then the lower number. A group
/// with no such CPU keeps its step-3 placement. Pairs are only joined when their
/// classes' CPU sets overlap; edges to isolated, multi-CPU or unplaced processes are
/// ignored.
pub fn plan(input: &PlanInput) -> Result<Vec<Placement>, PlanError> {
    let classes = resolve(input.cpus, input.classes)?;
    let index: HashMap<&str, usize> = classes.iter().enumerate().map(|(i, c)| (c.name, i)).collect();

    let mut seen = HashSet::new();
    let mut members: Vec<Vec<Member>> = classes.iter().map(|_| Vec::new()).collect();
    for task in input.tasks {
        if !seen.insert(task.id) {
            return Err(PlanError::DuplicateTask(task.id));
        }
        if let Some(&ci) = index.get(task.class.as_str()) {
            let threads = task.threads.max(1);
            let width = (threads as usize).min(classes[ci].effective.len());
            members[ci].push(Member { id: task.id, load: clean_load(task.load), threads, width });
        }
    }
    for list in &mut members {
        list.sort_by(|a, b| b.width.cmp(&a.width).then(b.load.total_cmp(&a.load)).then(a.id.cmp(&b.id)));
    }

    let mut load: BTreeMap<u32, f64> = input.cpus.iter().map(|&cpu| (cpu, 0.0)).collect();
    let mut slots: BTreeMap<u32, Slot> = BTreeMap::new();

    // (2) Isolated classes.
    for (ci, class) in classes.iter().enumerate().filter(|(_, c)| c.kind == Kind::Isolate) {
        let n = class.effective.len() as f64;
        for m in &members[ci] {
            for cpu in class.cpus() {
                *load.get_mut(&cpu).expect("class CPUs are online") += m.load / n;
            }
            let cpus = class.cpus().collect();
            slots.insert(m.id, Slot { class: ci, load: m.load, cpus, reason: PlacementReason::Isolated });
        }
    }

    // (3) Fair-share and weighted classes.
    for (ci, class) in classes.iter().enumerate().filter(|(_, c)| c.kind != Kind::Isolate) {
        let list = &members[ci];
        let size = list.len();
        let n = class.effective.len();
        let shares: Vec<u32> = class.effective.iter().map(|&(_, s)| s).collect();
        let total_shares: u32 = shares.iter().sum();
        // The units each CPU should get, for a weighted class.
        let quota = quotas(list.iter().map(|m| m.width).sum(), &shares);
        // Units of the class per CPU, aligned with `class.effective`.
        let mut count = vec![0usize; n];
        for (k, m) in list.iter().enumerate() {
            let by_load_then_number = |x: &usize, y: &usize| {
                let (cx, cy) = (class.effective[*x].0, class.effective[*y].0);
                load[&cx].total_cmp(&load[&cy]).then(cx.cmp(&cy))
            };
            let chosen = match (class.kind, m.width) {
                (Kind::Isolate, _) => unreachable!("isolated classes were placed in step 2"),
                (Kind::Fair, _) => first(n, m.width, |x, y| {
                    count[*x].cmp(&count[*y]).then_with(|| by_load_then_number(x, y))
                }),
                (Kind::Weighted, 1) => {
                    let j = (0..n)
                        .filter(|&x| count[x] < quota[x])
                        .min_by(|x, y| {
                            (count[*x] * quota[*y])
                                .cmp(&(count[*y] * quota[*x]))
                                .then_with(|| by_load_then_number(x, y))
                        })
                        .expect("multi-CPU processes came first, so the room left covers the units left");
                    vec![j]
                }
                (Kind::Weighted, _) => {
                    let left = |j: usize| quota[j] as i64 - count[j] as i64;
                    first(n, m.width, |x, y| left(*y).cmp(&left(*x)).then_with(|| by_load_then_number(x, y)))
                }
            };
            let reason = if class.kind == Kind::Fair {
                PlacementReason::FairShare { index_in_class: k, class_size: size, threads: m.threads }
            } else {
                PlacementReason::Weighted {
                    index_in_class: k,
                    class_size: size,
                    threads: m.threads,
                    share: chosen.iter().map(|&j| shares[j]).sum(),
                    total_shares,
                }
            };
            let cpus: Vec<u32> = chosen.iter().map(|&j| class.effective[j].0).collect();
            for &j in &chosen {
                count[j] += 1;
            }
            for cpu in &cpus {
                *load.get_mut(cpu).expect("online") += m.load / cpus.len() as f64;
            }
            slots.insert(m.id, Slot { class: ci, load: m.load, cpus, reason });
        }
    }

    // (4) Communication-aware co-location.
    colocate(input, &classes, &mut slots);

    Ok(slots
        .into_iter()
        .map(|(id, slot)| Placement {
            id,
            class: classes[slot.class].name.to_owned(),
            cpus: slot.cpus,
            reason: slot.reason,
        })
        .collect())
}

/// Step (4) of [`plan`].
fn colocate(input: &PlanInput, classes: &[Resolved], slots: &mut BTreeMap<u32, Slot>) {
    // Summed strength per pair of bound processes; summed in sorted order so that the
    // float result does not depend on the edge order.
    let mut per_pair: BTreeMap<(u32, u32), Vec<f64>> = BTreeMap::new();
    for edge in input.edges {
        let movable = |id: u32| {
            slots.get(&id).is_some_and(|s| classes[s.class].kind != Kind::Isolate && s.cpus.len() == 1)
        };
        if edge.a != edge.b && movable(edge.a) && movable(edge.b) {
            per_pair.entry((edge.a.min(edge.b), edge.a.max(edge.b))).or_default().push(edge.strength);
        }
    }
    let overlap = |a: usize, b: usize| classes[a].cpus().any(|cpu| classes[b].cpus().any(|c| c == cpu));
    let pairs: Vec<((u32, u32), f64)> = per_pair
        .into_iter()
        .map(|(pair, mut strengths)| {
            strengths.sort_by(f64::total_cmp);
            (pair, strengths.iter().sum::<f64>())
        })
        .filter(|&((a, b), strength)| {
            strength >= input.min_edge_strength && overlap(slots[&a].class, slots[&b].class)
        })
        .collect();
    if pairs.is_empty() {
        return;
    }

    let ids: Vec<u32> =
        pairs.iter().flat_map(|&((a, b), _)| [a, b]).collect::<BTreeSet<_>>().into_iter().collect();
    let pos = |id: u32| ids.binary_search(&id).expect("listed");
    let mut uf = UnionFind((0..ids.len()).collect());
    for &((a, b), _) in &pairs {
        uf.union(pos(a), pos(b));
    }
    // Groups keyed by root (the group's lowest id, as the smaller root wins).
    let mut groups: BTreeMap<usize, (Vec<u32>, f64)> = BTreeMap::new();
    for (i, &id) in ids.iter().enumerate() {
        groups.entry(uf.find(i)).or_default().0.push(id);
    }
    for &((a, _), strength) in &pairs {
        groups.get_mut(&uf.find(pos(a))).expect("grouped").1 += strength;
    }
    let mut groups: Vec<(Vec<u32>, f64)> = groups.into_values().collect();
    groups.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0[0].cmp(&y.0[0])));

    for (group, _) in groups {
        let in_group: BTreeSet<u32> = group.iter().copied().collect();
        let group_load: f64 = group.iter().map(|id| slots[id].load).sum();
        let mut candidates: BTreeSet<u32> = classes[slots[&group[0]].class].cpus().collect();
        for id in &group[1..] {
            let own: BTreeSet<u32> = classes[slots[id].class].cpus().collect();
            candidates.retain(|cpu| own.contains(cpu));
        }
        // (CPU, load of the group already there, load of everything else there).
        let best = candidates
            .into_iter()
            .map(|cpu| {
                let (mut mine, mut other) = (0.0, 0.0);
                for (id, slot) in slots.iter() {
                    let on_cpu =
                        if slot.cpus.contains(&cpu) { slot.load / slot.cpus.len() as f64 } else { 0.0 };
                    if in_group.contains(id) {
                        mine += on_cpu;
                    } else {
                        other += on_cpu;
                    }
                }
                (cpu, mine, other)
            })
            .filter(|&(_, _, other)| other + group_load <= input.max_cpu_load)
            .min_by(|x, y| y.1.total_cmp(&x.1).then(x.2.total_cmp(&y.2)).then(x.0.cmp(&y.0)));
        let Some((cpu, _, _)) = best else { continue };
        for &id in &group {
            let (with, strength) = pairs
                .iter()
                .filter_map(|&((a, b), s)| match (a == id, b == id) {
                    (true, _) => Some((b, s)),
                    (_, true) => Some((a, s)),
                    _ => None,
                })
                .min_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)))
                .expect("every group member has a qualifying pair");
            let slot = slots.get_mut(&id).expect("placed");
            slot.cpus = vec![cpu];
            slot.reason = PlacementReason::CoLocated { with, strength, group_size: group.len() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn class(name: &str, cpus: Option<&[u32]>, plan: Plan) -> ClassPlan {
        ClassPlan { name: name.into(), cpus: cpus.map(<[u32]>::to_vec), plan }
    }

    fn task(id: u32, class: &str, load: f64) -> PlanTask {
        threaded(id, class, load, 1)
    }

    fn threaded(id: u32, class: &str, load: f64, threads: u32) -> PlanTask {
        PlanTask { id, class: class.into(), load, threads }
    }

    fn input<'a>(
        cpus: &'a [u32],
        classes: &'a [ClassPlan],
        tasks: &'a [PlanTask],
        edges: &'a [Edge],
    ) -> PlanInput<'a> {
        PlanInput { cpus, classes, tasks, edges, min_edge_strength: 10.0, max_cpu_load: 1.0 }
    }

    /// How many units of `class` are on `cpu`: processes that may run there.
    fn units(placements: &[Placement], class: &str, cpu: u32) -> usize {
        placements.iter().filter(|p| p.class == class && p.cpus.contains(&cpu)).count()
    }

    fn cpu_of(placements: &[Placement], id: u32) -> Vec<u32> {
        placements.iter().find(|p| p.id == id).expect("placed").cpus.clone()
    }

    #[test]
    fn distribution_fair_share_four_interactive_six_background_on_two_cpus() {
        let classes =
            [class("interactive", None, Plan::FairShare), class("background", None, Plan::FairShare)];
        let mut tasks: Vec<PlanTask> = (1..=4).map(|id| task(id, "interactive", 0.1)).collect();
        tasks.extend((11..=16).map(|id| task(id, "background", 0.05)));
        let out = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_eq!(out.len(), 10);
        for cpu in [0, 1] {
            assert_eq!(units(&out, "interactive", cpu), 2);
            assert_eq!(units(&out, "background", cpu), 3);
        }
        assert!(out.windows(2).all(|w| w[0].id < w[1].id), "sorted by id");
        assert!(out.iter().all(|p| matches!(p.reason, PlacementReason::FairShare { class_size, .. }
            if class_size == if p.class == "interactive" { 4 } else { 6 })));
    }

    #[test]
    fn distribution_fair_share_table_4_7_shape() {
        // Thesis Table 4-7: 4 interactive and 5 background processes on a dual core.
        let classes =
            [class("Interactive", None, Plan::FairShare), class("Background", None, Plan::FairShare)];
        let mut tasks: Vec<PlanTask> =
            [1966, 1948, 1960, 1584].map(|id| task(id, "Interactive", 0.0)).to_vec();
        tasks.extend([1545, 1051, 1411, 2214, 1265].map(|id| task(id, "Background", 0.0)));
        let out = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_eq!((units(&out, "Interactive", 0), units(&out, "Interactive", 1)), (2, 2));
        let background = (units(&out, "Background", 0), units(&out, "Background", 1));
        assert!(background == (3, 2) || background == (2, 3), "{background:?}");
    }

    #[test]
    fn distribution_fair_share_balances_load_within_equal_counts() {
        // Heaviest first: 0.9 → CPU 0, 0.5 → CPU 1, 0.4 → CPU 1 (0.5 < 0.9), 0.1 → CPU 0.
        let classes = [class("c", None, Plan::FairShare)];
        let tasks = [task(1, "c", 0.1), task(2, "c", 0.9), task(3, "c", 0.5), task(4, "c", 0.4)];
        let out = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 2), [0]);
        assert_eq!(cpu_of(&out, 3), [1]);
        assert_eq!(cpu_of(&out, 4), [1]);
        assert_eq!(cpu_of(&out, 1), [0]);
    }

    #[test]
    fn distribution_fair_share_two_threads_get_both_cpus() {
        let classes = [class("c", None, Plan::FairShare)];
        let tasks = [threaded(1, "c", 1.6, 2)];
        let out = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 1), [0, 1]);
        assert_eq!(
            out[0].reason,
            PlacementReason::FairShare { index_in_class: 0, class_size: 1, threads: 2 }
        );
    }

    #[test]
    fn distribution_zero_threads_count_as_one() {
        let classes = [class("c", None, Plan::FairShare)];
        let tasks = [threaded(1, "c", 0.5, 0)];
        let out = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 1), [0]);
        assert_eq!(
            out[0].reason,
            PlacementReason::FairShare { index_in_class: 0, class_size: 1, threads: 1 }
        );
    }

    #[test]
    fn distribution_fair_share_one_two_and_four_threads_on_four_cpus() {
        // Most CPUs first: 3 (4 threads) → 0–3, one unit each; 2 (2 threads) → the two
        // lowest of the equal CPUs, 0 and 1 (units 2, 2, 1, 1; loads 1.0, 1.0, 0.5, 0.5);
        // 1 → CPU 2 (fewest units, equal load, lower number). Units 2, 2, 2, 1.
        let classes = [class("c", None, Plan::FairShare)];
        let tasks = [threaded(1, "c", 0.5, 1), threaded(2, "c", 1.0, 2), threaded(3, "c", 2.0, 4)];
        let out = plan(&input(&[0, 1, 2, 3], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 3), [0, 1, 2, 3]);
        assert_eq!(cpu_of(&out, 2), [0, 1]);
        assert_eq!(cpu_of(&out, 1), [2]);
        assert_eq!([0, 1, 2, 3].map(|cpu| units(&out, "c", cpu)), [2, 2, 2, 1]);
        let order: Vec<(u32, usize)> = out
            .iter()
            .map(|p| match p.reason {
                PlacementReason::FairShare { index_in_class, .. } => (p.id, index_in_class),
                _ => panic!("{:?}", p.reason),
            })
            .collect();
        assert_eq!(order, [(1, 2), (2, 1), (3, 0)]);
    }

    #[test]
    fn distribution_more_threads_than_class_cpus_get_all_of_them() {
        let classes = [class("c", Some(&[3, 1]), Plan::FairShare)];
        let tasks = [threaded(1, "c", 3.0, 8)];
        let out = plan(&input(&[0, 1, 2, 3], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 1), [1, 3]);
        assert_eq!(
            out[0].reason,
            PlacementReason::FairShare { index_in_class: 0, class_size: 1, threads: 8 }
        );
    }

    #[test]
    fn distribution_weighted_3_7_with_a_two_thread_process() {
        // 10 units (one 2-thread process, 8 single): quotas 3 and 7. The 2-thread process
        // takes both CPUs, the others fill 2 and 6 more.
        let classes = [class("a", Some(&[2, 5]), Plan::Weighted(vec![3, 7]))];
        let mut tasks = vec![threaded(1, "a", 0.2, 2)];
        tasks.extend((2..=9).map(|id| task(id, "a", 0.1)));
        let out = plan(&input(&[0, 1, 2, 5], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 1), [2, 5]);
        assert_eq!(
            out[0].reason,
            PlacementReason::Weighted {
                index_in_class: 0,
                class_size: 9,
                threads: 2,
                share: 10,
                total_shares: 10
            }
        );
        assert_eq!((units(&out, "a", 2), units(&out, "a", 5)), (3, 7));
    }

    #[test]
    fn distribution_weighted_sets_take_the_cpus_with_most_quota_left() {
        // Shares 1:1:2, 5 units → quotas 1, 1, 3. Process 1 (2 threads): CPU 2 (3 left),
        // then CPU 0 (1 left like CPU 1, lower number). Process 2: CPU 2 (2 left), CPU 1
        // (1 left). Process 3 (single): CPU 2, the only one with room. Taking the least
        // filled CPUs instead would have put process 1 on 0 and 1, leaving process 2
        // only CPU 2.
        let classes = [class("w", None, Plan::Weighted(vec![1, 1, 2]))];
        let tasks = [threaded(1, "w", 0.4, 2), threaded(2, "w", 0.2, 2), task(3, "w", 0.1)];
        let out = plan(&input(&[0, 1, 2], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 1), [0, 2]);
        assert_eq!(cpu_of(&out, 2), [1, 2]);
        assert_eq!(cpu_of(&out, 3), [2]);
        assert_eq!([0, 1, 2].map(|cpu| units(&out, "w", cpu)), [1, 1, 3]);
        assert!(matches!(out[0].reason, PlacementReason::Weighted { share: 3, total_shares: 4, .. }));
    }

    #[test]
    fn distribution_threads_win_over_unmeetable_shares() {
        // Shares 1:9 give 2 units quotas 0 and 2, which one 2-thread process cannot meet:
        // it still gets both CPUs.
        let classes = [class("w", None, Plan::Weighted(vec![1, 9]))];
        let tasks = [threaded(1, "w", 1.0, 2)];
        let out = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 1), [0, 1]);
    }

    #[test]
    fn distribution_weighted_3_7_with_ten_processes() {
        let classes = [class("a", Some(&[2, 5]), Plan::Weighted(vec![3, 7]))];
        let tasks: Vec<PlanTask> = (1..=10).map(|id| task(id, "a", 0.1)).collect();
        let out = plan(&input(&[0, 1, 2, 5], &classes, &tasks, &[])).unwrap();
        assert_eq!(units(&out, "a", 2), 3);
        assert_eq!(units(&out, "a", 5), 7);
        let on_2 = out.iter().find(|p| p.cpus == [2]).unwrap();
        assert!(matches!(
            on_2.reason,
            PlacementReason::Weighted { share: 3, total_shares: 10, class_size: 10, .. }
        ));
    }

    #[test]
    fn distribution_weighted_largest_remainder() {
        // 4 processes, shares 1:1:1 → quotas 4/3 each, remainders equal → 2, 1, 1.
        assert_eq!(quotas(4, &[1, 1, 1]), [2, 1, 1]);
        // 5 processes, shares 3:7 → 1.5 and 3.5, tie → first: 2, 3.
        assert_eq!(quotas(5, &[3, 7]), [2, 3]);
        // 10 processes, shares 1:2:7 → 1, 2, 7.
        assert_eq!(quotas(10, &[1, 2, 7]), [1, 2, 7]);
        // 3 processes, shares 1:5 → 0.5, 2.5: remainders equal → 1, 2.
        assert_eq!(quotas(3, &[1, 5]), [1, 2]);
        assert_eq!(quotas(0, &[1, 5]), [0, 0]);
    }

    #[test]
    fn distribution_weighted_share_count_must_match() {
        let classes = [class("a", None, Plan::Weighted(vec![3, 7]))];
        let err = plan(&input(&[0, 1, 2], &classes, &[], &[])).unwrap_err();
        assert_eq!(err, PlanError::ShareCount { class: "a".into(), shares: 2, cpus: 3 });
        assert_eq!(check(&[0, 1, 2], &classes), Err(err));
        let zero = [class("a", None, Plan::Weighted(vec![0, 0]))];
        assert_eq!(check(&[0, 1], &zero), Err(PlanError::ZeroShares { class: "a".into() }));
    }

    #[test]
    fn distribution_check_rejects_bad_configurations() {
        let offline = [class("a", Some(&[3]), Plan::FairShare)];
        assert_eq!(check(&[0, 1], &offline), Err(PlanError::CpuNotOnline { class: "a".into(), cpu: 3 }));
        let twice = [class("a", Some(&[1, 1]), Plan::FairShare)];
        assert_eq!(check(&[0, 1], &twice), Err(PlanError::DuplicateCpu { class: "a".into(), cpu: 1 }));
        let empty = [class("a", Some(&[]), Plan::FairShare)];
        assert_eq!(check(&[0, 1], &empty), Err(PlanError::EmptyCpuSet { class: "a".into() }));
        let dup = [class("a", None, Plan::FairShare), class("a", None, Plan::Isolate)];
        assert_eq!(check(&[0, 1], &dup), Err(PlanError::DuplicateClass("a".into())));
        assert_eq!(check(&[], &[]), Err(PlanError::NoOnlineCpus));
        let ok = [class("a", None, Plan::FairShare)];
        let tasks = [task(7, "a", 0.1), task(7, "a", 0.2)];
        assert_eq!(plan(&input(&[0], &ok, &tasks, &[])), Err(PlanError::DuplicateTask(7)));
    }

    #[test]
    fn distribution_isolate_pushes_fair_share_class_off_its_cpu() {
        let classes = [class("interactive", None, Plan::FairShare), class("rt", Some(&[1]), Plan::Isolate)];
        let tasks = [task(1, "interactive", 0.2), task(2, "interactive", 0.2), task(3, "rt", 0.9)];
        let inp = input(&[0, 1], &classes, &tasks, &[]);
        let out = plan(&inp).unwrap();
        assert_eq!(cpu_of(&out, 1), [0]);
        assert_eq!(cpu_of(&out, 2), [0]);
        assert_eq!(cpu_of(&out, 3), [1]);
        assert_eq!(out[2].reason, PlacementReason::Isolated);
        let cpus = class_cpus(&inp).unwrap();
        assert_eq!(cpus[0].cpus, [0]);
        assert!(cpus[0].waived.is_empty());
    }

    #[test]
    fn distribution_isolated_class_is_not_bound_to_one_cpu() {
        let classes = [class("rt", Some(&[2, 1]), Plan::Isolate), class("bg", None, Plan::FairShare)];
        let tasks = [task(1, "rt", 0.5), task(2, "bg", 0.5), task(3, "bg", 0.5)];
        let out = plan(&input(&[0, 1, 2, 3], &classes, &tasks, &[])).unwrap();
        assert_eq!(cpu_of(&out, 1), [1, 2]);
        assert_eq!(cpu_of(&out, 2), [0]);
        assert_eq!(cpu_of(&out, 3), [3]);
    }

    #[test]
    fn distribution_isolation_that_would_leave_no_cpu_is_waived() {
        let classes =
            [class("interactive", Some(&[1]), Plan::FairShare), class("rt", Some(&[1]), Plan::Isolate)];
        let tasks = [task(1, "interactive", 0.2), task(2, "rt", 0.2)];
        let inp = input(&[0, 1], &classes, &tasks, &[]);
        let out = plan(&inp).unwrap();
        assert_eq!(cpu_of(&out, 1), [1]);
        assert_eq!(cpu_of(&out, 2), [1]);
        let cpus = class_cpus(&inp).unwrap();
        assert_eq!(cpus[0].name, "interactive");
        assert_eq!(cpus[0].waived, ["rt"]);
    }

    #[test]
    fn distribution_isolation_removes_weighted_shares() {
        // Weighted over 0,1,2 with shares 1,1,2; CPU 2 isolated → only CPUs 0 and 1, 1:1.
        let classes =
            [class("w", None, Plan::Weighted(vec![1, 1, 2])), class("rt", Some(&[2]), Plan::Isolate)];
        let tasks: Vec<PlanTask> = (1..=4).map(|id| task(id, "w", 0.1)).collect();
        let inp = input(&[0, 1, 2], &classes, &tasks, &[]);
        let out = plan(&inp).unwrap();
        assert_eq!((units(&out, "w", 0), units(&out, "w", 1), units(&out, "w", 2)), (2, 2, 0));
        let w = class_cpus(&inp).unwrap().into_iter().find(|c| c.name == "w").unwrap();
        assert_eq!((w.cpus, w.shares), (vec![0, 1], Some(vec![1, 1])));
    }

    #[test]
    fn distribution_unknown_class_is_not_placed() {
        let classes = [class("a", None, Plan::FairShare)];
        let tasks = [task(1, "a", 0.1), task(2, "nope", 0.1)];
        let out = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), [1]);
    }

    /// Fair share alone puts 1 and 3 on CPU 0, 2 and 4 on CPU 1.
    fn two_classes_two_cpus() -> ([ClassPlan; 2], [PlanTask; 4]) {
        (
            [class("a", None, Plan::FairShare), class("b", None, Plan::FairShare)],
            [task(1, "a", 0.1), task(2, "a", 0.1), task(3, "b", 0.1), task(4, "b", 0.1)],
        )
    }

    #[test]
    fn distribution_communicating_tasks_of_different_classes_share_a_cpu() {
        let (classes, tasks) = two_classes_two_cpus();
        let alone = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_ne!(cpu_of(&alone, 1), cpu_of(&alone, 4));
        let edges = [Edge { a: 4, b: 1, strength: 60.0 }, Edge { a: 1, b: 4, strength: 40.0 }];
        let out = plan(&input(&[0, 1], &classes, &tasks, &edges)).unwrap();
        assert_eq!(cpu_of(&out, 1), cpu_of(&out, 4));
        assert_eq!(out[0].reason, PlacementReason::CoLocated { with: 4, strength: 100.0, group_size: 2 });
        assert_eq!(out[3].reason, PlacementReason::CoLocated { with: 1, strength: 100.0, group_size: 2 });
        // The others keep their fair-share placement.
        assert_eq!(cpu_of(&out, 2), cpu_of(&alone, 2));
        assert_eq!(cpu_of(&out, 3), cpu_of(&alone, 3));
    }

    #[test]
    fn distribution_weak_edges_are_ignored() {
        let (classes, tasks) = two_classes_two_cpus();
        let edges = [Edge { a: 1, b: 4, strength: 9.0 }];
        let out = plan(&input(&[0, 1], &classes, &tasks, &edges)).unwrap();
        assert_eq!(out, plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap());
    }

    #[test]
    fn distribution_overloaded_pair_is_not_co_located() {
        let classes = [class("a", None, Plan::FairShare), class("b", None, Plan::FairShare)];
        let tasks = [task(1, "a", 0.7), task(2, "b", 0.7)];
        let edges = [Edge { a: 1, b: 2, strength: 1000.0 }];
        let out = plan(&input(&[0, 1], &classes, &tasks, &edges)).unwrap();
        assert_ne!(cpu_of(&out, 1), cpu_of(&out, 2));
        assert!(matches!(out[0].reason, PlacementReason::FairShare { .. }));
        assert!(matches!(out[1].reason, PlacementReason::FairShare { .. }));
    }

    #[test]
    fn distribution_co_location_counts_what_is_already_there() {
        // a: 1 (0.6) → CPU 0, 2 (0.1) → CPU 1. b: 3 (0.3) → CPU 1 (0.1 < 0.6).
        // Pair 1–3 (0.9) fits on CPU 0 (nothing else there) and on CPU 1 (0.1 else);
        // CPU 0 already holds more of the pair's load (0.6), so both go there.
        let classes = [class("a", None, Plan::FairShare), class("b", None, Plan::FairShare)];
        let tasks = [task(1, "a", 0.6), task(2, "a", 0.1), task(3, "b", 0.3)];
        let edges = [Edge { a: 1, b: 3, strength: 50.0 }];
        let out = plan(&input(&[0, 1], &classes, &tasks, &edges)).unwrap();
        assert_eq!(cpu_of(&out, 1), [0]);
        assert_eq!(cpu_of(&out, 3), [0]);
        // With a heavy third process on CPU 0, the pair no longer fits there but fits
        // on CPU 1 (0.1 + 0.9 = 1.0).
        let classes = [class("a", None, Plan::FairShare), class("b", None, Plan::FairShare)];
        let tasks = [task(1, "a", 0.6), task(2, "a", 0.1), task(3, "b", 0.3), task(4, "b", 0.2)];
        // b: 3 (0.3) → CPU 1 (0.1), 4 (0.2) → CPU 0. Pair 1–3 on CPU 0: 0.2 + 0.9 > 1;
        // on CPU 1: 0.1 + 0.9 = 1.0 fits.
        let out = plan(&input(&[0, 1], &classes, &tasks, &edges)).unwrap();
        assert_eq!(cpu_of(&out, 1), [1]);
        assert_eq!(cpu_of(&out, 3), [1]);
    }

    #[test]
    fn distribution_co_location_needs_overlapping_class_cpus() {
        let classes = [class("a", Some(&[0]), Plan::FairShare), class("b", Some(&[1]), Plan::FairShare)];
        let tasks = [task(1, "a", 0.1), task(2, "b", 0.1)];
        let edges = [Edge { a: 1, b: 2, strength: 1000.0 }];
        let out = plan(&input(&[0, 1], &classes, &tasks, &edges)).unwrap();
        assert_eq!((cpu_of(&out, 1), cpu_of(&out, 2)), (vec![0], vec![1]));
    }

    #[test]
    fn distribution_co_location_skips_a_multi_threaded_member() {
        // Step 3: 1 → CPU 0; 2 (2 threads) → 0 and 1; 3 → CPU 1 (0.05 < 0.15). Process 2
        // talks most with 1 but keeps both CPUs; 1 and 3 are co-located on CPU 0 (equal
        // loads, lower number).
        let classes = [class("a", None, Plan::FairShare), class("b", None, Plan::FairShare)];
        let tasks = [task(1, "a", 0.1), threaded(2, "b", 0.1, 2), task(3, "b", 0.1)];
        let edges = [Edge { a: 1, b: 2, strength: 100.0 }, Edge { a: 1, b: 3, strength: 50.0 }];
        let alone = plan(&input(&[0, 1], &classes, &tasks, &[])).unwrap();
        assert_eq!((cpu_of(&alone, 1), cpu_of(&alone, 2), cpu_of(&alone, 3)), (vec![0], vec![0, 1], vec![1]));
        let out = plan(&input(&[0, 1], &classes, &tasks, &edges)).unwrap();
        assert_eq!(out[1], alone[1]);
        assert_eq!((cpu_of(&out, 1), cpu_of(&out, 3)), (vec![0], vec![0]));
        assert_eq!(out[0].reason, PlacementReason::CoLocated { with: 3, strength: 50.0, group_size: 2 });
    }

    #[test]
    fn distribution_transitive_group_lands_on_one_cpu() {
        let classes = [class("a", None, Plan::FairShare)];
        let tasks: Vec<PlanTask> = (1..=6).map(|id| task(id, "a", 0.1)).collect();
        let edges = [Edge { a: 1, b: 2, strength: 20.0 }, Edge { a: 2, b: 3, strength: 30.0 }];
        let out = plan(&input(&[0, 1, 2], &classes, &tasks, &edges)).unwrap();
        assert_eq!(cpu_of(&out, 1), cpu_of(&out, 2));
        assert_eq!(cpu_of(&out, 2), cpu_of(&out, 3));
        assert_eq!(out[1].reason, PlacementReason::CoLocated { with: 3, strength: 30.0, group_size: 3 });
    }

    #[test]
    fn distribution_is_deterministic_under_shuffled_input() {
        let classes = vec![
            class("interactive", None, Plan::FairShare),
            class("background", Some(&[0, 1, 2]), Plan::Weighted(vec![1, 2, 3])),
            class("rt", Some(&[3]), Plan::Isolate),
        ];
        let tasks: Vec<PlanTask> = (1..=20)
            .map(|id| {
                let name = ["interactive", "background", "rt", "other"][id as usize % 4];
                task(id, name, f64::from(id % 5) * 0.1)
            })
            .collect();
        let edges = vec![
            Edge { a: 1, b: 5, strength: 0.1 + 0.2 },
            Edge { a: 5, b: 1, strength: 0.3 },
            Edge { a: 2, b: 9, strength: 50.0 },
            Edge { a: 9, b: 13, strength: 50.0 },
        ];
        let cpus = [0, 1, 2, 3];
        let base =
            plan(&PlanInput { min_edge_strength: 0.5, ..input(&cpus, &classes, &tasks, &edges) }).unwrap();
        let (mut c2, mut t2, mut e2) = (classes.clone(), tasks.clone(), edges.clone());
        c2.reverse();
        t2.reverse();
        t2.rotate_left(7);
        e2.reverse();
        let cpus2 = [3, 1, 0, 2, 1];
        let again = plan(&PlanInput { min_edge_strength: 0.5, ..input(&cpus2, &c2, &t2, &e2) }).unwrap();
        assert_eq!(base, again);
        assert!(base.iter().any(|p| matches!(p.reason, PlacementReason::CoLocated { .. })));
    }

    /// Whether processes needing `widths` distinct CPUs can fill CPUs with `quota` units
    /// exactly (the Gale–Ryser condition for a 0-1 matrix with these row and column
    /// sums, which add up to the same here): the `t` widest processes fit, each CPU
    /// taking at most one unit of each.
    fn realizable(widths: &[usize], quota: &[usize]) -> bool {
        let mut widths = widths.to_vec();
        widths.sort_unstable_by(|a, b| b.cmp(a));
        (1..=widths.len())
            .all(|t| widths[..t].iter().sum::<usize>() <= quota.iter().map(|&q| q.min(t)).sum::<usize>())
    }

    #[test]
    fn distribution_realizable_is_gale_ryser() {
        assert!(realizable(&[2, 2], &[1, 1, 2]));
        assert!(!realizable(&[2], &[0, 2]));
        assert!(!realizable(&[2, 1], &[0, 3]));
        assert!(realizable(&[1, 1, 1], &[0, 3]));
    }

    /// A random configuration: CPUs, classes, tasks and edges.
    fn scenario() -> impl Strategy<Value = (Vec<u32>, Vec<ClassPlan>, Vec<PlanTask>, Vec<Edge>)> {
        (1usize..=6)
            .prop_flat_map(|ncpu| {
                let cpus: Vec<u32> = (0..ncpu as u32).map(|i| i * 2 + 1).collect();
                let class = (
                    0u8..3,
                    proptest::collection::vec(any::<bool>(), ncpu),
                    proptest::collection::vec(0u32..4, ncpu),
                );
                let classes = proptest::collection::vec(class, 1..=4);
                let tasks = proptest::collection::vec((0usize..5, 0.0f64..1.5, 0u32..5), 0..30);
                let edges = proptest::collection::vec((0u32..30, 0u32..30, 0.0f64..100.0), 0..20);
                (Just(cpus), classes, tasks, edges)
            })
            .prop_map(|(cpus, raw_classes, raw_tasks, raw_edges)| {
                let classes: Vec<ClassPlan> = raw_classes
                    .into_iter()
                    .enumerate()
                    .map(|(i, (kind, pick, mut shares))| {
                        let chosen: Vec<u32> =
                            cpus.iter().zip(&pick).filter(|(_, &p)| p).map(|(&c, _)| c).collect();
                        let list = if chosen.is_empty() { None } else { Some(chosen) };
                        let n = list.as_ref().map_or(cpus.len(), Vec::len);
                        shares.truncate(n);
                        shares[0] += 1;
                        let plan = match kind {
                            0 => Plan::FairShare,
                            1 => Plan::Weighted(shares),
                            _ => Plan::Isolate,
                        };
                        ClassPlan { name: format!("c{i}"), cpus: list, plan }
                    })
                    .collect();
                let tasks = raw_tasks
                    .into_iter()
                    .enumerate()
                    .map(|(id, (c, load, threads))| threaded(id as u32, &format!("c{c}"), load, threads))
                    .collect();
                let edges = raw_edges.into_iter().map(|(a, b, strength)| Edge { a, b, strength }).collect();
                (cpus, classes, tasks, edges)
            })
    }

    proptest! {
        #[test]
        fn distribution_invariants(
            (cpus, classes, tasks, edges) in scenario(),
            min_edge_strength in 0.0f64..60.0,
            max_cpu_load in 0.5f64..3.0,
            seed in any::<u64>(),
        ) {
            let inp = PlanInput { cpus: &cpus, classes: &classes, tasks: &tasks, edges: &edges, min_edge_strength, max_cpu_load };
            let out = plan(&inp).unwrap();
            let sets = class_cpus(&inp).unwrap();
            let set = |name: &str| sets.iter().find(|c| c.name == name).unwrap();
            let config = |name: &str| classes.iter().find(|c| c.name == name).unwrap();

            // Exactly the tasks of configured classes are placed, once, sorted by id.
            let expected: Vec<u32> = tasks.iter().filter(|t| sets.iter().any(|c| c.name == t.class)).map(|t| t.id).collect();
            prop_assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), expected);
            // How many CPUs a fair-share or weighted process gets: its threads (0 counts
            // as 1), at most its class's.
            let width = |id: u32| {
                let t = tasks.iter().find(|t| t.id == id).unwrap();
                (t.threads.max(1) as usize).min(set(&t.class).cpus.len())
            };
            for p in &out {
                let s = set(&p.class);
                prop_assert!(p.cpus.iter().all(|c| s.cpus.contains(c)));
                prop_assert!(p.cpus.windows(2).all(|w| w[0] < w[1]), "{:?}", p.cpus);
                let configured = config(&p.class).cpus.clone().unwrap_or_else(|| cpus.clone());
                prop_assert!(s.cpus.iter().all(|c| configured.contains(c)));
                match config(&p.class).plan {
                    Plan::Isolate => prop_assert_eq!(&p.cpus, &s.cpus),
                    _ => prop_assert_eq!(p.cpus.len(), width(p.id)),
                }
            }

            // A CPU that received a co-located group is within the load limit.
            let cpu_load = |cpu: u32| -> f64 {
                out.iter().map(|p| {
                    let l = clean_load(tasks.iter().find(|t| t.id == p.id).unwrap().load);
                    if p.cpus.contains(&cpu) { l / p.cpus.len() as f64 } else { 0.0 }
                }).sum()
            };
            for p in out.iter().filter(|p| matches!(p.reason, PlacementReason::CoLocated { .. })) {
                prop_assert!(cpu_load(p.cpus[0]) <= max_cpu_load + 1e-9);
            }

            // Without edges: fair-share units within ±1; weighted units on quota whenever
            // some placement can meet the quotas (always with single-threaded processes).
            let alone = plan(&PlanInput { edges: &[], ..inp }).unwrap();
            for s in &sets {
                let counts: Vec<usize> = s.cpus.iter().map(|&c| units(&alone, &s.name, c)).collect();
                let widths: Vec<usize> = alone.iter().filter(|p| p.class == s.name).map(|p| width(p.id)).collect();
                match (&config(&s.name).plan, &s.shares) {
                    (Plan::FairShare, _) => {
                        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
                        prop_assert!(hi - lo <= 1, "{:?}", counts);
                    }
                    (Plan::Weighted(_), Some(shares)) => {
                        let quota = quotas(widths.iter().sum(), shares);
                        if realizable(&widths, &quota) {
                            prop_assert_eq!(counts, quota);
                        }
                    }
                    _ => {}
                }
            }

            // Shuffled input gives the same output.
            let mut rng = seed;
            let mut next = move |n: usize| { rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (rng >> 33) as usize % n };
            let (mut c2, mut t2, mut e2, mut cpus2) = (classes.clone(), tasks.clone(), edges.clone(), cpus.clone());
            for i in (1..c2.len()).rev() { c2.swap(i, next(i + 1)); }
            for i in (1..t2.len()).rev() { t2.swap(i, next(i + 1)); }
            for i in (1..e2.len()).rev() { e2.swap(i, next(i + 1)); }
            cpus2.reverse();
            let again = plan(&PlanInput { cpus: &cpus2, classes: &c2, tasks: &t2, edges: &e2, ..inp }).unwrap();
            prop_assert_eq!(out, again);
        }
    }
}

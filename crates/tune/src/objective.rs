//! What the searches minimize: the turnaround (makespan) of a workload simulated with a
//! candidate set of fair-class tunables. And, for a live machine, the check that its
//! scheduler knobs can be written at all.
//!
//! A candidate is a vector of integer nanoseconds, one per tunable of the [`Space`]:
//! CFS's `sched_latency_ns`, `sched_min_granularity_ns` and
//! `sched_wakeup_granularity_ns` (the paper's three), or EEVDF's `base_slice_ns`. The
//! searches work on reals; a position is rounded to whole nanoseconds and clamped to
//! the space's ranges before it is simulated, so two positions that round alike are
//! one candidate. Every candidate runs with the same seeds (common random numbers: the
//! candidates differ only in their tunables), its value is the mean makespan over the
//! seeds, and the value is cached by candidate, so a repeated candidate is not
//! simulated again. A batch of candidates is simulated in parallel on
//! `std::thread::scope` threads, one per CPU of the host.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use schedlab_sim::{simulate, FairFlavor, SimConfig, Workload};
use serde::Serialize;

use crate::error::{KnobError, TuneError};
use crate::golden::{RANGE_MAX_NS, RANGE_MIN_NS};
use crate::pso::BatchCost;

/// A candidate: one value in nanoseconds per tunable of the space, in its order.
pub type Knobs = Vec<u64>;

/// Which tunables are searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Space {
    /// CFS: latency, minimum granularity, wake-up granularity.
    Cfs,
    /// EEVDF: the base slice.
    Eevdf,
}

impl Space {
    /// The space of a fair class; `None` for one without these tunables (timeshare).
    pub fn of(fair: FairFlavor) -> Option<Space> {
        match fair {
            FairFlavor::Cfs => Some(Space::Cfs),
            FairFlavor::Eevdf => Some(Space::Eevdf),
            FairFlavor::Timeshare => None,
        }
    }

    /// The tunables' names, as `Tunables::get`/`set` and `--set` name them.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Space::Cfs => &["sched_latency_ns", "sched_min_granularity_ns", "sched_wakeup_granularity_ns"],
            Space::Eevdf => &["base_slice_ns"],
        }
    }

    /// Lower and upper bounds per tunable, in ns: the paper's ranges (Latency and
    /// MinGran 100,000..1,000,000,000, WakeupGran 0..1,000,000,000). The paper has no
    /// EEVDF; its base slice gets the same range as MinGran, the knob it replaced.
    pub fn bounds(self) -> (Vec<f64>, Vec<f64>) {
        let (lo, hi) = (RANGE_MIN_NS as f64, RANGE_MAX_NS as f64);
        match self {
            Space::Cfs => (vec![lo, lo, 0.0], vec![hi, hi, hi]),
            Space::Eevdf => (vec![lo], vec![hi]),
        }
    }
}

/// The simulated makespan of one workload as a function of the space's tunables.
pub struct SimObjective {
    workload: Workload,
    config: SimConfig,
    space: Space,
    seeds: Vec<u64>,
    threads: usize,
    cache: Mutex<HashMap<Knobs, f64>>,
    simulations: AtomicUsize,
    hits: AtomicUsize,
}

impl SimObjective {
    /// The objective for `workload` under `config` (its CPU count, fair class and other
    /// tunables stay as given), each candidate run once per seed of `seeds`.
    pub fn new(workload: Workload, config: SimConfig, seeds: Vec<u64>) -> Result<Self, TuneError> {
        let space = Space::of(config.fair).ok_or(TuneError::NoTunables { fair: config.fair.name() })?;
        if seeds.is_empty() {
            return Err(TuneError::NoSeeds);
        }
        workload.validate(config.cpus())?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(SimObjective {
            workload,
            config,
            space,
            seeds,
            threads,
            cache: Mutex::new(HashMap::new()),
            simulations: AtomicUsize::new(0),
            hits: AtomicUsize::new(0),
        })
    }

    /// Limits the threads a batch uses (at least one).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    pub fn space(&self) -> Space {
        self.space
    }

    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The workload's task count (NumTasks of the discovery algorithms).
    pub fn tasks(&self) -> u64 {
        self.workload.tasks.len() as u64
    }

    /// The candidate the configuration already has (the kernel's defaults unless set).
    pub fn defaults(&self) -> Knobs {
        self.space.names().iter().map(|n| self.get(&self.config, n)).collect()
    }

    fn get(&self, config: &SimConfig, name: &str) -> u64 {
        match config.tunables.get(name) {
            Some(schedlab_sim::TunableValue::Duration(ns)) => ns,
            other => unreachable!("{name} is a duration, got {other:?}"),
        }
    }

    /// A position rounded to whole nanoseconds and clamped to the space's bounds.
    pub fn knobs(&self, x: &[f64]) -> Knobs {
        let (lo, hi) = self.space.bounds();
        x.iter().zip(lo.iter().zip(&hi)).map(|(v, (l, h))| v.clamp(*l, *h).round() as u64).collect()
    }

    /// The simulation settings for candidate `knobs`.
    pub fn config_for(&self, knobs: &[u64]) -> SimConfig {
        let mut config = self.config.clone();
        let t = &mut config.tunables;
        match self.space {
            Space::Cfs => {
                // The simulator, like the kernel, needs a positive latency and granularity.
                t.sched_latency_ns = knobs[0].max(1);
                t.sched_min_granularity_ns = knobs[1].max(1);
                t.sched_wakeup_granularity_ns = knobs[2];
            }
            Space::Eevdf => t.base_slice_ns = knobs[0].max(1),
        }
        config
    }

    /// Simulations run so far (distinct candidates × seeds / seeds).
    pub fn simulations(&self) -> usize {
        self.simulations.load(Ordering::Relaxed)
    }

    /// Evaluations answered from the cache so far.
    pub fn cache_hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }

    /// The mean makespan in ns of candidate `knobs` over the seeds.
    pub fn evaluate(&self, knobs: &[u64]) -> Result<f64, TuneError> {
        Ok(self.evaluate_many(&[knobs.to_vec()])?[0])
    }

    /// [`SimObjective::evaluate`] for many candidates: the ones not in the cache are
    /// simulated in parallel, each distinct candidate once.
    pub fn evaluate_many(&self, candidates: &[Knobs]) -> Result<Vec<f64>, TuneError> {
        let expected = self.space.names().len();
        if let Some(bad) = candidates.iter().find(|k| k.len() != expected) {
            return Err(TuneError::CandidateLength { got: bad.len(), expected });
        }
        let mut todo: Vec<&Knobs> = {
            let cache = self.cache.lock().expect("cache lock");
            candidates.iter().filter(|k| !cache.contains_key(*k)).collect()
        };
        todo.sort();
        todo.dedup();
        let hits = candidates.len() - todo.len();
        if !todo.is_empty() {
            let chunk = todo.len().div_ceil(self.threads);
            let results: Vec<Result<Vec<(Knobs, f64)>, TuneError>> = std::thread::scope(|s| {
                let handles: Vec<_> = todo
                    .chunks(chunk)
                    .map(|part| {
                        s.spawn(move || part.iter().map(|k| Ok(((*k).clone(), self.run(k)?))).collect())
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().expect("a simulation thread panicked")).collect()
            });
            let mut cache = self.cache.lock().expect("cache lock");
            for part in results {
                cache.extend(part?);
            }
            self.simulations.fetch_add(todo.len(), Ordering::Relaxed);
        }
        self.hits.fetch_add(hits, Ordering::Relaxed);
        let cache = self.cache.lock().expect("cache lock");
        Ok(candidates.iter().map(|k| cache[k]).collect())
    }

    /// Simulates candidate `knobs` once per seed: the mean makespan.
    fn run(&self, knobs: &[u64]) -> Result<f64, TuneError> {
        let mut config = self.config_for(knobs);
        let mut total = 0.0;
        for &seed in &self.seeds {
            config.seed = seed;
            let report = simulate(&self.workload, &config, None)?;
            total += report.makespan_ns as f64;
        }
        Ok(total / self.seeds.len() as f64)
    }
}

/// The searches see the objective through positions in ns (reals).
impl BatchCost for SimObjective {
    fn cost_batch(&self, xs: &[Vec<f64>]) -> Result<Vec<f64>, TuneError> {
        let candidates: Vec<Knobs> = xs.iter().map(|x| self.knobs(x)).collect();
        self.evaluate_many(&candidates)
    }
}

/// The knob a live tuner writes: EEVDF's base slice in the scheduler's debugfs.
pub const BASE_SLICE_KNOB: &str = "/sys/kernel/debug/sched/base_slice_ns";

/// Whether this machine lets us write the scheduler's debugfs knobs (which a live
/// objective would need): opens [`BASE_SLICE_KNOB`] for writing, writes nothing.
/// The error says why not and what to do.
pub fn debugfs_knobs_writable() -> Result<(), KnobError> {
    knob_writable(Path::new(BASE_SLICE_KNOB))
}

/// [`debugfs_knobs_writable`] for any knob file.
pub fn knob_writable(path: &Path) -> Result<(), KnobError> {
    let Err(e) = OpenOptions::new().write(true).open(path) else {
        return Ok(());
    };
    let path = path.to_path_buf();
    // EPERM (1) for root means kernel lockdown: debugfs is read-only under
    // lockdown=integrity (and unreadable under confidentiality). EACCES (13) is the
    // file's mode: not root.
    Err(match (e.raw_os_error(), e.kind()) {
        (Some(1), _) => {
            let mode = std::fs::read_to_string("/sys/kernel/security/lockdown").unwrap_or_default();
            let mode = Some(mode.trim().to_string()).filter(|m| !m.is_empty());
            KnobError::Lockdown { path, mode }
        }
        (_, ErrorKind::PermissionDenied) => KnobError::PermissionDenied { path },
        (_, ErrorKind::NotFound) => KnobError::NotFound { path },
        _ => KnobError::Io { path, source: e },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sim::workloads;

    fn objective(fair: FairFlavor) -> SimObjective {
        let w = workloads::load("hackbench:groups=1,fds=4,loops=2,ipc=pipe").unwrap();
        SimObjective::new(w, SimConfig::new(2, fair), vec![1]).unwrap()
    }

    #[test]
    fn a_repeated_candidate_is_not_simulated_again() {
        let o = objective(FairFlavor::Cfs);
        assert_eq!(o.tasks(), 8);
        // The defaults for 2 CPUs: 6 ms, 0.75 ms, 1 ms, each × 2.
        let d = o.defaults();
        assert_eq!(d, vec![12_000_000, 1_500_000, 2_000_000]);
        let v = o.evaluate(&d).unwrap();
        assert!(v > 0.0);
        assert_eq!((o.simulations(), o.cache_hits()), (1, 0));
        // The same candidate, twice more in a batch beside a new one: one simulation.
        let other = vec![100_000, 100_000, 0];
        let vs = o.evaluate_many(&[d.clone(), other.clone(), d.clone(), other.clone()]).unwrap();
        assert_eq!(vs[0], v);
        assert_eq!(vs[1], vs[3]);
        // Three answers without a run: `d` twice from the cache, `other`'s repeat.
        assert_eq!((o.simulations(), o.cache_hits()), (2, 3));
        // Positions that round to the same nanoseconds are the same candidate.
        let x = o.cost_batch(&[vec![99_000.0, 100_000.4, -5.0]]).unwrap();
        assert_eq!(x[0], vs[1]);
        assert_eq!((o.simulations(), o.cache_hits()), (2, 4));
        // And the cached value is what a fresh simulation gives.
        let fresh = simulate(o.workload(), &o.config_for(&other), None).unwrap().makespan_ns as f64;
        assert_eq!(vs[1], fresh);
    }

    #[test]
    fn eevdf_searches_the_base_slice() {
        let o = objective(FairFlavor::Eevdf);
        assert_eq!(o.defaults(), vec![1_400_000]);
        assert_eq!(o.config_for(&[3_000_000]).tunables.base_slice_ns, 3_000_000);
        assert!(o.evaluate(&[1, 2]).is_err());
        let w = workloads::load("hackbench:groups=1,fds=2,loops=1").unwrap();
        let e = SimObjective::new(w, SimConfig::new(1, FairFlavor::Timeshare), vec![1])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("timeshare"), "{e}");
    }

    #[test]
    fn an_unwritable_knob_says_why() {
        let e = knob_writable(Path::new("/nonexistent/sched/base_slice_ns")).unwrap_err().to_string();
        assert!(e.contains("no such file") && e.contains("mount -t debugfs"), "{e}");
        let dir = std::env::temp_dir().join(format!("schedlab-tune-knob-{}", std::process::id()));
        std::fs::write(&dir, "0").unwrap();
        knob_writable(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
    }
}

//! The live objective of `schedlab tune --live`: the daemon's own parameter that the
//! client-server benchmark depends on, `boost_max_ms` (how long a provider may keep a
//! blocked client's priority), judged by [`deps`](super::deps) over a pipe, loaded,
//! under the daemon with that bound: the client's median completion time. The kernel's
//! global fair-class knobs (debugfs) are locked on machines with lockdown, so this is
//! what can be tuned live.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use schedlab_tune::{BatchCost, TuneError};

use super::deps::{run_deps, DepsConfig};
use super::ipc::IpcKind;

/// The searched range of `boost_max_ms`.
pub const RANGE_MS: (f64, f64) = (1.0, 100.0);
/// The daemon's built-in value, the default the best is compared with.
pub const DEFAULT_MS: u64 = 100;

/// The client's median completion time (ms) under the daemon with a given
/// `boost_max_ms`, cached per whole millisecond (a candidate already measured is not
/// run again); the evaluations kept in request order.
pub struct BoostObjective {
    load: u32,
    iterations: u32,
    cache: Mutex<HashMap<u64, f64>>,
    evaluations: Mutex<Vec<(u64, f64)>>,
    /// Hears each evaluation: `boost_max_ms` and the median.
    each: Box<dyn Fn(u64, f64) + Send + Sync>,
}

impl BoostObjective {
    /// `load` hogs per CPU, `iterations` round trips per evaluation.
    pub fn new(load: u32, iterations: u32, each: Box<dyn Fn(u64, f64) + Send + Sync>) -> Self {
        BoostObjective {
            load,
            iterations,
            cache: Mutex::new(HashMap::new()),
            evaluations: Mutex::new(Vec::new()),
            each,
        }
    }

    /// The median at `boost_max_ms` (rounded to whole ms, clamped to [`RANGE_MS`]).
    pub fn evaluate(&self, boost_max_ms: f64) -> Result<f64, TuneError> {
        let ms = boost_max_ms.round().clamp(RANGE_MS.0, RANGE_MS.1) as u64;
        let cached = self.cache.lock().expect("no panics while held").get(&ms).copied();
        let value = match cached {
            Some(v) => v,
            None => {
                let cfg = DepsConfig {
                    kinds: vec![IpcKind::Pipe],
                    load: self.load,
                    iterations: self.iterations,
                    warmup: 2,
                    with_daemon: true,
                    daemon_only: true,
                    daemon_config: format!("[daemon]\nmodel = false\nslices = false\nboost_max_ms = {ms}\n"),
                    time_limit: Duration::from_secs(120),
                    ..DepsConfig::default()
                };
                let report = run_deps(&cfg, &mut |_| {}).map_err(|e| TuneError::Objective(Box::new(e)))?;
                let v = report.kinds[0].cells[0].stats.median_ms;
                self.cache.lock().expect("no panics while held").insert(ms, v);
                v
            }
        };
        self.evaluations.lock().expect("no panics while held").push((ms, value));
        (self.each)(ms, value);
        Ok(value)
    }

    /// Forgets the evaluations made so far (the default's, before a search).
    pub fn forget_evaluations(&self) {
        self.evaluations.lock().expect("no panics while held").clear();
    }

    /// Every evaluation, (`boost_max_ms`, median), in request order.
    pub fn into_evaluations(self) -> Vec<(u64, f64)> {
        self.evaluations.into_inner().expect("no panics while held")
    }
}

impl BatchCost for BoostObjective {
    /// One after the other: live runs must not overlap.
    fn cost_batch(&self, xs: &[Vec<f64>]) -> Result<Vec<f64>, TuneError> {
        xs.iter().map(|x| self.evaluate(x[0])).collect()
    }
}

//! Particle swarm optimization, the paper's global method (its Section V-A, after
//! Chong & Zak and Pedersen): each particle has a position x and a velocity v, and every
//! iteration
//!
//! ```text
//! v ← w·v + φp·rp·(p − x) + φg·rg·(g − x)      (1)
//! x ← x + v                                     (2)
//! ```
//!
//! where p is the particle's best position, g the swarm's, w the inertia weight, φp the
//! cognitive and φg the social parameter, and rp, rg uniform random numbers in [0, 1].
//!
//! The solver is `argmin`'s [`ParticleSwarm`], which implements exactly (1) and (2),
//! with rp and rg drawn per dimension (the usual reading of the paper's vector
//! notation), positions clamped to the bounds, initial positions uniform within the
//! bounds and initial velocities uniform in ±(upper − lower). What argmin does not
//! report — when the best was found — is recovered around it: the cost function records
//! every value in order ([`Trace`]), which gives the evaluations to the best and the
//! best-so-far curve, and an [`Observe`]r records the swarm's best after each iteration.
//! The population's costs are computed by [`BatchCost::cost_batch`], which our
//! objective evaluates in parallel (argmin's own parallelism needs rayon, which we
//! don't otherwise use).
//!
//! Iterations follow argmin (and the paper's Table I, whose I* reaches 31 with "a
//! maximum of 30 iterations"): the initial swarm is evaluated first, then `iterations`
//! updates, so a run makes `particles × (iterations + 1)` evaluations.

use std::borrow::Borrow;
use std::sync::{Arc, Mutex};

use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{CostFunction, Error, Executor, PopulationState, State, SyncAlias, KV};
use argmin::solver::particleswarm::{Particle, ParticleSwarm};
use rand::SeedableRng;
use serde::Serialize;

use crate::error::TuneError;
use crate::trace::Trace;

/// Something that gives the cost of many positions at once (in parallel if it can).
pub trait BatchCost: Sync {
    /// The cost of each of `xs`, in order. A cost that fails for a reason of its own (a
    /// live benchmark) wraps it in [`TuneError::Objective`].
    fn cost_batch(&self, xs: &[Vec<f64>]) -> Result<Vec<f64>, TuneError>;
}

/// Any function of a position is a (sequential) batch cost: test functions, mostly.
impl<F: Fn(&[f64]) -> f64 + Sync> BatchCost for F {
    fn cost_batch(&self, xs: &[Vec<f64>]) -> Result<Vec<f64>, TuneError> {
        Ok(xs.iter().map(|x| self(x)).collect())
    }
}

/// The swarm's settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PsoParams {
    /// Number of particles (the paper: 20).
    pub particles: usize,
    /// Velocity updates after the initial swarm (the paper: 30).
    pub iterations: u64,
    /// Inertia weight w.
    pub w: f64,
    /// Cognitive parameter φp.
    pub phi_p: f64,
    /// Social parameter φg.
    pub phi_g: f64,
    /// Seeds the random numbers (initial swarm, rp, rg): the same seed gives the same run.
    pub seed: u64,
}

impl Default for PsoParams {
    /// The paper's optimized swarm: 20 particles, 30 iterations, w = 0.4365 and
    /// φg = 3.020 from its RSM meta-optimization, and φp = 3.020 ("for completeness,
    /// ϕ_r was also set to 3.020" — read as φp, the only other parameter).
    fn default() -> Self {
        PsoParams { particles: 20, iterations: 30, w: 0.4365, phi_p: 3.020, phi_g: 3.020, seed: 1 }
    }
}

/// What a swarm found and how fast.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PsoOutcome {
    /// The best position found.
    pub best: Vec<f64>,
    /// Its cost.
    pub best_value: f64,
    /// Every evaluation's value, in order.
    pub trace: Trace,
    /// The swarm's best after the initial swarm (index 0) and after each iteration.
    pub per_iteration_best: Vec<f64>,
}

impl PsoOutcome {
    /// Evaluations made.
    pub fn evaluations(&self) -> usize {
        self.trace.evaluations()
    }

    /// Evaluations until the best value was first seen.
    pub fn evaluations_to_best(&self) -> usize {
        self.trace.evaluations_to_best()
    }

    /// The paper's I*: the iteration, counting the initial swarm as 1, in which the best
    /// value was first reached (at most `iterations + 1`).
    pub fn iteration_of_best(&self) -> usize {
        self.per_iteration_best.iter().position(|&v| v <= self.best_value).map_or(0, |i| i + 1)
    }
}

/// argmin's view of a [`BatchCost`]: records every value it hands out.
struct Recorded<'a, C: ?Sized> {
    cost: &'a C,
    trace: Mutex<Trace>,
}

impl<C: BatchCost + ?Sized> CostFunction for Recorded<'_, C> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, Error> {
        Ok(self.bulk_cost(std::slice::from_ref(x))?[0])
    }

    fn bulk_cost<P>(&self, params: &[P]) -> Result<Vec<f64>, Error>
    where
        P: Borrow<Vec<f64>> + SyncAlias,
        f64: argmin::core::SendAlias,
        Self: SyncAlias,
    {
        let xs: Vec<Vec<f64>> = params.iter().map(|p| p.borrow().clone()).collect();
        // Wrapped whole, so that `particle_swarm` gets it back from argmin's error.
        let values = self.cost.cost_batch(&xs).map_err(Error::new)?;
        self.trace.lock().expect("trace lock").extend(&values);
        Ok(values)
    }
}

type SwarmState = PopulationState<Particle<Vec<f64>, f64>, f64>;

/// Records the swarm's best cost after initialization and after every iteration.
struct BestPerIteration(Arc<Mutex<Vec<f64>>>);

impl BestPerIteration {
    fn record(&self, state: &SwarmState) {
        let best = state.get_best_cost().min(state.get_cost());
        self.0.lock().expect("observer lock").push(best);
    }
}

impl Observe<SwarmState> for BestPerIteration {
    fn observe_init(&mut self, _name: &str, state: &SwarmState, _kv: &KV) -> Result<(), Error> {
        self.record(state);
        Ok(())
    }

    fn observe_iter(&mut self, state: &SwarmState, _kv: &KV) -> Result<(), Error> {
        self.record(state);
        Ok(())
    }
}

/// Minimizes `cost` over the box `lower..=upper` (one bound per dimension) with a
/// particle swarm. An error of `cost` is returned as it is.
pub fn particle_swarm<C: BatchCost + ?Sized>(
    cost: &C,
    lower: &[f64],
    upper: &[f64],
    params: &PsoParams,
) -> Result<PsoOutcome, TuneError> {
    if lower.is_empty() || lower.len() != upper.len() {
        return Err(TuneError::BoundsLength { lower: lower.len(), upper: upper.len() });
    }
    if let Some(i) = (0..lower.len()).find(|&i| lower[i].partial_cmp(&upper[i]).is_none_or(|o| o.is_gt())) {
        return Err(TuneError::BoundsOrder { dimension: i, lower: lower[i], upper: upper[i] });
    }
    if params.particles == 0 {
        return Err(TuneError::NoParticles);
    }
    let solver = ParticleSwarm::new((lower.to_vec(), upper.to_vec()), params.particles)
        .with_rng_generator(rand_pcg::Pcg64::seed_from_u64(params.seed))
        .with_inertia_factor(params.w)
        .and_then(|s| s.with_cognitive_factor(params.phi_p))
        .and_then(|s| s.with_social_factor(params.phi_g))
        .map_err(|e| TuneError::Swarm(e.into()))?;
    let problem = Recorded { cost, trace: Mutex::new(Trace::default()) };
    let per_iteration = Arc::new(Mutex::new(Vec::new()));
    let result = Executor::new(problem, solver)
        .configure(|state| state.max_iters(params.iterations))
        .add_observer(BestPerIteration(Arc::clone(&per_iteration)), ObserverMode::Always)
        .run()
        .map_err(|e| e.downcast::<TuneError>().unwrap_or_else(|e| TuneError::Swarm(e.into())))?;
    let state = result.state();
    let best = state.get_best_param().ok_or(TuneError::NoBest)?;
    let best_value = best.cost;
    let best = best.position.clone();
    let trace = result.problem.problem.as_ref().ok_or(TuneError::ProblemKept)?.trace.lock();
    let trace = trace.expect("trace lock").clone();
    let per_iteration_best = per_iteration.lock().expect("observer lock").clone();
    Ok(PsoOutcome { best, best_value, trace, per_iteration_best })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sphere(x: &[f64]) -> f64 {
        x.iter().map(|v| (v - 1.0) * (v - 1.0)).sum()
    }

    fn rosenbrock(x: &[f64]) -> f64 {
        (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2)
    }

    #[test]
    fn finds_the_centre_of_a_shifted_sphere() {
        // Clerc's constriction constants: the paper's w = 0.4365, φp = φg = 3.02 make
        // a swarm that keeps exploding to the bounds (fine for its coarse landscape).
        let p = PsoParams { w: 0.7298, phi_p: 1.49618, phi_g: 1.49618, seed: 7, ..PsoParams::default() };
        let out = particle_swarm(&sphere, &[-5.0; 3], &[5.0; 3], &p).unwrap();
        assert!(out.best_value < 1e-3, "{} at {:?}", out.best_value, out.best);
        assert!(out.best.iter().all(|v| (v - 1.0).abs() < 0.05), "{:?}", out.best);
        // 20 particles × (1 initial swarm + 30 iterations).
        assert_eq!(out.evaluations(), 620);
        assert_eq!(out.per_iteration_best.len(), 31);
        assert_eq!(out.trace.best(), Some(out.best_value));
        assert!(out.evaluations_to_best() > 20 && out.evaluations_to_best() <= 620);
        let i = out.iteration_of_best();
        assert_eq!(i, (out.evaluations_to_best() - 1) / 20 + 1, "one batch of 20 per iteration");
        // The same seed gives the same run; another seed another one.
        assert_eq!(particle_swarm(&sphere, &[-5.0; 3], &[5.0; 3], &p).unwrap(), out);
        let q = PsoParams { seed: 8, ..p };
        assert_ne!(particle_swarm(&sphere, &[-5.0; 3], &[5.0; 3], &q).unwrap().best, out.best);
    }

    #[test]
    fn finds_the_rosenbrock_valley_minimum() {
        let p = PsoParams { particles: 40, iterations: 200, w: 0.7, phi_p: 1.5, phi_g: 1.5, seed: 3 };
        let out = particle_swarm(&rosenbrock, &[-2.0, -2.0], &[2.0, 2.0], &p).unwrap();
        assert!(out.best_value < 1e-4, "{} at {:?}", out.best_value, out.best);
        assert!((out.best[0] - 1.0).abs() < 0.02 && (out.best[1] - 1.0).abs() < 0.04, "{:?}", out.best);
        // The best per iteration never gets worse.
        assert!(out.per_iteration_best.windows(2).all(|w| w[1] <= w[0]));
    }

    #[test]
    fn a_failing_cost_is_returned_as_it_is() {
        struct Failing;
        impl BatchCost for Failing {
            fn cost_batch(&self, _: &[Vec<f64>]) -> Result<Vec<f64>, TuneError> {
                Err(TuneError::Objective("the benchmark died".into()))
            }
        }
        let e = particle_swarm(&Failing, &[0.0], &[1.0], &PsoParams::default()).unwrap_err();
        assert!(matches!(e, TuneError::Objective(_)), "{e:?}");
        assert_eq!(e.to_string(), "the benchmark died");
    }

    #[test]
    fn rejects_bad_bounds_and_settings() {
        let p = PsoParams::default();
        assert!(particle_swarm(&sphere, &[0.0], &[1.0, 2.0], &p).is_err());
        assert!(particle_swarm(&sphere, &[2.0], &[1.0], &p).is_err());
        assert!(particle_swarm(&sphere, &[0.0], &[1.0], &PsoParams { w: -1.0, ..p.clone() }).is_err());
        assert!(particle_swarm(&sphere, &[0.0], &[1.0], &PsoParams { particles: 0, ..p }).is_err());
    }
}

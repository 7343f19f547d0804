//! The record of one search: every objective value in the order the search asked for
//! it, from which the best so far and the evaluations needed to reach the best follow.

use serde::Serialize;

/// The objective values one search received, in order (evaluation 1 first).
///
/// An evaluation is one request of the objective by the search — one "benchmark
/// execution" in the paper's counting — whether or not a cache answered it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Trace {
    pub values: Vec<f64>,
}

impl Trace {
    /// Appends the values of one batch of evaluations.
    pub fn extend(&mut self, values: &[f64]) {
        self.values.extend_from_slice(values);
    }

    /// How many evaluations the search made.
    pub fn evaluations(&self) -> usize {
        self.values.len()
    }

    /// The smallest value seen, `None` before the first evaluation.
    pub fn best(&self) -> Option<f64> {
        self.values.iter().copied().fold(None, |m, v| Some(m.map_or(v, |m: f64| m.min(v))))
    }

    /// The 1-based number of the evaluation that first reached the best value (the
    /// paper's "benchmark executions to reach its minimum"); 0 when there were none.
    pub fn evaluations_to_best(&self) -> usize {
        self.best().map_or(0, |b| self.evaluations_to_reach(b).unwrap_or(0))
    }

    /// The 1-based number of the first evaluation whose value was at most `target`.
    pub fn evaluations_to_reach(&self, target: f64) -> Option<usize> {
        self.values.iter().position(|&v| v <= target).map(|i| i + 1)
    }

    /// The best value after each evaluation (the convergence curve).
    pub fn best_so_far(&self) -> Vec<f64> {
        let mut best = f64::INFINITY;
        self.values
            .iter()
            .map(|&v| {
                best = best.min(v);
                best
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_and_when_it_was_reached() {
        let t = Trace { values: vec![5.0, 3.0, 4.0, 2.0, 2.0, 6.0] };
        assert_eq!(t.best(), Some(2.0));
        assert_eq!(t.evaluations_to_best(), 4);
        assert_eq!(t.evaluations_to_reach(3.5), Some(2));
        assert_eq!(t.evaluations_to_reach(1.0), None);
        assert_eq!(t.best_so_far(), vec![5.0, 3.0, 3.0, 2.0, 2.0, 2.0]);
        assert_eq!(Trace::default().evaluations_to_best(), 0);
    }
}

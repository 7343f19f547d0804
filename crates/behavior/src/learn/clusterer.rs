//! Unsupervised grouping of processes by a Gaussian mixture fitted with EM (the
//! thesis's EM clustering in Weka), with the number of clusters chosen by the Bayesian
//! information criterion.
//!
//! linfa-clustering fits the mixture (full covariances, k-means initialization, fixed
//! seed, so fitting is deterministic); the result is stored in this module's own
//! serializable `Component`s, and the log-likelihood, BIC and `assign` are computed
//! here from those parameters. Features are standardized (z-scores over the training
//! rows) before fitting so that rates in the thousands do not drown ratios in 0..1;
//! the shift and scale are part of the model.
//!
//! BIC = p ln n − 2 ln L, with p = (k − 1) + k d + k d (d + 1) / 2 free parameters for
//! k components of full covariance in d dimensions; the smallest BIC wins. A k for which
//! EM fails (an empty cluster, no convergence, k > n) is skipped.

use linfa::prelude::*;
use linfa_clustering::GaussianMixtureModel;
use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::dataset::Dataset;
use super::error::LearnError;
use super::features::FeatureVector;

/// Parameters of the model search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GmmParams {
    /// Largest number of clusters tried (from 1).
    pub max_k: usize,
    /// EM stops when the lower bound changes by less than this.
    pub tolerance: f64,
    /// EM gives up after this many iterations.
    pub max_iterations: u64,
}

impl Default for GmmParams {
    fn default() -> Self {
        GmmParams { max_k: 6, tolerance: 1e-4, max_iterations: 200 }
    }
}

/// One Gaussian of the mixture, in standardized feature space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Component {
    /// Mixing weight (the weights sum to 1).
    pub weight: f64,
    /// Mean vector.
    pub mean: Vec<f64>,
    /// Covariance matrix, row-major `d × d`.
    pub covariance: Vec<Vec<f64>>,
}

/// A fitted mixture: which features, how they are standardized, the components, and
/// the BIC of every k that was tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Clusterer {
    features: Vec<String>,
    shift: Vec<f64>,
    scale: Vec<f64>,
    components: Vec<Component>,
    bic: Vec<(usize, f64)>,
}

/// Lower-triangular Cholesky factor of `a`, `None` if `a` is not positive definite.
fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let d = a.len();
    let mut l = vec![vec![0.0; d]; d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let v = a[i][i] - s;
                if v <= 0.0 || !v.is_finite() {
                    return None;
                }
                l[i][i] = v.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    Some(l)
}

impl Component {
    /// ln(weight · N(x | mean, covariance)); −∞ for a degenerate covariance.
    fn log_weighted_density(&self, x: &[f64]) -> f64 {
        let Some(l) = cholesky(&self.covariance) else {
            return f64::NEG_INFINITY;
        };
        let d = x.len();
        // Solve L y = x − mean; the Mahalanobis distance is |y|².
        let mut y = vec![0.0; d];
        for i in 0..d {
            let s: f64 = (0..i).map(|k| l[i][k] * y[k]).sum();
            y[i] = (x[i] - self.mean[i] - s) / l[i][i];
        }
        let mahalanobis: f64 = y.iter().map(|v| v * v).sum();
        let log_det: f64 = 2.0 * (0..d).map(|i| l[i][i].ln()).sum::<f64>();
        self.weight.ln() - 0.5 * (d as f64 * (2.0 * std::f64::consts::PI).ln() + log_det + mahalanobis)
    }
}

/// ln Σ exp(v), stable.
fn log_sum_exp(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return max;
    }
    max + v.iter().map(|x| (x - max).exp()).sum::<f64>().ln()
}

/// Log-likelihood of the standardized rows `x` under `components`.
fn log_likelihood(components: &[Component], x: &Array2<f64>) -> f64 {
    x.rows()
        .into_iter()
        .map(|row| {
            let row = row.to_vec();
            let logs: Vec<f64> = components.iter().map(|c| c.log_weighted_density(&row)).collect();
            log_sum_exp(&logs)
        })
        .sum()
}

impl Clusterer {
    /// Fits mixtures with k = 1..=`params.max_k` on all rows of `dataset` (labels are
    /// ignored, NaN counts as 0) and keeps the one with the smallest BIC.
    pub fn fit(dataset: &Dataset, params: &GmmParams) -> Result<Clusterer, LearnError> {
        let (n, d) = (dataset.rows.len(), dataset.features.len());
        if n == 0 || d == 0 {
            return Err(LearnError::Empty);
        }
        if params.max_k == 0 {
            return Err(LearnError::Param("max_k must be at least 1".into()));
        }
        let raw = Array2::from_shape_fn((n, d), |(i, j)| {
            let v = dataset.rows[i].values[j];
            if v.is_nan() {
                0.0
            } else {
                v
            }
        });
        let shift: Vec<f64> = (0..d).map(|j| raw.column(j).sum() / n as f64).collect();
        let scale: Vec<f64> = (0..d)
            .map(|j| {
                let var = raw.column(j).iter().map(|v| (v - shift[j]).powi(2)).sum::<f64>() / n as f64;
                if var > 0.0 {
                    var.sqrt()
                } else {
                    1.0
                }
            })
            .collect();
        let x = Array2::from_shape_fn((n, d), |(i, j)| (raw[(i, j)] - shift[j]) / scale[j]);
        let data = DatasetBase::from(x.clone());
        let mut best: Option<(f64, Vec<Component>)> = None;
        let mut bic = Vec::new();
        for k in 1..=params.max_k.min(n) {
            let Ok(gmm) = GaussianMixtureModel::params(k)
                .tolerance(params.tolerance)
                .max_n_iterations(params.max_iterations)
                .fit(&data)
            else {
                continue;
            };
            let components: Vec<Component> = (0..k)
                .map(|c| Component {
                    weight: gmm.weights()[c],
                    mean: gmm.means().row(c).to_vec(),
                    covariance: (0..d)
                        .map(|i| (0..d).map(|j| gmm.covariances()[(c, i, j)]).collect())
                        .collect(),
                })
                .collect();
            let log_l = log_likelihood(&components, &x);
            if !log_l.is_finite() {
                continue;
            }
            let p = (k - 1) + k * d + k * d * (d + 1) / 2;
            let score = p as f64 * (n as f64).ln() - 2.0 * log_l;
            bic.push((k, score));
            if best.as_ref().is_none_or(|(b, _)| score < *b) {
                best = Some((score, components));
            }
        }
        let (_, components) =
            best.ok_or_else(|| LearnError::Fit(format!("EM failed for every k in 1..={}", params.max_k)))?;
        Ok(Clusterer { features: dataset.features.clone(), shift, scale, components, bic })
    }

    /// The number of clusters chosen.
    pub fn k(&self) -> usize {
        self.components.len()
    }

    /// The chosen mixture's components (standardized space).
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// `(k, BIC)` for every k that fitted, in increasing k.
    pub fn bic(&self) -> &[(usize, f64)] {
        &self.bic
    }

    /// The most probable cluster of `vector` and its posterior probability. Features
    /// the model knows but the vector lacks (or has as NaN) count as 0.
    pub fn assign(&self, vector: &FeatureVector) -> (usize, f64) {
        let x: Vec<f64> = self
            .features
            .iter()
            .enumerate()
            .map(|(j, f)| {
                let v = vector.get(f).filter(|v| !v.is_nan()).unwrap_or(0.0);
                (v - self.shift[j]) / self.scale[j]
            })
            .collect();
        let logs: Vec<f64> = self.components.iter().map(|c| c.log_weighted_density(&x)).collect();
        let total = log_sum_exp(&logs);
        let (best, log_best) =
            logs.iter().copied().enumerate().fold((0, f64::NEG_INFINITY), |acc, (i, l)| {
                if l > acc.1 {
                    (i, l)
                } else {
                    acc
                }
            });
        let probability = if total.is_finite() { (log_best - total).exp() } else { 0.0 };
        (best, probability)
    }

    /// The model as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a clusterer always serializes")
    }

    /// A model saved by `to_json`.
    pub fn from_json(text: &str) -> Result<Clusterer, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::classifier::tests::Noise;
    use crate::learn::dataset::Row;

    /// `per_blob` points around each center, deviation 1 in both dimensions.
    fn blobs(centers: &[(f64, f64)], per_blob: usize) -> Dataset {
        let mut noise = Noise(11);
        let mut rows = Vec::new();
        for (b, &(cx, cy)) in centers.iter().enumerate() {
            for i in 0..per_blob {
                rows.push(Row {
                    process: format!("p{b}-{i}"),
                    values: vec![noise.normal(cx, 1.0), noise.normal(cy, 1.0)],
                    class: None,
                });
            }
        }
        Dataset { relation: "blobs".into(), features: vec!["x".into(), "y".into()], rows }
    }

    #[test]
    fn bic_picks_two_for_two_blobs() {
        let data = blobs(&[(0.0, 0.0), (20.0, 20.0)], 60);
        let model = Clusterer::fit(&data, &GmmParams::default()).unwrap();
        assert_eq!(model.k(), 2, "{:?}", model.bic());
        let (a, pa) = model.assign(&data.vector(0));
        let (b, pb) = model.assign(&data.vector(100));
        assert_ne!(a, b);
        assert!(pa > 0.99 && pb > 0.99, "{pa} {pb}");
        let point = FeatureVector { names: vec!["y".into(), "x".into()], values: vec![19.0, 21.0] };
        assert_eq!(model.assign(&point).0, b);
        let loaded = Clusterer::from_json(&model.to_json()).unwrap();
        assert_eq!(loaded.assign(&point), model.assign(&point));
    }

    #[test]
    fn bic_picks_one_for_one_blob() {
        let data = blobs(&[(5.0, -3.0)], 120);
        let model = Clusterer::fit(&data, &GmmParams::default()).unwrap();
        assert_eq!(model.k(), 1, "{:?}", model.bic());
        assert_eq!(model.assign(&data.vector(7)), (0, 1.0));
        assert!(model.bic().len() >= 2, "several k were compared");
    }
}

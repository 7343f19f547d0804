//! Unsupervised grouping of processes by a Gaussian mixture fitted with EM (the
//! thesis's EM clustering in Weka), with the number of clusters chosen by the Bayesian
//! information criterion.
//!
//! # Why the mixture is fitted this way
//!
//! Real profiles (data/profiles.arff: 531 rows, 151 features) defeated the first version,
//! which gave linfa-clustering's full-covariance EM the standardized features: EM failed
//! for every k from 2 to 6 ("cluster has no more point") and the failures were skipped
//! without a word, so one cluster was reported. Three things were wrong with the data as
//! the mixture saw it, and are fixed here:
//!
//! - **Constant features.** 46 system calls were never made by any profiled program;
//!   their variance is 0 (plus linfa's 1e-6), which gives every component an enormous,
//!   meaningless density. Features constant over the training rows are dropped (and
//!   listed in [`Clusterer::dropped`]).
//! - **Heavy tails.** Rates spread over orders of magnitude (system calls: under one a
//!   second for an idle server process, 26,000 for a load generator); `ln(1 + x)` of them
//!   is far closer to normal ([`GmmParams::log_transform`]). Features are then
//!   standardized.
//! - **Too many parameters.** A full covariance in 105 dimensions has 5,565 free
//!   parameters per component, ten times the number of rows: it is singular without
//!   regularization and, with it, BIC measures the regularization. Each component here
//!   has one variance per feature (a diagonal covariance, the independent per-attribute
//!   normals of Weka's EM), plus [`GmmParams::reg_variance`] so that a cluster in which a
//!   feature is constant (a call none of its programs makes) has a finite density.
//!
//! linfa-clustering only has full covariances, so EM is written here (`em_run`):
//! each k gets [`GmmParams::inits`] starts from k-means++ (Arthur and Vassilvitskii 2007)
//! with a seeded generator, and keeps its most likely fit; a start fails when a cluster
//! empties, a component loses all its rows, or EM has not converged in
//! `max_iterations`. A k whose every start failed is reported with the reasons
//! ([`Clusterer::failed`]), not dropped silently.
//!
//! BIC = p ln n − 2 ln L, with p = (k − 1) + 2 k d free parameters for k components of
//! diagonal covariance in d dimensions; the smallest BIC wins. On the shipped data it
//! still falls at k = 6 (and on up to about 13, roughly one cluster per distinct
//! program), so `max_k` bounds the answer there; the clusters found are in the README.
//! With d = 105, posteriors are nearly always 0 or 1.
//!
//! The model keeps the kept features, the transform, the shift and scale of the
//! standardization and the components, so `assign` needs no data. Files written by the
//! full-covariance version still load (their components have `covariance`).

use ndarray::{Array2, ArrayView1};
use serde::{Deserialize, Serialize};

use super::dataset::Dataset;
use super::error::{LearnError, ModelFileError};
use super::features::FeatureVector;
use super::rng::SplitMix64;

/// Parameters of the model search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GmmParams {
    /// Largest number of clusters tried (from 1).
    pub max_k: usize,
    /// EM stops when the mean log-likelihood per row changes by less than this.
    pub tolerance: f64,
    /// An EM run that has not converged after this many iterations is given up.
    pub max_iterations: u64,
    /// Added to every variance (features are standardized, so this is a share of a
    /// feature's overall variance): keeps a cluster in which a feature is constant from
    /// an infinite density.
    pub reg_variance: f64,
    /// EM runs per k, each from its own k-means++ start; the most likely one is kept.
    pub inits: usize,
    /// Seed of the starts: the same seed and data give the same model.
    pub seed: u64,
    /// Fit `ln(1 + x)` (sign kept) of each feature rather than `x`: rates spread over
    /// orders of magnitude, and their logarithms are far closer to normal.
    pub log_transform: bool,
}

impl Default for GmmParams {
    fn default() -> Self {
        GmmParams {
            max_k: 6,
            tolerance: 1e-6,
            max_iterations: 500,
            reg_variance: 1e-2,
            inits: 5,
            seed: 0,
            log_transform: true,
        }
    }
}

/// The most features a model file may have (the shipped profiles have 151).
pub const MAX_FEATURES: usize = 4096;
/// The most components a model file may have.
pub const MAX_COMPONENTS: usize = 1024;

/// One Gaussian of the mixture, in standardized feature space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Component {
    /// Mixing weight (the weights sum to 1).
    pub weight: f64,
    /// Mean vector.
    pub mean: Vec<f64>,
    /// Variance of each feature (a diagonal covariance), what `fit` produces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variances: Vec<f64>,
    /// A full covariance matrix, row-major `d × d`: models written by earlier versions;
    /// used when `variances` is empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub covariance: Vec<Vec<f64>>,
}

/// A number of clusters for which EM found no mixture, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KFailure {
    /// The number of clusters.
    pub k: usize,
    /// Why every start failed.
    pub reason: String,
}

/// A fitted mixture: which features, how they are transformed and standardized, the
/// components, the BIC of every k that fitted and the reason of every k that did not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Clusterer {
    features: Vec<String>,
    #[serde(default)]
    log_transform: bool,
    shift: Vec<f64>,
    scale: Vec<f64>,
    components: Vec<Component>,
    bic: Vec<(usize, f64)>,
    #[serde(default)]
    failed: Vec<KFailure>,
    #[serde(default)]
    dropped: Vec<String>,
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

const LN_2PI: f64 = 1.837_877_066_409_345_5;

impl Component {
    /// ln(weight · N(x | mean, covariance)); −∞ for a degenerate covariance.
    fn log_weighted_density(&self, x: &[f64]) -> f64 {
        let d = x.len();
        if !self.variances.is_empty() {
            let mut s = 0.0;
            for ((&x, &m), &v) in x.iter().zip(&self.mean).zip(&self.variances) {
                if v.is_nan() || v <= 0.0 {
                    return f64::NEG_INFINITY;
                }
                s += v.ln() + (x - m) * (x - m) / v;
            }
            return self.weight.ln() - 0.5 * (d as f64 * LN_2PI + s);
        }
        let Some(l) = cholesky(&self.covariance) else {
            return f64::NEG_INFINITY;
        };
        // Solve L y = x − mean; the Mahalanobis distance is |y|².
        let mut y = vec![0.0; d];
        for i in 0..d {
            let s: f64 = (0..i).map(|k| l[i][k] * y[k]).sum();
            y[i] = (x[i] - self.mean[i] - s) / l[i][i];
        }
        let mahalanobis: f64 = y.iter().map(|v| v * v).sum();
        let log_det: f64 = 2.0 * (0..d).map(|i| l[i][i].ln()).sum::<f64>();
        self.weight.ln() - 0.5 * (d as f64 * LN_2PI + log_det + mahalanobis)
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

/// `ln(1 + |x|)` with the sign of `x`.
fn signed_log1p(x: f64) -> f64 {
    x.signum() * x.abs().ln_1p()
}

/// Squared Euclidean distance.
fn distance2(a: ArrayView1<f64>, b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Why one EM run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum RunFailure {
    /// k-means++ and Lloyd's iterations left a cluster without rows.
    EmptyStart,
    /// During EM a component's responsibilities summed to (almost) nothing.
    Collapsed,
    /// The log-likelihood was still changing after `max_iterations`.
    NoConvergence,
    /// The likelihood became NaN or infinite.
    NotFinite,
}

impl RunFailure {
    fn describe(self, params: &GmmParams) -> String {
        match self {
            RunFailure::EmptyStart => "k-means++ left a cluster empty".into(),
            RunFailure::Collapsed => "a component lost all its rows during EM".into(),
            RunFailure::NoConvergence => format!("no convergence in {} iterations", params.max_iterations),
            RunFailure::NotFinite => "the likelihood became infinite or NaN".into(),
        }
    }
}

/// A start for EM: k-means++ seeding (Arthur and Vassilvitskii 2007) then up to 50 of
/// Lloyd's iterations; the hard assignment of every row.
fn kmeans_start(x: &Array2<f64>, k: usize, rng: &mut SplitMix64) -> Result<Vec<usize>, RunFailure> {
    let n = x.nrows();
    let mut centers: Vec<Vec<f64>> = vec![x.row(rng.below(n)).to_vec()];
    let mut nearest: Vec<f64> = x.rows().into_iter().map(|r| distance2(r, &centers[0])).collect();
    while centers.len() < k {
        let total: f64 = nearest.iter().sum();
        let pick = if total > 0.0 {
            let mut u = rng.uniform() * total;
            nearest
                .iter()
                .position(|&w| {
                    u -= w;
                    u < 0.0
                })
                .unwrap_or(n - 1)
        } else {
            rng.below(n)
        };
        centers.push(x.row(pick).to_vec());
        for (i, r) in x.rows().into_iter().enumerate() {
            nearest[i] = nearest[i].min(distance2(r, centers.last().expect("just pushed")));
        }
    }
    let mut assignment = vec![usize::MAX; n];
    for _ in 0..50 {
        let mut changed = false;
        for (i, r) in x.rows().into_iter().enumerate() {
            let best = (0..k)
                .map(|c| (c, distance2(r, &centers[c])))
                .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a })
                .0;
            changed |= assignment[i] != best;
            assignment[i] = best;
        }
        if !changed {
            break;
        }
        let d = x.ncols();
        let mut sums = vec![vec![0.0; d]; k];
        let mut counts = vec![0usize; k];
        for (i, r) in x.rows().into_iter().enumerate() {
            counts[assignment[i]] += 1;
            sums[assignment[i]].iter_mut().zip(r).for_each(|(s, v)| *s += v);
        }
        if counts.contains(&0) {
            return Err(RunFailure::EmptyStart);
        }
        for c in 0..k {
            centers[c] = sums[c].iter().map(|s| s / counts[c] as f64).collect();
        }
    }
    Ok(assignment)
}

/// The M step: weights, means and regularized diagonal variances from the
/// responsibilities `resp` (`n × k`).
fn m_step(x: &Array2<f64>, resp: &Array2<f64>, reg: f64) -> Result<Vec<Component>, RunFailure> {
    let (n, d) = x.dim();
    let k = resp.ncols();
    let mut components = Vec::with_capacity(k);
    for c in 0..k {
        let r = resp.column(c);
        let nk: f64 = r.sum();
        if nk.is_nan() || nk <= 1e-9 * n as f64 {
            return Err(RunFailure::Collapsed);
        }
        let mut mean = vec![0.0; d];
        for (ri, row) in r.iter().zip(x.rows()) {
            mean.iter_mut().zip(row).for_each(|(m, v)| *m += ri * v);
        }
        mean.iter_mut().for_each(|m| *m /= nk);
        let mut variances = vec![0.0; d];
        for (ri, row) in r.iter().zip(x.rows()) {
            variances.iter_mut().zip(row).zip(&mean).for_each(|((s, v), m)| *s += ri * (v - m) * (v - m));
        }
        variances.iter_mut().for_each(|s| *s = *s / nk + reg);
        components.push(Component { weight: nk / n as f64, mean, variances, covariance: Vec::new() });
    }
    Ok(components)
}

/// The E step: the responsibilities (`n × k`) and the mean log-likelihood per row.
fn e_step(x: &Array2<f64>, components: &[Component]) -> (Array2<f64>, f64) {
    let k = components.len();
    let mut resp = Array2::zeros((x.nrows(), k));
    let mut total = 0.0;
    let mut logs = vec![0.0; k];
    for (i, row) in x.rows().into_iter().enumerate() {
        let row = row.to_vec();
        for (l, c) in logs.iter_mut().zip(components) {
            *l = c.log_weighted_density(&row);
        }
        let norm = log_sum_exp(&logs);
        total += norm;
        for c in 0..k {
            resp[(i, c)] = (logs[c] - norm).exp();
        }
    }
    (resp, total / x.nrows() as f64)
}

/// One EM run from a k-means++ start: the components and the total log-likelihood.
fn em_run(
    x: &Array2<f64>,
    k: usize,
    params: &GmmParams,
    rng: &mut SplitMix64,
) -> Result<(Vec<Component>, f64), RunFailure> {
    let assignment = kmeans_start(x, k, rng)?;
    let mut start = Array2::zeros((x.nrows(), k));
    for (i, &c) in assignment.iter().enumerate() {
        start[(i, c)] = 1.0;
    }
    let mut components = m_step(x, &start, params.reg_variance)?;
    let mut previous = f64::NEG_INFINITY;
    for _ in 0..params.max_iterations {
        let (r, mean_log_l) = e_step(x, &components);
        if !mean_log_l.is_finite() {
            return Err(RunFailure::NotFinite);
        }
        if (mean_log_l - previous).abs() < params.tolerance {
            return Ok((components, mean_log_l * x.nrows() as f64));
        }
        previous = mean_log_l;
        components = m_step(x, &r, params.reg_variance)?;
    }
    Err(RunFailure::NoConvergence)
}

impl Clusterer {
    /// Fits mixtures with k = 1..=`params.max_k` on all rows of `dataset` (labels are
    /// ignored, NaN counts as 0) and keeps the one with the smallest BIC. Features that
    /// are constant over the rows are dropped (they cannot tell clusters apart, and
    /// their variance would be 0); a k for which every EM start failed is reported in
    /// [`failed`](Self::failed). An error only if no k fitted.
    pub fn fit(dataset: &Dataset, params: &GmmParams) -> Result<Clusterer, LearnError> {
        let n = dataset.rows.len();
        if n == 0 || dataset.features.is_empty() {
            return Err(LearnError::Empty);
        }
        if params.max_k == 0 || params.inits == 0 {
            return Err(LearnError::Param("max_k and inits must be at least 1".into()));
        }
        if params.reg_variance.is_nan() || params.reg_variance <= 0.0 {
            return Err(LearnError::Param("reg_variance must be positive".into()));
        }
        let value = |i: usize, j: usize| {
            let v = dataset.rows[i].values[j];
            let v = if v.is_nan() { 0.0 } else { v };
            if params.log_transform {
                signed_log1p(v)
            } else {
                v
            }
        };
        let (mut kept, mut dropped, mut shift, mut scale) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (j, name) in dataset.features.iter().enumerate() {
            let mean = (0..n).map(|i| value(i, j)).sum::<f64>() / n as f64;
            let var = (0..n).map(|i| (value(i, j) - mean).powi(2)).sum::<f64>() / n as f64;
            if var > 1e-12 * mean.abs().max(1.0) {
                kept.push(j);
                shift.push(mean);
                scale.push(var.sqrt());
            } else {
                dropped.push(name.clone());
            }
        }
        if kept.is_empty() {
            return Err(LearnError::Shape("every feature is constant: nothing to cluster on".into()));
        }
        let d = kept.len();
        let x = Array2::from_shape_fn((n, d), |(i, c)| (value(i, kept[c]) - shift[c]) / scale[c]);
        let mut rng = SplitMix64::new(params.seed);
        let mut best: Option<(f64, Vec<Component>)> = None;
        let (mut bic, mut failed) = (Vec::new(), Vec::new());
        for k in 1..=params.max_k {
            if k > n {
                failed.push(KFailure { k, reason: format!("more clusters than the {n} rows") });
                continue;
            }
            let mut fitted: Option<(Vec<Component>, f64)> = None;
            let mut failures: Vec<RunFailure> = Vec::new();
            for _ in 0..params.inits {
                match em_run(&x, k, params, &mut rng) {
                    Ok((components, log_l)) => {
                        if fitted.as_ref().is_none_or(|(_, best)| log_l > *best) {
                            fitted = Some((components, log_l));
                        }
                    }
                    Err(why) => failures.push(why),
                }
            }
            let Some((components, log_l)) = fitted else {
                failures.sort();
                let mut reasons: Vec<String> = Vec::new();
                for why in &failures {
                    let text = why.describe(params);
                    let times = failures.iter().filter(|w| *w == why).count();
                    let text = if times > 1 { format!("{times} × {text}") } else { text };
                    if !reasons.contains(&text) {
                        reasons.push(text);
                    }
                }
                let reason = format!("all {} EM starts failed: {}", params.inits, reasons.join(", "));
                failed.push(KFailure { k, reason });
                continue;
            };
            let p = (k - 1) + 2 * k * d;
            let score = p as f64 * (n as f64).ln() - 2.0 * log_l;
            bic.push((k, score));
            if best.as_ref().is_none_or(|(b, _)| score < *b) {
                best = Some((score, components));
            }
        }
        let Some((_, components)) = best else {
            let why: Vec<String> = failed.iter().map(|f| format!("k = {}: {}", f.k, f.reason)).collect();
            return Err(LearnError::Fit(format!("EM failed for every k: {}", why.join("; "))));
        };
        Ok(Clusterer {
            features: kept.iter().map(|&j| dataset.features[j].clone()).collect(),
            log_transform: params.log_transform,
            shift,
            scale,
            components,
            bic,
            failed,
            dropped,
        })
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

    /// Every k that was tried and did not fit, with the reason.
    pub fn failed(&self) -> &[KFailure] {
        &self.failed
    }

    /// The features the mixture reads (those that varied over the training rows).
    pub fn features(&self) -> &[String] {
        &self.features
    }

    /// The dataset's features left out because they were constant over its rows.
    pub fn dropped(&self) -> &[String] {
        &self.dropped
    }

    /// The posterior probability of every cluster for `vector`. Features the model knows
    /// but the vector lacks (or has as NaN) count as 0.
    pub fn probabilities(&self, vector: &FeatureVector) -> Vec<f64> {
        let x: Vec<f64> = self
            .features
            .iter()
            .enumerate()
            .map(|(j, f)| {
                let v = vector.get(f).filter(|v| !v.is_nan()).unwrap_or(0.0);
                let v = if self.log_transform { signed_log1p(v) } else { v };
                (v - self.shift[j]) / self.scale[j]
            })
            .collect();
        let logs: Vec<f64> = self.components.iter().map(|c| c.log_weighted_density(&x)).collect();
        let total = log_sum_exp(&logs);
        if !total.is_finite() {
            return vec![0.0; logs.len()];
        }
        logs.iter().map(|l| (l - total).exp()).collect()
    }

    /// The most probable cluster of `vector` and its posterior probability. Features
    /// the model knows but the vector lacks (or has as NaN) count as 0.
    pub fn assign(&self, vector: &FeatureVector) -> (usize, f64) {
        self.probabilities(vector).into_iter().enumerate().fold((0, f64::NEG_INFINITY), |acc, (i, p)| {
            if p > acc.1 {
                (i, p)
            } else {
                acc
            }
        })
    }

    /// The model as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a clusterer always serializes")
    }

    /// A model saved by `to_json`, checked: every vector as long as the features are
    /// many, a full covariance square, at most [`MAX_FEATURES`] features and
    /// [`MAX_COMPONENTS`] components (so that a file of a few bytes cannot make
    /// `assign` index out of bounds or allocate a `d × d` factor for a `d` it only
    /// claims).
    pub fn from_json(text: &str) -> Result<Clusterer, serde_json::Error> {
        let model: Clusterer = serde_json::from_str(text)?;
        model.check().map_err(<serde_json::Error as serde::de::Error>::custom)?;
        Ok(model)
    }

    /// What [`Clusterer::from_json`] checks.
    fn check(&self) -> Result<(), ModelFileError> {
        let d = self.features.len();
        if d > MAX_FEATURES {
            return Err(ModelFileError::TooManyFeatures(d));
        }
        if self.components.len() > MAX_COMPONENTS || self.components.is_empty() {
            return Err(ModelFileError::ComponentCount(self.components.len()));
        }
        if self.shift.len() != d || self.scale.len() != d {
            return Err(ModelFileError::Normalization {
                features: d,
                shifts: self.shift.len(),
                scales: self.scale.len(),
            });
        }
        for (i, c) in self.components.iter().enumerate() {
            let square = c.covariance.len() == d && c.covariance.iter().all(|row| row.len() == d);
            let shape_ok =
                c.mean.len() == d && (c.variances.len() == d || (c.variances.is_empty() && square));
            if !shape_ok {
                return Err(ModelFileError::ComponentShape {
                    component: i,
                    means: c.mean.len(),
                    variances: c.variances.len(),
                    covariance_rows: c.covariance.len(),
                    features: d,
                });
            }
        }
        Ok(())
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
    fn constant_features_are_dropped_and_failed_k_are_reported() {
        // Two values, five rows each, and a constant feature: k = 3 cannot be fitted
        // (k-means++ has two distinct points for three centers), k = 12 exceeds the rows.
        let rows = (0..10)
            .map(|i| Row {
                process: format!("p{i}"),
                values: vec![f64::from(u8::from(i < 5)) * 10.0, 7.0],
                class: None,
            })
            .collect();
        let data = Dataset { relation: "two".into(), features: vec!["x".into(), "same".into()], rows };
        let params = GmmParams { max_k: 3, inits: 3, ..GmmParams::default() };
        let model = Clusterer::fit(&data, &params).unwrap();
        assert_eq!(model.features(), ["x"]);
        assert_eq!(model.dropped(), ["same"]);
        assert_eq!(model.k(), 2, "{:?} {:?}", model.bic(), model.failed());
        assert_eq!(model.failed().len(), 1);
        assert_eq!(model.failed()[0].k, 3);
        assert!(model.failed()[0].reason.contains("all 3 EM starts failed"), "{:?}", model.failed());
        let big = Clusterer::fit(&data, &GmmParams { max_k: 12, inits: 1, ..params }).unwrap();
        let failed: Vec<usize> = big.failed().iter().map(|f| f.k).collect();
        assert_eq!(failed, (3..=12).collect::<Vec<_>>());
        assert!(big.failed()[9].reason.contains("more clusters than the 10 rows"), "{:?}", big.failed());
        let json: serde_json::Value = serde_json::from_str(&big.to_json()).unwrap();
        assert_eq!(json["failed"][0]["k"], 3);
        // Every feature constant: nothing to cluster on, said so.
        let flat = Dataset { features: vec!["same".into()], ..data.clone() };
        let flat = Dataset {
            rows: flat.rows.iter().map(|r| Row { values: vec![7.0], ..r.clone() }).collect(),
            ..flat
        };
        let e = Clusterer::fit(&flat, &params).unwrap_err().to_string();
        assert!(e.contains("constant"), "{e}");
    }

    #[test]
    fn files_of_the_full_covariance_version_still_load() {
        let old = r#"{"features": ["x", "y"], "shift": [0, 0], "scale": [1, 1],
            "components": [
                {"weight": 0.5, "mean": [0, 0], "covariance": [[1, 0], [0, 1]]},
                {"weight": 0.5, "mean": [10, 10], "covariance": [[1, 0.5], [0.5, 1]]}],
            "bic": [[1, 10.0], [2, 5.0]]}"#;
        let model = Clusterer::from_json(old).unwrap();
        assert_eq!(model.k(), 2);
        assert!(model.failed().is_empty() && model.dropped().is_empty());
        let at = |x: f64, y: f64| FeatureVector { names: vec!["x".into(), "y".into()], values: vec![x, y] };
        assert_eq!(model.assign(&at(0.5, -0.5)).0, 0);
        assert_eq!(model.assign(&at(9.0, 10.0)).0, 1);
        let p = model.probabilities(&at(5.0, 5.0));
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn a_model_file_that_does_not_fit_together_is_refused() {
        let ok = r#"{"features": ["x"], "shift": [0], "scale": [1], "bic": [],
            "components": [{"weight": 1, "mean": [0], "variances": [1]}]}"#;
        assert!(Clusterer::from_json(ok).is_ok());
        for (bad, says) in [
            (ok.replace(r#""shift": [0]"#, r#""shift": []"#), "shifts"),
            (ok.replace(r#""mean": [0]"#, r#""mean": [0, 1]"#), "component 0"),
            (ok.replace(r#""variances": [1]"#, r#""covariance": [[1, 2]]"#), "component 0"),
            // A covariance of many rows for one feature: a d × d factor never made.
            (
                ok.replace(
                    r#""variances": [1]"#,
                    &format!(r#""covariance": [{}]"#, vec!["[]"; 5000].join(",")),
                ),
                "component 0",
            ),
            (
                ok.replace(
                    r#""components": [{"weight": 1, "mean": [0], "variances": [1]}]"#,
                    r#""components": []"#,
                ),
                "components",
            ),
        ] {
            let e = Clusterer::from_json(&bad).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn fitting_is_deterministic_and_the_log_transform_is_kept() {
        let data = blobs(&[(1.0, 100.0), (300.0, 2.0), (40.0, 40.0)], 30);
        let params = GmmParams { max_k: 4, ..GmmParams::default() };
        let a = Clusterer::fit(&data, &params).unwrap();
        assert_eq!(Clusterer::fit(&data, &params).unwrap(), a);
        assert_eq!(a.k(), 3, "{:?}", a.bic());
        let loaded = Clusterer::from_json(&a.to_json()).unwrap();
        for i in [0, 35, 70] {
            assert_eq!(loaded.assign(&data.vector(i)).0, a.assign(&data.vector(i)).0);
        }
        let plain = Clusterer::fit(&data, &GmmParams { log_transform: false, ..params }).unwrap();
        assert_eq!(plain.k(), 3, "{:?}", plain.bic());
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

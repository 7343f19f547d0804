//! A decision-tree classifier of processes (the role J48 played in the thesis),
//! trained with linfa-trees (CART, Gini) and evaluated by k-fold cross-validation and
//! leave-one-program-out.
//!
//! Storage: the fitted linfa tree is converted into this module's own `Node` tree,
//! which is what gets serialized (JSON through serde). Loading therefore needs no
//! retraining and no linfa serde feature. During the conversion every training row is
//! routed down the tree and each leaf keeps the class counts of the rows that reached
//! it; `predict`'s confidence is the leaf's purity, the share of its training rows that
//! have the predicted class.
//!
//! Missing values (NaN) are treated as 0, like an unseen system call.

use std::fmt;

use linfa::prelude::*;
use linfa_trees::{DecisionTree, TreeNode};
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use super::dataset::Dataset;
use super::error::LearnError;
use super::features::FeatureVector;

/// Hyperparameters of the tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TreeParams {
    /// Deepest level the tree may grow to; `None` grows until leaves are pure.
    pub max_depth: Option<usize>,
    /// Fewest training rows a leaf may hold (J48's `-M`, default 2 there too).
    pub min_rows_per_leaf: usize,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams { max_depth: None, min_rows_per_leaf: 2 }
    }
}

/// A node of the stored tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Node {
    /// A decision: go left if `value < threshold` (linfa's prediction rule).
    Split { feature: usize, threshold: f64, left: Box<Node>, right: Box<Node> },
    /// A leaf predicting class `class`; `counts[c]` training rows of class `c` end here.
    Leaf { class: usize, counts: Vec<usize> },
}

/// A trained classifier: the feature names it expects, the class names, and the tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Classifier {
    features: Vec<String>,
    classes: Vec<String>,
    root: Node,
}

/// Program-name patterns mapped to classes, for labeling unlabeled data: `*` matches
/// any run of characters, `?` any one character; the first matching rule wins.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabelRules {
    /// `(pattern, class)` pairs, tried in order.
    pub rules: Vec<(String, String)>,
}

/// A confusion matrix: `counts[actual][predicted]`, indices into `classes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfusionMatrix {
    /// Class names, the order of rows and columns.
    pub classes: Vec<String>,
    /// `counts[a][p]` rows of class `a` were predicted as class `p`.
    pub counts: Vec<Vec<usize>>,
}

/// The result of an evaluation: accuracy and where the errors went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Share of rows predicted correctly (0..=1).
    pub accuracy: f64,
    /// The confusion matrix over all tested rows.
    pub confusion: ConfusionMatrix,
}

/// Whether `text` matches the glob `pattern` (`*` and `?`).
fn glob(pattern: &[char], text: &[char]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some(('*', rest)) => (0..=text.len()).any(|i| glob(rest, &text[i..])),
        Some((&p, rest)) => match text.split_first() {
            Some((&t, text)) if p == '?' || p == t => glob(rest, text),
            _ => false,
        },
    }
}

impl LabelRules {
    /// The class of program `name`, from the first rule whose pattern matches.
    pub fn class_of(&self, name: &str) -> Option<&str> {
        let text: Vec<char> = name.chars().collect();
        self.rules
            .iter()
            .find(|(pattern, _)| glob(&pattern.chars().collect::<Vec<_>>(), &text))
            .map(|(_, class)| class.as_str())
    }

    /// A copy of `dataset` with every row labeled by the rules; rows no rule matches
    /// are dropped.
    pub fn label(&self, dataset: &Dataset) -> Dataset {
        let rows = dataset
            .rows
            .iter()
            .filter_map(|row| {
                self.class_of(&row.process).map(|class| {
                    let mut row = row.clone();
                    row.class = Some(class.to_string());
                    row
                })
            })
            .collect();
        Dataset { rows, ..dataset.clone() }
    }
}

impl ConfusionMatrix {
    /// An all-zero matrix over `classes`.
    fn new(classes: Vec<String>) -> ConfusionMatrix {
        let n = classes.len();
        ConfusionMatrix { classes, counts: vec![vec![0; n]; n] }
    }

    /// Total number of rows counted.
    pub fn total(&self) -> usize {
        self.counts.iter().flatten().sum()
    }

    /// Share of rows on the diagonal; 0 for an empty matrix.
    pub fn accuracy(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        let correct: usize = (0..self.classes.len()).map(|i| self.counts[i][i]).sum();
        correct as f64 / total as f64
    }
}

impl fmt::Display for ConfusionMatrix {
    /// Weka-style: one row per actual class, one column per predicted class.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .classes
            .iter()
            .map(|c| c.len())
            .chain(self.counts.iter().flatten().map(|n| n.to_string().len()))
            .max()
            .unwrap_or(1)
            .max("actual \\ predicted".len());
        write!(f, "{:>width$}", "actual \\ predicted")?;
        for class in &self.classes {
            write!(f, " {class:>width$}")?;
        }
        writeln!(f)?;
        for (class, row) in self.classes.iter().zip(&self.counts) {
            write!(f, "{class:>width$}")?;
            for n in row {
                write!(f, " {n:>width$}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// The rows' feature matrix, NaN replaced by 0.
fn matrix(dataset: &Dataset, rows: &[usize]) -> Array2<f64> {
    let d = dataset.features.len();
    Array2::from_shape_fn((rows.len(), d), |(i, j)| {
        let x = dataset.rows[rows[i]].values[j];
        if x.is_nan() {
            0.0
        } else {
            x
        }
    })
}

/// Converts linfa's tree into a `Node` tree with empty leaf counts.
fn convert(node: &TreeNode<f64, usize>, n_classes: usize) -> Node {
    let children = node.children();
    match (node.prediction(), children[0], children[1]) {
        (None, Some(left), Some(right)) => {
            let (feature, threshold, _) = node.split();
            Node::Split {
                feature,
                threshold,
                left: Box::new(convert(left, n_classes)),
                right: Box::new(convert(right, n_classes)),
            }
        }
        (prediction, _, _) => {
            Node::Leaf { class: prediction.unwrap_or_default(), counts: vec![0; n_classes] }
        }
    }
}

impl Node {
    /// The leaf `x` reaches.
    fn leaf(&self, x: &[f64]) -> &Node {
        match self {
            Node::Split { feature, threshold, left, right } => {
                if x[*feature] < *threshold {
                    left.leaf(x)
                } else {
                    right.leaf(x)
                }
            }
            leaf => leaf,
        }
    }

    /// Counts a training row of class `class` in the leaf `x` reaches.
    fn count(&mut self, x: &[f64], class: usize) {
        match self {
            Node::Split { feature, threshold, left, right } => {
                if x[*feature] < *threshold {
                    left.count(x, class)
                } else {
                    right.count(x, class)
                }
            }
            Node::Leaf { counts, .. } => counts[class] += 1,
        }
    }
}

/// The shipped model (JSON), trained on data/profiles.arff (see the README's "Default
/// model"): what `schedlab classify` and the daemon use when given no model.
pub const DEFAULT_MODEL_JSON: &str = include_str!("../../../../data/model.json");

impl Classifier {
    /// The shipped model ([`DEFAULT_MODEL_JSON`]).
    pub fn shipped() -> Classifier {
        Classifier::from_json(DEFAULT_MODEL_JSON).expect("the shipped model is valid (a test checks it)")
    }

    /// Trains a tree on every row of `dataset`; all rows must be labeled.
    pub fn train(dataset: &Dataset, params: &TreeParams) -> Result<Classifier, LearnError> {
        let rows: Vec<usize> = (0..dataset.rows.len()).collect();
        Classifier::train_rows(dataset, &rows, &dataset.classes(), params)
    }

    /// Labels `dataset` with `rules` (dropping rows no rule matches) and trains on it.
    pub fn train_with_rules(
        dataset: &Dataset,
        rules: &LabelRules,
        params: &TreeParams,
    ) -> Result<Classifier, LearnError> {
        Classifier::train(&rules.label(dataset), params)
    }

    /// Trains on the rows `rows` of `dataset`, numbering classes as in `classes`.
    fn train_rows(
        dataset: &Dataset,
        rows: &[usize],
        classes: &[String],
        params: &TreeParams,
    ) -> Result<Classifier, LearnError> {
        if rows.is_empty() || dataset.features.is_empty() {
            return Err(LearnError::Empty);
        }
        let mut targets = Vec::with_capacity(rows.len());
        for &r in rows {
            let row = &dataset.rows[r];
            let class = row
                .class
                .as_ref()
                .and_then(|c| classes.iter().position(|k| k == c))
                .ok_or_else(|| LearnError::Unlabeled { row: r, process: row.process.clone() })?;
            targets.push(class);
        }
        let records = matrix(dataset, rows);
        let data = linfa::Dataset::new(records.clone(), Array1::from(targets.clone()))
            .with_feature_names(dataset.features.clone());
        let tree: DecisionTree<f64, usize> = DecisionTree::params()
            .max_depth(params.max_depth)
            .min_weight_leaf(params.min_rows_per_leaf.max(1) as f32)
            .min_weight_split(2.0 * params.min_rows_per_leaf.max(1) as f32)
            .fit(&data)
            .map_err(|e| LearnError::Fit(e.to_string()))?;
        let mut root = convert(tree.root_node(), classes.len());
        for (x, &class) in records.rows().into_iter().zip(&targets) {
            root.count(&x.to_vec(), class);
        }
        Ok(Classifier { features: dataset.features.clone(), classes: classes.to_vec(), root })
    }

    /// The class names, in the order of the confusion matrices.
    pub fn classes(&self) -> &[String] {
        &self.classes
    }

    /// The feature names the model reads (others in a vector are ignored; missing ones
    /// count as 0).
    pub fn features(&self) -> &[String] {
        &self.features
    }

    /// The predicted class and its confidence: the share of the training rows in the
    /// reached leaf that have that class (0 if no training row reached it).
    pub fn predict(&self, vector: &FeatureVector) -> (String, f64) {
        let x: Vec<f64> =
            self.features.iter().map(|f| vector.get(f).filter(|v| !v.is_nan()).unwrap_or(0.0)).collect();
        match self.root.leaf(&x) {
            Node::Leaf { class, counts } => {
                let total: usize = counts.iter().sum();
                let confidence = if total == 0 { 0.0 } else { counts[*class] as f64 / total as f64 };
                (self.classes[*class].clone(), confidence)
            }
            Node::Split { .. } => unreachable!("Node::leaf always returns a leaf"),
        }
    }

    /// The model as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a classifier always serializes")
    }

    /// A model saved by `to_json`.
    pub fn from_json(text: &str) -> Result<Classifier, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Trains on all folds but one and tests on it, `k` times: row `i` is in fold
    /// `i % k`, so a dataset sorted by class gets stratified folds. Deterministic.
    pub fn cross_validate(
        dataset: &Dataset,
        params: &TreeParams,
        k: usize,
    ) -> Result<Evaluation, LearnError> {
        let n = dataset.rows.len();
        if k < 2 || k > n {
            return Err(LearnError::Param(format!("k = {k} for {n} rows")));
        }
        let folds: Vec<usize> = (0..n).map(|i| i % k).collect();
        evaluate(dataset, params, &folds, k)
    }

    /// Leave-one-program-out: for every distinct process name, trains on the other
    /// programs' rows and tests on its rows — does the model generalize to programs it
    /// has never seen?
    pub fn leave_one_program_out(dataset: &Dataset, params: &TreeParams) -> Result<Evaluation, LearnError> {
        let mut programs: Vec<&str> = Vec::new();
        let folds: Vec<usize> = dataset
            .rows
            .iter()
            .map(|row| {
                programs.iter().position(|p| *p == row.process).unwrap_or_else(|| {
                    programs.push(&row.process);
                    programs.len() - 1
                })
            })
            .collect();
        if programs.len() < 2 {
            return Err(LearnError::Param("fewer than two programs".into()));
        }
        evaluate(dataset, params, &folds, programs.len())
    }
}

/// Trains without fold `f` and tests on it, for every `f < n_folds`.
fn evaluate(
    dataset: &Dataset,
    params: &TreeParams,
    folds: &[usize],
    n_folds: usize,
) -> Result<Evaluation, LearnError> {
    let classes = dataset.classes();
    let mut confusion = ConfusionMatrix::new(classes.clone());
    for fold in 0..n_folds {
        let train: Vec<usize> = (0..folds.len()).filter(|&i| folds[i] != fold).collect();
        let model = Classifier::train_rows(dataset, &train, &classes, params)?;
        for i in (0..folds.len()).filter(|&i| folds[i] == fold) {
            let actual =
                dataset.rows[i].class.as_ref().and_then(|c| classes.iter().position(|k| k == c)).ok_or_else(
                    || LearnError::Unlabeled { row: i, process: dataset.rows[i].process.clone() },
                )?;
            let (predicted, _) = model.predict(&dataset.vector(i));
            let predicted = classes.iter().position(|k| *k == predicted).unwrap_or(0);
            confusion.counts[actual][predicted] += 1;
        }
    }
    Ok(Evaluation { accuracy: confusion.accuracy(), confusion })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::learn::dataset::Row;

    /// A small deterministic generator (SplitMix64) so tests need no rand dependency.
    pub(crate) struct Noise(pub u64);

    impl Noise {
        /// Uniform in [0, 1).
        pub(crate) fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }

        /// Approximately normal (sum of 12 uniforms), mean `m`, deviation `s`.
        pub(crate) fn normal(&mut self, m: f64, s: f64) -> f64 {
            m + s * ((0..12).map(|_| self.next()).sum::<f64>() - 6.0)
        }
    }

    /// Interactive programs make few calls and sleep a lot; background ones the
    /// opposite. Four programs per class, five windows each; rows ordered by program.
    fn synthetic() -> Dataset {
        let mut noise = Noise(7);
        let mut rows = Vec::new();
        for (class, calls, sleep) in [("INTERACTIVE", 50.0, 0.9), ("BACKGROUND", 5000.0, 0.1)] {
            for p in 0..4 {
                for _ in 0..5 {
                    rows.push(Row {
                        process: format!("{class}-{p}"),
                        values: vec![
                            noise.normal(calls, calls * 0.1),
                            noise.normal(sleep, 0.03),
                            noise.normal(10.0, 3.0),
                        ],
                        class: Some(class.into()),
                    });
                }
            }
        }
        Dataset {
            relation: "synthetic".into(),
            features: vec!["syscall.rate".into(), "sleep.ratio".into(), "noise".into()],
            rows,
        }
    }

    #[test]
    fn separable_classes_are_learned() {
        let data = synthetic();
        let params = TreeParams::default();
        let cv = Classifier::cross_validate(&data, &params, 5).unwrap();
        assert!(cv.accuracy >= 0.95, "{}\n{}", cv.accuracy, cv.confusion);
        assert_eq!(cv.confusion.total(), 40);
        let lopo = Classifier::leave_one_program_out(&data, &params).unwrap();
        assert!(lopo.accuracy >= 0.95, "{}", lopo.confusion);
        let model = Classifier::train(&data, &params).unwrap();
        let (class, confidence) = model.predict(&FeatureVector {
            names: vec!["syscall.rate".into(), "sleep.ratio".into()],
            values: vec![40.0, 0.95],
        });
        assert_eq!(class, "INTERACTIVE");
        assert!(confidence > 0.9);
        let loaded = Classifier::from_json(&model.to_json()).unwrap();
        assert_eq!(loaded, model);
        let (class, _) = loaded.predict(&data.vector(35));
        assert_eq!(class, "BACKGROUND");
    }

    #[test]
    fn unlearnable_labels_score_low() {
        // Labels alternate regardless of the features: accuracy must not look good.
        let mut data = synthetic();
        for (i, row) in data.rows.iter_mut().enumerate() {
            row.class = Some(if i % 2 == 0 { "A" } else { "B" }.into());
        }
        let cv = Classifier::cross_validate(&data, &TreeParams::default(), 5).unwrap();
        assert!(cv.accuracy < 0.8, "{}", cv.accuracy);
    }

    #[test]
    fn rules_label_by_program_name() {
        let rules = LabelRules {
            rules: vec![
                ("INTER*".into(), "UI".into()),
                ("BACK?ROUND-[0-9]".into(), "never".into()),
                ("BACK*".into(), "BATCH".into()),
            ],
        };
        assert_eq!(rules.class_of("INTERACTIVE-3"), Some("UI"));
        assert_eq!(rules.class_of("BACKGROUND-1"), Some("BATCH"));
        assert_eq!(rules.class_of("other"), None);
        let mut data = synthetic();
        data.rows.iter_mut().for_each(|r| r.class = None);
        data.rows[0].process = "unmatched".into();
        let labeled = rules.label(&data);
        assert_eq!(labeled.rows.len(), 39);
        let model = Classifier::train_with_rules(&data, &rules, &TreeParams::default()).unwrap();
        assert_eq!(model.classes(), ["UI", "BATCH"]);
        assert!(matches!(
            Classifier::train(&data, &TreeParams::default()),
            Err(LearnError::Unlabeled { row: 0, .. })
        ));
    }

    #[test]
    fn confusion_matrix_prints() {
        let m =
            ConfusionMatrix { classes: vec!["A".into(), "B".into()], counts: vec![vec![3, 1], vec![0, 4]] };
        assert_eq!(m.accuracy(), 7.0 / 8.0);
        let text = m.to_string();
        assert_eq!(text.lines().count(), 3);
        assert!(text.lines().nth(1).unwrap().trim_start().starts_with("A"));
    }
}

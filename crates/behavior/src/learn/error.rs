//! Errors of training, evaluating and loading models (parse errors live next to their
//! parsers).

/// Why a model could not be trained, evaluated or applied.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// The dataset has no rows (after dropping the unlabeled ones, for a classifier).
    #[error("the dataset has no usable rows")]
    Empty,
    /// A row that training needs labeled has no class.
    #[error("row {row} (process {process:?}) has no class")]
    Unlabeled {
        /// Index of the row in the dataset.
        row: usize,
        /// The row's process name, to find it in the source data.
        process: String,
    },
    /// A parameter is out of its range (for example k-fold with k < 2).
    #[error("invalid parameter: {0}")]
    Param(String),
    /// The underlying linfa algorithm failed.
    #[error("training failed: {0}")]
    Fit(String),
    /// The ARFF data does not have the shape asked for.
    #[error("dataset shape: {0}")]
    Shape(String),
}

/// Why a saved model was refused although it is valid JSON: its parts do not fit
/// together, and using it would index out of bounds or allocate what the file only
/// claims. The counts at fault are kept; `Classifier::from_json` and
/// `Clusterer::from_json` report it inside their `serde_json::Error`, as they report the
/// file's other problems.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModelFileError {
    /// A classifier without any tree.
    #[error("a classifier needs `trees` (or the one tree `root`)")]
    NoTrees,
    /// A classifier's tree refers to a feature or class the file does not list (or it
    /// lists no class).
    #[error("a tree names a feature or class beyond the {features} features and {classes} classes")]
    TreeOutOfRange { features: usize, classes: usize },
    /// A classifier's confidence threshold is not a probability.
    #[error("min_confidence must be in 0..=1, not {0}")]
    MinConfidence(f64),
    /// A clusterer with more features than a model may have.
    #[error("{0} features, more than the {max} a model may have", max = super::clusterer::MAX_FEATURES)]
    TooManyFeatures(usize),
    /// A clusterer with no component, or more than a model may have.
    #[error("{0} components; a model has 1 to {max}", max = super::clusterer::MAX_COMPONENTS)]
    ComponentCount(usize),
    /// A clusterer's normalization does not have one shift and one scale per feature.
    #[error("{features} features but {shifts} shifts and {scales} scales")]
    Normalization { features: usize, shifts: usize, scales: usize },
    /// A clusterer's component does not have one mean and one variance per feature (or
    /// a square covariance of that size).
    #[error(
        "component {component}: a mean of {means} and {variances} variances (or a covariance of \
         {covariance_rows} rows) for {features} features"
    )]
    ComponentShape {
        component: usize,
        means: usize,
        variances: usize,
        covariance_rows: usize,
        features: usize,
    },
}

//! Errors of training and evaluating models (parse errors live next to their parsers).

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

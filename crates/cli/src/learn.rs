//! `schedlab learn`: train a classifier or a clusterer from a dataset (ARFF or CSV), as
//! the thesis did in Weka, and say how good it is.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use schedlab_behavior::learn::{
    long_from_arff, Arff, Classifier, Clusterer, Dataset, Evaluation, GmmParams, LabelRules, TreeParams,
};
use serde::Serialize;

/// Train behavior models from a dataset.
///
/// A dataset is an ARFF file (Weka's format, as the thesis used) or a CSV file, in the
/// wide shape (one row per process: a `process` column, numeric feature columns, and a
/// `class` column for labeled data) or, for ARFF, the thesis's long shape (syscall,
/// process, count[, class]), which is pivoted to the wide one.
#[derive(Debug, Args)]
pub struct LearnOpts {
    #[command(subcommand)]
    command: LearnCommand,
}

#[derive(Debug, Subcommand)]
enum LearnCommand {
    Train(TrainOpts),
    Cluster(ClusterOpts),
}

/// Train a decision tree (the thesis's J48 role) and print its k-fold and
/// leave-one-program-out accuracy with their confusion matrices.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:\n  schedlab learn train profiles.arff --out model.json\n  \
    schedlab learn train profiles.csv --labels labels.txt --folds 5 --json")]
struct TrainOpts {
    /// The dataset: FILE.arff or FILE.csv.
    data: PathBuf,
    /// Label the rows by program name instead of the dataset's class column: one rule per
    /// line, `PATTERN CLASS` (`*` and `?` wildcards; the first match wins; `#` comments).
    #[arg(long, value_name = "FILE")]
    labels: Option<PathBuf>,
    /// Folds of the cross-validation.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..))]
    folds: u32,
    /// Deepest level of the tree (default: until leaves are pure).
    #[arg(long)]
    max_depth: Option<usize>,
    /// Fewest training rows per leaf (J48's -M).
    #[arg(long, default_value_t = 2)]
    min_leaf: usize,
    /// Write the trained model (JSON) to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the evaluation as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Cluster the rows with a Gaussian mixture fitted by EM, choosing the number of
/// clusters by BIC (as Weka's EM chooses it by cross-validation).
#[derive(Debug, Args)]
#[command(after_long_help = "Example:\n  schedlab learn cluster profiles.arff --max-k 4 --out clusters.json")]
struct ClusterOpts {
    /// The dataset: FILE.arff or FILE.csv (a class column, if any, is ignored).
    data: PathBuf,
    /// The most clusters to try.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=32))]
    max_k: u32,
    /// Write the fitted model (JSON) to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(opts: &LearnOpts) -> Result<()> {
    match &opts.command {
        LearnCommand::Train(o) => train(o),
        LearnCommand::Cluster(o) => cluster(o),
    }
}

/// Reads a dataset, ARFF (wide or long) or CSV by its extension.
pub fn load_dataset(path: &Path) -> Result<Dataset> {
    let text = fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("dataset");
    let what = || format!("{} is not a valid dataset", path.display());
    match path.extension().and_then(|e| e.to_str()) {
        Some("csv") => Dataset::from_csv(name, &text).with_context(what),
        Some("arff") => {
            let arff = Arff::parse(&text).with_context(what)?;
            let long = arff.attribute_index("syscall").is_some() && arff.attribute_index("count").is_some();
            if long {
                let records = long_from_arff(&arff).with_context(what)?;
                Ok(Dataset::from_long(&arff.relation, &records))
            } else {
                Dataset::from_arff(&arff).with_context(what)
            }
        }
        _ => bail!("{}: name a .arff or .csv file", path.display()),
    }
}

/// Reads label rules: `PATTERN CLASS` per line.
fn load_labels(path: &Path) -> Result<LabelRules> {
    let text = fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut rules = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some(p), Some(c), None) => rules.push((p.to_string(), c.to_string())),
            _ => bail!("{}:{}: expected `PATTERN CLASS`, got `{line}`", path.display(), i + 1),
        }
    }
    Ok(LabelRules { rules })
}

/// What `learn train --json` prints.
#[derive(Serialize)]
struct TrainReport<'a> {
    rows: usize,
    classes: &'a [String],
    features: usize,
    folds: u32,
    kfold: &'a Evaluation,
    leave_one_program_out: &'a Evaluation,
    model: Option<&'a Path>,
}

fn train(o: &TrainOpts) -> Result<()> {
    let mut data = load_dataset(&o.data)?;
    if let Some(path) = &o.labels {
        data = load_labels(path)?.label(&data);
    }
    let params = TreeParams { max_depth: o.max_depth, min_rows_per_leaf: o.min_leaf };
    let model = Classifier::train(&data, &params).context("cannot train the classifier")?;
    let kfold =
        Classifier::cross_validate(&data, &params, o.folds as usize).context("cross-validation failed")?;
    let lopo = Classifier::leave_one_program_out(&data, &params).context("leave-one-program-out failed")?;
    if let Some(path) = &o.out {
        fs::write(path, model.to_json()).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let mut out = io::stdout().lock();
    if o.json {
        let report = TrainReport {
            rows: data.rows.len(),
            classes: model.classes(),
            features: model.features().len(),
            folds: o.folds,
            kfold: &kfold,
            leave_one_program_out: &lopo,
            model: o.out.as_deref(),
        };
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "trained on {} rows, {} features, classes {}",
        data.rows.len(),
        model.features().len(),
        model.classes().join(", ")
    )?;
    writeln!(out, "\n{}-fold cross-validation: {:.1} % correct", o.folds, kfold.accuracy * 100.0)?;
    write!(out, "{}", kfold.confusion)?;
    writeln!(out, "\nleave-one-program-out: {:.1} % correct", lopo.accuracy * 100.0)?;
    write!(out, "{}", lopo.confusion)?;
    if let Some(path) = &o.out {
        writeln!(out, "\nmodel written to {}", path.display())?;
    }
    Ok(())
}

/// What `learn cluster --json` prints.
#[derive(Serialize)]
struct ClusterReport<'a> {
    rows: usize,
    k: usize,
    bic: &'a [(usize, f64)],
    sizes: Vec<usize>,
    model: Option<&'a Path>,
}

fn cluster(o: &ClusterOpts) -> Result<()> {
    let data = load_dataset(&o.data)?;
    let params = GmmParams { max_k: o.max_k as usize, ..GmmParams::default() };
    let model = Clusterer::fit(&data, &params).context("cannot fit the Gaussian mixture")?;
    let mut sizes = vec![0; model.k()];
    for i in 0..data.rows.len() {
        sizes[model.assign(&data.vector(i)).0] += 1;
    }
    if let Some(path) = &o.out {
        fs::write(path, model.to_json()).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let mut out = io::stdout().lock();
    if o.json {
        let report = ClusterReport {
            rows: data.rows.len(),
            k: model.k(),
            bic: model.bic(),
            sizes,
            model: o.out.as_deref(),
        };
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "{} clusters chosen by BIC (lower is better):", model.k())?;
    for (k, bic) in model.bic() {
        writeln!(out, "  k = {k}: BIC {bic:.1}{}", if *k == model.k() { "  <- chosen" } else { "" })?;
    }
    for (c, n) in sizes.iter().enumerate() {
        writeln!(out, "cluster {c}: {n} rows")?;
    }
    if let Some(path) = &o.out {
        writeln!(out, "model written to {}", path.display())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::parse;
    use crate::Command;

    /// A wide ARFF of two separable classes: "interactive" rows sleep a lot and make few
    /// calls, "background" rows the opposite; five programs each, three rows per program.
    fn dataset(dir: &Path) -> PathBuf {
        let mut text = String::from(
            "@relation demo\n@attribute process string\n@attribute syscall.rate numeric\n\
             @attribute sleep.ratio numeric\n@attribute class {INTERACTIVE,BACKGROUND}\n@data\n",
        );
        for p in 0..5 {
            for r in 0..3 {
                let x = f64::from(p * 3 + r);
                text.push_str(&format!("'shell {p}',{},{},INTERACTIVE\n", 10.0 + x, 0.95 - x / 100.0));
                text.push_str(&format!("'gzip {p}',{},{},BACKGROUND\n", 5000.0 + 10.0 * x, 0.05 + x / 100.0));
            }
        }
        let path = dir.join("demo.arff");
        fs::write(&path, text).unwrap();
        path
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("schedlab-learn-{tag}-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn train_evaluates_and_writes_a_model_that_loads() {
        let dir = tmpdir("train");
        let data = dataset(&dir);
        let model = dir.join("model.json");
        let args =
            ["learn", "train", data.to_str().unwrap(), "--folds", "5", "--out", model.to_str().unwrap()];
        let Command::Learn(o) = parse(&args).unwrap().command else { panic!("not learn") };
        run(&o).unwrap();
        let m = Classifier::from_json(&fs::read_to_string(&model).unwrap()).unwrap();
        let d = load_dataset(&data).unwrap();
        assert_eq!(m.predict(&d.vector(0)).0, d.rows[0].class.clone().unwrap());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cluster_finds_the_two_groups() {
        let dir = tmpdir("cluster");
        let data = dataset(&dir);
        let model = dir.join("gmm.json");
        let args =
            ["learn", "cluster", data.to_str().unwrap(), "--max-k", "4", "--out", model.to_str().unwrap()];
        let Command::Learn(o) = parse(&args).unwrap().command else { panic!("not learn") };
        run(&o).unwrap();
        let m = Clusterer::from_json(&fs::read_to_string(&model).unwrap()).unwrap();
        assert_eq!(m.k(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_inputs_say_what_is_wrong() {
        let dir = tmpdir("bad");
        let broken = dir.join("x.arff");
        fs::write(&broken, "@relation r\n@attribute a numeric\n@data\nnot-a-number\n").unwrap();
        let e = format!("{:#}", load_dataset(&broken).unwrap_err());
        assert!(e.contains("line 4"), "{e}");
        let e = load_dataset(&dir.join("x.txt")).unwrap_err().to_string();
        assert!(e.contains("cannot read") || e.contains(".arff or .csv"), "{e}");
        let labels = dir.join("labels");
        fs::write(&labels, "sh* INTERACTIVE\nbad line with words\n").unwrap();
        let e = load_labels(&labels).unwrap_err().to_string();
        assert!(e.contains(":2:"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }
}

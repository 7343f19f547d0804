//! `schedlab learn`: train a classifier or a clusterer from a dataset (ARFF or CSV), as
//! the thesis did in Weka, and say how good it is.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use schedlab_behavior::learn::{
    long_from_arff, Arff, Classifier, Clusterer, Dataset, Evaluation, GmmParams, KFailure, LabelRules,
    Threshold, TreeParams, DEFAULT_TREES, MIN_CONFIDENCE_PRECISION,
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

/// Train a bagged ensemble of decision trees (the thesis's J48 role) and print its k-fold
/// and leave-one-program-out accuracy with their confusion matrices and how well its
/// confidences are calibrated.
///
/// Each tree is grown on a bootstrap sample of the programs; a prediction's confidence
/// is the mean over the trees of the reached leaf's Laplace-smoothed class frequency.
/// The model stores the lowest confidence at which the leave-one-program-out predictions
/// were right 95 % of the time (`schedlab classify` marks predictions below it).
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
    /// Deepest level of the trees (default: until leaves are pure).
    #[arg(long)]
    max_depth: Option<usize>,
    /// Fewest training rows per leaf (J48's -M).
    #[arg(long, default_value_t = 2)]
    min_leaf: usize,
    /// Trees in the ensemble (1: a single tree on all rows, as before the ensemble).
    #[arg(long, default_value_t = DEFAULT_TREES as u16, value_parser = clap::value_parser!(u16).range(1..))]
    trees: u16,
    /// Seed of the bootstrap samples (the same seed and data give the same model).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the trained model (JSON) to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the evaluation as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Cluster the rows with a Gaussian mixture fitted by EM, choosing the number of
/// clusters by BIC (Weka's EM chooses it by cross-validated likelihood).
///
/// Features constant over the rows are dropped; the others are fitted as ln(1 + x),
/// standardized, with one variance per feature and cluster (as Weka's EM) plus a small
/// regularizing variance; each k gets several k-means++ starts. Every k that could not
/// be fitted is listed with the reason.
#[derive(Debug, Args)]
#[command(after_long_help = "Example:\n  schedlab learn cluster profiles.arff --max-k 4 --out clusters.json")]
struct ClusterOpts {
    /// The dataset: FILE.arff or FILE.csv (a class column, if any, is ignored).
    data: PathBuf,
    /// The most clusters to try.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=32))]
    max_k: u32,
    /// EM starts per number of clusters (the most likely fit is kept).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    inits: u32,
    /// Seed of the starts (the same seed and data give the same clusters).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the fitted model (JSON) to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(opts: &LearnOpts) -> Result<()> {
    match &opts.command {
        LearnCommand::Train(o) => train(o, &mut io::stdout().lock()),
        LearnCommand::Cluster(o) => cluster(o, &mut io::stdout().lock()),
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
    LabelRules::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// What `learn train --json` prints.
#[derive(Serialize)]
struct TrainReport<'a> {
    rows: usize,
    classes: &'a [String],
    features: usize,
    trees: usize,
    seed: u64,
    folds: u32,
    kfold: &'a Evaluation,
    leave_one_program_out: &'a Evaluation,
    /// The lowest confidence at which the leave-one-program-out predictions were right
    /// `MIN_CONFIDENCE_PRECISION` of the time; stored in the model.
    min_confidence: Option<&'a Threshold>,
    model: Option<&'a Path>,
}

/// A spinner on stderr for the steps of a long computation (hidden when stderr is not a
/// terminal or with `--json`).
fn spinner(quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .expect("a valid progress template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

fn train(o: &TrainOpts, out: &mut impl Write) -> Result<()> {
    let mut data = load_dataset(&o.data)?;
    if let Some(path) = &o.labels {
        data = load_labels(path)?.label(&data);
    }
    let params = TreeParams {
        max_depth: o.max_depth,
        min_rows_per_leaf: o.min_leaf,
        trees: usize::from(o.trees),
        seed: o.seed,
    };
    let bar = spinner(o.json);
    bar.set_message(format!("training {} trees on {} rows", o.trees, data.rows.len()));
    let model = Classifier::train(&data, &params).context("cannot train the classifier")?;
    bar.set_message(format!("{}-fold cross-validation", o.folds));
    let kfold =
        Classifier::cross_validate(&data, &params, o.folds as usize).context("cross-validation failed")?;
    bar.set_message("leave-one-program-out");
    let lopo = Classifier::leave_one_program_out(&data, &params).context("leave-one-program-out failed")?;
    bar.finish_and_clear();
    let threshold = lopo.min_confidence(MIN_CONFIDENCE_PRECISION);
    let model = match &threshold {
        Some(t) => model.with_min_confidence(t.confidence),
        None => model,
    };
    if let Some(path) = &o.out {
        fs::write(path, model.to_json()).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if o.json {
        let report = TrainReport {
            rows: data.rows.len(),
            classes: model.classes(),
            features: model.features().len(),
            trees: model.trees(),
            seed: o.seed,
            folds: o.folds,
            kfold: &kfold,
            leave_one_program_out: &lopo,
            min_confidence: threshold.as_ref(),
            model: o.out.as_deref(),
        };
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "trained {} on {} rows, {} features, classes {}",
        if model.trees() == 1 { "1 tree".to_string() } else { format!("{} trees", model.trees()) },
        data.rows.len(),
        model.features().len(),
        model.classes().join(", ")
    )?;
    for (title, e) in
        [(format!("{}-fold cross-validation", o.folds), &kfold), ("leave-one-program-out".to_string(), &lopo)]
    {
        writeln!(out, "\n{title}: {:.1} % correct", e.accuracy * 100.0)?;
        write!(out, "{}", e.confusion)?;
        write_reliability(out, e)?;
    }
    let percent = MIN_CONFIDENCE_PRECISION * 100.0;
    match &threshold {
        Some(t) => writeln!(
            out,
            "\nconfidence >= {:.3} was right {:.1} % of the time on unseen programs ({} of {} rows, \
             {:.0} % of them kept): the model's min_confidence",
            t.confidence,
            100.0 * t.correct as f64 / t.rows as f64,
            t.correct,
            t.rows,
            100.0 * t.coverage
        )?,
        None => writeln!(
            out,
            "\nno confidence threshold was right {percent:.0} % of the time on unseen programs: \
             the model keeps the default min_confidence {:.2}",
            model.min_confidence()
        )?,
    }
    if let Some(path) = &o.out {
        writeln!(out, "\nmodel written to {}", path.display())?;
    }
    Ok(())
}

/// The reliability table of an evaluation: per confidence bin, rows and share right.
fn write_reliability(out: &mut impl Write, e: &Evaluation) -> io::Result<()> {
    writeln!(
        out,
        "confidence   rows   right  (mean confidence; calibration error {:.3})",
        e.calibration_error()
    )?;
    for b in &e.reliability {
        writeln!(
            out,
            "{:.1}-{:.1}  {:>7} {:>6.1} %  ({:.3})",
            b.from,
            b.to,
            b.rows,
            100.0 * b.correct as f64 / b.rows as f64,
            b.mean_confidence
        )?;
    }
    Ok(())
}

/// One cluster of `learn cluster`'s report: its rows by process name, most first.
#[derive(Serialize)]
struct ClusterMembers {
    cluster: usize,
    rows: usize,
    processes: Vec<(String, usize)>,
}

/// What `learn cluster --json` prints.
#[derive(Serialize)]
struct ClusterReport<'a> {
    rows: usize,
    features: usize,
    dropped: &'a [String],
    k: usize,
    bic: &'a [(usize, f64)],
    failed: &'a [KFailure],
    sizes: Vec<usize>,
    clusters: &'a [ClusterMembers],
    model: Option<&'a Path>,
}

fn cluster(o: &ClusterOpts, out: &mut impl Write) -> Result<()> {
    let data = load_dataset(&o.data)?;
    let params =
        GmmParams { max_k: o.max_k as usize, inits: o.inits as usize, seed: o.seed, ..GmmParams::default() };
    let bar = spinner(o.json);
    bar.set_message(format!("EM for k = 1..{} ({} starts each)", o.max_k, o.inits));
    let fitted = Clusterer::fit(&data, &params);
    bar.finish_and_clear();
    let model = fitted.context("cannot fit the Gaussian mixture")?;
    let mut clusters: Vec<ClusterMembers> =
        (0..model.k()).map(|c| ClusterMembers { cluster: c, rows: 0, processes: Vec::new() }).collect();
    for i in 0..data.rows.len() {
        let c = &mut clusters[model.assign(&data.vector(i)).0];
        c.rows += 1;
        let name = &data.rows[i].process;
        match c.processes.iter_mut().find(|(p, _)| p == name) {
            Some((_, n)) => *n += 1,
            None => c.processes.push((name.clone(), 1)),
        }
    }
    for c in &mut clusters {
        c.processes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    }
    if let Some(path) = &o.out {
        fs::write(path, model.to_json()).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if o.json {
        let report = ClusterReport {
            rows: data.rows.len(),
            features: model.features().len(),
            dropped: model.dropped(),
            k: model.k(),
            bic: model.bic(),
            failed: model.failed(),
            sizes: clusters.iter().map(|c| c.rows).collect(),
            clusters: &clusters,
            model: o.out.as_deref(),
        };
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} rows, {} features{}",
        data.rows.len(),
        model.features().len(),
        if model.dropped().is_empty() {
            String::new()
        } else {
            format!(" ({} more dropped: constant over the rows)", model.dropped().len())
        }
    )?;
    writeln!(out, "{} clusters chosen by BIC (lower is better):", model.k())?;
    for k in 1..=o.max_k as usize {
        if let Some((_, bic)) = model.bic().iter().find(|(j, _)| *j == k) {
            writeln!(out, "  k = {k}: BIC {bic:.1}{}", if k == model.k() { "  <- chosen" } else { "" })?;
        } else if let Some(f) = model.failed().iter().find(|f| f.k == k) {
            writeln!(out, "  k = {k}: failed: {}", f.reason)?;
        }
    }
    if model.k() == o.max_k as usize && model.k() > 1 {
        writeln!(out, "(BIC still fell at the largest k tried: a larger --max-k may find more clusters)")?;
    }
    for c in &clusters {
        let shown: Vec<String> = c.processes.iter().take(12).map(|(p, n)| format!("{p} {n}")).collect();
        let more = c.processes.len().saturating_sub(12);
        writeln!(
            out,
            "cluster {}: {} rows: {}{}",
            c.cluster,
            c.rows,
            shown.join(", "),
            if more > 0 { format!(", and {more} more") } else { String::new() }
        )?;
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

    /// Runs `schedlab ARGS` (a learn command) and returns what it printed.
    fn output(args: &[&str]) -> String {
        let Command::Learn(o) = parse(args).unwrap().command else { panic!("not learn") };
        let mut out = Vec::new();
        match &o.command {
            LearnCommand::Train(t) => train(t, &mut out).unwrap(),
            LearnCommand::Cluster(c) => cluster(c, &mut out).unwrap(),
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn train_reports_calibration_and_stores_the_threshold() {
        let dir = tmpdir("train-report");
        let data = dataset(&dir);
        let model = dir.join("model.json");
        let (data, model_path) = (data.to_str().unwrap(), model.to_str().unwrap());
        let text = output(&["learn", "train", data, "--folds", "5", "--trees", "7", "--out", model_path]);
        assert!(text.contains("trained 7 trees on 30 rows"), "{text}");
        assert!(text.contains("calibration error"), "{text}");
        assert!(text.contains("the model's min_confidence"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&output(&["learn", "train", data, "--folds", "5", "--json"])).unwrap();
        assert_eq!(json["trees"], DEFAULT_TREES);
        assert!(json["leave_one_program_out"]["reliability"].as_array().is_some_and(|b| !b.is_empty()));
        let threshold = json["min_confidence"]["confidence"].as_f64().unwrap();
        assert!((0.5..=1.0).contains(&threshold), "{json}");
        // Separable data: every prediction of unseen programs is right, so the lowest
        // confidence is the threshold, and the model written carries one.
        let m = Classifier::from_json(&fs::read_to_string(&model).unwrap()).unwrap();
        assert_eq!(m.trees(), 7);
        assert!(m.min_confidence() < 1.0);
        let single = output(&["learn", "train", data, "--folds", "5", "--trees", "1"]);
        assert!(single.contains("trained 1 tree on"), "{single}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cluster_reports_failed_k_and_members() {
        let dir = tmpdir("cluster-report");
        // Two distinct rows, five times each, and a constant column: k = 3 cannot fit.
        let mut text = String::from(
            "@relation two\n@attribute process string\n@attribute x numeric\n@attribute c numeric\n@data\n",
        );
        for i in 0..10 {
            text.push_str(&format!(
                "{},{},1\n",
                if i < 5 { "low" } else { "high" },
                if i < 5 { 0 } else { 10 }
            ));
        }
        let path = dir.join("two.arff");
        fs::write(&path, text).unwrap();
        let path = path.to_str().unwrap();
        let human = output(&["learn", "cluster", path, "--max-k", "3", "--inits", "2"]);
        assert!(human.contains("(1 more dropped: constant over the rows)"), "{human}");
        assert!(human.contains("k = 2: BIC"), "{human}");
        assert!(
            human.contains("k = 3: failed: all 2 EM starts failed: 2 × k-means++ left a cluster empty"),
            "{human}"
        );
        assert!(human.contains("rows: high 5") && human.contains("rows: low 5"), "{human}");
        let json: serde_json::Value =
            serde_json::from_str(&output(&["learn", "cluster", path, "--max-k", "3", "--json"])).unwrap();
        assert_eq!(json["k"], 2);
        assert_eq!(json["failed"][0]["k"], 3);
        assert_eq!(json["dropped"][0], "c");
        assert_eq!(json["clusters"][0]["rows"], 5);
        assert_eq!(json["clusters"][0]["processes"][0][1], 5);
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
        assert!(e.contains("labels: line 2: expected `PATTERN CLASS`"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }
}

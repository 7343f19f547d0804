//! `schedlab classify`: observe the machine, then give every process a class (and a
//! cluster) from a learned model, as the thesis's Table 4-3 does.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use schedlab_behavior::learn::{Classifier, Clusterer};
use schedlab_model::Ns;
use serde::Serialize;

use crate::observe::observe_window;
use crate::table::{Align, Table};

/// Observe the live machine for a while, then print each process's class from a
/// learned classifier (with its probability, the confidence) and, with --clusters, its
/// Gaussian-mixture cluster.
///
/// A class whose confidence is below the model's threshold (the confidence from which
/// its predictions were right 95 % of the time on programs it had not seen) is marked
/// `?`: a guess, not to be acted upon.
///
/// Needs root (eBPF). Models come from `schedlab learn train --out` and
/// `schedlab learn cluster --out`.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:\n  sudo schedlab classify\n  \
    sudo schedlab classify --duration 30s --model model.json --clusters gmm.json --json")]
pub struct ClassifyOpts {
    /// How long to observe.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::args::duration)]
    duration: Ns,
    /// The classifier (JSON from `schedlab learn train --out`) [default: the model
    /// shipped with schedlab, data/model.json, built in].
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// A clusterer (JSON from `schedlab learn cluster --out`) to assign clusters too.
    #[arg(long, value_name = "FILE")]
    clusters: Option<PathBuf>,
    /// Classify only these processes; repeatable. All by default.
    #[arg(long = "pid", value_name = "PID")]
    pids: Vec<u32>,
    /// Print `{"min_confidence", "processes": [{pid, comm, class, confidence, confident,
    /// cluster, cluster_probability}]}` as JSON.
    #[arg(long)]
    json: bool,
}

/// One classified process.
#[derive(Debug, Serialize)]
struct Classified {
    pid: u32,
    comm: String,
    class: String,
    cluster: Option<usize>,
    confidence: f64,
    /// `confidence` is at least the model's threshold.
    confident: bool,
    cluster_probability: Option<f64>,
}

pub fn run(opts: &ClassifyOpts) -> Result<()> {
    let read =
        |p: &PathBuf| std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()));
    let model = match &opts.model {
        Some(p) => Classifier::from_json(&read(p)?)
            .with_context(|| format!("{} is not a classifier from `schedlab learn train`", p.display()))?,
        None => Classifier::shipped(),
    };
    let clusters =
        match &opts.clusters {
            Some(p) => Some(Clusterer::from_json(&read(p)?).with_context(|| {
                format!("{} is not a clusterer from `schedlab learn cluster`", p.display())
            })?),
            None => None,
        };
    let report = observe_window(opts.duration, &opts.pids)?;
    let processes: Vec<Classified> = report
        .processes
        .iter()
        .map(|p| {
            let features = p.profile().features();
            let (class, confidence) = model.predict(&features);
            let assigned = clusters.as_ref().map(|c| c.assign(&features));
            Classified {
                pid: p.pid,
                comm: p.comm.clone(),
                class,
                cluster: assigned.map(|a| a.0),
                confidence,
                confident: confidence >= model.min_confidence(),
                cluster_probability: assigned.map(|a| a.1),
            }
        })
        .collect();
    let mut out = io::stdout().lock();
    if opts.json {
        #[derive(Serialize)]
        struct Out<'a> {
            duration_ns: Ns,
            min_confidence: f64,
            processes: &'a [Classified],
        }
        serde_json::to_writer_pretty(
            &mut out,
            &Out {
                duration_ns: report.duration_ns,
                min_confidence: model.min_confidence(),
                processes: &processes,
            },
        )?;
        writeln!(out)?;
        return Ok(());
    }
    let mut t = Table::new(&[
        ("PID", Align::Right),
        ("COMM", Align::Left),
        ("CLASS", Align::Left),
        ("CONFIDENCE", Align::Right),
        ("CLUSTER", Align::Right),
    ]);
    for p in &processes {
        let cluster = p.cluster.map(|c| c.to_string()).unwrap_or_default();
        t.row(vec![
            p.pid.to_string(),
            p.comm.clone(),
            if p.confident { p.class.clone() } else { format!("{}?", p.class) },
            format!("{:.2}", p.confidence),
            cluster,
        ]);
    }
    t.write(&mut out)?;
    if processes.iter().any(|p| !p.confident) {
        writeln!(
            out,
            "? confidence below {:.2}, the model's threshold (95 % right on programs it had not seen): a guess",
            model.min_confidence()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_model_loads_and_knows_both_classes() {
        let m = Classifier::shipped();
        assert_eq!(m.classes(), ["BACKGROUND", "INTERACTIVE"]);
        assert!(m.trees() > 1, "the shipped model is an ensemble");
        let t = m.min_confidence();
        assert!(t > 0.5 && t < 1.0, "{t}");
    }
}

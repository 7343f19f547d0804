//! `schedlab reproduce`: run the papers' experiments in the simulator and write a report.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use schedlab_lab::papers::{Experiment, EXPERIMENTS};

use crate::provenance::{write_json, Provenance};
use crate::report;
use crate::table::{Align, Table};

/// Run the papers' experiments in the simulator, beside the papers' own values.
///
/// Each experiment rebuilds a paper's setup in the simulator (same programs, slices and
/// parameters) and measures what the paper measured. The results go to DIR/results.json
/// (an object: `provenance` (the build, machine, date and command), then experiment name
/// → setup, results by key, the paper's values, what the paper says its figure showed,
/// and the figures' data) and DIR/report.html (the figures as SVG, each value next to
/// the paper's). Every run gives the same numbers (the provenance's date aside).
///
/// Experiments: pfs_fig1, pfs_fig6, pfs_fig7 (paper 001, PFS); swap_fig2,
/// swap_client_server, swap_multiserver (paper 004, SWAP); tune_paper003 (paper 003:
/// default vs particle swarm vs golden section).
#[derive(Debug, Args)]
#[command(
    after_long_help = "Examples:\n  schedlab reproduce\n  schedlab reproduce --only pfs_fig1 --json | jq .pfs_fig1.results\n  schedlab reproduce --out /tmp/papers && xdg-open /tmp/papers/report.html"
)]
pub struct ReproduceOpts {
    /// Run only this experiment (repeatable).
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// Where to write results.json and report.html.
    #[arg(long, value_name = "DIR", default_value = "reproduce")]
    out: PathBuf,
    /// Print the results object (the same as results.json) instead of the summary.
    #[arg(long)]
    json: bool,
}

pub fn run(opts: &ReproduceOpts) -> Result<()> {
    let known: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
    for name in &opts.only {
        if !known.contains(&name.as_str()) {
            bail!("unknown experiment '{name}'; the experiments are: {}", known.join(", "));
        }
    }
    let chosen: Vec<_> = EXPERIMENTS
        .iter()
        .filter(|e| opts.only.is_empty() || opts.only.iter().any(|n| n == e.name))
        .collect();
    fs::create_dir_all(&opts.out).with_context(|| format!("cannot create {}", opts.out.display()))?;

    let bar = ProgressBar::new(chosen.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("a valid progress template"),
    );
    let mut done: Vec<Experiment> = Vec::new();
    for entry in &chosen {
        bar.set_message(entry.name);
        done.push((entry.run)());
        bar.inc(1);
    }
    bar.finish_and_clear();

    let by_name: BTreeMap<&str, &Experiment> = done.iter().map(|e| (e.name.as_str(), e)).collect();
    // One text, with one provenance, for the file and for --json.
    let mut json = Vec::new();
    write_json(&mut json, &Provenance::of_this_run(), &by_name).context("cannot encode the results")?;
    let results = opts.out.join("results.json");
    fs::write(&results, &json).with_context(|| format!("cannot write {}", results.display()))?;
    let page = report::html(&done).context("cannot draw the report")?;
    let html = opts.out.join("report.html");
    fs::write(&html, page).with_context(|| format!("cannot write {}", html.display()))?;

    let mut out = io::stdout().lock();
    if opts.json {
        out.write_all(&json)?;
        return Ok(());
    }
    for e in &done {
        writeln!(out, "{}: {}", e.name, e.setup)?;
        let mut t = Table::new(&[("key", Align::Left), ("schedlab", Align::Right), ("paper", Align::Right)]);
        for (k, v) in &e.results {
            let paper = e.paper.get(k).map(|p| report::num(*p)).unwrap_or_default();
            t.row(vec![k.clone(), report::num(*v), paper]);
        }
        t.write(&mut out)?;
        if !e.inputs.is_empty() {
            writeln!(out, "  inputs (the paper's figures, fed in): {}", report::inputs(e))?;
        }
        writeln!(out, "  the paper: {}\n", e.paper_says)?;
    }
    writeln!(out, "wrote {} and {}", results.display(), html.display())?;
    Ok(())
}

//! The `reproduce` report: one HTML page with each experiment's setup, its values beside
//! the paper's, and its figures as inline SVG drawn with plotters.

use anyhow::Context;
use plotters::prelude::*;
use schedlab_lab::papers::{Experiment, Figure};

/// Series colours, in order.
const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A number for people: up to 4 significant decimals, no trailing zeros.
pub fn num(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s.into()
    }
}

/// A figure as an SVG document: lines with markers (or grouped bars when the figure
/// names categories), one colour per series, a legend.
pub fn svg(fig: &Figure) -> anyhow::Result<String> {
    let points = || fig.series.iter().flat_map(|s| s.points.iter().copied());
    let (x0, x1) = points().fold((f64::MAX, f64::MIN), |(a, b), (x, _)| (a.min(x), b.max(x)));
    let (y0, y1) = points().fold((f64::MAX, f64::MIN), |(a, b), (_, y)| (a.min(y), b.max(y)));
    if x0 > x1 {
        anyhow::bail!("figure '{}' has no points", fig.title);
    }
    let bars = !fig.categories.is_empty();
    let pad = |lo: f64, hi: f64| {
        let d = if hi > lo { (hi - lo) * 0.08 } else { lo.abs().max(1.0) * 0.05 };
        (lo - d, hi + d)
    };
    let (x0, x1) = if bars { (-0.5, fig.categories.len() as f64 - 0.5) } else { pad(x0, x1) };
    let (y0, y1) = if bars { (0.0, y1) } else { pad(y0, y1) };
    // Headroom above the data for the legend (upper right).
    let y1 = y1 + (y1 - y0) * 0.35;
    let mut out = String::new();
    draw(&mut out, fig, (x0, x1), (y0, y1)).with_context(|| format!("figure '{}'", fig.title))?;
    Ok(out)
}

fn draw(out: &mut String, fig: &Figure, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> anyhow::Result<()> {
    let root = SVGBackend::with_string(out, (640, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&fig.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    let categories = &fig.categories;
    let label = |x: &f64| {
        let i = x.round();
        match categories.get(i as usize) {
            Some(c) if (x - i).abs() < 1e-6 && i >= 0.0 => c.clone(),
            Some(_) => String::new(),
            None if categories.is_empty() => report_num(*x),
            None => String::new(),
        }
    };
    chart
        .configure_mesh()
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .x_label_formatter(&label)
        .x_labels(if categories.is_empty() { 10 } else { categories.len() + 1 })
        .draw()?;
    let n = fig.series.len().max(1) as f64;
    for (i, s) in fig.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let legend =
            move |(x, y): (i32, i32)| PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(6));
        if categories.is_empty() {
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), colour.stroke_width(2)))?
                .label(s.name.as_str())
                .legend(legend);
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        } else {
            // Bars of one group share 0.8 of the unit around the category.
            let w = 0.8 / n;
            let left = |x: f64| x - 0.4 + w * i as f64;
            chart
                .draw_series(s.points.iter().map(|&(x, y)| {
                    Rectangle::new([(left(x), 0.0), (left(x) + w * 0.9, y)], colour.filled())
                }))?
                .label(s.name.as_str())
                .legend(legend);
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn report_num(v: f64) -> String {
    num(v)
}

/// The whole report page.
pub fn html(experiments: &[Experiment]) -> anyhow::Result<String> {
    let mut page = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>schedlab reproduce</title><style>\
         body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
         th{background:#f4f4f4}td.k{text-align:left;font-family:monospace}.off{background:#fde2e2}\
         .says{background:#f6f8fa;border-left:4px solid #888;padding:.5em 1em}</style></head><body>\n\
         <h1>schedlab reproduce</h1>\n<p>The papers' experiments run in schedlab's simulator. \
         Values beside the paper's where its text gives them; a cell is marked when it differs by more \
         than 2 %.</p>\n",
    );
    for e in experiments {
        page.push_str(&format!("<h2 id=\"{0}\">{0}</h2>\n<p>{1}</p>\n", esc(&e.name), esc(&e.setup)));
        page.push_str(&format!("<p class=\"says\"><b>The paper:</b> {}</p>\n", esc(&e.paper_says)));
        if !e.inputs.is_empty() {
            page.push_str(&format!(
                "<p><b>Inputs</b> (the paper's figures, fed in): {}</p>\n",
                esc(&inputs(e))
            ));
        }
        for fig in &e.figures {
            page.push_str(&svg(fig)?);
            page.push('\n');
        }
        page.push_str("<table><tr><th>key</th><th>schedlab</th><th>paper</th></tr>\n");
        for (k, v) in &e.results {
            let (paper, class) = match e.paper.get(k) {
                Some(p) if (v - p).abs() > 0.02 * p.abs().max(1e-9) => (num(*p), " class=\"off\""),
                Some(p) => (num(*p), ""),
                None => (String::new(), ""),
            };
            page.push_str(&format!(
                "<tr{class}><td class=\"k\">{}</td><td>{}</td><td>{paper}</td></tr>\n",
                esc(k),
                num(*v)
            ));
        }
        page.push_str("</table>\n");
    }
    page.push_str("</body></html>\n");
    Ok(page)
}

/// An experiment's inputs as `key = value` pairs.
pub fn inputs(e: &Experiment) -> String {
    e.inputs.iter().map(|(k, v)| format!("{k} = {}", num(*v))).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_lab::papers::Series;
    use std::collections::BTreeMap;

    fn experiment() -> Experiment {
        Experiment {
            name: "demo<1>".into(),
            setup: "two & more".into(),
            results: BTreeMap::from([("a".to_string(), 1.0), ("b".to_string(), 2.5)]),
            paper: BTreeMap::from([("a".to_string(), 1.0), ("b".to_string(), 2.0)]),
            inputs: BTreeMap::from([("sort_s".to_string(), 0.1)]),
            paper_says: "a is 1".into(),
            figures: vec![Figure {
                title: "f".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                categories: Vec::new(),
                series: vec![Series { name: "s".into(), points: vec![(0.0, 1.0), (1.0, 2.0)] }],
            }],
        }
    }

    #[test]
    fn page_has_escaped_text_a_figure_and_marks_differences() {
        let page = html(&[experiment()]).unwrap();
        assert!(page.contains("demo&lt;1&gt;") && page.contains("two &amp; more"));
        assert_eq!(page.matches("<svg").count(), 1);
        assert!(
            page.contains("<tr class=\"off\"><td class=\"k\">b</td><td>2.5</td><td>2</td></tr>"),
            "{page}"
        );
        assert!(page.contains("<tr><td class=\"k\">a</td><td>1</td><td>1</td></tr>"));
        assert!(page.contains("<b>Inputs</b> (the paper's figures, fed in): sort_s = 0.1</p>"), "{page}");
    }

    #[test]
    fn an_empty_figure_is_an_error() {
        let mut e = experiment();
        e.figures[0].series[0].points.clear();
        assert!(svg(&e.figures[0]).is_err());
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(5.5), "5.5");
        assert_eq!(num(4.0), "4");
        assert_eq!(num(0.918_918), "0.9189");
        assert_eq!(num(0.0), "0");
    }
}

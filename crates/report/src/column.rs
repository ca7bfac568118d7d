//! One column's part of the page: its header with alert badges, its statistics, quantiles,
//! chart, frequent values, patterns and shapes; and its row in the overview table.

use std::fmt::Write as _;

use autocoder_profile::render::format::{
    distinct, dtype, human, human_scalar, monotonic, scalar, truncate,
};
use autocoder_profile::{ColumnProfile, Profile};
use autocoder_schema::DataType;

use crate::alerts::{AlertKind, percent, share};
use crate::escape::{short, text};
use crate::svg::{bars, count_share, histogram, stat};

/// Longest value shown in a table cell, in characters.
const VALUE_CHARS: usize = 40;

/// The anchor of column `index` of dataset `dataset` (never built from the name).
pub(crate) fn anchor(dataset: usize, index: usize) -> String {
    format!("d{dataset}-c{index}")
}

/// Alert badges, warnings first.
pub(crate) fn badges(out: &mut String, kinds: &[AlertKind]) {
    for kind in kinds {
        let _ = write!(
            out,
            r#" <span class="badge{}">{}</span>"#,
            if kind.is_warning() { " warn" } else { "" },
            kind.label()
        );
    }
}

/// The column's row in the overview table.
pub(crate) fn summary_row(
    out: &mut String,
    dataset: usize,
    index: usize,
    c: &ColumnProfile,
    kinds: &[AlertKind],
) {
    let rows = c.count + c.nulls;
    let _ = write!(
        out,
        r##"<tr><td class="num">{}</td><td><a href="#{}">{}</a></td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td>"##,
        index + 1,
        anchor(dataset, index),
        short(&c.name, 48),
        text(&dtype(c)),
        text(&count_share(c.nulls, rows)),
        text(&distinct(c)),
        c.min
            .as_ref()
            .map_or_else(String::new, |v| short(&scalar(v), 24)),
        c.max
            .as_ref()
            .map_or_else(String::new, |v| short(&scalar(v), 24)),
    );
    badges(out, kinds);
    out.push_str("</td></tr>\n");
}

/// The column's section.
pub(crate) fn section(
    out: &mut String,
    dataset: usize,
    index: usize,
    c: &ColumnProfile,
    alerts: &[(AlertKind, String)],
) {
    let _ = write!(
        out,
        r#"<article class="column" id="{}"><h4><span class="idx">{}</span> {} <span class="type">{}{}</span>"#,
        anchor(dataset, index),
        index + 1,
        short(&c.name, 200),
        text(&dtype(c)),
        if c.nullable { ", nullable" } else { "" }
    );
    let kinds: Vec<AlertKind> = alerts.iter().map(|(k, _)| *k).collect();
    badges(out, &kinds);
    out.push_str("</h4>\n");
    if !alerts.is_empty() {
        out.push_str(r#"<ul class="notes">"#);
        for (kind, detail) in alerts {
            let _ = write!(out, "<li>{}: {}</li>", kind.label(), text(detail));
        }
        out.push_str("</ul>\n");
    }
    out.push_str(r#"<div class="grid">"#);
    statistics(out, c);
    quantiles(out, c);
    let chart = chart(c);
    out.push_str(r#"<figure class="chart">"#);
    match &chart {
        Chart::Histogram(svg) | Chart::Bars(svg) => out.push_str(svg),
        Chart::None => out.push_str(r#"<p class="muted">no chart: no values</p>"#),
    }
    out.push_str("</figure></div>\n");
    let frequent = matches!(chart, Chart::Histogram(_)) && c.dtype != DataType::Empty;
    if frequent || !c.patterns.is_empty() || !c.shapes.is_empty() {
        out.push_str(r#"<div class="grid">"#);
        if frequent {
            top_values(out, c);
        }
        patterns(out, c);
        out.push_str("</div>\n");
    }
    out.push_str("</article>\n");
}

fn row(out: &mut String, label: &str, value: &str) {
    let _ = write!(out, "<tr><th>{label}</th><td>{}</td></tr>", text(value));
}

fn statistics(out: &mut String, c: &ColumnProfile) {
    let rows = c.count + c.nulls;
    out.push_str(r#"<table class="kv">"#);
    row(out, "values", &count_share(c.count, rows));
    row(out, "missing", &count_share(c.nulls, rows));
    row(
        out,
        "distinct",
        &format!("{}{}", distinct(c), if c.unique { ", unique" } else { "" }),
    );
    if let Some(min) = &c.min {
        row(out, "min", &truncate(&scalar(min), VALUE_CHARS));
    }
    if let Some(max) = &c.max {
        row(out, "max", &truncate(&scalar(max), VALUE_CHARS));
    }
    if let Some(n) = &c.numeric {
        row(out, "mean", &human(n.mean));
        row(out, "std", &stat(n.std));
        row(out, "sum", &human(n.sum));
        row(out, "zeros", &count_share(n.zeros, c.count));
        row(out, "negatives", &count_share(n.negatives, c.count));
        if n.infinities > 0 {
            row(out, "infinities", &n.infinities.to_string());
        }
    }
    if let Some(l) = &c.lengths {
        row(
            out,
            "length",
            &format!("{} to {}, mean {}", l.min, l.max, human(l.mean)),
        );
    }
    if let Some(order) = monotonic(c.monotonic) {
        row(out, "sorted", order);
    }
    out.push_str("</table>");
}

fn quantiles(out: &mut String, c: &ColumnProfile) {
    if c.quantiles.is_empty() {
        out.push_str("<div></div>");
        return;
    }
    let _ = write!(
        out,
        r#"<table class="kv"><caption>quantiles{}</caption>"#,
        if c.quantiles_exact { "" } else { " (sampled)" }
    );
    for q in &c.quantiles {
        let label = if (q.q - 0.5).abs() < 1e-9 {
            "median".to_owned()
        } else {
            format!("p{}", human(q.q * 100.0))
        };
        row(out, &label, &human_scalar(&q.value));
    }
    if let (Some(p25), Some(p75)) = (quantile(c, 0.25), quantile(c, 0.75)) {
        row(out, "IQR", &human(p75 - p25));
    }
    out.push_str("</table>");
}

fn quantile(c: &ColumnProfile, q: f64) -> Option<f64> {
    c.quantiles
        .iter()
        .find(|x| (x.q - q).abs() < 1e-9)
        .and_then(|x| x.value.as_f64())
}

enum Chart {
    Histogram(String),
    Bars(String),
    None,
}

/// A histogram when the column has more distinct values than bins, else a bar chart of its
/// frequent values.
fn chart(c: &ColumnProfile) -> Chart {
    if let Some(h) = &c.histogram
        && c.distinct > h.bins.len() as u64
    {
        return Chart::Histogram(histogram(h, &c.name));
    }
    if c.top_values.is_empty() || c.dtype == DataType::Empty {
        return Chart::None;
    }
    let listed: u64 = c.top_values.iter().map(|v| v.count).sum();
    let other = c.top_values_exact.then(|| c.count.saturating_sub(listed));
    Chart::Bars(bars(&c.top_values, other, &c.name))
}

fn top_values(out: &mut String, c: &ColumnProfile) {
    if c.top_values.is_empty() {
        return;
    }
    let _ = write!(
        out,
        r#"<table class="kv"><caption>frequent values{}</caption>"#,
        if c.top_values_exact {
            ""
        } else {
            " (at least)"
        }
    );
    for v in &c.top_values {
        let _ = write!(
            out,
            r#"<tr><td class="value">{}</td><td class="num">{}</td><td class="num muted">{}</td></tr>"#,
            short(&v.value, VALUE_CHARS),
            v.count,
            percent(v.count, c.count)
        );
    }
    out.push_str("</table>");
}

fn patterns(out: &mut String, c: &ColumnProfile) {
    if !c.patterns.is_empty() {
        out.push_str(r#"<table class="kv"><caption>patterns (sampled values)</caption>"#);
        for p in &c.patterns {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td class="num">{}</td><td class="num muted">{}</td></tr>"#,
                p.pattern.name(),
                p.matches,
                share(p.rate)
            );
        }
        out.push_str("</table>");
    }
    if !c.shapes.is_empty() {
        out.push_str(r#"<table class="kv"><caption>shapes (A letter, 9 digit)</caption>"#);
        for s in &c.shapes {
            let _ = write!(
                out,
                r#"<tr><td class="value">{}</td><td class="num">{}</td></tr>"#,
                short(&s.shape, VALUE_CHARS),
                s.count
            );
        }
        out.push_str("</table>");
    }
}

/// Cells of the missing-share column of the samples table: whether each field is missing.
pub(crate) fn is_missing(profile: &Profile, value: Option<&String>) -> bool {
    value.is_none_or(|v| profile.nulls.is_null(v.as_bytes()))
}

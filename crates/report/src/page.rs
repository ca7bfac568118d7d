//! The page: the document around the datasets (styles, content security policy, navigation),
//! each dataset's overview, alerts, missing-values matrix and column table, its columns, and
//! its sample rows.

use std::fmt::Write as _;

use autocoder_profile::Profile;
use autocoder_profile::render::format::{bytes, delimiter, nulls, source};

use crate::alerts::{Alert, AlertKind, alerts, percent};
use crate::column::{anchor, badges, is_missing, section, summary_row};
use crate::escape::{short, text};
use crate::svg::missing_matrix;

/// The style sheet, compiled in.
const STYLE: &str = include_str!("../assets/report.css");
/// Sample rows shown in the table (the matrix uses all kept samples).
pub(crate) const SAMPLE_ROWS: usize = 20;
/// Longest value shown in a sample cell, in characters.
const SAMPLE_CHARS: usize = 32;

/// Nothing may load: no scripts at all, no network, no fonts; only the inline style sheet
/// (and SVG drawn inline). A value that escaped the escaping could still not run.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/// The whole document for `datasets` (`(name, profile)`), under `title`.
pub(crate) fn document(title: &str, datasets: &[(&str, &Profile)]) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="autocoder {}">
<title>{}</title>
<style>{STYLE}</style></head>
<body>
<header class="top"><h1>{}</h1><p class="muted">profiled by autocoder {}</p></header>
"#,
        env!("CARGO_PKG_VERSION"),
        text(title),
        text(title),
        env!("CARGO_PKG_VERSION")
    );
    if datasets.len() > 1 {
        out.push_str(r#"<nav class="datasets">"#);
        for (d, (name, profile)) in datasets.iter().enumerate() {
            let _ = write!(
                out,
                r##"<a href="#d{d}">{}</a> <span class="muted">{} rows</span> "##,
                short(name, 60),
                profile.rows
            );
        }
        out.push_str("</nav>\n");
    }
    out.push_str("<main>\n");
    for (d, (name, profile)) in datasets.iter().enumerate() {
        dataset(&mut out, d, name, profile);
    }
    out.push_str("</main>\n</body></html>\n");
    out
}

fn dataset(out: &mut String, d: usize, name: &str, profile: &Profile) {
    let all = alerts(profile);
    let _ = writeln!(
        out,
        r#"<section class="dataset" id="d{d}"><h2>{}</h2>"#,
        text(name)
    );
    overview(out, profile, &all);
    alert_list(out, d, profile, &all);
    if profile.columns.iter().any(|c| c.nulls > 0) {
        let _ = writeln!(
            out,
            r#"<h3>Missing values</h3><figure class="matrix">{}</figure>"#,
            missing_matrix(profile)
        );
    } else {
        out.push_str("<h3>Missing values</h3><p class=\"muted\">none in any column</p>\n");
    }
    out.push_str(
        r#"<h3>Columns</h3><table class="summary"><thead><tr><th>#</th><th>column</th><th>type</th><th>missing</th><th>distinct</th><th>min</th><th>max</th><th>alerts</th></tr></thead><tbody>
"#,
    );
    for (i, column) in profile.columns.iter().enumerate() {
        summary_row(out, d, i, column, &kinds_of(&all, i));
    }
    out.push_str("</tbody></table>\n");
    for (i, column) in profile.columns.iter().enumerate() {
        let mine: Vec<(AlertKind, String)> = all
            .iter()
            .filter(|a| a.column == Some(i))
            .map(|a| (a.kind, a.detail.clone()))
            .collect();
        section(out, d, i, column, &mine);
    }
    samples(out, profile);
    out.push_str("</section>\n");
}

fn kinds_of(all: &[Alert], column: usize) -> Vec<AlertKind> {
    all.iter()
        .filter(|a| a.column == Some(column))
        .map(|a| a.kind)
        .collect()
}

fn card(out: &mut String, value: &str, label: &str) {
    let _ = write!(
        out,
        r#"<div class="card"><b>{}</b><span>{label}</span></div>"#,
        text(value)
    );
}

fn overview(out: &mut String, profile: &Profile, all: &[Alert]) {
    let columns = profile.columns.len() as u64;
    let cells = profile.rows * columns;
    let missing: u64 = profile.columns.iter().map(|c| c.nulls).sum();
    out.push_str(r#"<div class="cards">"#);
    card(out, &profile.rows.to_string(), "rows");
    card(out, &columns.to_string(), "columns");
    card(
        out,
        &format!(
            "{}{}",
            if profile.duplicate_rows_exact {
                ""
            } else {
                "~"
            },
            profile.duplicate_rows
        ),
        "duplicate rows",
    );
    card(
        out,
        &percent(missing, cells),
        &format!("missing cells ({missing})"),
    );
    card(out, &bytes(profile.bytes), "size");
    card(out, &all.len().to_string(), "alerts");
    out.push_str("</div>\n");
    let _ = writeln!(
        out,
        r#"<p class="meta">{} · delimiter {} · {} · missing values: {}{}</p>"#,
        text(&source(profile)),
        text(&delimiter(profile.dialect)),
        if profile.dialect.has_header {
            "header row"
        } else {
            "no header row"
        },
        text(&nulls(profile)),
        if profile.patterns_sampled_rows < profile.rows {
            format!(
                " · patterns and shapes measured on {} of {} rows",
                profile.patterns_sampled_rows, profile.rows
            )
        } else {
            String::new()
        }
    );
}

fn alert_list(out: &mut String, d: usize, profile: &Profile, all: &[Alert]) {
    out.push_str("<h3>Alerts</h3>");
    if all.is_empty() {
        out.push_str("<p class=\"muted\">none</p>\n");
        return;
    }
    out.push_str(r#"<ul class="alerts">"#);
    for alert in all {
        out.push_str("<li>");
        badges(out, &[alert.kind]);
        if let Some(i) = alert.column {
            let name = profile.columns.get(i).map_or("", |c| c.name.as_str());
            let _ = write!(
                out,
                r##" <a href="#{}">{}</a>: "##,
                anchor(d, i),
                short(name, 48)
            );
        } else {
            out.push(' ');
        }
        let _ = write!(out, "{}</li>", text(&alert.detail));
    }
    out.push_str("</ul>\n");
}

fn samples(out: &mut String, profile: &Profile) {
    if profile.samples.is_empty() {
        return;
    }
    let shown = profile.samples.len().min(SAMPLE_ROWS);
    let _ = write!(
        out,
        r#"<h3>Sample rows</h3><p class="muted">{shown} of {} rows sampled uniformly (seed {}), in file order; missing values in grey</p><div class="scroll"><table class="samples"><thead><tr><th>row</th>"#,
        profile.samples.len(),
        profile.sample_seed
    );
    for column in &profile.columns {
        let _ = write!(out, "<th>{}</th>", short(&column.name, 24));
    }
    out.push_str("</tr></thead><tbody>\n");
    for sample in profile.samples.iter().take(SAMPLE_ROWS) {
        let _ = write!(out, r#"<tr><td class="num muted">{}</td>"#, sample.row);
        for j in 0..profile.columns.len() {
            let value = sample.values.get(j);
            if is_missing(profile, value) {
                let _ = write!(
                    out,
                    r#"<td class="na">{}</td>"#,
                    value.map_or_else(String::new, |v| short(v, SAMPLE_CHARS))
                );
            } else {
                let _ = write!(
                    out,
                    "<td>{}</td>",
                    value.map_or_else(String::new, |v| short(v, SAMPLE_CHARS))
                );
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

//! The terminal rendering: a summary, one table row per column, then each column's details.

use std::fmt::Write as _;

use autocoder_schema::DataType;

use super::format::{
    bytes, count, delimiter, distinct, dtype, human, human_scalar, monotonic, name, nulls, scalar,
    short_value, source, truncate,
};
use crate::{ColumnProfile, Histogram, Profile};

/// Widest cell of the column table, in characters.
const CELL_CHARS: usize = 28;
/// Widest value in top values and samples.
const VALUE_CHARS: usize = 40;
/// Sample rows shown.
const SAMPLE_ROWS: usize = 5;
/// Width of the longest histogram bar.
const BAR_WIDTH: u64 = 30;

/// A readable report of `profile` for a terminal: what the file is, a table of the columns
/// (type, nulls, distinct, min, max, mean, std), then per column its quantiles, top values,
/// lengths, patterns, shapes and histogram, and a few sample rows. Statistics are rounded to
/// four significant digits (the JSON keeps them exact), long values are cut, and control
/// characters in names and values are escaped.
pub fn text(profile: &Profile) -> String {
    let mut out = String::new();
    summary(&mut out, profile);
    out.push('\n');
    column_table(&mut out, profile);
    for column in &profile.columns {
        out.push('\n');
        details(&mut out, column);
    }
    samples(&mut out, profile);
    out
}

fn summary(out: &mut String, profile: &Profile) {
    let _ = writeln!(
        out,
        "{}: {}, {}, {}",
        source(profile),
        count(profile.rows, "row"),
        count(profile.columns.len() as u64, "column"),
        bytes(profile.bytes)
    );
    if let Some(kind) = super::format::typed_kind(profile) {
        let _ = writeln!(out, "  {kind}; missing values: the file's own nulls");
    } else {
        let _ = writeln!(
            out,
            "  delimiter {}, {}{}",
            delimiter(profile.dialect),
            if profile.dialect.has_header {
                "header row"
            } else {
                "no header row"
            },
            if profile.dialect.bom {
                ", UTF-8 byte-order mark"
            } else {
                ""
            }
        );
        let _ = writeln!(out, "  missing values: {}", nulls(profile));
    }
    let _ = writeln!(
        out,
        "  duplicate rows: {}{}",
        profile.duplicate_rows,
        if profile.duplicate_rows_exact {
            ""
        } else {
            " (estimated)"
        }
    );
    let bad = &profile.bad_rows;
    if bad.short_rows + bad.long_rows + bad.unclosed_quotes > 0 {
        let lines: Vec<String> = bad.first_bad_lines.iter().map(u64::to_string).collect();
        let quotes = if bad.unclosed_quotes > 0 {
            format!(
                ", {} with a quote never closed (skipped to the end of its line)",
                bad.unclosed_quotes
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  bad rows: {} short (missing fields read as nulls), {} long (skipped){quotes}; first at lines {}",
            bad.short_rows,
            bad.long_rows,
            lines.join(", ")
        );
    }
    if profile.patterns_sampled_rows < profile.rows {
        let _ = writeln!(
            out,
            "  patterns and shapes measured on {} of {} rows",
            profile.patterns_sampled_rows, profile.rows
        );
    }
}

fn column_table(out: &mut String, profile: &Profile) {
    let header = [
        "#", "column", "type", "nulls", "distinct", "unique", "min", "max", "mean", "std",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
    for (i, c) in profile.columns.iter().enumerate() {
        let numeric = c.numeric.as_ref();
        rows.push(vec![
            (i + 1).to_string(),
            name(&c.name, CELL_CHARS),
            c.dtype.name().to_owned(),
            c.nulls.to_string(),
            distinct(c),
            if c.unique { "yes" } else { "no" }.to_owned(),
            c.min
                .as_ref()
                .map_or_else(String::new, |v| truncate(&scalar(v), CELL_CHARS)),
            c.max
                .as_ref()
                .map_or_else(String::new, |v| truncate(&scalar(v), CELL_CHARS)),
            numeric.map_or_else(String::new, |n| human(n.mean)),
            numeric.and_then(|n| n.std).map_or_else(String::new, human),
        ]);
    }
    aligned(out, &rows, "  ");
}

/// Writes `rows` as left-aligned columns separated by two spaces, each line indented by `indent`.
fn aligned(out: &mut String, rows: &[Vec<String>], indent: &str) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::from(indent);
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            let pad = widths[i].saturating_sub(cell.chars().count());
            line.extend(std::iter::repeat_n(' ', pad));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The type a typed file declares for the column, and what the profile cannot express.
fn stored_as(out: &mut String, c: &ColumnProfile) {
    if let Some(t) = &c.source_type {
        let _ = writeln!(out, "  stored as {t}");
    }
    if let Some(note) = &c.note {
        let _ = writeln!(out, "  {note}");
    }
}

fn details(out: &mut String, c: &ColumnProfile) {
    let _ = writeln!(
        out,
        "{} ({}{})",
        name(&c.name, usize::MAX),
        dtype(c),
        if c.nullable { ", nullable" } else { "" }
    );
    stored_as(out, c);
    let _ = writeln!(
        out,
        "  values {}, nulls {}, distinct {}{}",
        c.count,
        c.nulls,
        distinct(c),
        if c.unique { ", unique" } else { "" }
    );
    if let Some(n) = &c.numeric {
        let _ = write!(
            out,
            "  sum {}, mean {}, std {}, zeros {}, negatives {}",
            human(n.sum),
            human(n.mean),
            n.std.map_or_else(|| "n/a".to_owned(), human),
            n.zeros,
            n.negatives
        );
        if n.infinities > 0 {
            let _ = write!(out, ", infinities {}", n.infinities);
        }
        out.push('\n');
    }
    if let (Some(min), Some(max)) = (&c.min, &c.max) {
        let _ = writeln!(
            out,
            "  min {}, max {}",
            truncate(&scalar(min), VALUE_CHARS),
            truncate(&scalar(max), VALUE_CHARS)
        );
    }
    if !c.quantiles.is_empty() {
        let _ = writeln!(
            out,
            "  quantiles{}: {}",
            if c.quantiles_exact { "" } else { " (sampled)" },
            quantiles(&c.quantiles)
        );
    }
    if let Some(m) = monotonic(c.monotonic) {
        let _ = writeln!(out, "  sorted: {m}");
    }
    if let Some(l) = &c.lengths {
        let _ = writeln!(
            out,
            "  length min {}, mean {}, max {}",
            l.min,
            human(l.mean),
            l.max
        );
    }
    if !c.top_values.is_empty() && c.dtype != DataType::Empty {
        let values: Vec<String> = c
            .top_values
            .iter()
            .map(|v| format!("{} ({})", short_value(&v.value, VALUE_CHARS), v.count))
            .collect();
        let _ = writeln!(
            out,
            "  top values{}: {}",
            if c.top_values_exact {
                ""
            } else {
                " (at least)"
            },
            values.join(", ")
        );
    }
    if !c.patterns.is_empty() {
        let rates: Vec<String> = c
            .patterns
            .iter()
            .map(|p| format!("{} {} ({})", p.pattern.name(), p.matches, human(p.rate)))
            .collect();
        let _ = writeln!(out, "  patterns: {}", rates.join(", "));
    }
    if !c.shapes.is_empty() {
        let shapes: Vec<String> = c
            .shapes
            .iter()
            .map(|s| format!("{} ({})", short_value(&s.shape, VALUE_CHARS), s.count))
            .collect();
        let _ = writeln!(out, "  shapes: {}", shapes.join(", "));
    }
    // With no more distinct values than bins, the top values already show the distribution.
    if let Some(h) = &c.histogram
        && c.distinct > h.bins.len() as u64
    {
        histogram(out, h);
    }
}

fn histogram(out: &mut String, h: &Histogram) {
    let _ = writeln!(
        out,
        "  histogram{}:",
        if h.exact {
            ""
        } else {
            " (scaled from a sample)"
        }
    );
    let top = h.bins.iter().map(|b| b.count).max().unwrap_or(0).max(1);
    let rows: Vec<Vec<String>> = h
        .bins
        .iter()
        .map(|b| {
            let width = usize::try_from(b.count * BAR_WIDTH / top).unwrap_or(0);
            let bar = if b.count > 0 && width == 0 {
                "▏".to_owned()
            } else {
                "█".repeat(width)
            };
            vec![
                human_scalar(&b.lo),
                "..".to_owned(),
                human_scalar(&b.hi),
                b.count.to_string(),
                bar,
            ]
        })
        .collect();
    aligned(out, &rows, "    ");
}

fn samples(out: &mut String, profile: &Profile) {
    if profile.samples.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nsample rows ({} of {} kept, seed {}):",
        profile.samples.len().min(SAMPLE_ROWS),
        profile.samples.len(),
        profile.sample_seed
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["row".to_owned()];
    header.extend(profile.columns.iter().map(|c| name(&c.name, 16)));
    rows.push(header);
    for sample in profile.samples.iter().take(SAMPLE_ROWS) {
        let mut row = vec![sample.row.to_string()];
        row.extend(sample.values.iter().map(|v| short_value(v, 16)));
        rows.push(row);
    }
    aligned(out, &rows, "  ");
}

/// `p1 3 p5 4.5 ...`, rounded for people.
fn quantiles(qs: &[crate::Quantile]) -> String {
    let parts: Vec<String> = qs
        .iter()
        .map(|q| format!("p{} {}", human(q.q * 100.0), human_scalar(&q.value)))
        .collect();
    parts.join(" ")
}

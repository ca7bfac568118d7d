//! The prompt rendering: what a model needs to know about the data, in as few bytes as a budget
//! allows (about 300 bytes, 75 tokens, per column).

use std::fmt::Write as _;

use autocoder_schema::DataType;

use super::format::{
    count, delimiter, distinct, dtype, escape_controls, float, monotonic, nulls, quantiles, scalar,
    short_value, source, truncate,
};
use crate::{ColumnProfile, Profile, Quantile};

/// The bytes per token the budget assumes (English text and CSV with a BPE tokenizer).
pub const CONTEXT_BYTES_PER_TOKEN: usize = 4;

/// The budget per column, in bytes: 20 columns fit in 6,000 bytes, about 1,500 tokens.
const BYTES_PER_COLUMN: usize = 300;
/// The smallest budget, for tables with few columns.
const MIN_BUDGET: usize = 2_400;

/// How much detail one rendering carries; [`LEVELS`] go from most to least.
#[derive(Debug, Clone, Copy)]
struct Detail {
    /// Most frequent values listed per column.
    top_values: usize,
    /// Longest value shown, in characters.
    value_chars: usize,
    /// Which quantiles to list (none when empty).
    quantiles: &'static [f64],
    /// Shapes listed per string column.
    shapes: usize,
    /// Sample rows shown.
    sample_rows: usize,
}

const LEVELS: [Detail; 4] = [
    Detail {
        top_values: 5,
        value_chars: 32,
        quantiles: &[0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99],
        shapes: 3,
        sample_rows: 3,
    },
    Detail {
        top_values: 3,
        value_chars: 24,
        quantiles: &[0.05, 0.5, 0.95],
        shapes: 2,
        sample_rows: 3,
    },
    Detail {
        top_values: 3,
        value_chars: 16,
        quantiles: &[0.5],
        shapes: 1,
        sample_rows: 2,
    },
    Detail {
        top_values: 2,
        value_chars: 12,
        quantiles: &[],
        shapes: 1,
        sample_rows: 1,
    },
];

/// The compact description of `profile` that a prompt carries: how to read the file, then one
/// line per column (type, nulls, distinct count, range, mean and std, quantiles, sortedness,
/// lengths, pattern matches, shapes, frequent values), then a few sample rows as CSV.
///
/// It aims at about 300 bytes per column (at [`CONTEXT_BYTES_PER_TOKEN`] bytes a token, 20
/// columns in about 1,500 tokens): the most detailed rendering within that budget is chosen,
/// cutting frequent values, quantiles and samples first. Numbers are exact.
pub fn context(profile: &Profile) -> String {
    let budget = (BYTES_PER_COLUMN * profile.columns.len()).max(MIN_BUDGET);
    let mut last = String::new();
    for detail in LEVELS {
        last = render(profile, detail);
        if last.len() <= budget {
            break;
        }
    }
    last
}

/// [`context`] with `rows` sample rows (as many as the profile kept, at most) in at most
/// `budget_bytes`: the most detailed rendering with all those rows that fits is chosen; when
/// even the least detailed one does not fit, rows are dropped until it does (a table whose
/// columns alone exceed the budget is shown without rows, over it).
pub fn context_fitted(profile: &Profile, rows: usize, budget_bytes: usize) -> String {
    let with_rows = |detail: Detail, rows: usize| {
        render(
            profile,
            Detail {
                sample_rows: rows,
                ..detail
            },
        )
    };
    let mut least = LEVELS[LEVELS.len() - 1];
    for detail in LEVELS {
        let text = with_rows(detail, rows);
        if text.len() <= budget_bytes {
            return text;
        }
        least = detail;
    }
    // The most rows that fit at the least detail: a binary search over 0..rows.
    let rows = rows.min(profile.samples.len());
    let (mut fits, mut over) = (0, rows);
    while fits + 1 < over {
        let middle = usize::midpoint(fits, over);
        if with_rows(least, middle).len() <= budget_bytes {
            fits = middle;
        } else {
            over = middle;
        }
    }
    with_rows(least, fits)
}

fn render(profile: &Profile, detail: Detail) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Table `{}` ({}): {}, {}; delimiter {}, {}; missing values: {}.",
        escape_controls(&profile.table_name(), &[]),
        source(profile),
        count(profile.rows, "row"),
        count(profile.columns.len() as u64, "column"),
        delimiter(profile.dialect),
        if profile.dialect.has_header {
            "header row"
        } else {
            "no header row"
        },
        nulls(profile)
    );
    let bad = &profile.bad_rows;
    let _ = write!(out, "Duplicate rows: {}", profile.duplicate_rows);
    if !profile.duplicate_rows_exact {
        out.push_str(" (estimated)");
    }
    if bad.short_rows > 0 {
        let _ = write!(out, "; rows with missing fields: {}", bad.short_rows);
    }
    if bad.long_rows > 0 {
        let _ = write!(out, "; rows with extra fields skipped: {}", bad.long_rows);
    }
    out.push_str(".\nColumns:\n");
    for column in &profile.columns {
        column_line(&mut out, column, detail);
    }
    sample_rows(&mut out, profile, detail);
    out
}

fn column_line(out: &mut String, c: &ColumnProfile, detail: Detail) {
    let _ = write!(out, "- {}: {}", escape_controls(&c.name, &[]), dtype(c));
    if c.dtype == DataType::Empty {
        let _ = writeln!(out, ", all {} missing", c.nulls);
        return;
    }
    if c.nulls > 0 {
        let _ = write!(out, ", {} missing", c.nulls);
    } else {
        out.push_str(", no missing");
    }
    if c.unique {
        out.push_str(", unique");
    }
    let _ = write!(out, "; {} distinct", distinct(c));
    let enumerated = all_values_listed(c, detail);
    if let (Some(min), Some(max)) = (&c.min, &c.max)
        && c.dtype != DataType::Boolean
        && !(enumerated && c.dtype == DataType::String)
    {
        let (min, max) = (scalar(min), scalar(max));
        if c.dtype == DataType::String {
            let _ = write!(
                out,
                "; min {}, max {}",
                truncate(&min, detail.value_chars),
                truncate(&max, detail.value_chars)
            );
        } else {
            let _ = write!(out, "; range {min}..{max}");
        }
    }
    if let Some(n) = &c.numeric {
        let _ = write!(out, "; mean {}", float(n.mean));
        if let Some(std) = n.std {
            let _ = write!(out, ", std {}", float(std));
        }
        if n.zeros > 0 {
            let _ = write!(out, ", {} zeros", n.zeros);
        }
        if n.negatives > 0 {
            let _ = write!(out, ", {} negative", n.negatives);
        }
        if n.infinities > 0 {
            let _ = write!(out, ", {} infinite", n.infinities);
        }
    }
    let chosen: Vec<Quantile> = c
        .quantiles
        .iter()
        .filter(|q| detail.quantiles.iter().any(|p| (p - q.q).abs() < 1e-9))
        .cloned()
        .collect();
    if !chosen.is_empty() && c.dtype.is_numeric() {
        let _ = write!(out, "; {}", quantiles(&chosen));
    }
    if let Some(m) = monotonic(c.monotonic) {
        let _ = write!(out, "; {m}");
    }
    if let Some(l) = &c.lengths {
        if l.min == l.max {
            let _ = write!(out, "; length {}", l.min);
        } else {
            let _ = write!(out, "; length {}..{}", l.min, l.max);
        }
    }
    if !c.patterns.is_empty() {
        let sampled = pattern_base(c);
        let rates: Vec<String> = c
            .patterns
            .iter()
            .filter(|p| p.rate >= 0.5)
            .take(3)
            .map(|p| format!("{} {}/{}", p.pattern.name(), p.matches, sampled))
            .collect();
        if !rates.is_empty() {
            let _ = write!(out, "; looks like {}", rates.join(", "));
        }
    }
    // Shapes say something when several values share one, and the values are not all listed.
    if detail.shapes > 0
        && c.dtype == DataType::String
        && !enumerated
        && c.shapes.first().is_some_and(|s| s.count >= 2)
    {
        let shapes: Vec<String> = c
            .shapes
            .iter()
            .take_while(|s| s.count >= 2)
            .take(detail.shapes)
            .map(|s| {
                format!(
                    "{} ({})",
                    short_value(&s.shape, detail.value_chars),
                    s.count
                )
            })
            .collect();
        let _ = write!(out, "; shapes {}", shapes.join(", "));
    }
    top_values(out, c, detail);
    out.push('\n');
}

/// The number of sampled values a pattern rate is out of (`matches / rate`).
fn pattern_base(c: &ColumnProfile) -> u64 {
    c.patterns
        .iter()
        .find(|p| p.rate > 0.0)
        .map_or(c.count, |p| {
            let base = (p.matches as f64 / p.rate).round();
            if base.is_finite() && base >= 0.0 {
                // A count of values: an integer well inside u64.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let base = base as u64;
                base
            } else {
                c.count
            }
        })
}

/// Whether the column's values are few enough, and known exactly, to be listed in full.
fn all_values_listed(c: &ColumnProfile, detail: Detail) -> bool {
    c.distinct_exact
        && !c.top_values.is_empty()
        && c.top_values.len() as u64 == c.distinct
        && c.top_values.len() <= detail.top_values + 2
}

/// Every value with its count when [`all_values_listed`]; otherwise the most frequent values
/// that repeat often enough to matter (at least twice and in 1% of the rows).
fn top_values(out: &mut String, c: &ColumnProfile, detail: Detail) {
    if c.unique || detail.top_values == 0 {
        return;
    }
    let listed = all_values_listed(c, detail);
    let floor = (c.count / 100).max(2);
    let values: Vec<String> = c
        .top_values
        .iter()
        .filter(|v| listed || v.count >= floor)
        .take(if listed {
            usize::MAX
        } else {
            detail.top_values
        })
        .map(|v| {
            format!(
                "{} ({})",
                short_value(&v.value, detail.value_chars),
                v.count
            )
        })
        .collect();
    if values.is_empty() {
        return;
    }
    let label = if listed { "values" } else { "top" };
    let _ = write!(out, "; {label} {}", values.join(", "));
}

fn sample_rows(out: &mut String, profile: &Profile, detail: Detail) {
    if profile.samples.is_empty() || detail.sample_rows == 0 {
        return;
    }
    let shown = profile.samples.len().min(detail.sample_rows);
    let _ = writeln!(
        out,
        "Sample rows ({shown} of {} sampled at random; CSV, long values cut with …):",
        profile.samples.len()
    );
    let header: Vec<String> = profile.columns.iter().map(|c| csv_field(&c.name)).collect();
    let _ = writeln!(out, "{}", header.join(","));
    for sample in profile.samples.iter().take(shown) {
        let fields: Vec<String> = sample
            .values
            .iter()
            .map(|v| csv_field(&truncate(v, detail.value_chars)))
            .collect();
        let _ = writeln!(out, "{}", fields.join(","));
    }
}

/// A CSV field: quoted when it holds a comma, quote or line break.
fn csv_field(value: &str) -> String {
    let value = &escape_controls(value, &['\n', '\r', '\t']);
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn fitted_contexts_show_the_rows_asked_for_within_the_budget() {
        let mut rows = String::new();
        for i in 0..50 {
            let _ = writeln!(rows, "{i},name-{i},{}", i * 7);
        }
        let options = crate::ProfileOptions {
            sample_rows: 40,
            ..crate::ProfileOptions::default()
        };
        let profile = crate::profile_reader(
            std::io::Cursor::new(format!("id,name,score\n{rows}")),
            "t.csv",
            &options,
            &|_, _| {},
        )
        .unwrap();
        let shown = |text: &str| {
            text.lines()
                .skip_while(|l| !l.starts_with("Sample rows"))
                .count()
                .saturating_sub(2)
        };
        let roomy = context_fitted(&profile, 25, 100_000);
        assert!(roomy.contains("Sample rows (25 of 40 sampled"), "{roomy}");
        assert_eq!(shown(&roomy), 25);
        assert!(roomy.len() > 1_000);
        let tight = context_fitted(&profile, 25, 750);
        assert!(tight.len() <= 750, "{}", tight.len());
        let kept = shown(&tight);
        assert!(kept > 0 && kept < 25, "{kept} rows:\n{tight}");
        assert_eq!(shown(&context_fitted(&profile, 0, 100_000)), 0);
    }

    #[test]
    fn levels_go_from_most_to_least_detail() {
        for pair in LEVELS.windows(2) {
            assert!(pair[0].top_values >= pair[1].top_values);
            assert!(pair[0].value_chars >= pair[1].value_chars);
            assert!(pair[0].quantiles.len() >= pair[1].quantiles.len());
            assert!(pair[0].sample_rows >= pair[1].sample_rows);
        }
    }
}

//! Alerts: what a person should look at first, computed from a [`Profile`] alone (pure, no
//! I/O). Each alert names its column and says why in a few words with the numbers behind it.

use autocoder_profile::render::format::{human, short_value};
use autocoder_profile::{ColumnProfile, Monotonic, Profile};
use autocoder_schema::{DataType, Pattern};

use crate::date_shape::date_shape;

/// A column with at least this share of its rows missing gets [`AlertKind::Missing`].
pub const MISSING_SHARE: f64 = 0.2;
/// A numeric column with at least this share of zeros gets [`AlertKind::Zeros`].
pub const ZEROS_SHARE: f64 = 0.1;
/// Skewed when one tail is this many times as long as the other: `p95 - p50` against
/// `p50 - p5` (a quantile skewness of 0.5; an exponential distribution has 3.3, a normal 1).
pub const SKEW_RATIO: f64 = 3.0;
/// Mixed types when numbers are between this share and one minus it of the sampled values.
pub const MIXED_SHARE: f64 = 0.05;
/// Dates stored as text when at least this share of the sampled values look like dates.
pub const DATE_SHARE: f64 = 0.5;

/// What an alert is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AlertKind {
    /// Rows equal to an earlier row.
    Duplicates,
    /// Records that did not fit the header.
    BadRows,
    /// Every value of the column is missing.
    Empty,
    /// One distinct value.
    Constant,
    /// At least [`MISSING_SHARE`] of the rows missing.
    Missing,
    /// No value repeats, and the name, pattern or order says it identifies rows.
    Identifier,
    /// No value repeats (not said of floats, where it is the rule).
    Unique,
    /// One tail much longer than the other (see [`SKEW_RATIO`]).
    Skewed,
    /// At least [`ZEROS_SHARE`] of the values are zero.
    Zeros,
    /// A text column whose values are partly numbers.
    MixedTypes,
    /// A text column whose values mostly look like dates.
    DateAsText,
}

impl AlertKind {
    /// A short label for a badge.
    pub fn label(self) -> &'static str {
        match self {
            AlertKind::Duplicates => "duplicates",
            AlertKind::BadRows => "bad rows",
            AlertKind::Empty => "empty",
            AlertKind::Constant => "constant",
            AlertKind::Missing => "missing",
            AlertKind::Identifier => "identifier",
            AlertKind::Unique => "unique",
            AlertKind::Skewed => "skewed",
            AlertKind::Zeros => "zeros",
            AlertKind::MixedTypes => "mixed types",
            AlertKind::DateAsText => "date as text",
        }
    }

    /// Whether the alert is likely a problem (rather than a fact worth knowing).
    pub fn is_warning(self) -> bool {
        !matches!(
            self,
            AlertKind::Identifier | AlertKind::Unique | AlertKind::Skewed | AlertKind::Zeros
        )
    }
}

/// One alert.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    /// The column's index in [`Profile::columns`], or `None` for the whole table.
    pub column: Option<usize>,
    /// What it is about.
    pub kind: AlertKind,
    /// Why, in a few words with the numbers (plain text, not HTML).
    pub detail: String,
}

/// The alerts of the table, then of each column in file order.
pub fn alerts(profile: &Profile) -> Vec<Alert> {
    let mut out = Vec::new();
    if profile.duplicate_rows > 0 {
        out.push(Alert {
            column: None,
            kind: AlertKind::Duplicates,
            detail: format!(
                "{}{} duplicate rows ({} of the rows)",
                if profile.duplicate_rows_exact {
                    ""
                } else {
                    "~"
                },
                profile.duplicate_rows,
                percent(profile.duplicate_rows, profile.rows)
            ),
        });
    }
    let bad = &profile.bad_rows;
    let bad_total = bad.short_rows + bad.long_rows + bad.unclosed_quotes;
    if bad_total > 0 {
        out.push(Alert {
            column: None,
            kind: AlertKind::BadRows,
            detail: format!(
                "{bad_total} records did not fit the header ({} short, {} long, {} unclosed quotes)",
                bad.short_rows, bad.long_rows, bad.unclosed_quotes
            ),
        });
    }
    for (i, column) in profile.columns.iter().enumerate() {
        out.extend(
            column_alerts(column, profile)
                .into_iter()
                .map(|(kind, detail)| Alert {
                    column: Some(i),
                    kind,
                    detail,
                }),
        );
    }
    out
}

/// The alerts of one column, as `(kind, detail)`.
pub fn column_alerts(column: &ColumnProfile, profile: &Profile) -> Vec<(AlertKind, String)> {
    let mut out = Vec::new();
    let rows = column.count + column.nulls;
    if column.count == 0 {
        if rows > 0 {
            out.push((AlertKind::Empty, format!("all {rows} values are missing")));
        }
        return out;
    }
    if column.distinct == 1 && column.distinct_exact {
        let value = column
            .top_values
            .first()
            .map_or_else(String::new, |v| format!(": {}", short_value(&v.value, 40)));
        out.push((AlertKind::Constant, format!("one distinct value{value}")));
    }
    if rows > 0 && column.nulls as f64 / rows as f64 >= MISSING_SHARE {
        out.push((
            AlertKind::Missing,
            format!("{} missing ({})", column.nulls, percent(column.nulls, rows)),
        ));
    }
    // Different floats are expected (measurements): only other types get "unique".
    if column.unique && column.count > 1 && column.dtype != DataType::Float {
        match identifier_reason(column) {
            Some(reason) => out.push((AlertKind::Identifier, format!("unique, {reason}"))),
            None => out.push((
                AlertKind::Unique,
                format!("all {} values are different", column.count),
            )),
        }
    }
    if let Some(detail) = skew(column) {
        out.push((AlertKind::Skewed, detail));
    }
    if let Some(n) = &column.numeric
        && column.distinct > 2
        && n.zeros as f64 / column.count as f64 >= ZEROS_SHARE
    {
        out.push((
            AlertKind::Zeros,
            format!("{} zeros ({})", n.zeros, percent(n.zeros, column.count)),
        ));
    }
    if column.dtype == DataType::String {
        if let Some(detail) = date_as_text(column, profile) {
            out.push((AlertKind::DateAsText, detail));
        } else if let Some(detail) = mixed_types(column) {
            out.push((AlertKind::MixedTypes, detail));
        }
    }
    out
}

/// `part` of `whole` as a percentage for people: one decimal from 1% up (`3.2%`, `40%`), two
/// significant digits below (`0.58%`), `0%` only for none.
pub(crate) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 || part == 0 {
        return "0%".to_owned();
    }
    share(part as f64 / whole as f64)
}

/// A share in `0..=1` as [`percent`] writes it.
pub(crate) fn share(share: f64) -> String {
    let pct = share * 100.0;
    let text = if pct >= 1.0 || pct <= 0.0 {
        format!("{pct:.1}")
    } else {
        // Two significant digits: the magnitude is within -300..0 here.
        #[allow(clippy::cast_possible_truncation)]
        let decimals = usize::try_from(1 - pct.log10().floor() as i32).unwrap_or(1);
        format!("{pct:.decimals$}")
    };
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text}%")
}

/// Why a unique column likely identifies rows: its name, its pattern or its order.
fn identifier_reason(column: &ColumnProfile) -> Option<String> {
    if !matches!(column.dtype, DataType::Integer | DataType::String) {
        return None;
    }
    let name = column.name.trim().to_lowercase();
    let words: Vec<&str> = name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let last = words.last().copied().unwrap_or("");
    let named = matches!(
        last,
        "id" | "key" | "uuid" | "guid" | "pk" | "code" | "number"
    ) || (last.len() > 2 && last.ends_with("id") && words.len() == 1 && name != last)
        || name.ends_with("id") && !name.ends_with("void") && !name.ends_with("paid");
    if named {
        return Some("named like an identifier".to_owned());
    }
    if let Some(p) = column
        .patterns
        .iter()
        .find(|p| matches!(p.pattern, Pattern::Uuid | Pattern::Hex) && p.rate >= 0.9)
    {
        return Some(format!("values look like {}", p.pattern.description()));
    }
    if column.dtype == DataType::Integer && column.monotonic == Monotonic::StrictlyIncreasing {
        return Some("strictly increasing integers".to_owned());
    }
    None
}

/// The quantile with probability `q` as a number.
fn quantile(column: &ColumnProfile, q: f64) -> Option<f64> {
    column
        .quantiles
        .iter()
        .find(|x| (x.q - q).abs() < 1e-9)
        .and_then(|x| x.value.as_f64())
}

/// Whether one tail (p5 to p50, p50 to p95) is [`SKEW_RATIO`] times as long as the other.
fn skew(column: &ColumnProfile) -> Option<String> {
    if !matches!(column.dtype, DataType::Integer | DataType::Float) || column.distinct <= 2 {
        return None;
    }
    let (p5, p50, p95) = (
        quantile(column, 0.05)?,
        quantile(column, 0.5)?,
        quantile(column, 0.95)?,
    );
    let (low, high) = (p50 - p5, p95 - p50);
    if !(low.is_finite() && high.is_finite()) || low + high <= 0.0 {
        return None;
    }
    let side = if high >= SKEW_RATIO * low {
        "right"
    } else if low >= SKEW_RATIO * high {
        "left"
    } else {
        return None;
    };
    Some(format!(
        "long {side} tail: p5 {}, median {}, p95 {}",
        human(p5),
        human(p50),
        human(p95)
    ))
}

/// A text column where some but not all sampled values are numbers.
fn mixed_types(column: &ColumnProfile) -> Option<String> {
    let share: f64 = column
        .patterns
        .iter()
        .filter(|p| matches!(p.pattern, Pattern::IntegerText | Pattern::DecimalText))
        .map(|p| p.rate)
        .sum();
    if (MIXED_SHARE..=1.0 - MIXED_SHARE).contains(&share) {
        Some(format!(
            "{} of the sampled values are numbers, the rest text",
            self::share(share)
        ))
    } else {
        None
    }
}

/// A text column where most sampled values look like dates (ISO patterns or date shapes such
/// as `99/99/9999`).
fn date_as_text(column: &ColumnProfile, profile: &Profile) -> Option<String> {
    let iso = column
        .patterns
        .iter()
        .filter(|p| matches!(p.pattern, Pattern::IsoDate | Pattern::IsoDatetime))
        .map(|p| p.rate)
        .sum::<f64>();
    let shaped = {
        let dates: u64 = column
            .shapes
            .iter()
            .filter(|s| date_shape(&s.shape))
            .map(|s| s.count)
            .sum();
        let listed: u64 = column.shapes.iter().map(|s| s.count).sum();
        let rows = column.count + column.nulls;
        // The values the shapes were measured on: the sampled rows' non-missing share.
        let sampled = if rows == 0 {
            0.0
        } else {
            (profile.patterns_sampled_rows.min(rows) as f64 * column.count as f64 / rows as f64)
                .max(listed as f64)
        };
        if sampled > 0.0 {
            dates as f64 / sampled
        } else {
            0.0
        }
    };
    let dates = iso.max(shaped);
    (dates >= DATE_SHARE).then(|| {
        format!(
            "{} of the sampled values look like dates; read them with pd.to_datetime",
            share(dates)
        )
    })
}

#[cfg(test)]
mod tests {
    use autocoder_profile::{ProfileOptions, profile_reader};

    use super::*;

    fn profile(csv: &str) -> Profile {
        let options = ProfileOptions {
            threads: 1,
            ..ProfileOptions::default()
        };
        profile_reader(csv.as_bytes(), "t.csv", &options, &|_, _| {}).unwrap()
    }

    fn kinds(profile: &Profile, column: &str) -> Vec<AlertKind> {
        let index = profile
            .columns
            .iter()
            .position(|c| c.name == column)
            .unwrap();
        alerts(profile)
            .into_iter()
            .filter(|a| a.column == Some(index))
            .map(|a| a.kind)
            .collect()
    }

    /// `n` rows of `columns` filled by `f(row)`.
    fn table(header: &str, n: usize, f: impl Fn(usize) -> String) -> String {
        let mut csv = format!("{header}\n");
        for i in 0..n {
            csv.push_str(&f(i));
            csv.push('\n');
        }
        csv
    }

    #[test]
    fn constant_empty_and_missing_columns() {
        let p = profile(&table("same,none,gaps,x", 10, |i| {
            let gap = if i % 3 == 0 { "" } else { "1" };
            format!("7,,{gap},{i}")
        }));
        assert_eq!(kinds(&p, "same"), vec![AlertKind::Constant]);
        assert_eq!(kinds(&p, "none"), vec![AlertKind::Empty]);
        // 4 of 10 missing, and the rest all 1.
        assert_eq!(
            kinds(&p, "gaps"),
            vec![AlertKind::Constant, AlertKind::Missing]
        );
        let all = alerts(&p);
        let missing = all.iter().find(|a| a.kind == AlertKind::Missing).unwrap();
        assert_eq!(missing.detail, "4 missing (40%)");
    }

    #[test]
    fn identifiers_by_name_by_order_and_plain_unique_columns() {
        let p = profile(&table("customer_id,seq,label,score", 30, |i| {
            format!("{},{i},w{},{}", 1000 - i * 7, (i * 7919) % 101, i % 3 + 1)
        }));
        assert_eq!(kinds(&p, "customer_id"), vec![AlertKind::Identifier]);
        assert_eq!(kinds(&p, "seq"), vec![AlertKind::Identifier]);
        assert_eq!(kinds(&p, "label"), vec![AlertKind::Unique]);
        assert!(kinds(&p, "score").is_empty(), "{:?}", kinds(&p, "score"));
        let all = alerts(&p);
        assert!(
            all.iter()
                .any(|a| a.detail == "unique, strictly increasing integers"),
            "{all:?}"
        );
    }

    #[test]
    fn skew_needs_one_long_tail() {
        // Exponential-like (long right tail) against symmetric values.
        let p = profile(&table("wait,even,neg", 200, |i| {
            let u = ((i * 7919) % 100) as f64 / 100.0 + 0.005;
            format!("{:.4},{i},{:.4}", -(1.0 - u).ln(), (1.0 - u).ln())
        }));
        assert_eq!(kinds(&p, "wait"), vec![AlertKind::Skewed]);
        assert_eq!(kinds(&p, "neg"), vec![AlertKind::Skewed]);
        assert!(kinds(&p, "even").contains(&AlertKind::Identifier));
        assert!(!kinds(&p, "even").contains(&AlertKind::Skewed));
        let detail = &alerts(&p)[0].detail;
        assert!(detail.starts_with("long right tail: p5 0.05"), "{detail}");
        assert!(
            alerts(&p)
                .iter()
                .any(|a| a.detail.starts_with("long left tail"))
        );
    }

    #[test]
    fn zeros_are_flagged_but_not_in_flags() {
        let p = profile(&table("amount,flag", 20, |i| {
            format!("{},{}", if i < 5 { 0 } else { i }, i % 2)
        }));
        assert_eq!(kinds(&p, "amount"), vec![AlertKind::Zeros]);
        assert!(kinds(&p, "flag").is_empty(), "{:?}", kinds(&p, "flag"));
    }

    #[test]
    fn mixed_types_and_dates_stored_as_text() {
        let p = profile(&table("code,when,us_date,note", 20, |i| {
            let code = if i % 4 == 0 {
                "unknown".to_owned()
            } else {
                format!("{}", i * 3)
            };
            let when = if i == 7 {
                "unknown".to_owned()
            } else {
                format!("2024-01-{:02}", i % 10 + 1)
            };
            let us_date = if i == 3 {
                "soon".to_owned()
            } else {
                format!("{:02}/{:02}/2023", i % 3 + 1, i % 5 + 1)
            };
            format!("{code},{when},{us_date},note {}", i % 5)
        }));
        assert_eq!(kinds(&p, "code"), vec![AlertKind::MixedTypes]);
        assert_eq!(kinds(&p, "when"), vec![AlertKind::DateAsText]);
        assert_eq!(kinds(&p, "us_date"), vec![AlertKind::DateAsText]);
        assert!(kinds(&p, "note").is_empty(), "{:?}", kinds(&p, "note"));
    }

    #[test]
    fn percentages_are_short() {
        assert_eq!(percent(2, 344), "0.58%");
        assert_eq!(percent(11, 344), "3.2%");
        assert_eq!(percent(342, 344), "99.4%");
        assert_eq!(percent(4, 10), "40%");
        assert_eq!(percent(1, 1_000_000), "0.0001%");
        assert_eq!(percent(0, 7), "0%");
        assert_eq!(percent(7, 7), "100%");
    }

    #[test]
    fn table_alerts_for_duplicates() {
        let p = profile("a,b\n1,x\n1,x\n2,y\n");
        let all = alerts(&p);
        assert_eq!(all[0].kind, AlertKind::Duplicates);
        assert_eq!(all[0].detail, "1 duplicate rows (33.3% of the rows)");
        assert_eq!(all[0].column, None);
    }
}

//! A typed column's exact counts regrouped by value: `1.0` and `1.00`, `+3` and `3`,
//! `10:00Z` and `12:00+02:00` are one value each, as pandas sees them. Distinct counts,
//! uniqueness, top values, quantiles and histograms come from these groups while a column's
//! counts are exact.

use crate::classify::{Kind, classify};
use crate::temporal::{parse_iso_datetime, value_under};

/// How a column's texts become values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    Bool,
    Int,
    Float,
    /// Days or seconds under format `i` (see [`crate::temporal::format_text`]).
    Format(usize),
    /// ISO 8601 datetimes (and dates, as midnight), in seconds.
    Iso,
}

/// One distinct value: its number (days or seconds for dates and datetimes), how often it
/// occurs, and its most frequent text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Group<'a> {
    pub(super) value: f64,
    pub(super) count: u64,
    pub(super) text: &'a str,
}

/// The value of `text` under `reading`, with a key that orders and equals as the values do.
fn read(text: &str, reading: Reading) -> Option<(i64, f64)> {
    let value = match (reading, classify(text, 0)) {
        (Reading::Bool, Kind::Bool(b)) => return Some((i64::from(b), f64::from(u8::from(b)))),
        // Integers keep their own order (past 2^53 an f64 would merge neighbours).
        (Reading::Int, Kind::Int(i)) => return Some((i, i as f64)),
        (Reading::Float, Kind::Int(i)) => i as f64,
        (Reading::Float, Kind::Float(f)) => f,
        (Reading::Format(i), _) => value_under(text, i)?,
        (Reading::Iso, Kind::Date { formats, days }) if formats & 1 == 1 => days as f64 * 86_400.0,
        (Reading::Iso, Kind::Datetime { seconds, .. }) => seconds,
        (Reading::Iso, _) => parse_iso_datetime(text)?.0,
        _ => return None,
    };
    // -0.0 is 0.0; then the bits of an f64, flipped for negatives, order as the numbers do.
    let value = if value == 0.0 { 0.0 } else { value };
    let bits = value.to_bits().cast_signed();
    Some((bits ^ ((bits >> 63) & i64::MAX), value))
}

/// The distinct values of `entries` (texts with counts) sorted by value, or `None` when a
/// text does not read as a value (the column's type is then not `reading`'s).
pub(super) fn groups<'a>(entries: &[(&'a str, u64)], reading: Reading) -> Option<Vec<Group<'a>>> {
    let mut keyed = Vec::with_capacity(entries.len());
    for &(text, count) in entries {
        let (key, value) = read(text, reading)?;
        keyed.push((key, value, count, text));
    }
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then(a.3.cmp(b.3)));
    let mut groups: Vec<Group<'a>> = Vec::new();
    let mut last_key = None;
    for (key, value, count, text) in keyed {
        match groups.last_mut() {
            // Sorted by count within a key: the first text is the most frequent.
            Some(g) if last_key == Some(key) => g.count += count,
            _ => groups.push(Group { value, count, text }),
        }
        last_key = Some(key);
    }
    Some(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp)] // exact values
    fn texts_of_one_value_are_one_group() {
        let entries = [
            ("1.0", 2),
            ("1.00", 5),
            ("-0.0", 1),
            ("0", 1),
            ("2.5", 1),
            ("1", 1),
        ];
        let g = groups(&entries, Reading::Float).unwrap();
        let summary: Vec<(f64, u64, &str)> = g.iter().map(|g| (g.value, g.count, g.text)).collect();
        assert_eq!(
            summary,
            [(0.0, 2, "-0.0"), (1.0, 8, "1.00"), (2.5, 1, "2.5")]
        );
        let g = groups(&[("-5", 1), ("+3", 1), ("3", 2), ("-7", 1)], Reading::Int).unwrap();
        let values: Vec<f64> = g.iter().map(|g| g.value).collect();
        assert_eq!(values, [-7.0, -5.0, 3.0]);
        assert_eq!(g[2].count, 3);
        let g = groups(
            &[
                ("2024-01-01T10:00:00Z", 1),
                ("2024-01-01T12:00:00+02:00", 1),
                ("2024-01-01", 1),
            ],
            Reading::Iso,
        )
        .unwrap();
        assert_eq!(g.len(), 2);
        assert!(groups(&[("x", 1)], Reading::Float).is_none());
    }
}

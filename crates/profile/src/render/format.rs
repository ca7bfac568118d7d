//! Small formatting helpers the renderers share.

use std::fmt::Write as _;

use autocoder_schema::Scalar;

use crate::{ColumnProfile, Dialect, Monotonic, Profile, Quantile};

/// A float in its shortest form that reads back to the same `f64` (`0.1`, `43.92192982456142`,
/// `inf`); whole floats keep a `.0` so they read as floats.
pub(super) fn float(x: f64) -> String {
    if x.is_nan() {
        "nan".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        let s = format!("{x}");
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// `1 row`, `2 rows`.
pub(super) fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The file as shown to people: `-` is standard input.
pub(super) fn source(profile: &Profile) -> &str {
    if profile.source == "-" {
        "standard input"
    } else {
        &profile.source
    }
}

/// A scalar as a reader expects it: numbers exact, text bare unless it needs quoting (empty,
/// surrounding spaces, control characters, commas or quotes), then as a Rust/JSON-style literal.
pub(super) fn scalar(value: &Scalar) -> String {
    match value {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(x) => float(*x),
        Scalar::Str(s) => text_value(s),
    }
}

/// A text value, quoted only when it has to be.
pub(super) fn text_value(s: &str) -> String {
    let needs_quotes = s.is_empty()
        || s.starts_with(' ')
        || s.ends_with(' ')
        || s.chars().any(|c| c.is_control() || c == ',' || c == '"');
    if needs_quotes {
        format!("{s:?}")
    } else {
        s.to_owned()
    }
}

/// `s` cut to at most `max` characters, ending with `…` when cut.
pub(super) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A value cut to `max` characters, then quoted if needed.
pub(super) fn short_value(s: &str, max: usize) -> String {
    text_value(&truncate(s, max))
}

/// The delimiter's name: `","`, `tab`, `";"`, `"|"`.
pub(super) fn delimiter(dialect: Dialect) -> String {
    match dialect.delimiter {
        b'\t' => "tab".to_owned(),
        d if d.is_ascii_graphic() || d == b' ' => format!("\"{}\"", char::from(d)),
        d => format!("byte {d}"),
    }
}

/// What counts as missing, in a few words.
pub(super) fn nulls(profile: &Profile) -> String {
    let extra = profile.nulls.extra();
    let base = if profile.nulls.keep_default_na() {
        "empty fields and pandas' default NA strings"
    } else if extra.is_empty() {
        "none (pandas' defaults turned off)"
    } else {
        "only"
    };
    if extra.is_empty() {
        base.to_owned()
    } else {
        let list: Vec<String> = extra.iter().map(|e| format!("{e:?}")).collect();
        format!("{base} {}", list.join(", "))
    }
}

/// `increasing`, `strictly increasing`, ... or `None` when not sorted.
pub(super) fn monotonic(m: Monotonic) -> Option<&'static str> {
    match m {
        Monotonic::StrictlyIncreasing => Some("strictly increasing"),
        Monotonic::Increasing => Some("increasing"),
        Monotonic::StrictlyDecreasing => Some("strictly decreasing"),
        Monotonic::Decreasing => Some("decreasing"),
        Monotonic::None => None,
    }
}

/// `p1 3 p5 4.5 ...`.
pub(super) fn quantiles(qs: &[Quantile]) -> String {
    let mut out = String::new();
    for q in qs {
        if !out.is_empty() {
            out.push(' ');
        }
        let _ = write!(
            out,
            "p{} {}",
            float(q.q * 100.0).trim_end_matches(".0"),
            scalar(&q.value)
        );
    }
    out
}

/// The type with its qualifiers: `integer`, `datetime (ISO8601, UTC)`.
pub(super) fn dtype(column: &ColumnProfile) -> String {
    let mut out = column.dtype.name().to_owned();
    let mut extra = Vec::new();
    if let Some(format) = &column.datetime_format {
        extra.push(format.clone());
    }
    if column.utc {
        extra.push("UTC".to_owned());
    }
    if !extra.is_empty() {
        let _ = write!(out, " ({})", extra.join(", "));
    }
    out
}

/// The distinct count with `~` and its error when it is an estimate.
pub(super) fn distinct(column: &ColumnProfile) -> String {
    if column.distinct_exact {
        column.distinct.to_string()
    } else {
        format!(
            "~{} (±{}%)",
            column.distinct,
            float((column.distinct_relative_error * 1000.0).round() / 10.0)
        )
    }
}

/// Bytes in binary units, e.g. `16.6 KiB`, with the exact count for small files.
pub(super) fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_exact_and_look_like_floats() {
        assert_eq!(float(43.921_929_824_561_42), "43.92192982456142");
        assert_eq!(float(3.0), "3.0");
        assert_eq!(float(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(float(f64::NEG_INFINITY), "-inf");
        assert_eq!(float(-0.0), "-0.0");
    }

    #[test]
    fn text_is_quoted_only_when_needed() {
        assert_eq!(text_value("Adelie"), "Adelie");
        assert_eq!(text_value(""), "\"\"");
        assert_eq!(text_value("a, b"), "\"a, b\"");
        assert_eq!(text_value("two\nlines"), "\"two\\nlines\"");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }

    #[test]
    fn sizes_use_binary_units() {
        assert_eq!(bytes(10), "10 bytes");
        assert_eq!(bytes(16_972), "16.6 KiB");
        assert_eq!(bytes(1 << 30), "1.0 GiB");
    }
}

//! Small formatting helpers the renderers share (the text report, the prompt context and the
//! HTML report of `autocoder-report`): exact floats, statistics rounded for people, escaped
//! names, counts and sizes.

use std::fmt::Write as _;

use autocoder_schema::Scalar;

use crate::{ColumnProfile, Dialect, Monotonic, Profile, Quantile};

/// A float in its shortest form that reads back to the same `f64` (`0.1`, `43.92192982456142`,
/// `inf`); whole floats keep a `.0` so they read as floats.
pub fn float(x: f64) -> String {
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

/// A statistic for people: four significant digits, but never fewer digits than the
/// integer part has (`43.92`, `200.9`, `1234568`, `0.0001235`); integers stay whole.
pub fn human(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return float(x).trim_end_matches(".0").to_owned();
    }
    // The magnitude is within ±400: the cast cannot truncate.
    #[allow(clippy::cast_possible_truncation)]
    let magnitude = x.abs().log10().floor() as i32;
    if !(-5..=15).contains(&magnitude) {
        return format!("{x:.3e}");
    }
    let decimals = usize::try_from(3 - magnitude).unwrap_or(0);
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A computed value for people: numbers by [`human`], dates and text as they are.
pub fn human_scalar(value: &Scalar) -> String {
    match value {
        Scalar::Float(x) => human(*x),
        other => scalar(other),
    }
}

/// `text` with its control characters written as escapes (`\n`, `\u{1b}`), so that names
/// and values cannot move the cursor, ring the bell or recolour a terminal. `keep` are control
/// characters left as they are.
pub fn escape_controls(text: &str, keep: &[char]) -> String {
    if !text.chars().any(|c| c.is_control() && !keep.contains(&c)) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && !keep.contains(&c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `1 row`, `2 rows`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The file as shown to people: `-` is standard input; control characters are escaped.
pub fn source(profile: &Profile) -> String {
    if profile.source == "-" {
        "standard input".to_owned()
    } else {
        escape_controls(&profile.source, &[])
    }
}

/// A column name as shown to people: control characters escaped, cut to `max` characters.
pub fn name(text: &str, max: usize) -> String {
    truncate(&escape_controls(text, &[]), max)
}

/// A scalar as a reader expects it: numbers exact, text bare unless it needs quoting (empty,
/// surrounding spaces, control characters, commas or quotes), then as a Rust/JSON-style literal.
pub fn scalar(value: &Scalar) -> String {
    match value {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(x) => float(*x),
        Scalar::Str(s) => text_value(s),
    }
}

/// A text value, quoted only when it has to be.
pub fn text_value(s: &str) -> String {
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
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A value cut to `max` characters, then quoted if needed.
pub fn short_value(s: &str, max: usize) -> String {
    text_value(&truncate(s, max))
}

/// The delimiter's name: `","`, `tab`, `";"`, `"|"`.
pub fn delimiter(dialect: Dialect) -> String {
    match dialect.delimiter {
        b'\t' => "tab".to_owned(),
        d if d.is_ascii_graphic() || d == b' ' => format!("\"{}\"", char::from(d)),
        d => format!("byte {d}"),
    }
}

/// What counts as missing, in a few words.
pub fn nulls(profile: &Profile) -> String {
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
pub fn monotonic(m: Monotonic) -> Option<&'static str> {
    match m {
        Monotonic::StrictlyIncreasing => Some("strictly increasing"),
        Monotonic::Increasing => Some("increasing"),
        Monotonic::StrictlyDecreasing => Some("strictly decreasing"),
        Monotonic::Decreasing => Some("decreasing"),
        Monotonic::None => None,
    }
}

/// `p1 3 p5 4.5 ...`.
pub fn quantiles(qs: &[Quantile]) -> String {
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
pub fn dtype(column: &ColumnProfile) -> String {
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
pub fn distinct(column: &ColumnProfile) -> String {
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
pub fn bytes(n: u64) -> String {
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
    fn statistics_for_people_have_four_significant_digits() {
        assert_eq!(human(43.921_929_824_561_42), "43.92");
        assert_eq!(human(5.459_583_713_926_547), "5.46");
        assert_eq!(human(200.915_204_678_362_58), "200.9");
        assert_eq!(human(1_234_567.89), "1234568");
        assert_eq!(human(-0.000_123_456), "-0.0001235");
        assert_eq!(human(3.0), "3");
        assert_eq!(human(0.0), "0");
        assert_eq!(human(1e300), "1.000e300");
        assert_eq!(escape_controls("a\u{1b}[2J\n", &[]), "a\\u{1b}[2J\\n");
        assert_eq!(escape_controls("a\nb", &['\n']), "a\nb");
    }

    #[test]
    fn sizes_use_binary_units() {
        assert_eq!(bytes(10), "10 bytes");
        assert_eq!(bytes(16_972), "16.6 KiB");
        assert_eq!(bytes(1 << 30), "1.0 GiB");
    }
}

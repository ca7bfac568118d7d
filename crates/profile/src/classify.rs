//! Classifies one non-missing field the way pandas would read it: boolean, integer, float, date,
//! datetime, or text. Hand-written and allocation-free: this runs once per value.

use crate::temporal::{IsoForm, NAMED_FORMATS, parse_date, parse_iso_datetime, parse_named};

/// What a field's text is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// `True`/`False`, `TRUE`/`FALSE`, `true`/`false` (what pandas 3.1 reads as bool).
    Bool(bool),
    /// A whole number in i64, without leading zeros.
    Int(i64),
    /// A float pandas reads (`1.5`, `1e5`, `inf`, ...), or an integer too large for i64.
    Float(f64),
    /// A date in the formats of the mask, with its day number under the first of them.
    Date {
        /// Formats (bits of [`crate::temporal::format_text`]) it fits.
        formats: u32,
        /// Days since the epoch under the first fitting format.
        days: i64,
    },
    /// A datetime in one of the named, non-ISO formats of the mask, with its seconds since the
    /// epoch under the first of them.
    Stamp {
        /// Formats it fits.
        formats: u32,
        /// Seconds since the epoch under the first fitting format.
        seconds: f64,
    },
    /// An ISO 8601 datetime.
    Datetime {
        /// Seconds since the epoch (UTC when an offset is given).
        seconds: f64,
        /// Its form.
        form: IsoForm,
    },
    /// Anything else (including zero-padded numbers such as `02134`).
    Text,
}

/// Classifies a non-missing field; of the dates and datetimes read with chrono, only the
/// `candidates` (a mask of formats) are tried, when the text is nothing else.
#[inline]
pub(crate) fn classify(text: &str, candidates: u32) -> Kind {
    match classify_fast(text) {
        Kind::Text if candidates & NAMED_FORMATS != 0 => named(text, candidates),
        kind => kind,
    }
}

/// A date or datetime in one of the formats read with chrono, or text.
#[inline(never)]
fn named(text: &str, candidates: u32) -> Kind {
    match parse_named(text, candidates) {
        Some((formats, seconds, true)) => Kind::Stamp { formats, seconds },
        // Day numbers of four-digit years fit in i64.
        #[allow(clippy::cast_possible_truncation)]
        Some((formats, days, false)) => Kind::Date {
            formats,
            days: days as i64,
        },
        None => Kind::Text,
    }
}

/// [`classify`] without the chrono formats.
#[inline]
fn classify_fast(text: &str) -> Kind {
    let b = text.as_bytes();
    let Some(&first) = b.first() else {
        return Kind::Text;
    };
    match first {
        b'0'..=b'9' | b'-' | b'+' | b'.' | b' ' => {
            if first.is_ascii_digit()
                && let Some(kind) = plain_number(b)
            {
                return kind;
            }
            if b.len() >= 6 && first.is_ascii_digit() {
                if let Some((formats, days)) = parse_date(text) {
                    return Kind::Date { formats, days };
                }
                if b.len() >= 16
                    && let Some((seconds, form)) = parse_iso_datetime(text)
                {
                    return Kind::Datetime { seconds, form };
                }
            }
            number(text)
        }
        b'T' | b't' | b'F' | b'f' => match text {
            "True" | "TRUE" | "true" => Kind::Bool(true),
            "False" | "FALSE" | "false" => Kind::Bool(false),
            _ => number(text),
        },
        b'I' | b'i' | b'N' | b'n' => number(text),
        _ => Kind::Text,
    }
}

/// Powers of ten that are exact in an `f64`.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Digits with at most one dot (`123`, `45.67`, `5.`), the most common numbers, read directly;
/// `None` for anything else, left to [`number`]. Such text is never a date, and the result is
/// what [`number`] gives: an integer's value, or a decimal whose digits and power of ten are
/// exact in an `f64`, so that one division rounds it as `f64::from_str` does (Clinger's fast
/// path).
#[inline]
fn plain_number(b: &[u8]) -> Option<Kind> {
    let mut mantissa = 0u64;
    let mut dot = None;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => mantissa = mantissa.wrapping_mul(10) + u64::from(c - b'0'),
            b'.' if dot.is_none() => dot = Some(i),
            _ => return None,
        }
    }
    if b.len() - usize::from(dot.is_some()) > 18 {
        return None;
    }
    if b.len() > 1 && b[0] == b'0' && b[1].is_ascii_digit() {
        return Some(Kind::Text);
    }
    match dot {
        // At most 18 digits: fits in i64.
        None => i64::try_from(mantissa).ok().map(Kind::Int),
        Some(at) => {
            let power = EXACT_POWERS_OF_TEN.get(b.len() - 1 - at)?;
            // Below 2^53, the mantissa is exact in an f64.
            #[allow(clippy::cast_precision_loss)]
            let exact = (mantissa < 1 << 53).then_some(mantissa as f64)?;
            Some(Kind::Float(exact / power))
        }
    }
}

/// An integer or float as pandas' C parser reads it (spaces around are allowed).
#[inline]
fn number(text: &str) -> Kind {
    let t = trim_spaces(text);
    let b = t.as_bytes();
    if b.is_empty() {
        return Kind::Text;
    }
    let (neg, digits) = match b[0] {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() {
        return Kind::Text;
    }
    // Leading zeros (`007`, `02134`, `00.5`) mean an identifier: text.
    if digits.len() > 1 && digits[0] == b'0' && digits[1].is_ascii_digit() {
        return Kind::Text;
    }
    if digits.iter().all(u8::is_ascii_digit) {
        let mut v: i64 = 0;
        for &d in digits {
            let Some(next) = v
                .checked_mul(10)
                .and_then(|x| x.checked_sub(i64::from(d - b'0')))
            else {
                // Too large for i64: pandas would not read it as Int64; keep the digits.
                return Kind::Text;
            };
            v = next;
        }
        if neg {
            return Kind::Int(v);
        }
        return v.checked_neg().map_or(Kind::Text, Kind::Int);
    }
    let spelled = matches!(digits[0], b'i' | b'I' | b'n' | b'N');
    let plausible = if spelled {
        // `inf`, `infinity`, `nan` in any case.
        digits.len() <= 8 && digits.iter().all(u8::is_ascii_alphabetic)
    } else {
        digits
            .iter()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    };
    if !plausible {
        return Kind::Text;
    }
    // `f64::from_str` accepts what pandas does (`1e5`, `.5`, `5.`, `inf`, `Infinity`, any case)
    // and also `nan`, which only reaches here when it is not a missing-value marker.
    match t.parse::<f64>() {
        Ok(f) if !f.is_nan() => Kind::Float(f),
        _ => Kind::Text,
    }
}

/// `text` without spaces around it (`trim_matches(' ')`, quicker when there are none).
#[inline]
fn trim_spaces(text: &str) -> &str {
    let b = text.as_bytes();
    match (b.first(), b.last()) {
        (Some(b' '), _) | (_, Some(b' ')) => text.trim_matches(' '),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_like_pandas() {
        assert_eq!(classify_fast("42"), Kind::Int(42));
        assert_eq!(classify_fast("-0"), Kind::Int(0));
        assert_eq!(classify_fast("+3"), Kind::Int(3));
        assert_eq!(classify_fast(" 12 "), Kind::Int(12));
        assert_eq!(classify_fast("0"), Kind::Int(0));
        assert_eq!(classify_fast("-9223372036854775808"), Kind::Int(i64::MIN));
        assert_eq!(classify_fast("9223372036854775808"), Kind::Text);
        assert_eq!(classify_fast("02134"), Kind::Text);
        assert_eq!(classify_fast("007"), Kind::Text);
        assert_eq!(classify_fast("1e5"), Kind::Float(1e5));
        assert_eq!(classify_fast(".5"), Kind::Float(0.5));
        assert_eq!(classify_fast("5."), Kind::Float(5.0));
        assert_eq!(classify_fast("0.25"), Kind::Float(0.25));
        assert_eq!(classify_fast("-Infinity"), Kind::Float(f64::NEG_INFINITY));
        assert_eq!(classify_fast("iNf"), Kind::Float(f64::INFINITY));
        for text in [
            "1_000", "0x1F", "1,5", "1.5e", "12a", "-", "$5", "1d5", "nan",
        ] {
            assert_eq!(classify_fast(text), Kind::Text, "{text}");
        }
    }

    #[test]
    fn plain_numbers_read_as_the_general_parser_reads_them() {
        let mut x: u64 = 99;
        let mut texts: Vec<String> = [
            "0",
            "5.",
            "0.5",
            "00.5",
            "007",
            "0.0",
            "123456789012345678",
            "1234567890123456789",
            "9007199254740993.5",
            "0.1",
            "0.3",
            "2.675",
            "1.7976931348623157",
            "4339.97",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let digits = format!("{}", x >> (x % 60));
            let at = (x >> 7) as usize % (digits.len() + 1);
            texts.push(format!("{}.{}", &digits[..at], &digits[at..]));
            texts.push(digits);
        }
        for text in texts {
            let b = text.as_bytes();
            if !b[0].is_ascii_digit() {
                continue;
            }
            let expected = if b.len() >= 6 && parse_date(&text).is_some() {
                continue;
            } else {
                number(&text)
            };
            if let Some(fast) = plain_number(b) {
                match (fast, expected) {
                    (Kind::Float(a), Kind::Float(b)) => {
                        assert_eq!(a.to_bits(), b.to_bits(), "{text}");
                    }
                    _ => assert_eq!(fast, expected, "{text}"),
                }
            }
        }
    }

    #[test]
    fn only_text_has_other_than_ascii() {
        let pieces = [
            "1",
            "0",
            "9",
            ".",
            "-",
            "+",
            " ",
            "e",
            "é",
            "T",
            "rue",
            ":",
            "/",
            "Z",
            "2024-01-31",
            "10:00",
            "inf",
            "\u{a0}",
            "٣",
        ];
        let mut x: u64 = 17;
        for case in 0..50_000 {
            let mut text = String::new();
            for _ in 0..(case % 8) {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                text.push_str(pieces[(x >> 33) as usize % pieces.len()]);
            }
            if !text.is_ascii() {
                assert_eq!(classify_fast(&text), Kind::Text, "{text:?}");
            }
        }
    }

    #[test]
    fn booleans_dates_and_datetimes() {
        assert_eq!(classify_fast("True"), Kind::Bool(true));
        assert_eq!(classify_fast("false"), Kind::Bool(false));
        assert_eq!(classify_fast("yes"), Kind::Text);
        assert_eq!(classify_fast("tRUE"), Kind::Text);
        assert!(matches!(
            classify_fast("2024-01-31"),
            Kind::Date { formats: 1, .. }
        ));
        assert!(matches!(
            classify_fast("2024-01-31T10:00:00Z"),
            Kind::Datetime { .. }
        ));
        assert_eq!(classify_fast("2024-13-01"), Kind::Text);
    }
}

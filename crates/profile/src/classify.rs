//! Classifies one non-missing field the way pandas would read it: boolean, integer, float, date,
//! datetime, or text. Hand-written and allocation-free: this runs once per value.

use crate::temporal::{IsoForm, parse_date, parse_iso_datetime};

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
        /// Formats of [`crate::temporal::DATE_FORMATS`] it fits.
        formats: u8,
        /// Days since the epoch under the first fitting format.
        days: i64,
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

/// Classifies a non-missing field.
#[inline]
pub(crate) fn classify(text: &str) -> Kind {
    let b = text.as_bytes();
    let Some(&first) = b.first() else {
        return Kind::Text;
    };
    match first {
        b'0'..=b'9' | b'-' | b'+' | b'.' | b' ' => {
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
        assert_eq!(classify("42"), Kind::Int(42));
        assert_eq!(classify("-0"), Kind::Int(0));
        assert_eq!(classify("+3"), Kind::Int(3));
        assert_eq!(classify(" 12 "), Kind::Int(12));
        assert_eq!(classify("0"), Kind::Int(0));
        assert_eq!(classify("-9223372036854775808"), Kind::Int(i64::MIN));
        assert_eq!(classify("9223372036854775808"), Kind::Text);
        assert_eq!(classify("02134"), Kind::Text);
        assert_eq!(classify("007"), Kind::Text);
        assert_eq!(classify("1e5"), Kind::Float(1e5));
        assert_eq!(classify(".5"), Kind::Float(0.5));
        assert_eq!(classify("5."), Kind::Float(5.0));
        assert_eq!(classify("0.25"), Kind::Float(0.25));
        assert_eq!(classify("-Infinity"), Kind::Float(f64::NEG_INFINITY));
        assert_eq!(classify("iNf"), Kind::Float(f64::INFINITY));
        for text in [
            "1_000", "0x1F", "1,5", "1.5e", "12a", "-", "$5", "1d5", "nan",
        ] {
            assert_eq!(classify(text), Kind::Text, "{text}");
        }
    }

    #[test]
    fn booleans_dates_and_datetimes() {
        assert_eq!(classify("True"), Kind::Bool(true));
        assert_eq!(classify("false"), Kind::Bool(false));
        assert_eq!(classify("yes"), Kind::Text);
        assert_eq!(classify("tRUE"), Kind::Text);
        assert!(matches!(
            classify("2024-01-31"),
            Kind::Date { formats: 1, .. }
        ));
        assert!(matches!(
            classify("2024-01-31T10:00:00Z"),
            Kind::Datetime { .. }
        ));
        assert_eq!(classify("2024-13-01"), Kind::Text);
    }
}

//! Field texts typed the way pandas reads them with the schema's dtypes, and checks compiled
//! once against such values (bounds typed in advance, regular expressions compiled).

use std::cmp::Ordering;

use autocoder_schema::{Check, DataType, Pattern, Scalar};
use regex::Regex;

/// A point in time from ISO 8601 text: date, time of day and nanoseconds (offsets ignored).
pub(crate) type Stamp = (u16, u8, u8, u8, u8, u8, u32);

/// A value typed like pandas would read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Val<'a> {
    Num(f64),
    Bool(bool),
    Time(Stamp),
    Text(&'a str),
}

/// A value that identifies equal values for uniqueness (`1` and `1.0` in a float column agree).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Num(u64),
    Bool(bool),
    Time(Stamp),
    Text(String),
}

impl Key {
    /// The value as text (numbers as Python prints them without a trailing `.0`).
    pub(crate) fn display(&self) -> String {
        match self {
            Key::Num(bits) => format!("{}", f64::from_bits(*bits)),
            Key::Bool(true) => "True".to_owned(),
            Key::Bool(false) => "False".to_owned(),
            Key::Time((y, mo, d, h, mi, s, nanos)) => {
                if (h, mi, s, nanos) == (&0, &0, &0, &0) {
                    format!("{y:04}-{mo:02}-{d:02}")
                } else if *nanos == 0 {
                    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
                } else {
                    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{nanos:09}")
                }
            }
            Key::Text(s) => s.clone(),
        }
    }
}

impl Val<'_> {
    pub(crate) fn is_nan(&self) -> bool {
        matches!(self, Val::Num(f) if f.is_nan())
    }

    pub(crate) fn key(&self) -> Key {
        match *self {
            // -0.0 and 0.0 are one value.
            Val::Num(f) => Key::Num(if f == 0.0 { 0 } else { f.to_bits() }),
            Val::Bool(b) => Key::Bool(b),
            Val::Time(t) => Key::Time(t),
            Val::Text(s) => Key::Text(s.to_owned()),
        }
    }

    fn compare(&self, bound: &Bound) -> Option<Ordering> {
        match (self, bound) {
            (Val::Num(a), Bound::Num(b)) => a.partial_cmp(b),
            (Val::Bool(a), Bound::Bool(b)) => Some(a.cmp(b)),
            (Val::Time(a), Bound::Time(b)) => Some(a.cmp(b)),
            (Val::Text(a), Bound::Text(b)) => Some((*a).cmp(b.as_str())),
            _ => None,
        }
    }
}

/// Reads `field` as a value of `dtype`; `None` when it is not one.
pub(crate) fn typed(field: &str, dtype: DataType) -> Option<Val<'_>> {
    match dtype {
        DataType::Integer => field.trim().parse::<i64>().ok().map(|i| Val::Num(i as f64)),
        DataType::Float => field.trim().parse::<f64>().ok().map(Val::Num),
        DataType::Boolean => match field.trim() {
            "True" | "TRUE" | "true" => Some(Val::Bool(true)),
            "False" | "FALSE" | "false" => Some(Val::Bool(false)),
            _ => None,
        },
        DataType::Date | DataType::Datetime => stamp(field).map(Val::Time),
        DataType::String | DataType::Empty => Some(Val::Text(field)),
    }
}

/// Reads ISO 8601 `YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]][Z|±HH:MM]`, ignoring the offset.
pub(crate) fn stamp(text: &str) -> Option<Stamp> {
    let b = text.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let digits = b.get(r)?;
        digits.iter().try_fold(0u32, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let mut clock = [0u32; 3];
    let mut nanos = 0u32;
    if matches!(b.get(10), Some(b'T' | b' ')) {
        clock[0] = num(11..13)?;
        if b.get(13) == Some(&b':') {
            clock[1] = num(14..16)?;
        }
        if b.get(16) == Some(&b':') {
            clock[2] = num(17..19)?;
            if matches!(b.get(19), Some(b'.' | b',')) {
                let mut scale = 100_000_000u32;
                for d in b[20..].iter().take_while(|d| d.is_ascii_digit()).take(9) {
                    nanos += u32::from(d - b'0') * scale;
                    scale /= 10;
                }
            }
        }
    }
    let small = |n: u32| u8::try_from(n).ok();
    Some((
        u16::try_from(year).ok()?,
        small(month)?,
        small(day)?,
        small(clock[0])?,
        small(clock[1])?,
        small(clock[2])?,
        nanos,
    ))
}

/// A check's bound, typed once for the column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bound {
    Num(f64),
    Bool(bool),
    Time(Stamp),
    Text(String),
    /// Cannot be compared with any value of the column (validation keeps these out).
    Never,
}

fn bound(scalar: &Scalar, dtype: DataType) -> Bound {
    match scalar {
        Scalar::Int(i) => Bound::Num(*i as f64),
        Scalar::Float(f) => Bound::Num(*f),
        Scalar::Bool(b) => Bound::Bool(*b),
        Scalar::Str(s) if dtype.is_temporal() => stamp(s).map_or(Bound::Never, Bound::Time),
        Scalar::Str(s) => Bound::Text(s.clone()),
    }
}

/// A value check compiled for one column.
#[derive(Debug, Clone)]
pub(crate) enum Compiled {
    Compare(Bound, fn(Ordering) -> bool),
    Range {
        min: Bound,
        max: Bound,
        include_min: bool,
        include_max: bool,
    },
    Set {
        values: Vec<Bound>,
        inside: bool,
    },
    Regex(Option<Regex>),
    Starts(String),
    Ends(String),
    Length(Option<u64>, Option<u64>),
    Pattern(Pattern),
    Always,
}

impl Compiled {
    pub(crate) fn new(check: &Check, dtype: DataType) -> Self {
        let b = |s: &Scalar| bound(s, dtype);
        match check {
            Check::Eq { value } => Compiled::Compare(b(value), Ordering::is_eq),
            Check::Ne { value } => Compiled::Compare(b(value), |o| o != Ordering::Equal),
            Check::Gt { value } => Compiled::Compare(b(value), Ordering::is_gt),
            Check::Ge { value } => Compiled::Compare(b(value), Ordering::is_ge),
            Check::Lt { value } => Compiled::Compare(b(value), Ordering::is_lt),
            Check::Le { value } => Compiled::Compare(b(value), Ordering::is_le),
            Check::InRange {
                min,
                max,
                include_min,
                include_max,
            } => Compiled::Range {
                min: b(min),
                max: b(max),
                include_min: *include_min,
                include_max: *include_max,
            },
            Check::Isin { values } => Compiled::Set {
                values: values.iter().map(b).collect(),
                inside: true,
            },
            Check::Notin { values } => Compiled::Set {
                values: values.iter().map(b).collect(),
                inside: false,
            },
            // Pandera's str_matches is Python's re.match: anchored at the start only.
            Check::StrMatches { pattern } => {
                Compiled::Regex(Regex::new(&format!("^(?:{pattern})")).ok())
            }
            Check::StrContains { pattern } => Compiled::Regex(Regex::new(pattern).ok()),
            Check::StrStartswith { prefix } => Compiled::Starts(prefix.clone()),
            Check::StrEndswith { suffix } => Compiled::Ends(suffix.clone()),
            Check::StrLength { min, max } => Compiled::Length(*min, *max),
            Check::Pattern { pattern } => Compiled::Pattern(*pattern),
            Check::Unique | Check::NotNull => Compiled::Always,
        }
    }

    /// Whether a present value passes. `field` is the text, `value` the typed value.
    pub(crate) fn passes(&self, value: &Val<'_>, field: &str) -> bool {
        match self {
            // Comparisons with NaN are false in pandas too, except `!=`.
            Compiled::Compare(bound, holds) => value.compare(bound).is_some_and(holds),
            Compiled::Range {
                min,
                max,
                include_min,
                include_max,
            } => {
                let lo = match value.compare(min) {
                    Some(Ordering::Greater) => true,
                    Some(Ordering::Equal) => *include_min,
                    _ => false,
                };
                let hi = match value.compare(max) {
                    Some(Ordering::Less) => true,
                    Some(Ordering::Equal) => *include_max,
                    _ => false,
                };
                lo && hi
            }
            Compiled::Set { values, inside } => {
                let found = values
                    .iter()
                    .any(|b| value.compare(b) == Some(Ordering::Equal));
                found == *inside
            }
            Compiled::Regex(regex) => regex.as_ref().is_some_and(|r| r.is_match(field)),
            Compiled::Starts(prefix) => field.starts_with(prefix.as_str()),
            Compiled::Ends(suffix) => field.ends_with(suffix.as_str()),
            Compiled::Length(min, max) => {
                let n = field.chars().count() as u64;
                min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m)
            }
            Compiled::Pattern(pattern) => pattern.matches(field),
            Compiled::Always => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_sort_like_timestamps() {
        assert_eq!(stamp("2024-01-02"), Some((2024, 1, 2, 0, 0, 0, 0)));
        assert_eq!(stamp("2024-01-02 03:04"), Some((2024, 1, 2, 3, 4, 0, 0)));
        assert_eq!(
            stamp("2024-01-02T03:04:05.5Z"),
            Some((2024, 1, 2, 3, 4, 5, 500_000_000))
        );
        assert!(stamp("01/02/2024").is_none());
        assert!(stamp("2024-01-02T").is_none());
        assert!(stamp("2024-01-02") < stamp("2024-01-02 00:00:01"));
    }

    #[test]
    fn compiled_checks_follow_pandera() {
        let ge = Compiled::new(
            &Check::Ge {
                value: Scalar::Str("2024-01-01".into()),
            },
            DataType::Date,
        );
        let day = |s| typed(s, DataType::Date).unwrap();
        assert!(ge.passes(&day("2024-01-01"), ""));
        assert!(!ge.passes(&day("2023-12-31"), ""));
        let matches = Compiled::new(
            &Check::StrMatches {
                pattern: "[0-9]+".into(),
            },
            DataType::String,
        );
        assert!(
            matches.passes(&Val::Text("12ab"), "12ab"),
            "re.match anchors at the start only"
        );
        assert!(!matches.passes(&Val::Text("ab12"), "ab12"));
        assert_eq!(Val::Num(-0.0).key(), Val::Num(0.0).key());
    }
}

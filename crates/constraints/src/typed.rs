//! Field texts typed the way pandas reads them with the schema's dtypes, and checks compiled
//! once against such values (bounds typed in advance, regular expressions compiled).

use std::cmp::Ordering;

use autocoder_schema::{Check, DataType, Pattern, Scalar};
use regex::Regex;

/// A point in time: seconds since 1970-01-01 00:00 and nanoseconds. Values with a UTC offset
/// are converted to UTC (as the emitted reader does); naive values are taken as they are.
pub(crate) type Stamp = (i64, u32);

/// How a column's values are typed: the logical type, and for dates a `strftime` format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnType {
    pub(crate) dtype: DataType,
    format: Option<Vec<Piece>>,
}

impl ColumnType {
    /// A column of `dtype`; `datetime_format` is the schema's format for date columns (`None`
    /// or `ISO8601` read ISO 8601).
    pub(crate) fn new(dtype: DataType, datetime_format: Option<&str>) -> Self {
        let format = datetime_format
            .filter(|f| dtype.is_temporal() && *f != "ISO8601")
            .and_then(pieces);
        Self { dtype, format }
    }
}

/// One part of a `strftime` format.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Fraction,
    Literal(char),
}

/// The pieces of a format using `%Y %m %d %H %M %S %f` and literal characters; `None` for
/// anything else (such values are reported as unreadable, not guessed).
fn pieces(format: &str) -> Option<Vec<Piece>> {
    let mut out = Vec::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '%' {
            match chars.next()? {
                'Y' => Piece::Year,
                'm' => Piece::Month,
                'd' => Piece::Day,
                'H' => Piece::Hour,
                'M' => Piece::Minute,
                'S' => Piece::Second,
                'f' => Piece::Fraction,
                '%' => Piece::Literal('%'),
                _ => return None,
            }
        } else {
            Piece::Literal(c)
        });
    }
    Some(out)
}

/// Reads `text` with a parsed `strftime` format (like Python's `strptime`: one or two digits
/// for month, day and time fields).
fn stamp_with(text: &str, format: &[Piece]) -> Option<Stamp> {
    let b = text.trim().as_bytes();
    let mut at = 0;
    let digits = |at: &mut usize, min: usize, max: usize| -> Option<(u32, usize)> {
        let run = b[*at..]
            .iter()
            .take(max)
            .take_while(|d| d.is_ascii_digit())
            .count();
        if run < min {
            return None;
        }
        let value = b[*at..*at + run]
            .iter()
            .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
        *at += run;
        Some((value, run))
    };
    let mut parts = [1970u32, 1, 1, 0, 0, 0, 0];
    for piece in format {
        match piece {
            Piece::Year => parts[0] = digits(&mut at, 4, 4)?.0,
            Piece::Month => parts[1] = digits(&mut at, 1, 2)?.0,
            Piece::Day => parts[2] = digits(&mut at, 1, 2)?.0,
            Piece::Hour => parts[3] = digits(&mut at, 1, 2)?.0,
            Piece::Minute => parts[4] = digits(&mut at, 1, 2)?.0,
            Piece::Second => parts[5] = digits(&mut at, 1, 2)?.0,
            Piece::Fraction => {
                let (value, len) = digits(&mut at, 1, 9)?;
                parts[6] = value * 10u32.pow(u32::try_from(9 - len).ok()?);
            }
            Piece::Literal(c) => {
                let mut buf = [0u8; 4];
                let lit = c.encode_utf8(&mut buf).as_bytes();
                if !b[at..].starts_with(lit) {
                    return None;
                }
                at += lit.len();
            }
        }
    }
    if at != b.len() {
        return None;
    }
    to_stamp(parts, 0)
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `[year, month, day, hour, minute, second, nanos]` minus `offset_seconds`, checked.
fn to_stamp(p: [u32; 7], offset_seconds: i64) -> Option<Stamp> {
    let [year, month, day, hour, minute, second, nanos] = p;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, day);
    let seconds =
        days * 86_400 + i64::from(hour) * 3_600 + i64::from(minute) * 60 + i64::from(second);
    Some((seconds - offset_seconds, nanos))
}

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
            Key::Time((seconds, nanos)) => {
                let days = seconds.div_euclid(86_400);
                let rest = seconds.rem_euclid(86_400);
                let (year, month, day) = civil_from_days(days);
                let date = format!("{year:04}-{month:02}-{day:02}");
                let clock = format!(
                    "{:02}:{:02}:{:02}",
                    rest / 3_600,
                    rest % 3_600 / 60,
                    rest % 60
                );
                if rest == 0 && *nanos == 0 {
                    date
                } else if *nanos == 0 {
                    format!("{date} {clock}")
                } else {
                    format!("{date} {clock}.{nanos:09}")
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
pub(crate) fn typed<'f>(field: &'f str, column: &ColumnType) -> Option<Val<'f>> {
    match column.dtype {
        DataType::Integer => field.trim().parse::<i64>().ok().map(|i| Val::Num(i as f64)),
        DataType::Float => field.trim().parse::<f64>().ok().map(Val::Num),
        DataType::Boolean => match field.trim() {
            "True" | "TRUE" | "true" => Some(Val::Bool(true)),
            "False" | "FALSE" | "false" => Some(Val::Bool(false)),
            _ => None,
        },
        DataType::Date | DataType::Datetime => match &column.format {
            Some(format) => stamp_with(field, format),
            None => stamp(field),
        }
        .map(Val::Time),
        DataType::String | DataType::Empty => Some(Val::Text(field)),
    }
}

/// Reads ISO 8601 `YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]][Z|±HH[:]MM]`.
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
    let mut parts = [num(0..4)?, num(5..7)?, num(8..10)?, 0, 0, 0, 0];
    let mut at = 10;
    if matches!(b.get(10), Some(b'T' | b' ')) {
        parts[3] = num(11..13)?;
        at = 13;
        if b.get(13) == Some(&b':') {
            parts[4] = num(14..16)?;
            at = 16;
        }
        if b.get(16) == Some(&b':') {
            parts[5] = num(17..19)?;
            at = 19;
            if matches!(b.get(19), Some(b'.' | b',')) {
                let run = b[20..].iter().take_while(|d| d.is_ascii_digit()).count();
                let mut scale = 100_000_000u32;
                for d in &b[20..20 + run.min(9)] {
                    parts[6] += u32::from(d - b'0') * scale;
                    scale /= 10;
                }
                at = 20 + run;
            }
        }
    }
    let offset = match b.get(at..).unwrap_or_default() {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let digits: Vec<u8> = rest.iter().copied().filter(|c| *c != b':').collect();
            if digits.len() != 4 || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let n = |i: usize| i64::from(digits[i] - b'0');
            let seconds = (n(0) * 10 + n(1)) * 3_600 + (n(2) * 10 + n(3)) * 60;
            if *sign == b'-' { -seconds } else { seconds }
        }
        _ => return None,
    };
    to_stamp(parts, offset)
}

/// The civil date of a day count from 1970-01-01 (inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
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
        let day = 19_724 * 86_400; // 2024-01-02
        assert_eq!(stamp("2024-01-02"), Some((day, 0)));
        assert_eq!(
            stamp("2024-01-02 03:04"),
            Some((day + 3 * 3_600 + 4 * 60, 0))
        );
        assert_eq!(
            stamp("2024-01-02T03:04:05.5Z"),
            Some((day + 3 * 3_600 + 4 * 60 + 5, 500_000_000))
        );
        assert_eq!(
            stamp("2024-01-02T02:00:00+02:00"),
            Some((day, 0)),
            "converted to UTC"
        );
        assert!(stamp("01/02/2024").is_none());
        assert!(stamp("2024-01-02T").is_none());
        assert!(stamp("2024-13-02").is_none());
        assert!(stamp("2024-01-02") < stamp("2024-01-02 00:00:01"));
        assert_eq!(Key::Time((day, 0)).display(), "2024-01-02");
        assert_eq!(Key::Time((day + 61, 0)).display(), "2024-01-02 00:01:01");
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn strftime_formats_read_like_strptime() {
        let dmy = ColumnType::new(DataType::Date, Some("%d/%m/%Y"));
        assert_eq!(
            typed("2/1/2024", &dmy),
            Some(Val::Time((19_724 * 86_400, 0)))
        );
        assert_eq!(typed("02/01/2024", &dmy), typed("2/1/2024", &dmy));
        assert!(typed("2024-01-02", &dmy).is_none());
        let with_time = ColumnType::new(DataType::Datetime, Some("%Y-%m-%d %H:%M:%S.%f"));
        assert_eq!(
            typed("1970-01-01 00:00:01.25", &with_time),
            Some(Val::Time((1, 250_000_000)))
        );
        let unknown = ColumnType::new(DataType::Date, Some("%b %d %Y"));
        assert!(typed("Jan 02 2024", &unknown).is_none());
    }

    #[test]
    fn compiled_checks_follow_pandera() {
        let ge = Compiled::new(
            &Check::Ge {
                value: Scalar::Str("2024-01-01".into()),
            },
            DataType::Date,
        );
        let date = ColumnType::new(DataType::Date, None);
        let day = |s| typed(s, &date).unwrap();
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

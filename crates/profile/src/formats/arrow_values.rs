//! One Arrow value as text, the way pandas writes it to CSV: shortest round-trip floats with
//! `inf` spelt out, dates `YYYY-MM-DD`, datetimes `YYYY-MM-DD HH:MM:SS[.fraction][+00:00]`,
//! times of day, decimals with their scale, binary as hex.

use std::fmt::Write as _;

use chrono::{Datelike, NaiveDateTime, Timelike};

use super::text::TextColumn;

pub(crate) fn floats(n: usize, value: impl Fn(usize) -> Option<f64>, out: &mut TextColumn) {
    let mut buf = ryu::Buffer::new();
    for r in 0..n {
        match value(r) {
            Some(v) if !v.is_nan() => out.push(float_text(&mut buf, v)),
            _ => out.push_null(),
        }
    }
}

/// A float as pandas reads it back: shortest round-trip digits, `inf` spelt out.
pub(crate) fn float_text<F: ryu::Float + Copy + Into<f64>>(buf: &mut ryu::Buffer, v: F) -> &str {
    let x: f64 = v.into();
    if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }
    } else {
        buf.format_finite(v)
    }
}

pub(crate) fn strings<'a>(
    n: usize,
    value: impl Fn(usize) -> Option<&'a str>,
    out: &mut TextColumn,
) {
    for r in 0..n {
        match value(r) {
            Some(v) => out.push(v),
            None => out.push_null(),
        }
    }
}

pub(crate) fn hex(bytes: &[u8], s: &mut String) -> bool {
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    true
}

pub(crate) fn date(secs: i64, nanos: u32, s: &mut String) -> bool {
    let Some(dt) = chrono::DateTime::from_timestamp(secs, nanos) else {
        return false;
    };
    let d = dt.naive_utc();
    let _ = write!(s, "{:04}-{:02}-{:02}", d.year(), d.month(), d.day());
    true
}

/// `YYYY-MM-DD HH:MM:SS[.fraction][+00:00]`, as pandas writes datetimes.
pub(crate) fn timestamp(value: i64, per_second: i64, utc: bool, s: &mut String) -> bool {
    let secs = value.div_euclid(per_second);
    let frac = value.rem_euclid(per_second);
    let nanos = frac * (1_000_000_000 / per_second);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // below 1e9
    let Some(dt) = chrono::DateTime::from_timestamp(secs, nanos as u32) else {
        return false;
    };
    let d: NaiveDateTime = dt.naive_utc();
    let _ = write!(
        s,
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        d.year(),
        d.month(),
        d.day(),
        d.hour(),
        d.minute(),
        d.second()
    );
    if frac != 0 {
        let digits = match per_second {
            1_000 => 3,
            1_000_000 => 6,
            _ => 9,
        };
        let _ = write!(s, ".{frac:0digits$}");
    }
    if utc {
        s.push_str("+00:00");
    }
    true
}

pub(crate) fn time_of_day(secs: i64, nanos: i64, s: &mut String) -> bool {
    let _ = write!(
        s,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if nanos != 0 {
        let _ = write!(s, ".{:06}", nanos / 1000);
    }
    true
}

/// The decimal's unscaled digits with the point put back.
pub(crate) fn decimal(digits: &str, scale: i8, s: &mut String) {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", digits),
    };
    s.push_str(sign);
    if scale <= 0 {
        s.push_str(digits);
        for _ in 0..scale.unsigned_abs() {
            s.push('0');
        }
        return;
    }
    let scale = usize::from(scale.unsigned_abs());
    if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        s.push_str(int);
        s.push('.');
        s.push_str(frac);
    } else {
        s.push_str("0.");
        for _ in digits.len()..scale {
            s.push('0');
        }
        s.push_str(digits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_timestamps_and_floats_read_as_pandas_writes_them() {
        let mut s = String::new();
        decimal("-1234", 2, &mut s);
        s.push(' ');
        decimal("5", 3, &mut s);
        s.push(' ');
        decimal("12", -2, &mut s);
        assert_eq!(s, "-12.34 0.005 1200");
        let mut t = String::new();
        assert!(timestamp(1_700_000_000_123_000, 1_000_000, true, &mut t));
        assert_eq!(t, "2023-11-14 22:13:20.123000+00:00");
        let mut t = String::new();
        assert!(timestamp(-1, 1, false, &mut t));
        assert_eq!(t, "1969-12-31 23:59:59");
        let mut buf = ryu::Buffer::new();
        assert_eq!(float_text(&mut buf, 3.0f64), "3.0");
        assert_eq!(float_text(&mut buf, f64::NEG_INFINITY), "-inf");
        assert_eq!(float_text(&mut buf, 0.1f32), "0.1");
    }
}

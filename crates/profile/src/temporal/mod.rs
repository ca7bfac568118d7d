//! Dates and datetimes: the formats pandas can read with an explicit `date_format`. The common
//! ones (ISO 8601 dates and datetimes, numeric dates with `/`, `.` or `-`) are parsed by hand
//! into days or seconds since the Unix epoch (UTC when an offset is given); the others
//! ([`named`]) with chrono's `strftime` parser.

mod named;

use named::NAMED;

/// The date formats read by hand (`strftime`), the first bits of a format mask. ISO first:
/// ties go to the first.
const HAND_FORMATS: [&str; 7] = [
    "%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%d/%m/%Y", "%d.%m.%Y", "%m-%d-%Y", "%d-%m-%Y",
];

/// How many formats there are: the hand-read dates, then [`NAMED`].
pub(crate) const FORMATS: usize = HAND_FORMATS.len() + NAMED.len();

/// Every format, as a mask.
pub(crate) const ALL_FORMATS: u32 = (1 << FORMATS) - 1;

/// The formats read with chrono, as a mask.
pub(crate) const NAMED_FORMATS: u32 = ALL_FORMATS & !((1 << HAND_FORMATS.len()) - 1);

/// The formats with a time of day, as a mask.
pub(crate) const STAMP_FORMATS: u32 = {
    let mut mask = 0;
    let mut i = 0;
    while i < NAMED.len() {
        if NAMED[i].stamp {
            mask |= 1 << (HAND_FORMATS.len() + i);
        }
        i += 1;
    }
    mask
};

/// The date formats (no time of day), as a mask.
pub(crate) const DATE_FORMATS: u32 = ALL_FORMATS & !STAMP_FORMATS;

/// The `strftime` text of format `i`.
pub(crate) fn format_text(i: usize) -> &'static str {
    match i.checked_sub(HAND_FORMATS.len()) {
        None => HAND_FORMATS[i],
        Some(j) => NAMED.get(j).map_or("ISO8601", |n| n.strftime),
    }
}

/// The first format of `mask`.
pub(crate) fn first_format(mask: u32) -> Option<usize> {
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

/// The formats among `candidates` read with chrono that `text` fits, and its value under the
/// first of them (days for dates, seconds for datetimes), with whether they are datetimes.
pub(crate) fn parse_named(text: &str, candidates: u32) -> Option<(u32, f64, bool)> {
    let mut mask = 0u32;
    let mut first: Option<(f64, bool)> = None;
    let mut left = candidates & NAMED_FORMATS;
    while left != 0 {
        let i = left.trailing_zeros() as usize;
        left &= left - 1;
        let n = NAMED[i - HAND_FORMATS.len()];
        if let Some(v) = named::value_under(text, n) {
            // A value is a date or a datetime, never both: keep the first one's kind.
            if first.is_none_or(|(_, stamp)| stamp == n.stamp) {
                mask |= 1 << i;
                first.get_or_insert((v, n.stamp));
            }
        }
    }
    first.map(|(v, stamp)| (mask, v, stamp))
}

/// The value of `text` under format `i`: days since the epoch for dates, seconds for datetimes.
pub(crate) fn value_under(text: &str, i: usize) -> Option<f64> {
    match i.checked_sub(HAND_FORMATS.len()) {
        None => date_under(text, i).map(|d| d as f64),
        Some(j) => named::value_under(text, *NAMED.get(j)?),
    }
}

/// An ISO 8601 datetime's form; values of one form share one `strftime` format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)] // independent parts of a format
pub(crate) struct IsoForm {
    pub(crate) t_separator: bool,
    pub(crate) seconds: bool,
    pub(crate) fraction: bool,
    /// `Z` or a numeric offset.
    pub(crate) offset: bool,
}

impl IsoForm {
    /// The `strftime` format of naive values of this form.
    pub(crate) fn format(self) -> Option<String> {
        if self.offset {
            return None;
        }
        let mut f = String::from(if self.t_separator {
            "%Y-%m-%dT%H:%M"
        } else {
            "%Y-%m-%d %H:%M"
        });
        if self.seconds {
            f.push_str(":%S");
        }
        if self.fraction {
            f.push_str(".%f");
        }
        Some(f)
    }
}

/// Days from 1970-01-01 to the civil date (proleptic Gregorian), Howard Hinnant's algorithm.
#[inline]
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    if let Ok(y) = u32::try_from(y) {
        // The same arithmetic unsigned (cheaper divisions) for the years text can hold.
        let (y, m) = (u64::from(y), u64::from(m));
        let era = y / 400;
        let yoe = y - era * 400;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + u64::from(d);
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        // At most about 1.5e12: fits in i64.
        #[allow(clippy::cast_possible_wrap)]
        return (era * 146_097 + doe) as i64 - 719_469;
    }
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day number.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    // `d` is 1..=31 and `m` 1..=12 by construction.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (m, d) = (m as u32, d as u32);
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[inline]
fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

#[inline]
fn valid_date(y: i64, m: u32, d: u32) -> bool {
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// Reads `n` ASCII digits.
#[inline]
fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() {
        return None;
    }
    let mut acc = 0u32;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc * 10 + u32::from(d);
    }
    Some(acc)
}

/// Two ASCII digits.
#[inline]
fn two_digits(a: u8, b: u8) -> Option<u32> {
    let (a, b) = (a.wrapping_sub(b'0'), b.wrapping_sub(b'0'));
    (a <= 9 && b <= 9).then(|| u32::from(a) * 10 + u32::from(b))
}

/// Whether all eight bytes of `w` are ASCII digits: each byte's high nibble is 3, and still 3
/// after adding 6 (0x30..=0x39). A carry out of a byte only comes from a byte over 0xF9, which
/// fails by its own high nibble.
#[inline]
fn all_digits(w: u64) -> bool {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    (w & HIGH) | ((w.wrapping_add(0x0606_0606_0606_0606) & HIGH) >> 4) == 0x3333_3333_3333_3333
}

/// '0' in every byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// An ISO date `YYYY-MM-DD` at the start of `b`: (days since epoch). The ten bytes are checked
/// as two words rather than digit by digit (this runs for every date and datetime value).
#[inline]
fn iso_date(b: &[u8]) -> Option<i64> {
    // Bytes 4 and 7 of the first word (little-endian: byte `i` of the text is byte `i`).
    const SEPARATORS: u64 = (0xff << 32) | (0xff << 56);
    const DASHES: u64 = (0x2d << 32) | (0x2d << 56);
    let text = b.first_chunk::<10>()?;
    let (head, tail) = text.split_at(8);
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(head);
    let first = u64::from_le_bytes(bytes);
    if first & SEPARATORS != DASHES {
        return None;
    }
    // The separators become '0' for the digit check; the day's two digits are padded with '0'.
    let first = (first & !SEPARATORS) | (ZEROS & SEPARATORS);
    let last = u64::from(u16::from_le_bytes([tail[0], tail[1]])) | (ZEROS & !0xffff);
    if !all_digits(first) || !all_digits(last) {
        return None;
    }
    let (first, last) = (first - ZEROS, last - ZEROS);
    // Each byte is now 0..=9.
    #[allow(clippy::cast_possible_truncation)]
    let digit = |word: u64, i: u32| (word >> (8 * i)) as u32 & 0xff;
    let year = digit(first, 0) * 1000 + digit(first, 1) * 100 + digit(first, 2) * 10;
    let year = i64::from(year + digit(first, 3));
    let month = digit(first, 5) * 10 + digit(first, 6);
    let day = digit(last, 0) * 10 + digit(last, 1);
    valid_date(year, month, day).then(|| days_from_civil(year, month, day))
}

/// The hand-read date formats `text` fits (a mask over [`HAND_FORMATS`]) and its day number
/// under the first of them.
pub(crate) fn parse_date(text: &str) -> Option<(u32, i64)> {
    let b = text.as_bytes();
    if b.len() == 10
        && let Some(days) = iso_date(b)
    {
        return Some((1, days));
    }
    if !(6..=10).contains(&b.len()) {
        return None;
    }
    // Three numeric parts split by one separator.
    let first_sep = b.iter().position(|c| !c.is_ascii_digit())?;
    let sep = b[first_sep];
    if !matches!(sep, b'/' | b'.' | b'-') {
        return None;
    }
    let second_sep = first_sep + 1 + b[first_sep + 1..].iter().position(|&c| c == sep)?;
    // A third separator leaves a non-digit in `p3`, which `digits` rejects.
    let (p1, p2, p3) = (
        &b[..first_sep],
        &b[first_sep + 1..second_sep],
        &b[second_sep + 1..],
    );
    let (a, b2, c) = (digits(p1)?, digits(p2)?, digits(p3)?);
    let short = |p: &[u8]| (1..=2).contains(&p.len());
    let mut mask = 0u32;
    let mut first: Option<i64> = None;
    let mut try_fmt = |bit: usize, y: u32, m: u32, d: u32| {
        let y = i64::from(y);
        if valid_date(y, m, d) {
            mask |= 1 << bit;
            first.get_or_insert(days_from_civil(y, m, d));
        }
    };
    if p1.len() == 4 && short(p2) && short(p3) {
        if sep == b'/' {
            try_fmt(1, a, b2, c);
        }
    } else if short(p1) && short(p2) && p3.len() == 4 {
        match sep {
            b'/' => {
                try_fmt(2, c, a, b2);
                try_fmt(3, c, b2, a);
            }
            b'.' => try_fmt(4, c, b2, a),
            _ => {
                try_fmt(5, c, a, b2);
                try_fmt(6, c, b2, a);
            }
        }
    }
    first.map(|days| (mask, days))
}

/// Days since epoch under one of the [`HAND_FORMATS`].
fn date_under(text: &str, format: usize) -> Option<i64> {
    let (mask, _) = parse_date(text)?;
    if mask & (1 << format) == 0 {
        return None;
    }
    if format == 0 {
        return iso_date(text.as_bytes());
    }
    let sep = text.bytes().find(|c| !c.is_ascii_digit())?;
    let parts: Vec<u32> = text
        .split(char::from(sep))
        .map(|p| digits(p.as_bytes()))
        .collect::<Option<_>>()?;
    let (y, m, d) = match format {
        1 => (parts[0], parts[1], parts[2]),
        2 | 5 => (parts[2], parts[0], parts[1]),
        _ => (parts[2], parts[1], parts[0]),
    };
    Some(days_from_civil(i64::from(y), m, d))
}

/// An ISO 8601 datetime: `YYYY-MM-DD[T ]HH:MM[:SS[.fffffffff]][Z|±HH[:MM]]`, as seconds since
/// the epoch (UTC when an offset is given) and its form.
pub(crate) fn parse_iso_datetime(text: &str) -> Option<(f64, IsoForm)> {
    let b = text.as_bytes();
    if b.len() < 16 || !(b[10] == b'T' || b[10] == b' ') {
        return None;
    }
    let days = iso_date(b)?;
    if b[13] != b':' {
        return None;
    }
    let hh = two_digits(b[11], b[12])?;
    let mm = two_digits(b[14], b[15])?;
    if hh > 23 || mm > 59 {
        return None;
    }
    let mut pos = 16;
    let mut secs = 0f64;
    let mut form = IsoForm {
        t_separator: b[10] == b'T',
        seconds: false,
        fraction: false,
        offset: false,
    };
    if b.get(pos) == Some(&b':') {
        let ss = two_digits(*b.get(pos + 1)?, *b.get(pos + 2)?)?;
        if ss > 59 {
            return None;
        }
        secs = f64::from(ss);
        form.seconds = true;
        pos += 3;
        if b.get(pos) == Some(&b'.') {
            let start = pos + 1;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            if end == start || end - start > 9 {
                return None;
            }
            let frac: f64 = text.get(pos..end)?.parse().ok()?;
            secs += frac;
            form.fraction = true;
            pos = end;
        }
    }
    let mut offset_secs = 0i64;
    match b.get(pos) {
        None => {}
        Some(b'Z') if pos + 1 == b.len() => form.offset = true,
        Some(&sign @ (b'+' | b'-')) => {
            let rest = &b[pos + 1..];
            let (oh, om) = match rest.len() {
                2 => (digits(rest)?, 0),
                4 => (digits(&rest[..2])?, digits(&rest[2..])?),
                5 if rest[2] == b':' => (digits(&rest[..2])?, digits(&rest[3..])?),
                _ => return None,
            };
            if oh > 23 || om > 59 {
                return None;
            }
            offset_secs = i64::from(oh * 3600 + om * 60);
            if sign == b'-' {
                offset_secs = -offset_secs;
            }
            form.offset = true;
        }
        Some(_) => return None,
    }
    let whole = days * 86_400 + i64::from(hh * 3600 + mm * 60) - offset_secs;
    Some((whole as f64 + secs, form))
}

/// `YYYY-MM-DD` of a day number.
pub(crate) fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DDTHH:MM:SS[.ffffff]` of seconds since the epoch.
pub(crate) fn format_datetime(seconds: f64) -> String {
    let floor = seconds.floor();
    // Seconds since the epoch of real data fit in i64.
    #[allow(clippy::cast_possible_truncation)]
    let whole = floor as i64;
    let days = whole.div_euclid(86_400);
    let rem = whole.rem_euclid(86_400);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let micros = ((seconds - floor) * 1e6).round() as u64;
    let base = format!(
        "{}T{:02}:{:02}:{:02}",
        format_date(days),
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    if micros == 0 || micros >= 1_000_000 {
        base
    } else {
        format!("{base}.{micros:06}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_formats_are_told_apart() {
        for days in [-719_468, -1, 0, 1, 19_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(parse_date("2024-02-29"), Some((1, 19_782)));
        assert_eq!(parse_date("2023-02-29"), None);
        assert_eq!(parse_date("02/03/2024").map(|p| p.0), Some(0b1100));
        assert_eq!(parse_date("13/03/2024").map(|p| p.0), Some(0b1000));
        assert_eq!(parse_date("3/13/2024").map(|p| p.0), Some(0b0100));
        assert_eq!(parse_date("31.12.1999").map(|p| p.0), Some(0b1_0000));
        assert_eq!(date_under("13/03/2024", 3), Some(19_795));
        assert_eq!(parse_date("12345"), None);
        assert_eq!(parse_date("1-2-3"), None);
        assert_eq!(format_date(19_782), "2024-02-29");
    }

    #[test]
    #[allow(clippy::cast_possible_truncation)] // random indices below small lengths
    fn word_checks_agree_with_digit_by_digit() {
        // The reading `iso_date` replaced.
        fn reference(b: &[u8]) -> Option<i64> {
            let b = b.first_chunk::<10>()?;
            if b[4] != b'-' || b[7] != b'-' {
                return None;
            }
            let y = i64::from(digits(&b[..4])?);
            let m = digits(&b[5..7])?;
            let d = digits(&b[8..])?;
            valid_date(y, m, d).then(|| days_from_civil(y, m, d))
        }
        let alphabet = b"0123456789-/: \x2f\x3a\xff\xfa\xf9\x00";
        let mut x: u64 = 9;
        let mut next = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            x >> 33
        };
        for case in 0..200_000 {
            let mut text = *b"2024-02-29xx";
            // A few bytes changed: mostly near-dates, some all random.
            let changes = if case % 10 == 0 { 12 } else { case % 4 };
            for _ in 0..changes {
                let at = next() as usize % text.len();
                text[at] = alphabet[next() as usize % alphabet.len()];
            }
            let len = 8 + next() as usize % 5;
            assert_eq!(iso_date(&text[..len]), reference(&text[..len]), "{text:?}");
        }
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(two_digits(a, b), digits(&[a, b]), "{a} {b}");
            }
        }
        let mut day = days_from_civil(1000, 1, 1);
        while day <= days_from_civil(9999, 12, 31) {
            let text = format_date(day);
            assert_eq!(iso_date(text.as_bytes()), Some(day));
            day += 1;
        }
    }

    #[test]
    fn every_day_of_years_0_to_9999_round_trips() {
        // Crosses the unsigned fast path of `days_from_civil` and the general one (year 0's
        // January and February count from year -1).
        let last = days_from_civil(9999, 12, 31);
        let mut day = days_from_civil(0, 1, 1);
        assert_eq!(day, -719_528);
        while day <= last {
            let (y, m, d) = civil_from_days(day);
            assert!(valid_date(y, m, d));
            assert_eq!(days_from_civil(y, m, d), day);
            day += 1;
        }
    }

    #[test]
    #[allow(clippy::float_cmp)] // the values are exact in binary
    fn iso_datetimes_with_offsets_go_to_utc() {
        let (a, fa) = parse_iso_datetime("2024-01-01T10:00:00+02:00").unwrap();
        let (b, fb) = parse_iso_datetime("2024-01-01 08:00:00Z").unwrap();
        assert_eq!(a, b);
        assert!(fa.offset && fb.offset && fa.t_separator && !fb.t_separator);
        let (c, fc) = parse_iso_datetime("2024-01-01 08:00:00.25").unwrap();
        assert_eq!(c - b, 0.25);
        assert_eq!(fc.format().unwrap(), "%Y-%m-%d %H:%M:%S.%f");
        assert_eq!(format_datetime(c), "2024-01-01T08:00:00.250000");
        assert!(parse_iso_datetime("2024-01-01T25:00").is_none());
        assert!(parse_iso_datetime("2024-01-01T10:00:00 PM").is_none());
    }
}

//! The date and datetime formats beyond the seven read by hand: month names (`Jan 1 2000`,
//! `01-Jan-2020`, `1 March 2021`), slashes and dots with a time of day (`2010/01/01 00:00`,
//! `31.12.2023 23:59:59`), 12-hour clocks. Each is a `strftime` format that pandas'
//! `to_datetime(format=...)` reads, parsed here with chrono's `strftime` parser.

use chrono::{Datelike, NaiveDate, NaiveDateTime};

/// A format of the table: its `strftime` text and whether it has a time of day.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Named {
    pub(crate) strftime: &'static str,
    pub(crate) stamp: bool,
}

const fn date(strftime: &'static str) -> Named {
    Named {
        strftime,
        stamp: false,
    }
}

const fn stamp(strftime: &'static str) -> Named {
    Named {
        strftime,
        stamp: true,
    }
}

/// The formats, in order of preference when a value fits several.
pub(crate) const NAMED: [Named; 19] = [
    date("%b %d %Y"),
    date("%b %d, %Y"),
    date("%d %b %Y"),
    date("%d-%b-%Y"),
    date("%B %d %Y"),
    date("%B %d, %Y"),
    date("%d %B %Y"),
    stamp("%Y/%m/%d %H:%M"),
    stamp("%Y/%m/%d %H:%M:%S"),
    stamp("%m/%d/%Y %H:%M"),
    stamp("%m/%d/%Y %H:%M:%S"),
    stamp("%d/%m/%Y %H:%M"),
    stamp("%d/%m/%Y %H:%M:%S"),
    stamp("%d.%m.%Y %H:%M"),
    stamp("%d.%m.%Y %H:%M:%S"),
    stamp("%m/%d/%Y %I:%M %p"),
    stamp("%m/%d/%Y %I:%M:%S %p"),
    stamp("%d-%b-%Y %H:%M:%S"),
    stamp("%b %d %Y %H:%M"),
];

/// Days from 0001-01-01 (chrono's day 1) to 1970-01-01.
const UNIX_EPOCH_FROM_CE: i64 = 719_163;

/// The value of `text` under `named`: days since the epoch for a date, seconds for a datetime.
pub(crate) fn value_under(text: &str, named: Named) -> Option<f64> {
    if !plausible(text, named) {
        return None;
    }
    if named.stamp {
        let t = NaiveDateTime::parse_from_str(text, named.strftime).ok()?;
        let utc = t.and_utc();
        Some(utc.timestamp() as f64 + f64::from(utc.timestamp_subsec_nanos()) / 1e9)
    } else {
        let d = NaiveDate::parse_from_str(text, named.strftime).ok()?;
        Some((i64::from(d.num_days_from_ce()) - UNIX_EPOCH_FROM_CE) as f64)
    }
}

/// Cheap checks before chrono parses: a four-digit year, and a month word of the length the
/// format asks for (chrono reads `January` under `%b` and `Jan` under `%B`; Python does not).
fn plausible(text: &str, named: Named) -> bool {
    let b = text.as_bytes();
    if !(6..=32).contains(&b.len()) || !text.is_ascii() || !b.iter().any(u8::is_ascii_digit) {
        return false;
    }
    if named.stamp && !b.contains(&b':') {
        return false;
    }
    // Python's %Y is exactly four digits.
    if !b.split(|c| !c.is_ascii_digit()).any(|run| run.len() == 4) {
        return false;
    }
    let words: Vec<&[u8]> = b
        .split(|c| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    let f = named.strftime;
    if f.contains("%b") || f.contains("%B") {
        let Some(month) = words.first() else {
            return false;
        };
        let may = month.eq_ignore_ascii_case(b"may");
        if f.contains("%b") && month.len() != 3 {
            return false;
        }
        if f.contains("%B") && !(month.len() > 3 || may) {
            return false;
        }
    } else if words
        .iter()
        .any(|w| !matches!(*w, b"AM" | b"PM" | b"am" | b"pm"))
    {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(strftime: &str) -> Named {
        NAMED
            .iter()
            .copied()
            .find(|n| n.strftime == strftime)
            .unwrap()
    }

    #[test]
    #[allow(clippy::float_cmp)] // whole numbers
    fn reads_what_python_strptime_reads() {
        assert_eq!(value_under("Jan 1 2000", index("%b %d %Y")), Some(10_957.0));
        assert_eq!(value_under("January 1 2000", index("%b %d %Y")), None);
        assert_eq!(
            value_under("January 1 2000", index("%B %d %Y")),
            Some(10_957.0)
        );
        assert_eq!(value_under("May 1 2000", index("%B %d %Y")), Some(11_078.0));
        assert_eq!(
            value_under("01-Jan-2020", index("%d-%b-%Y")),
            Some(18_262.0)
        );
        assert_eq!(
            value_under("2010/01/01 00:00", index("%Y/%m/%d %H:%M")),
            Some(1_262_304_000.0)
        );
        assert_eq!(
            value_under("01/31/2024 10:00 PM", index("%m/%d/%Y %I:%M %p")),
            Some(1_706_738_400.0)
        );
        assert_eq!(value_under("Jan 1 20", index("%b %d %Y")), None);
        assert_eq!(value_under("Foo 1 2000", index("%b %d %Y")), None);
    }
}

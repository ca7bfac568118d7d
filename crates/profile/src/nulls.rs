//! Which field texts mean "missing", the way pandas' `read_csv` decides it.

use serde::{Deserialize, Serialize};

use crate::sketch::hash::short_word;

/// pandas' default missing-value strings (`pandas._libs.parsers.STR_NA_VALUES`, pandas 3.1),
/// including the empty string.
pub const PANDAS_NA_VALUES: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// Which field texts count as missing. Mirrors `read_csv(na_values=extra,
/// keep_default_na=keep_default_na)`: the comparison is exact (no trimming, case-sensitive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "NullSpecRepr", into = "NullSpecRepr")]
pub struct NullSpec {
    keep_default_na: bool,
    extra: Vec<String>,
    /// Every string that counts.
    all: Vec<Box<[u8]>>,
    /// The strings of up to 8 bytes as (length, [`short_word`]), compared without a `memcmp`
    /// call.
    short: Vec<(usize, u64)>,
    /// By first byte, then by last byte (byte 0 for ""): bit `n` (`n` < 63, bit 63 for longer)
    /// set when some null string of `n` bytes has that byte there. A field passes the filter
    /// before it is compared with the strings.
    ends: Box<[[u64; 256]; 2]>,
    max_len: usize,
}

/// How a [`NullSpec`] reads and writes in JSON.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct NullSpecRepr {
    /// Whether pandas' default missing-value strings count.
    keep_default_na: bool,
    /// The strings added to (or, without the defaults, replacing) pandas' defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    na_values: Vec<String>,
}

impl From<NullSpecRepr> for NullSpec {
    fn from(r: NullSpecRepr) -> Self {
        NullSpec::new(r.keep_default_na, r.na_values)
    }
}

impl From<NullSpec> for NullSpecRepr {
    fn from(n: NullSpec) -> Self {
        NullSpecRepr {
            keep_default_na: n.keep_default_na,
            na_values: n.extra,
        }
    }
}

impl Default for NullSpec {
    fn default() -> Self {
        NullSpec::new(true, Vec::new())
    }
}

impl NullSpec {
    /// pandas' defaults (when `keep_default_na`) plus `extra`.
    pub fn new(keep_default_na: bool, extra: Vec<String>) -> Self {
        let mut all: Vec<Box<[u8]>> = Vec::new();
        if keep_default_na {
            all.extend(PANDAS_NA_VALUES.iter().map(|s| s.as_bytes().into()));
        }
        for e in &extra {
            if !all.iter().any(|a| **a == *e.as_bytes()) {
                all.push(e.as_bytes().into());
            }
        }
        let mut ends = Box::new([[0u64; 256]; 2]);
        let mut max_len = 0;
        for s in &all {
            let (first, last, bit) = ends_of(s);
            ends[0][first] |= bit;
            ends[1][last] |= bit;
            max_len = max_len.max(s.len());
        }
        let short = all
            .iter()
            .filter(|s| s.len() <= 8)
            .map(|s| (s.len(), short_word(s)))
            .collect();
        NullSpec {
            keep_default_na,
            extra,
            all,
            short,
            ends,
            max_len,
        }
    }

    /// Only the given strings are missing (`keep_default_na=False`); note that then even the
    /// empty string is a value unless listed.
    pub fn only(values: Vec<String>) -> Self {
        NullSpec::new(false, values)
    }

    /// Whether pandas' default strings count.
    pub fn keep_default_na(&self) -> bool {
        self.keep_default_na
    }

    /// The strings added to (or, without the defaults, replacing) pandas' defaults.
    pub fn extra(&self) -> &[String] {
        &self.extra
    }

    /// Whether the field text means "missing".
    #[inline]
    pub fn is_null(&self, field: &[u8]) -> bool {
        if field.len() > self.max_len {
            return false;
        }
        let (first, last, bit) = ends_of(field);
        if self.ends[0][first] & self.ends[1][last] & bit == 0 {
            return false;
        }
        self.matches(field)
    }

    /// Whether `field`, which passed the filter, is one of the strings (out of line: mostly
    /// missing values get here, and the record loop stays small enough to inline the rest).
    #[inline(never)]
    fn matches(&self, field: &[u8]) -> bool {
        if field.len() <= 8 {
            let key = (field.len(), short_word(field));
            self.short.contains(&key)
        } else {
            self.all.iter().any(|s| **s == *field)
        }
    }
}

/// The first and last byte of `text` (0 for ""), and its length as a bit of the filter.
#[inline]
fn ends_of(text: &[u8]) -> (usize, usize, u64) {
    let first = text.first().copied().unwrap_or(0);
    let last = text.last().copied().unwrap_or(0);
    (
        usize::from(first),
        usize::from(last),
        1 << text.len().min(63),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_pandas_and_extras_add() {
        let n = NullSpec::default();
        for s in PANDAS_NA_VALUES {
            assert!(n.is_null(s.as_bytes()), "{s:?}");
        }
        for s in ["na", "Null", " NA", "0", "-", "none"] {
            assert!(!n.is_null(s.as_bytes()), "{s:?}");
        }
        let n = NullSpec::new(true, vec!["-".into(), "missing value".into()]);
        assert!(n.is_null(b"-") && n.is_null(b"missing value") && n.is_null(b"NA"));
        let n = NullSpec::only(vec!["?".into()]);
        assert!(n.is_null(b"?") && !n.is_null(b"") && !n.is_null(b"NA"));
        let long = "x".repeat(70);
        let wide = NullSpec::new(true, vec![long.clone(), "\0".into()]);
        assert!(wide.is_null(long.as_bytes()) && wide.is_null(b"\0") && wide.is_null(b""));
        assert!(!wide.is_null(&long.as_bytes()[1..]) && !wide.is_null(b"\0\0"));
        let json = serde_json::to_string(&n).unwrap();
        assert_eq!(json, r#"{"keep_default_na":false,"na_values":["?"]}"#);
        assert_eq!(serde_json::from_str::<NullSpec>(&json).unwrap(), n);
    }

    #[test]
    fn the_filter_agrees_with_comparing_every_string() {
        let pieces = [
            "", "N", "A", "n", "a", "/", "#", "1", ".", "-", "I", "D", "<", ">", "x",
        ];
        let specs = [
            NullSpec::default(),
            NullSpec::new(true, vec!["-".into(), "n.a.".into(), "?".repeat(64)]),
            NullSpec::only(vec!["NA".into(), "#".into()]),
        ];
        let mut x: u64 = 3;
        for case in 0..50_000 {
            let mut text = String::new();
            for _ in 0..(case % 10) {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                text.push_str(pieces[(x >> 33) as usize % pieces.len()]);
            }
            for spec in &specs {
                let slow = spec.all.iter().any(|s| **s == *text.as_bytes());
                assert_eq!(spec.is_null(text.as_bytes()), slow, "{text:?}");
            }
        }
        for s in PANDAS_NA_VALUES {
            for spec in &specs[..2] {
                assert!(spec.is_null(s.as_bytes()), "{s:?}");
            }
        }
    }
}

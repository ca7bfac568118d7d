//! Which field texts mean "missing", the way pandas' `read_csv` decides it.

use serde::{Deserialize, Serialize};

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
    /// Every string that counts, for the fast check.
    all: Vec<Box<[u8]>>,
    /// Bit `b` set when some null string starts with byte `b` (bit 0 stands for "").
    first_bytes: [u64; 4],
    max_len: usize,
}

#[derive(Serialize, Deserialize)]
struct NullSpecRepr {
    keep_default_na: bool,
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
        let mut first_bytes = [0u64; 4];
        let mut max_len = 0;
        for s in &all {
            let b = s.first().copied().unwrap_or(0);
            first_bytes[usize::from(b >> 6)] |= 1 << (b & 63);
            max_len = max_len.max(s.len());
        }
        NullSpec {
            keep_default_na,
            extra,
            all,
            first_bytes,
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
        let b = field.first().copied().unwrap_or(0);
        if self.first_bytes[usize::from(b >> 6)] & (1 << (b & 63)) == 0 {
            return false;
        }
        self.all.iter().any(|s| **s == *field)
    }
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
        let json = serde_json::to_string(&n).unwrap();
        assert_eq!(json, r#"{"keep_default_na":false,"na_values":["?"]}"#);
        assert_eq!(serde_json::from_str::<NullSpec>(&json).unwrap(), n);
    }
}

//! Which field texts pandas reads as missing, so the evaluator agrees with the emitted reader.

use std::collections::HashSet;

use autocoder_schema::ReadOptions;

/// pandas 3.1's default missing-value strings (`pandas._libs.parsers.STR_NA_VALUES`).
pub const PANDAS_DEFAULT_NA: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// The set of texts that mean "missing".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NullSpec {
    markers: HashSet<String>,
}

impl NullSpec {
    /// The markers a file read with `read` treats as missing: pandas' defaults (unless
    /// `keep_default_na` is off) plus the extra `na_values`.
    pub fn from_read_options(read: &ReadOptions) -> Self {
        let mut markers: HashSet<String> = read.na_values.iter().cloned().collect();
        if read.keep_default_na {
            markers.extend(PANDAS_DEFAULT_NA.iter().map(|s| (*s).to_owned()));
        }
        Self { markers }
    }

    /// Whether `field` is missing.
    pub fn is_null(&self, field: &str) -> bool {
        self.markers.contains(field)
    }
}

impl Default for NullSpec {
    fn default() -> Self {
        Self::from_read_options(&ReadOptions::default())
    }
}

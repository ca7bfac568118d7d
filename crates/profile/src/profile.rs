//! The profile of a file: the stable `--format json` document.
//!
//! # JSON schema (format version 1)
//!
//! A [`Profile`] serializes with serde to one JSON object; fields are never renamed within a
//! format version, new fields may be added. Optional statistics are omitted when they do not
//! apply (`numeric` only for integer and float columns, `lengths` only for string columns, ...).
//!
//! ```json
//! {
//!   "format_version": 1,
//!   "source": "orders.csv",
//!   "dialect": {"delimiter": ",", "quote": "\"", "has_header": true, "bom": false},
//!   "nulls": {"keep_default_na": true},
//!   "bytes": 1234, "rows": 10,
//!   "duplicate_rows": 0, "duplicate_rows_exact": true,
//!   "bad_rows": {"short_rows": 0, "long_rows": 0, "first_bad_lines": []},
//!   "patterns_sampled_rows": 10, "sample_seed": 24301,
//!   "columns": [{
//!     "name": "qty", "dtype": "integer", "nullable": true,
//!     "count": 9, "nulls": 1,
//!     "distinct": 7, "distinct_exact": true, "distinct_relative_error": 0.0, "unique": false,
//!     "min": 1, "max": 40,
//!     "numeric": {"sum": 120.0, "mean": 13.3, "std": 12.1, "zeros": 0, "negatives": 0},
//!     "quantiles": [{"q": 0.01, "value": 1.08}, ...], "quantiles_exact": true,
//!     "histogram": {"bins": [{"lo": 1.0, "hi": 2.95, "count": 2}, ...], "exact": true},
//!     "top_values": [{"value": "3", "count": 2}, ...], "top_values_exact": true,
//!     "monotonic": "none", "patterns": [], "shapes": []
//!   }],
//!   "samples": [{"row": 1, "line": 2, "values": ["1", "3", ...]}]
//! }
//! ```

use autocoder_schema::{DataType, FileFormat, Pattern, Scalar};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Dialect, NullSpec};

/// The version of the JSON document; bumped when a field changes meaning or disappears.
pub const FORMAT_VERSION: u32 = 1;

/// Everything the profiler found about one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Profile {
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The file as given (`-` for standard input).
    pub source: String,
    /// The file's format (absent in JSON for CSV). For other formats `dialect`, `nulls` and
    /// `bad_rows` do not apply, missing values are the format's nulls, and sample rows'
    /// `line` is the row's line in JSON Lines and Excel, its position otherwise.
    #[serde(default, skip_serializing_if = "FileFormat::is_csv")]
    pub format: FileFormat,
    /// For Excel: the sheet read, when one was named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// How the file is written (sniffed or given).
    pub dialect: Dialect,
    /// Which texts were read as missing.
    #[schemars(with = "crate::nulls::NullSpecRepr")]
    pub nulls: NullSpec,
    /// Bytes read (after decompression), including the header.
    pub bytes: u64,
    /// Data rows (records after the header, blank lines and skipped rows not counted).
    pub rows: u64,
    /// Rows equal to an earlier row in every field, compared as text (pandas
    /// `duplicated().sum()`, except that `1.0` and `1` differ here).
    pub duplicate_rows: u64,
    /// Whether `duplicate_rows` is exact; past one million rows it is estimated from a
    /// `HyperLogLog` count of distinct rows (relative error about 0.8% of the row count).
    pub duplicate_rows_exact: bool,
    /// Records that did not fit the header, handled leniently.
    pub bad_rows: BadRows,
    /// How many rows the named patterns and shapes were measured on (the first rows of each
    /// chunk, of at most 64 chunks spread over a larger file, so the subset does not depend on
    /// the number of threads).
    pub patterns_sampled_rows: u64,
    /// The seed of the samples and of the quantile samples.
    pub sample_seed: u64,
    /// The columns, in file order.
    pub columns: Vec<ColumnProfile>,
    /// Sample rows: a uniform sample without replacement, in file order, the same for the same
    /// file and seed whatever the number of threads.
    pub samples: Vec<SampleRow>,
}

/// Records that did not match the header.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BadRows {
    /// Records with fewer fields than the header; the missing fields were read as nulls.
    pub short_rows: u64,
    /// Records with more fields than the header, skipped (only with [`crate::LongRows::Skip`]).
    pub long_rows: u64,
    /// Quotes that opened a field and never closed: the record up to the end of the quote's
    /// line was skipped, and reading went on after it (only with [`crate::LongRows::Skip`]).
    #[serde(default)]
    pub unclosed_quotes: u64,
    /// The physical lines (1-based) of the first bad records, at most 20.
    pub first_bad_lines: Vec<u64>,
}

/// One sampled row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SampleRow {
    /// The 1-based data row (the header is not a row).
    pub row: u64,
    /// The 1-based physical line where the record starts.
    pub line: u64,
    /// The fields as written in the file (missing values as their text, e.g. `NA`).
    pub values: Vec<String>,
}

/// Everything the profiler found about one column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[allow(clippy::struct_excessive_bools)] // independent facts, not a state machine
pub struct ColumnProfile {
    /// The name pandas gives the column (header text; duplicates get `.1`, `.2`; empty headers
    /// become `Unnamed: i`; without a header, `column_1`, ...).
    pub name: String,
    /// The inferred type: the narrowest of boolean, integer, float, date, datetime, string
    /// that every non-missing value fits, the way pandas reads it with
    /// [`crate::Profile::read_options`] and the schema's dtypes.
    pub dtype: DataType,
    /// Whether any value is missing.
    pub nullable: bool,
    /// Non-missing values.
    pub count: u64,
    /// Missing values.
    pub nulls: u64,
    /// Distinct non-missing values (exact, or a `HyperLogLog` estimate).
    pub distinct: u64,
    /// Whether `distinct` is exact.
    pub distinct_exact: bool,
    /// The relative standard error of `distinct` (0 when exact).
    pub distinct_relative_error: f64,
    /// Proven unique: no non-missing value repeats. Known from exact counts of the texts when
    /// different texts are different values for the type (not for floats, booleans, datetimes
    /// with offsets or fractions), or because values strictly increase or decrease.
    pub unique: bool,
    /// The smallest value (numbers, ISO dates, or text by byte order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Scalar>,
    /// The largest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Scalar>,
    /// Sums and moments, for integer and float columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numeric: Option<NumericStats>,
    /// p1, p5, p25, p50, p75, p95, p99 for numeric, date and datetime columns (numpy's linear
    /// interpolation over the kept values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quantiles: Vec<Quantile>,
    /// Whether the quantiles are exact: true when the column has at most
    /// [`crate::ProfileOptions::quantile_sample`] values. Otherwise they come from a uniform
    /// sample of that many values: the rank error of each quantile has a standard deviation of
    /// at most `0.5 / sqrt(quantile_sample)` (0.4% with the default 16,384).
    #[serde(default)]
    pub quantiles_exact: bool,
    /// Equal-width histogram of numeric and date columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Histogram>,
    /// The most frequent values with their counts, most frequent first (ties by value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_values: Vec<ValueCount>,
    /// Whether `top_values` counts are exact. Past
    /// [`crate::ProfileOptions::distinct_exact_bound`] distinct values they are estimates from
    /// a Misra-Gries heavy-hitters summary over one row in eight (scaled by eight), listing only
    /// values seen at least twice there: values above ~1% of the rows are found.
    #[serde(default)]
    pub top_values_exact: bool,
    /// Lengths in characters, for string columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lengths: Option<LengthStats>,
    /// Whether non-missing values are sorted (numbers and dates only).
    pub monotonic: Monotonic,
    /// Match rates of the named patterns (string columns; patterns matched by at least one
    /// sampled value), highest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<PatternRate>,
    /// The dominant shapes of string values (`A` letters, `9` digits, other characters kept;
    /// shapes over 24 characters are cut and end with `…`), most frequent first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<ShapeCount>,
    /// For date and datetime columns: the `strftime` format all values follow, or `ISO8601`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datetime_format: Option<String>,
    /// For datetime columns with UTC offsets or `Z`: pandas must read them with `utc=True`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub utc: bool,
    /// The type the file declares (Parquet and Arrow), as Arrow names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_type: Option<String>,
    /// What the profile cannot express about the column: a list is profiled by its length
    /// (its statistics are the lengths'), a type the profiler does not read is all missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Sums and moments of a numeric column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NumericStats {
    /// The sum (compensated summation).
    pub sum: f64,
    /// The mean.
    pub mean: f64,
    /// The sample standard deviation (ddof = 1, as pandas); `None` for fewer than two values.
    pub std: Option<f64>,
    /// Values equal to zero.
    pub zeros: u64,
    /// Values below zero.
    pub negatives: u64,
    /// Infinite values (`inf`, `-inf`); they are left out of sum, mean and std.
    pub infinities: u64,
}

/// One quantile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Quantile {
    /// The probability, in `0..=1`.
    pub q: f64,
    /// The value (a number, or an ISO date/datetime string).
    pub value: Scalar,
}

/// An equal-width histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Histogram {
    /// The bins, from the minimum to the maximum; each includes its lower bound, the last also
    /// its upper bound.
    pub bins: Vec<HistogramBin>,
    /// Whether the counts are exact; otherwise they are scaled from the quantile sample.
    pub exact: bool,
}

/// One histogram bin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HistogramBin {
    /// The lower bound (a number, or an ISO date/datetime string).
    pub lo: Scalar,
    /// The upper bound.
    pub hi: Scalar,
    /// Values in the bin.
    pub count: u64,
}

/// A value and how often it occurs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ValueCount {
    /// The text as written.
    pub value: String,
    /// Occurrences.
    pub count: u64,
}

/// String lengths, in characters (Unicode code points, like pandas `str.len()`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LengthStats {
    /// The shortest.
    pub min: u64,
    /// The mean.
    pub mean: f64,
    /// The longest.
    pub max: u64,
}

/// Whether a column's values are sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Monotonic {
    /// Each value is greater than the previous.
    StrictlyIncreasing,
    /// Each value is at least the previous.
    Increasing,
    /// Each value is smaller than the previous.
    StrictlyDecreasing,
    /// Each value is at most the previous.
    Decreasing,
    /// Neither, or not applicable (strings, booleans, fewer than two values).
    None,
}

/// How many values of a column follow a named pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PatternRate {
    /// The pattern.
    pub pattern: Pattern,
    /// Sampled values that match.
    pub matches: u64,
    /// `matches` divided by the sampled non-missing values.
    pub rate: f64,
}

/// A value shape and how many sampled values have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShapeCount {
    /// The shape, e.g. `AAA-9999`.
    pub shape: String,
    /// Sampled values with this shape.
    pub count: u64,
}

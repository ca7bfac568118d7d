//! What the profiler is asked to do: how to read the file and how much to keep.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::{Dialect, Encoding, NullSpec};

/// How much of the per-record work to do, for the benchmark's per-stage breakdown
/// (`benches/examples/stages.rs`); anything but [`Stages::All`] gives a partial profile.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stages {
    /// Everything.
    #[default]
    All,
    /// Only cut chunks and split records into fields.
    Parse,
    /// Also classify each value and keep the statistics of its type.
    Infer,
}

/// Time the calling thread spent merging chunk results and finishing the profile, for the
/// benchmark's per-stage breakdown.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct StageTimes {
    /// Nanoseconds merging chunk accumulators into the file's.
    pub merge_ns: AtomicU64,
    /// Nanoseconds turning the merged accumulator into the profile.
    pub finish_ns: AtomicU64,
}

/// What to do with a record that has more fields than the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LongRows {
    /// Stop with [`crate::ProfileError::TooManyFields`] naming the line (what pandas does).
    #[default]
    Error,
    /// Skip the record and count it in [`crate::BadRows::long_rows`] (pandas'
    /// `on_bad_lines="skip"`).
    Skip,
}

/// Options of [`crate::profile_path`] and [`crate::profile_reader`]. Records with fewer fields
/// than the header are always accepted, their missing fields read as nulls (as pandas does),
/// and counted in [`crate::BadRows::short_rows`].
#[derive(Debug, Clone)]
pub struct ProfileOptions {
    /// The dialect to use; `None` sniffs it from the first 64 KiB.
    pub dialect: Option<Dialect>,
    /// Overrides whether the first record is a header (sniffed otherwise).
    pub has_header: Option<bool>,
    /// Which texts are missing values.
    pub nulls: NullSpec,
    /// How many rows to keep as samples (reservoir sampling).
    pub sample_rows: usize,
    /// The seed of every random choice (samples, quantile samples): same seed, same profile.
    pub seed: u64,
    /// Worker threads; `0` uses every available core.
    pub threads: usize,
    /// Distinct values are counted exactly up to this many per column, then estimated. Files
    /// with more than 4 columns get at most `200_000 / columns` (at least 256), to bound
    /// memory; files with more than 32 columns also estimate with a smaller `HyperLogLog`
    /// (1.6% error).
    pub distinct_exact_bound: usize,
    /// How many most frequent values to report per column.
    pub top_k: usize,
    /// Bins of numeric and date histograms.
    pub histogram_bins: usize,
    /// Values kept per column for quantiles and histograms (exact below this count). Files with
    /// more than 12 columns get `200_000 / columns` (at least 256), to bound memory.
    pub quantile_sample: usize,
    /// Rows per chunk on which the named patterns and shapes are measured (the first rows of
    /// each measured chunk, see [`ProfileOptions::pattern_chunks`]; `usize::MAX` measures
    /// every row of those chunks).
    pub pattern_rows_per_chunk: usize,
    /// Chunks on which patterns and shapes are measured, spread evenly over a file of known
    /// size: a file of up to this many chunks (256 MiB by default) has every chunk measured, a
    /// larger one this many (from their first [`ProfileOptions::pattern_rows_per_chunk`]
    /// rows). Input of unknown size (standard input, `.gz`) has every chunk measured;
    /// `usize::MAX` measures every chunk of any file.
    pub pattern_chunks: usize,
    /// Bytes per chunk handed to a worker.
    pub chunk_bytes: usize,
    /// The longest record accepted, in bytes.
    pub max_record_bytes: usize,
    /// What to do with records that have too many fields (and the record of a quote that
    /// never closes).
    pub long_rows: LongRows,
    /// Lines to skip at the start of the file, before the header (pandas' `skiprows=N`).
    pub skip_rows: u64,
    /// From this character to the end of its line is ignored, outside quotes; lines that
    /// start with it are skipped (pandas' `comment=`).
    pub comment: Option<u8>,
    /// The file's text encoding; `None` reads UTF-8 (or UTF-16 when a byte-order mark says
    /// so).
    pub encoding: Option<Encoding>,
    /// The file's format; `None` recognises it by its first bytes, then its extension.
    pub input_format: Option<autocoder_schema::FileFormat>,
    /// For Excel workbooks: the sheet to read (`None`: the first).
    pub sheet: Option<String>,
    #[doc(hidden)]
    pub stages: Stages,
    #[doc(hidden)]
    pub stage_times: Option<Arc<StageTimes>>,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        Self {
            dialect: None,
            has_header: None,
            nulls: NullSpec::default(),
            sample_rows: 100,
            seed: 0x5EED,
            threads: 0,
            distinct_exact_bound: 50_000,
            top_k: 10,
            histogram_bins: 20,
            quantile_sample: 16_384,
            pattern_rows_per_chunk: 1_000,
            pattern_chunks: 64,
            chunk_bytes: 4 << 20,
            max_record_bytes: 64 << 20,
            long_rows: LongRows::Error,
            skip_rows: 0,
            comment: None,
            encoding: None,
            input_format: None,
            sheet: None,
            stages: Stages::All,
            stage_times: None,
        }
    }
}

impl ProfileOptions {
    /// Whether patterns are measured on chunk `index` of an input of `total_bytes` (0 when
    /// unknown): [`ProfileOptions::pattern_chunks`] chunks spread evenly over the chunks a file
    /// of that size has at most.
    pub(crate) fn patterns_in_chunk(&self, index: u64, total_bytes: u64) -> bool {
        let budget = self.pattern_chunks as u64;
        let chunks = total_bytes.div_ceil(self.chunk_bytes.max(1) as u64);
        if total_bytes == 0 || chunks <= budget {
            return true;
        }
        // The measured chunks are `k * chunks / budget` (rounded down) for `k` from 0: chunk `i`
        // is one when a whole number lies in `[i * budget / chunks, (i + 1) * budget / chunks)`.
        let first = |i: u64| (u128::from(i) * u128::from(budget)).div_ceil(u128::from(chunks));
        first(index) < first(index + 1)
    }

    /// The number of worker threads to use: [`ProfileOptions::threads`], at most the number
    /// of cores (more cannot go faster, and each thread holds a chunk); every core for `0`.
    pub fn effective_threads(&self) -> usize {
        effective_threads(self.threads)
    }
}

/// `threads` capped at the number of cores; every core for `0`.
pub(crate) fn effective_threads(threads: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if threads == 0 {
        cores
    } else {
        threads.min(cores)
    }
}

/// What [`crate::Profile::schema`] puts in the schema besides dtype, nullable, unique and
/// datetime formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchemaOptions {
    /// Add `in_range(min, max)` checks on numeric and date columns.
    pub ranges: bool,
    /// Add `isin` checks on string columns with few distinct values (all known exactly).
    pub categories: bool,
    /// The most distinct values a column may have to get an `isin` check.
    pub max_categories: usize,
}

#[cfg(test)]
mod pattern_chunk_tests {
    use super::ProfileOptions;

    #[test]
    fn patterns_are_measured_on_the_budget_spread_over_the_file() {
        let options = ProfileOptions::default();
        let chunk = options.chunk_bytes as u64;
        // Unknown size, and files of up to 64 chunks: every chunk.
        for total in [0, 1, chunk, 64 * chunk] {
            assert!(
                (0..200).all(|i| options.patterns_in_chunk(i, total)),
                "{total}"
            );
        }
        for chunks in [65u64, 100, 128, 129, 256, 1000, 12_345] {
            let total = chunks * chunk - chunk / 2;
            let measured: Vec<u64> = (0..chunks)
                .filter(|&i| options.patterns_in_chunk(i, total))
                .collect();
            assert_eq!(measured.len(), 64, "{chunks}");
            assert_eq!(measured[0], 0);
            // Evenly spread: no gap longer than the even one rounded up.
            let even = chunks.div_ceil(64);
            assert!(measured.windows(2).all(|w| w[1] - w[0] <= even), "{chunks}");
            assert!(chunks - measured[63] <= even, "{chunks}");
        }
        let every = ProfileOptions {
            pattern_chunks: usize::MAX,
            ..ProfileOptions::default()
        };
        assert!((0..300).all(|i| every.patterns_in_chunk(i, 256 * chunk)));
    }
}

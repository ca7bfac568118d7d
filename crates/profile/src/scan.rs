//! A parallel pass over every record of a file, for other crates that evaluate rules over the
//! whole file at the profiler's speed (same chunking, same parsing, same error handling).

use std::path::Path;

use crate::api::{check_options, failure, path_name};
use crate::chunks::Boundary;
use crate::pipeline::{ChunkFailure, run};
use crate::records::{ParseSettings, parse_chunk};
use crate::source::{OpenSettings, open, open_path};
use crate::{Dialect, LongRows, NullSpec, ProfileError, ProfileOptions, Record};

/// How to read the file for [`scan`].
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// The dialect (for example [`crate::Profile::dialect`]); `None` sniffs it.
    pub dialect: Option<Dialect>,
    /// Which texts are missing ([`Record::value`] returns `None` for them).
    pub nulls: NullSpec,
    /// Worker threads; `0` uses every core.
    pub threads: usize,
    /// Bytes per chunk.
    pub chunk_bytes: usize,
    /// The longest record accepted, in bytes.
    pub max_record_bytes: usize,
    /// What to do with records that have more fields than the header.
    pub long_rows: LongRows,
}

impl Default for ScanOptions {
    fn default() -> Self {
        let p = ProfileOptions::default();
        Self {
            dialect: None,
            nulls: p.nulls,
            threads: 0,
            chunk_bytes: p.chunk_bytes,
            max_record_bytes: p.max_record_bytes,
            long_rows: LongRows::Error,
        }
    }
}

/// Where a chunk is, handed to the `init` function of [`scan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkInfo {
    /// The chunk's position in the file, from 0.
    pub index: u64,
    /// The physical line (1-based) of its first byte.
    pub first_line: u64,
}

/// What [`scan`] made of one chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanChunk<A> {
    /// The chunk's position in the file, from 0.
    pub index: u64,
    /// The 1-based data row of the chunk's first record: the file row of a record is
    /// `first_row + record.row_in_chunk() - 1`.
    pub first_row: u64,
    /// Records in the chunk.
    pub rows: u64,
    /// The physical line (1-based) of the chunk's first byte.
    pub first_line: u64,
    /// What `each` accumulated over the chunk.
    pub value: A,
}

/// The result of [`scan`].
#[derive(Debug, Clone, PartialEq)]
pub struct Scan<A> {
    /// The dialect used.
    pub dialect: Dialect,
    /// Column names, as pandas names them.
    pub header: Vec<String>,
    /// Data rows in the file.
    pub rows: u64,
    /// One result per chunk, in file order.
    pub chunks: Vec<ScanChunk<A>>,
}

/// Reads every record of `path` in parallel: for each chunk, `init` makes an accumulator and
/// `each` is called with the chunk's records in file order. Results come back in file order
/// with their row offsets. Keep accumulators small (counts, the first failures): one is kept
/// per chunk (a chunk is [`ScanOptions::chunk_bytes`], 4 MiB by default).
///
/// ```no_run
/// use autocoder_profile::{ScanOptions, scan};
/// // Rows where column 0 is missing.
/// let result = scan(
///     std::path::Path::new("orders.csv"),
///     &ScanOptions::default(),
///     |_| Vec::new(),
///     |missing: &mut Vec<u64>, record| {
///         if record.value(0).is_none() {
///             missing.push(record.row_in_chunk());
///         }
///     },
/// )?;
/// let rows: Vec<u64> = result
///     .chunks
///     .iter()
///     .flat_map(|c| c.value.iter().map(move |r| c.first_row + r - 1))
///     .collect();
/// # Ok::<(), autocoder_profile::ProfileError>(())
/// ```
pub fn scan<A, I, E>(
    path: &Path,
    options: &ScanOptions,
    init: I,
    each: E,
) -> Result<Scan<A>, ProfileError>
where
    A: Send,
    I: Fn(&ChunkInfo) -> A + Sync,
    E: Fn(&mut A, &Record<'_>) + Sync,
{
    let profile_options = ProfileOptions {
        dialect: options.dialect,
        chunk_bytes: options.chunk_bytes,
        max_record_bytes: options.max_record_bytes,
        ..ProfileOptions::default()
    };
    check_options(&profile_options)?;
    let name = path_name(path);
    let attempt = |boundary| -> Result<Scan<A>, ChunkFailure> {
        let (reader, total, gzip) = open_path(path)?;
        let given = options.dialect.unwrap_or_default();
        let settings = OpenSettings {
            source_name: name.clone(),
            dialect: options.dialect,
            has_header: options.dialect.map(|d| d.has_header),
            chunk_bytes: options.chunk_bytes,
            max_record_bytes: options.max_record_bytes,
            boundary,
            encoding: options.dialect.map(|d| d.encoding),
            skip_rows: given.skip_rows,
            comment: given.comment,
            gzip,
        };
        let opened = open(reader, total, &settings)?;
        let parse = ParseSettings {
            dialect: opened.dialect,
            nulls: &options.nulls,
            header: &opened.header,
            long_rows: options.long_rows,
            max_record_bytes: options.max_record_bytes,
            source_name: &name,
        };
        let threads = crate::options::effective_threads(options.threads);
        let mut chunks = Vec::new();
        let mut rows = 0u64;
        run(
            opened.chunker,
            threads,
            |chunk| {
                let info = ChunkInfo {
                    index: chunk.index,
                    first_line: chunk.first_line,
                };
                let mut acc = init(&info);
                let counts = parse_chunk(chunk, &parse, |r| each(&mut acc, r), |_| {})?;
                Ok((acc, counts.rows))
            },
            |done| {
                let (value, n) = done.value;
                chunks.push(ScanChunk {
                    index: done.index,
                    first_row: rows + 1,
                    rows: n,
                    first_line: done.first_line,
                    value,
                });
                rows += n;
                Ok(())
            },
        )?;
        Ok(Scan {
            dialect: opened.dialect,
            header: opened.header,
            rows,
            chunks,
        })
    };
    let stdin = path.as_os_str() == "-";
    let first = if stdin {
        Boundary::Parse
    } else {
        Boundary::QuoteParity
    };
    match attempt(first) {
        Err(ChunkFailure::Boundary) => {
            attempt(Boundary::Parse).map_err(|f| failure(f, name.clone()))
        }
        other => other.map_err(|f| failure(f, name.clone())),
    }
}

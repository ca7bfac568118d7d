//! The entry points: profile a path, a reader, or several paths.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use autocoder_schema::FileFormat;

use crate::chunks::Boundary;
use crate::pipeline::{ChunkFailure, run};
use crate::records::{ParseSettings, parse_chunk};
use crate::source::{OpenSettings, Opened, open, open_path};
use crate::table::{Hints, TableAcc};
use crate::{Profile, ProfileError, ProfileOptions, Stages};

/// Profiles the CSV file at `path` (`-` reads standard input; gzip input is recognised by its
/// first bytes) in one streaming pass on [`ProfileOptions::threads`] threads, with memory
/// bounded by the options (not by the file's size). `progress(bytes_done, total_bytes)` is
/// called from the calling thread after each chunk; `total_bytes` is 0 when unknown (standard
/// input, compressed files).
///
/// Other formats (Parquet, Arrow IPC, JSON Lines, JSON arrays, Excel) are recognised by their
/// first bytes, then by the extension, unless [`ProfileOptions::input_format`] names one.
///
/// The result does not depend on the number of threads.
pub fn profile_path(
    path: &Path,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    check_options(options)?;
    let format = match options.input_format {
        Some(f) => f,
        None => crate::formats::detect(path)?,
    };
    if format == FileFormat::Csv {
        profile_csv(path, options, progress)
    } else {
        crate::formats::profile(path, format, options, progress)
    }
}

/// [`profile_path`] for a CSV file.
pub(crate) fn profile_csv(
    path: &Path,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    let stdin = path.as_os_str() == "-";
    let boundary = if stdin {
        Boundary::Parse
    } else {
        Boundary::QuoteParity
    };
    let attempt = |boundary| -> Result<Profile, ChunkFailure> {
        let (reader, total, gzip) = open_path(path)?;
        let opened = open(
            reader,
            total,
            &settings(path_name(path), options, boundary, gzip),
        )?;
        profile_opened(opened, path_name(path), options, progress)
    };
    match attempt(boundary) {
        Err(ChunkFailure::Boundary) => {
            tracing::debug!(
                path = %path.display(),
                "a quote inside an unquoted field misled the chunking; profiling again with parsed boundaries"
            );
            attempt(Boundary::Parse).map_err(|f| failure(f, path_name(path)))
        }
        other => other.map_err(|f| failure(f, path_name(path))),
    }
}

/// Profiles CSV text read from `reader` (gzip is recognised by its first bytes);
/// `source_name` names it in the profile and in errors. Reading is sequential; parsing and
/// statistics still run on several threads.
pub fn profile_reader<R: Read + Send>(
    reader: R,
    source_name: &str,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    check_options(options)?;
    let boxed: Box<dyn Read + Send + '_> = Box::new(reader);
    let (reader, gzip) = crate::source::gunzip_if_needed(boxed, source_name)?;
    let opened = open(
        reader,
        0,
        &settings(source_name.to_owned(), options, Boundary::Parse, gzip),
    )?;
    profile_opened(opened, source_name.to_owned(), options, progress)
        .map_err(|f| failure(f, source_name.to_owned()))
}

/// Profiles Arrow record batches held in memory (a data frame handed over through the Arrow C
/// stream interface, say) as `source_name`: the profile the same batches get from an Arrow IPC
/// file, with format `arrow` and a size of 0 bytes. Batches are profiled on
/// [`ProfileOptions::threads`] threads as they come.
pub fn profile_batches(
    schema: &arrow_schema::Schema,
    batches: impl Iterator<Item = Result<arrow_array::RecordBatch, arrow_schema::ArrowError>> + Send,
    source_name: &str,
    options: &ProfileOptions,
) -> Result<Profile, ProfileError> {
    check_options(options)?;
    crate::formats::profile_batches(
        source_name.to_owned(),
        schema,
        batches,
        FileFormat::Arrow,
        0,
        options,
    )
}

/// Profiles several files one after the other, each with all threads; one result per path,
/// in order. `progress(path, bytes_done, total_bytes)` as in [`profile_path`].
pub fn profile_paths(
    paths: &[PathBuf],
    options: &ProfileOptions,
    progress: &dyn Fn(&Path, u64, u64),
) -> Vec<Result<Profile, ProfileError>> {
    paths
        .iter()
        .map(|p| profile_path(p, options, &|done, total| progress(p, done, total)))
        .collect()
}

pub(crate) fn path_name(path: &Path) -> String {
    path.display().to_string()
}

pub(crate) fn check_options(options: &ProfileOptions) -> Result<(), ProfileError> {
    let bad = |reason: &str| {
        Err(ProfileError::InvalidOptions {
            reason: reason.to_owned(),
        })
    };
    if options.chunk_bytes == 0 {
        return bad("chunk_bytes must be at least 1");
    }
    if options.max_record_bytes < 1024 {
        return bad("max_record_bytes must be at least 1024");
    }
    if options.distinct_exact_bound == 0 {
        return bad("distinct_exact_bound must be at least 1");
    }
    if let Some(d) = options.dialect
        && (d.delimiter == d.quote || matches!(d.delimiter, b'\n' | b'\r'))
    {
        return bad("the delimiter must differ from the quote and from line ends");
    }
    if let Some(c) = options.comment {
        let d = options.dialect.unwrap_or_default();
        if c == d.quote || c == d.delimiter || matches!(c, b'\n' | b'\r') || !c.is_ascii() {
            return bad(
                "the comment character must be ASCII and differ from the delimiter, the quote and line ends",
            );
        }
    }
    Ok(())
}

fn settings(
    source_name: String,
    options: &ProfileOptions,
    boundary: Boundary,
    gzip: bool,
) -> OpenSettings {
    let given = options.dialect.unwrap_or_default();
    OpenSettings {
        source_name,
        dialect: options.dialect,
        has_header: options.has_header,
        chunk_bytes: options.chunk_bytes,
        max_record_bytes: options.max_record_bytes,
        boundary,
        encoding: options
            .encoding
            .or_else(|| options.dialect.map(|d| d.encoding).filter(|e| !e.is_utf8())),
        skip_rows: if options.skip_rows > 0 {
            options.skip_rows
        } else {
            given.skip_rows
        },
        comment: options.comment.or(given.comment),
        gzip,
    }
}

pub(crate) fn failure(f: ChunkFailure, source_name: String) -> ProfileError {
    match f {
        ChunkFailure::Error(e) => e,
        ChunkFailure::Boundary => ProfileError::Worker { source_name },
    }
}

fn profile_opened(
    opened: Opened<'_>,
    source: String,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ChunkFailure> {
    let Opened {
        chunker,
        dialect,
        header,
        header_bytes,
        total_bytes,
    } = opened;
    let columns = header.len();
    let parse = ParseSettings {
        dialect,
        nulls: &options.nulls,
        header: &header,
        long_rows: options.long_rows,
        max_record_bytes: options.max_record_bytes,
        source_name: &source,
    };
    let hints = Hints::new(columns);
    let mut total = TableAcc::new(columns, 0, options, None);
    let mut bytes_done = header_bytes;
    run(
        chunker,
        options.effective_threads(),
        |chunk| {
            let mut acc = TableAcc::new(columns, chunk.index, options, Some(&hints));
            if !options.patterns_in_chunk(chunk.index, total_bytes) {
                acc.skip_patterns();
            }
            let mut bad_lines = Vec::new();
            let counts = parse_chunk(
                chunk,
                &parse,
                |record| match options.stages {
                    Stages::All => acc.add_record(record),
                    Stages::Infer => acc.infer_record(record),
                    Stages::Parse => {}
                },
                |line| {
                    if bad_lines.len() < 20 {
                        bad_lines.push(line);
                    }
                },
            )?;
            for line in bad_lines {
                acc.bad_line(line);
            }
            acc.set_counts(counts);
            acc.publish_kinds(&hints);
            Ok(acc)
        },
        |done| {
            bytes_done += done.bytes;
            progress(bytes_done, total_bytes);
            let start = std::time::Instant::now();
            total.merge(done.value);
            total.foresee(bytes_done, total_bytes);
            total.publish_merged(&hints);
            if let Some(times) = &options.stage_times {
                times.merge_ns.fetch_add(nanos(start), Ordering::Relaxed);
            }
            Ok(())
        },
    )?;
    let start = std::time::Instant::now();
    let profile = total.finish(source, &header, dialect, bytes_done, options);
    if let Some(times) = &options.stage_times {
        times.finish_ns.fetch_add(nanos(start), Ordering::Relaxed);
    }
    Ok(profile)
}

fn nanos(since: std::time::Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

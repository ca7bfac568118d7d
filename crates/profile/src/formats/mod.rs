//! Input formats besides CSV: Parquet, Arrow IPC (Feather), JSON Lines, JSON arrays of records
//! and Excel workbooks, one reader per file. Each turns its rows into text cells
//! ([`text::TextBatch`]) written the way pandas writes them, so that the CSV profiler's
//! accumulators give the same [`crate::Profile`] (types, statistics, patterns, samples); typed
//! string columns stay strings whatever their text looks like, and missing values are the
//! format's own nulls (never the text `NA`). Record batches held in memory (a data frame's)
//! take the Arrow IPC reader's path without a file.

mod arrow_text;
mod arrow_values;
mod batches;
mod detect;
mod ipc;
mod ipc_layout;
mod json;
mod json_value;
mod parquet;
mod parquet_layout;
mod parquet_source;
mod runner;
mod text;
mod typed;
mod xlsx;

use std::path::Path;

use autocoder_schema::FileFormat;

use crate::{Profile, ProfileError, ProfileOptions};

pub(crate) use batches::profile as profile_batches;
pub(crate) use detect::detect;
pub use detect::from_content;

/// Profiles `path`, a file in `format` (not CSV).
pub(crate) fn profile(
    path: &Path,
    format: FileFormat,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    if path.as_os_str() == "-" {
        return Err(ProfileError::NotOnStdin { format });
    }
    match format {
        FileFormat::Parquet => parquet::profile(path, options, progress),
        FileFormat::Arrow => ipc::profile(path, options, progress),
        FileFormat::Jsonl | FileFormat::Json => json::profile(path, format, options, progress),
        FileFormat::Xlsx => xlsx::profile(path, options.sheet.as_deref(), options, progress),
        FileFormat::Csv => crate::api::profile_csv(path, options, progress),
    }
}

/// The error for a file its reader could not read.
pub(crate) fn corrupt(source_name: &str, format: FileFormat, detail: String) -> ProfileError {
    ProfileError::Corrupt {
        source_name: source_name.to_owned(),
        format,
        detail,
    }
}

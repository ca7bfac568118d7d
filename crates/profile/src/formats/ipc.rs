//! Arrow IPC: Feather v2 / `.arrow` files and IPC streams (`.arrows`), decoded batch by batch
//! (mostly copying) and profiled as a stream of record batches ([`super::batches`]).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use autocoder_schema::FileFormat;

use crate::api::path_name;
use crate::{Profile, ProfileError, ProfileOptions};

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, arrow_schema::ArrowError>> + Send>;

/// Profiles the Arrow IPC file or stream at `path`.
pub(crate) fn profile(
    path: &Path,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    let name = path_name(path);
    let corrupt = |error: String| super::corrupt(&name, FileFormat::Arrow, error);
    let open = || File::open(path).map_err(|e| ProfileError::io(path, e));
    let file = open()?;
    let total_bytes = file.metadata().map_or(0, |m| m.len());
    let (schema, batches): (_, Batches) = match FileReader::try_new(file, None) {
        Ok(reader) => (reader.schema(), Box::new(reader)),
        Err(file_error) => match StreamReader::try_new(BufReader::new(open()?), None) {
            Ok(reader) => (reader.schema(), Box::new(reader)),
            Err(_) => return Err(corrupt(file_error.to_string())),
        },
    };
    let profile = super::batches::profile(
        name,
        &schema,
        batches,
        FileFormat::Arrow,
        total_bytes,
        options,
    )?;
    progress(total_bytes, total_bytes);
    Ok(profile)
}

//! Arrow IPC: Feather v2 / `.arrow` files and IPC streams (`.arrows`), decoded batch by batch
//! (mostly copying) and profiled as a stream of record batches ([`super::batches`]).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use autocoder_schema::FileFormat;

use super::ipc_layout;
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
    let mut file = open()?;
    let total_bytes = file.metadata().map_or(0, |m| m.len());
    // arrow-ipc trusts the offsets and lengths it reads (a bad one panics), so they are checked
    // first; a file starts with the magic bytes, anything else is read as a stream.
    let mut magic = [0u8; 6];
    let is_file = file.read_exact(&mut magic).is_ok() && &magic == b"ARROW1";
    let (schema, batches): (_, Batches) = if is_file {
        ipc_layout::check_file(&mut file, total_bytes).map_err(corrupt)?;
        let reader = FileReader::try_new(open()?, None).map_err(|e| corrupt(e.to_string()))?;
        (reader.schema(), Box::new(reader))
    } else {
        ipc_layout::check_stream(&mut file, total_bytes).map_err(corrupt)?;
        let reader = StreamReader::try_new(BufReader::new(open()?), None)
            .map_err(|e| corrupt(e.to_string()))?;
        (reader.schema(), Box::new(reader))
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

//! Data from Python: a path (`str` or `os.PathLike`), or a data frame (pandas, polars, a
//! `pyarrow.Table`: anything with `__arrow_c_stream__`) handed over through the Arrow C stream
//! interface without a copy. A frame the sandbox must read is written as Parquet.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_pyarrow::{FromPyArrow, Table};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use pyo3::prelude::*;

use crate::error::Error;

/// Tabular data given from Python.
pub(crate) enum Data {
    /// A file on this machine.
    Path(PathBuf),
    /// A data frame's record batches (sharing the frame's buffers).
    Frame {
        /// The schema of every batch.
        schema: SchemaRef,
        /// The rows.
        batches: Vec<RecordBatch>,
    },
}

/// Whether `value` is a data frame (it speaks the Arrow C stream interface).
pub(crate) fn is_frame(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    value.hasattr(pyo3::intern!(value.py(), "__arrow_c_stream__"))
}

impl Data {
    /// `value` as a path or a frame; `name` names it in errors.
    pub(crate) fn extract(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Self> {
        if is_frame(value)? {
            let table = Table::from_pyarrow_bound(value).map_err(|err| Error::Frame {
                name: name.to_owned(),
                detail: err.to_string(),
            })?;
            let (batches, schema) = table.into_inner();
            return Ok(Self::Frame { schema, batches });
        }
        match value.extract::<PathBuf>() {
            Ok(path) => Ok(Self::Path(path)),
            Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "`{name}`: expected a path (str or os.PathLike) or a data frame (pandas, polars or \
                 pyarrow: anything with __arrow_c_stream__), got {}",
                value.get_type().name()?
            ))),
        }
    }

    /// A file holding this data: the path itself, or the frame written as Parquet to `parquet`.
    pub(crate) fn into_file(self, name: &str, parquet: &Path) -> Result<PathBuf, Error> {
        match self {
            Self::Path(path) => Ok(path),
            Self::Frame { schema, batches } => {
                write_parquet(name, &schema, &batches, parquet)?;
                Ok(parquet.to_owned())
            }
        }
    }
}

/// Writes `batches` to `path` as one Parquet file.
fn write_parquet(
    name: &str,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    path: &Path,
) -> Result<(), Error> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| Error::Io {
            action: "create the directory",
            path: parent.to_owned(),
            source,
        })?;
    }
    let parquet_error = |source| Error::Parquet {
        name: name.to_owned(),
        path: path.to_owned(),
        source,
    };
    let file = File::create(path).map_err(|source| Error::Io {
        action: "create",
        path: path.to_owned(),
        source,
    })?;
    let mut writer = ArrowWriter::try_new(file, schema.clone(), None).map_err(parquet_error)?;
    for batch in batches {
        writer.write(batch).map_err(parquet_error)?;
    }
    writer.close().map_err(parquet_error)?;
    Ok(())
}

//! The `read_<name>` function of the Pandera module for files that are not CSV: Parquet and
//! Arrow through `pyarrow` (nested structs flattened to `parent.child` columns), JSON Lines and
//! JSON arrays through `json` and `pandas.json_normalize` (nested objects likewise), Excel
//! through `pandas.read_excel`. The frame it returns has the schema's dtypes.

use std::fmt::Write as _;

use crate::{DataType, FileFormat, TableSchema, python_str};

/// Flattens struct columns of a `pyarrow.Table` until none is left, as the profiler names them.
const FLATTEN: &str = "    while any(pa_types.is_struct(field.type) for field in table.schema):\n        table = table.flatten()\n";

/// Writes `read_<ident>(path)` for a table whose [`crate::ReadOptions::format`] is not CSV.
pub(crate) fn render_typed_reader(out: &mut String, table: &TableSchema, ident: &str) {
    let read = &table.read;
    let _ = writeln!(out, "def read_{ident}(path):");
    out.push_str(
        "    \"\"\"Reads `path` as the schema expects: nested columns flattened, dtypes set.\"\"\"\n",
    );
    match read.format {
        FileFormat::Parquet | FileFormat::Csv => {
            out.push_str("    import pyarrow.parquet as pq\n    import pyarrow.types as pa_types\n\n    table = pq.read_table(path)\n");
            out.push_str(FLATTEN);
            out.push_str("    frame = table.to_pandas()\n");
        }
        FileFormat::Arrow => {
            out.push_str("    import pyarrow as pyarrow\n    import pyarrow.types as pa_types\n\n    with pyarrow.memory_map(str(path)) as source:\n        try:\n            table = pyarrow.ipc.open_file(source).read_all()\n        except pyarrow.ArrowInvalid:\n            source.seek(0)\n            table = pyarrow.ipc.open_stream(source).read_all()\n");
            out.push_str(FLATTEN);
            out.push_str("    frame = table.to_pandas()\n");
        }
        FileFormat::Jsonl => {
            out.push_str("    import json\n\n    with open(path, encoding=\"utf-8\") as f:\n        records = [json.loads(line) for line in f if line.strip()]\n    frame = pd.json_normalize(records)\n");
        }
        FileFormat::Json => {
            out.push_str("    import json\n\n    with open(path, encoding=\"utf-8\") as f:\n        records = json.load(f)\n    frame = pd.json_normalize(records)\n");
        }
        FileFormat::Xlsx => {
            let sheet = read
                .sheet
                .as_deref()
                .map_or_else(|| "0".to_owned(), python_str);
            // As with `read_csv`: without dtypes, text such as `02134` is read as a number.
            let dtypes: Vec<String> = table
                .columns
                .iter()
                .filter(|c| c.note.is_none())
                .filter_map(|c| {
                    c.dtype
                        .pandas_read_dtype()
                        .map(|d| format!("{}: {}", python_str(&c.name), python_str(d)))
                })
                .collect();
            let _ = writeln!(
                out,
                "    frame = pd.read_excel(\n        path,\n        sheet_name={sheet},\n        engine=\"openpyxl\",\n        dtype={{{}}},\n    )",
                dtypes.join(", ")
            );
        }
    }
    for column in table.columns.iter().filter(|c| c.note.is_none()) {
        let name = python_str(&column.name);
        match column.dtype {
            DataType::Date | DataType::Datetime => {
                let utc = if column.utc { ", utc=True" } else { "" };
                let _ = writeln!(
                    out,
                    "    if {name} in frame:\n        frame[{name}] = pd.to_datetime(frame[{name}]{utc})"
                );
            }
            DataType::Float => {
                // Decimals arrive as `decimal.Decimal` objects.
                let _ = writeln!(
                    out,
                    "    if {name} in frame:\n        frame[{name}] = pd.to_numeric(frame[{name}]).astype(\"float64\")"
                );
            }
            // Text stays as read (`astype("str")` would turn missing values into "None").
            DataType::String | DataType::Empty => {}
            dtype => {
                if let Some(d) = dtype.pandas_read_dtype() {
                    let _ = writeln!(
                        out,
                        "    if {name} in frame:\n        frame[{name}] = frame[{name}].astype({})",
                        python_str(d)
                    );
                }
            }
        }
    }
    out.push_str("    return frame\n");
}

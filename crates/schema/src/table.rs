//! A table's columns, the rules on them, and how pandas must read the file.

use serde::{Deserialize, Serialize};

use crate::{Check, DataType, SchemaError};

/// One column: its type, whether values may be missing or must be unique, and its checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnSchema {
    /// The column's name, exactly as in the file's header.
    pub name: String,
    /// The logical type.
    pub dtype: DataType,
    /// Whether missing values are allowed.
    pub nullable: bool,
    /// Whether every value must differ from every other.
    pub unique: bool,
    /// For date and datetime columns: the `strftime` format every value follows, or `ISO8601`
    /// when values mix ISO 8601 forms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datetime_format: Option<String>,
    /// For datetime columns whose values carry UTC offsets: they are converted to UTC on reading.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub utc: bool,
    /// Checks on the values (missing values are not checked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// What the schema cannot express about the column (a list column of a Parquet file, say):
    /// the Pandera module leaves its dtype unchecked and says why in a comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ColumnSchema {
    /// A non-null, non-unique column without checks.
    pub fn new(name: impl Into<String>, dtype: DataType) -> Self {
        Self {
            name: name.into(),
            dtype,
            nullable: false,
            unique: false,
            datetime_format: None,
            utc: false,
            checks: Vec::new(),
            note: None,
        }
    }
}

/// How the file is read: what pandas needs besides the dtypes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadOptions {
    /// The field delimiter.
    pub delimiter: char,
    /// Whether the first row is a header.
    pub has_header: bool,
    /// The file starts with a UTF-8 byte-order mark (read with `utf-8-sig`).
    pub bom: bool,
    /// Extra strings that mean "missing", beyond pandas' defaults (when `keep_default_na`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub na_values: Vec<String>,
    /// Whether pandas' default missing-value strings (`NA`, `NaN`, `null`, ...) also count.
    pub keep_default_na: bool,
    /// The text encoding as Python names it (`latin-1`, `cp1252`, `utf-16`), when not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// Lines to skip at the start of the file, before the header (`skiprows`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skip_rows: u64,
    /// The comment character (`comment`): from it to the end of the line is ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<char>,
    /// The file's format; the CSV options above apply to CSV only.
    #[serde(default, skip_serializing_if = "FileFormat::is_csv")]
    pub format: FileFormat,
    /// For Excel: the sheet read (`None`: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
}

/// The format of a data file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    /// Delimited text (`read_csv`).
    #[default]
    Csv,
    /// Apache Parquet (`pyarrow.parquet.read_table`, nested structs flattened to `a.b`).
    Parquet,
    /// Arrow IPC: Feather v2 files and IPC streams (`pyarrow`).
    Arrow,
    /// JSON Lines: one JSON object per line (nested objects flattened to `a.b`).
    Jsonl,
    /// A JSON array of objects.
    Json,
    /// An Excel workbook (`.xlsx`), one sheet (`read_excel`, needs `openpyxl`).
    Xlsx,
}

impl FileFormat {
    /// Every format, in a stable order.
    pub const ALL: [FileFormat; 6] = [
        FileFormat::Csv,
        FileFormat::Parquet,
        FileFormat::Arrow,
        FileFormat::Jsonl,
        FileFormat::Json,
        FileFormat::Xlsx,
    ];

    /// Whether this is CSV (the default, omitted from JSON).
    #[allow(clippy::trivially_copy_pass_by_ref)] // the signature serde's `skip_serializing_if` expects
    pub fn is_csv(&self) -> bool {
        *self == FileFormat::Csv
    }

    /// The name used on the command line and in JSON (`csv`, `parquet`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Csv => "csv",
            FileFormat::Parquet => "parquet",
            FileFormat::Arrow => "arrow",
            FileFormat::Jsonl => "jsonl",
            FileFormat::Json => "json",
            FileFormat::Xlsx => "xlsx",
        }
    }

    /// The Python distributions a script needs to read the format with pandas.
    pub fn python_packages(self) -> &'static [&'static str] {
        match self {
            FileFormat::Csv | FileFormat::Jsonl | FileFormat::Json => &[],
            FileFormat::Parquet | FileFormat::Arrow => &["pyarrow"],
            FileFormat::Xlsx => &["openpyxl"],
        }
    }
}

impl std::fmt::Display for FileFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // the signature serde's `skip_serializing_if` expects
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            delimiter: ',',
            has_header: true,
            bom: false,
            na_values: Vec::new(),
            keep_default_na: true,
            encoding: None,
            skip_rows: 0,
            comment: None,
            format: FileFormat::Csv,
            sheet: None,
        }
    }
}

/// A table: its columns in file order, rules across columns, and how to read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableSchema {
    /// The dataset's name (a sample or input name such as `orders`).
    pub name: String,
    /// The columns, in file order.
    pub columns: Vec<ColumnSchema>,
    /// Sets of columns whose combined values must be unique.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unique_together: Vec<Vec<String>>,
    /// How pandas must read the file.
    pub read: ReadOptions,
}

impl TableSchema {
    /// An empty table with default read options.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            columns: Vec::new(),
            unique_together: Vec::new(),
            read: ReadOptions::default(),
        }
    }

    /// The column with exactly this name.
    pub fn column(&self, name: &str) -> Option<&ColumnSchema> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Adds a check to a column after validating it; `not_null` and `unique` set the column's
    /// flags instead of adding a check. Adding a check the column already has does nothing.
    pub fn add_check(&mut self, column: &str, check: Check) -> Result<(), SchemaError> {
        let table = self.name.clone();
        let col = self
            .columns
            .iter_mut()
            .find(|c| c.name == column)
            .ok_or_else(|| SchemaError::UnknownColumn {
                table,
                column: column.to_owned(),
            })?;
        check.validate(&col.name, col.dtype)?;
        match check {
            Check::NotNull => col.nullable = false,
            Check::Unique => col.unique = true,
            other if !col.checks.contains(&other) => col.checks.push(other),
            _ => {}
        }
        Ok(())
    }

    /// Requires the combined values of `columns` to be unique.
    pub fn add_unique_together(&mut self, columns: Vec<String>) -> Result<(), SchemaError> {
        for name in &columns {
            if self.column(name).is_none() {
                return Err(SchemaError::UnknownColumn {
                    table: self.name.clone(),
                    column: name.clone(),
                });
            }
        }
        if !self.unique_together.contains(&columns) {
            self.unique_together.push(columns);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scalar;

    fn orders() -> TableSchema {
        let mut t = TableSchema::new("orders");
        t.columns.push(ColumnSchema::new("id", DataType::Integer));
        let mut email = ColumnSchema::new("email", DataType::String);
        email.nullable = true;
        t.columns.push(email);
        t
    }

    #[test]
    fn flags_and_checks_are_added_once() {
        let mut t = orders();
        t.add_check("email", Check::NotNull).unwrap();
        t.add_check("id", Check::Unique).unwrap();
        let gt = Check::Gt {
            value: Scalar::Int(0),
        };
        t.add_check("id", gt.clone()).unwrap();
        t.add_check("id", gt).unwrap();
        assert!(!t.column("email").unwrap().nullable);
        assert!(t.column("id").unwrap().unique);
        assert_eq!(t.column("id").unwrap().checks.len(), 1);
    }

    #[test]
    fn unknown_columns_and_misfits_are_errors() {
        let mut t = orders();
        assert_eq!(
            t.add_check("qty", Check::Unique),
            Err(SchemaError::UnknownColumn {
                table: "orders".into(),
                column: "qty".into()
            })
        );
        assert!(
            t.add_check(
                "id",
                Check::StrLength {
                    min: Some(1),
                    max: None
                }
            )
            .is_err()
        );
        assert!(
            t.add_unique_together(vec!["id".into(), "nope".into()])
                .is_err()
        );
    }
}

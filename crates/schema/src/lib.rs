//! The shared description of a table: what type each column has, whether it may be null or must
//! be unique, which checks its values must pass, and how pandas must read the file so that the
//! schema holds. The profiler produces it, the constraint parser adds checks to it, and the
//! generation loop shows it to the model; none of them needs another's behaviour to use it.
//!
//! It also exports as a Frictionless Table Schema ([`render_frictionless`]) and as the JSON
//! Schema of one row ([`render_json_schema`]).
//!
//! It renders as a Python module with a Pandera `DataFrameSchema` and a `read_<name>` function
//! (the `pd.read_csv` call with the dtypes, null markers and date formats the schema assumes):
//!
//! ```
//! use autocoder_schema::{Check, ColumnSchema, DataType, Scalar, TableSchema, render_pandera};
//!
//! let mut table = TableSchema::new("orders");
//! let mut quantity = ColumnSchema::new("quantity", DataType::Integer);
//! quantity.checks.push(Check::Gt { value: Scalar::Int(0) });
//! table.columns.push(quantity);
//! let python = render_pandera(&table);
//! assert!(python.contains(r#""quantity": pa.Column("Int64", checks=[pa.Check.gt(0)], nullable=False)"#));
//! ```

mod check;
mod dtype;
mod error;
mod export;
mod pandera;
mod pandera_formats;
mod pattern;
mod python;
mod table;

pub use check::{Check, Scalar, looks_like_iso_date};
pub use dtype::DataType;
pub use error::SchemaError;
pub use export::{render_frictionless, render_json_schema};
pub use pandera::{csv_dialect_kwargs, render_pandera};
pub use pattern::Pattern;
pub use python::{python_identifier, python_str};
pub use table::{ColumnSchema, FileFormat, ReadOptions, TableSchema};

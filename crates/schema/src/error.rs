//! Errors from building or checking a schema.

use crate::DataType;

/// Why a check or schema is not valid.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SchemaError {
    /// The check cannot apply to a column of this type (e.g. `str_length` on an integer column).
    #[error("check `{check}` does not apply to column `{column}` of type {dtype}")]
    CheckDoesNotFit {
        /// The check's name, as Pandera spells it.
        check: &'static str,
        /// The column it was meant for.
        column: String,
        /// The column's type.
        dtype: DataType,
    },
    /// A bound is not a number (or a date, for date columns) where one is required.
    #[error("check `{check}` on column `{column}`: {reason}")]
    BadBound {
        /// The check's name.
        check: &'static str,
        /// The column it was meant for.
        column: String,
        /// What is wrong with the bound.
        reason: String,
    },
    /// A regular expression does not compile.
    #[error(
        "check `{check}` on column `{column}`: the pattern {pattern:?} is not a valid regular expression: {reason}"
    )]
    BadPattern {
        /// The check's name.
        check: &'static str,
        /// The column it was meant for.
        column: String,
        /// The pattern as given.
        pattern: String,
        /// The compiler's message.
        reason: String,
    },
    /// `isin` / `notin` with no values.
    #[error("check `{check}` on column `{column}` needs at least one value")]
    EmptyValues {
        /// The check's name.
        check: &'static str,
        /// The column it was meant for.
        column: String,
    },
    /// A check names a column the table does not have.
    #[error("table `{table}` has no column `{column}`")]
    UnknownColumn {
        /// The table.
        table: String,
        /// The column asked for.
        column: String,
    },
}

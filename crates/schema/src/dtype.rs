//! The logical type of a column, and how pandas and Pandera spell it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The logical type of a column, as inferred from its text or declared by a user.
///
/// The names follow what pandas will produce with the read recipe of a [`crate::TableSchema`]:
/// integers stay integers when values are missing (pandas `Int64`), booleans are nullable
/// (`boolean`), and text that looks numeric but carries meaning in its digits (zip codes such as
/// `02134`) stays a string.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    PartialOrd,
    Ord,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum DataType {
    /// `true`/`false` in one of the spellings pandas reads as booleans.
    Boolean,
    /// Whole numbers that fit in a signed 64-bit integer.
    Integer,
    /// Floating-point numbers (including `inf`, `nan` spelt out).
    Float,
    /// Calendar dates without a time of day.
    Date,
    /// Timestamps; the column's format is kept in [`crate::ColumnSchema::datetime_format`].
    Datetime,
    /// Anything else.
    String,
    /// Every value is missing: there is nothing to infer a type from.
    Empty,
}

impl DataType {
    /// All types, in a stable order.
    pub const ALL: [DataType; 7] = [
        DataType::Boolean,
        DataType::Integer,
        DataType::Float,
        DataType::Date,
        DataType::Datetime,
        DataType::String,
        DataType::Empty,
    ];

    /// The name used in JSON, prompts and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Boolean => "boolean",
            DataType::Integer => "integer",
            DataType::Float => "float",
            DataType::Date => "date",
            DataType::Datetime => "datetime",
            DataType::String => "string",
            DataType::Empty => "empty",
        }
    }

    /// The pandas dtype the read recipe asks for (`dtype=` of `read_csv`), or `None` for types that
    /// are parsed after reading (dates) or left to pandas (empty columns).
    pub fn pandas_read_dtype(self) -> Option<&'static str> {
        match self {
            DataType::Boolean => Some("boolean"),
            DataType::Integer => Some("Int64"),
            DataType::Float => Some("float64"),
            DataType::String => Some("str"),
            DataType::Date | DataType::Datetime | DataType::Empty => None,
        }
    }

    /// True for integer and float columns.
    pub fn is_numeric(self) -> bool {
        matches!(self, DataType::Integer | DataType::Float)
    }

    /// True for date and datetime columns.
    pub fn is_temporal(self) -> bool {
        matches!(self, DataType::Date | DataType::Datetime)
    }

    /// True when values can be ordered (numbers, dates, and strings by their text).
    pub fn is_ordered(self) -> bool {
        self.is_numeric() || self.is_temporal() || self == DataType::String
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for DataType {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DataType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<_> = DataType::ALL.iter().map(|t| t.name()).collect();
                format!("unknown type `{s}`; expected one of {}", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_from_str_and_serde() {
        for t in DataType::ALL {
            assert_eq!(t.name().parse::<DataType>().unwrap(), t);
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.name()));
        }
        assert!(
            "decimal"
                .parse::<DataType>()
                .unwrap_err()
                .contains("integer")
        );
    }
}

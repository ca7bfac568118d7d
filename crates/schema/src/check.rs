//! Typed checks on a column's values: Pandera's built-in checks, plus the named patterns.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{DataType, Pattern, SchemaError};

/// A literal value in a check: a bound, or one of a list of allowed values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Scalar {
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// Text, or a date/datetime in ISO 8601 form for temporal columns.
    Str(String),
}

impl Scalar {
    /// The value as a float, when it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(f) => Some(*f),
            Scalar::Bool(_) | Scalar::Str(_) => None,
        }
    }

    fn fits(&self, dtype: DataType) -> bool {
        match (self, dtype) {
            (Scalar::Int(_), DataType::Integer | DataType::Float)
            | (Scalar::Float(_), DataType::Float)
            | (Scalar::Bool(_), DataType::Boolean)
            | (Scalar::Str(_), DataType::String)
            | (_, DataType::Empty) => true,
            (Scalar::Float(f), DataType::Integer) => f.is_finite(),
            (Scalar::Str(s), DataType::Date | DataType::Datetime) => looks_like_iso_date(s),
            _ => false,
        }
    }
}

/// Whether `s` starts with an ISO 8601 date (`YYYY-MM-DD`), as date and datetime bounds must.
pub fn looks_like_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// A check on the values of one column. Missing values are not checked (Pandera's default);
/// [`Check::NotNull`] is the check that forbids them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum Check {
    /// Every value equals `value`.
    Eq {
        /// The required value.
        value: Scalar,
    },
    /// No value equals `value`.
    Ne {
        /// The forbidden value.
        value: Scalar,
    },
    /// Every value is greater than `value`.
    Gt {
        /// The exclusive lower bound.
        value: Scalar,
    },
    /// Every value is at least `value`.
    Ge {
        /// The inclusive lower bound.
        value: Scalar,
    },
    /// Every value is less than `value`.
    Lt {
        /// The exclusive upper bound.
        value: Scalar,
    },
    /// Every value is at most `value`.
    Le {
        /// The inclusive upper bound.
        value: Scalar,
    },
    /// Every value lies between `min` and `max`.
    InRange {
        /// The lower bound.
        min: Scalar,
        /// The upper bound.
        max: Scalar,
        /// Whether `min` itself is allowed.
        include_min: bool,
        /// Whether `max` itself is allowed.
        include_max: bool,
    },
    /// Every value is one of `values`.
    Isin {
        /// The allowed values.
        values: Vec<Scalar>,
    },
    /// No value is one of `values`.
    Notin {
        /// The forbidden values.
        values: Vec<Scalar>,
    },
    /// Every value matches the regular expression from its start (Python `re.match`); write
    /// `^...$` to match the whole value.
    StrMatches {
        /// The regular expression (the common subset of Rust `regex` and Python `re`).
        pattern: String,
    },
    /// Every value contains a match of the regular expression somewhere.
    StrContains {
        /// The regular expression.
        pattern: String,
    },
    /// Every value starts with `prefix`.
    StrStartswith {
        /// The literal prefix.
        prefix: String,
    },
    /// Every value ends with `suffix`.
    StrEndswith {
        /// The literal suffix.
        suffix: String,
    },
    /// Every value's length (in characters) is within the bounds.
    StrLength {
        /// The shortest allowed length.
        min: Option<u64>,
        /// The longest allowed length.
        max: Option<u64>,
    },
    /// Every value looks like a named pattern (an email, a URL, a UUID, ...).
    Pattern {
        /// Which pattern.
        pattern: Pattern,
    },
    /// No two rows share a value.
    Unique,
    /// No value is missing.
    NotNull,
}

impl Check {
    /// The check's name as Pandera spells it (`pattern` for named patterns).
    pub fn name(&self) -> &'static str {
        match self {
            Check::Eq { .. } => "eq",
            Check::Ne { .. } => "ne",
            Check::Gt { .. } => "gt",
            Check::Ge { .. } => "ge",
            Check::Lt { .. } => "lt",
            Check::Le { .. } => "le",
            Check::InRange { .. } => "in_range",
            Check::Isin { .. } => "isin",
            Check::Notin { .. } => "notin",
            Check::StrMatches { .. } => "str_matches",
            Check::StrContains { .. } => "str_contains",
            Check::StrStartswith { .. } => "str_startswith",
            Check::StrEndswith { .. } => "str_endswith",
            Check::StrLength { .. } => "str_length",
            Check::Pattern { .. } => "pattern",
            Check::Unique => "unique",
            Check::NotNull => "not_null",
        }
    }

    /// Whether this kind of check can apply to a column of type `dtype`.
    pub fn applies_to(&self, dtype: DataType) -> bool {
        match self {
            Check::Unique | Check::NotNull => true,
            Check::Eq { .. } | Check::Ne { .. } | Check::Isin { .. } | Check::Notin { .. } => {
                dtype != DataType::Empty
            }
            Check::Gt { .. }
            | Check::Ge { .. }
            | Check::Lt { .. }
            | Check::Le { .. }
            | Check::InRange { .. } => dtype.is_ordered(),
            Check::StrMatches { .. }
            | Check::StrContains { .. }
            | Check::StrStartswith { .. }
            | Check::StrEndswith { .. }
            | Check::StrLength { .. }
            | Check::Pattern { .. } => dtype == DataType::String,
        }
    }

    /// Checks that this check fits a column: the type, the bounds, the patterns, the value lists.
    pub fn validate(&self, column: &str, dtype: DataType) -> Result<(), SchemaError> {
        let name = self.name();
        if !self.applies_to(dtype) {
            return Err(SchemaError::CheckDoesNotFit {
                check: name,
                column: column.to_owned(),
                dtype,
            });
        }
        let bad_bound = |reason: String| SchemaError::BadBound {
            check: name,
            column: column.to_owned(),
            reason,
        };
        let scalar_fits = |value: &Scalar| {
            if value.fits(dtype) {
                Ok(())
            } else {
                Err(bad_bound(format!(
                    "{value} is not a value of a {dtype} column"
                )))
            }
        };
        match self {
            Check::Eq { value }
            | Check::Ne { value }
            | Check::Gt { value }
            | Check::Ge { value }
            | Check::Lt { value }
            | Check::Le { value } => scalar_fits(value),
            Check::InRange { min, max, .. } => {
                scalar_fits(min)?;
                scalar_fits(max)?;
                if let (Some(lo), Some(hi)) = (min.as_f64(), max.as_f64())
                    && lo > hi
                {
                    return Err(bad_bound(format!(
                        "the lower bound {lo} exceeds the upper bound {hi}"
                    )));
                }
                Ok(())
            }
            Check::Isin { values } | Check::Notin { values } => {
                if values.is_empty() {
                    return Err(SchemaError::EmptyValues {
                        check: name,
                        column: column.to_owned(),
                    });
                }
                values.iter().try_for_each(scalar_fits)
            }
            Check::StrMatches { pattern } | Check::StrContains { pattern } => {
                regex::Regex::new(pattern)
                    .map(|_| ())
                    .map_err(|e| SchemaError::BadPattern {
                        check: name,
                        column: column.to_owned(),
                        pattern: pattern.clone(),
                        reason: e.to_string(),
                    })
            }
            Check::StrLength { min, max } => match (min, max) {
                (None, None) => Err(bad_bound("needs a minimum or a maximum length".to_owned())),
                (Some(lo), Some(hi)) if lo > hi => Err(bad_bound(format!(
                    "the minimum length {lo} exceeds the maximum {hi}"
                ))),
                _ => Ok(()),
            },
            Check::StrStartswith { .. }
            | Check::StrEndswith { .. }
            | Check::Pattern { .. }
            | Check::Unique
            | Check::NotNull => Ok(()),
        }
    }

    /// A short human reading of the check applied to `column`, for reports and prompts
    /// (e.g. `quantity > 0`, `status in {"pending", "shipped"}`).
    pub fn describe(&self, column: &str) -> String {
        let list = |values: &[Scalar]| {
            let items: Vec<String> = values.iter().map(ToString::to_string).collect();
            format!("{{{}}}", items.join(", "))
        };
        match self {
            Check::Eq { value } => format!("{column} == {value}"),
            Check::Ne { value } => format!("{column} != {value}"),
            Check::Gt { value } => format!("{column} > {value}"),
            Check::Ge { value } => format!("{column} >= {value}"),
            Check::Lt { value } => format!("{column} < {value}"),
            Check::Le { value } => format!("{column} <= {value}"),
            Check::InRange {
                min,
                max,
                include_min,
                include_max,
            } => {
                let lo = if *include_min { "<=" } else { "<" };
                let hi = if *include_max { "<=" } else { "<" };
                format!("{min} {lo} {column} {hi} {max}")
            }
            Check::Isin { values } => format!("{column} in {}", list(values)),
            Check::Notin { values } => format!("{column} not in {}", list(values)),
            Check::StrMatches { pattern } => format!("{column} matches /{pattern}/"),
            Check::StrContains { pattern } => format!("{column} contains /{pattern}/"),
            Check::StrStartswith { prefix } => format!("{column} starts with {prefix:?}"),
            Check::StrEndswith { suffix } => format!("{column} ends with {suffix:?}"),
            Check::StrLength { min, max } => match (min, max) {
                (Some(lo), Some(hi)) => format!("{lo} <= len({column}) <= {hi}"),
                (Some(lo), None) => format!("len({column}) >= {lo}"),
                (None, Some(hi)) => format!("len({column}) <= {hi}"),
                (None, None) => format!("len({column}) is unbounded"),
            },
            Check::Pattern { pattern } => format!("{column} looks like {}", pattern.description()),
            Check::Unique => format!("{column} is unique"),
            Check::NotNull => format!("{column} is never null"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_refuse_columns_of_the_wrong_type() {
        let len = Check::StrLength {
            min: Some(1),
            max: None,
        };
        assert!(len.validate("name", DataType::String).is_ok());
        assert_eq!(
            len.validate("qty", DataType::Integer),
            Err(SchemaError::CheckDoesNotFit {
                check: "str_length",
                column: "qty".into(),
                dtype: DataType::Integer
            })
        );
        let gt = Check::Gt {
            value: Scalar::Int(0),
        };
        assert!(gt.validate("qty", DataType::Float).is_ok());
        assert!(gt.validate("flag", DataType::Boolean).is_err());
    }

    #[test]
    fn bounds_must_be_values_of_the_column_type() {
        let gt_text = Check::Gt {
            value: Scalar::Str("ten".into()),
        };
        assert!(matches!(
            gt_text.validate("qty", DataType::Integer),
            Err(SchemaError::BadBound { .. })
        ));
        let after = Check::Ge {
            value: Scalar::Str("2024-01-01".into()),
        };
        assert!(after.validate("day", DataType::Date).is_ok());
        let reversed = Check::InRange {
            min: Scalar::Int(10),
            max: Scalar::Int(1),
            include_min: true,
            include_max: true,
        };
        assert!(reversed.validate("x", DataType::Integer).is_err());
    }

    #[test]
    fn empty_lists_and_bad_patterns_are_refused() {
        let empty = Check::Isin { values: vec![] };
        assert!(matches!(
            empty.validate("s", DataType::String),
            Err(SchemaError::EmptyValues { .. })
        ));
        let bad = Check::StrMatches {
            pattern: "([a-z".into(),
        };
        assert!(matches!(
            bad.validate("s", DataType::String),
            Err(SchemaError::BadPattern { .. })
        ));
    }

    #[test]
    fn checks_serialize_with_a_tag() {
        let check = Check::InRange {
            min: Scalar::Int(0),
            max: Scalar::Float(10.5),
            include_min: true,
            include_max: false,
        };
        let json = serde_json::to_string(&check).unwrap();
        assert_eq!(
            json,
            r#"{"check":"in_range","min":0,"max":10.5,"include_min":true,"include_max":false}"#
        );
        assert_eq!(serde_json::from_str::<Check>(&json).unwrap(), check);
        assert_eq!(check.describe("price"), "0 <= price < 10.5");
    }
}

//! What a rule becomes: a typed constraint on the table, or text with the reason it was not
//! applied. Rules are never dropped: both kinds render as text for later prompts.

use std::fmt::{self, Write as _};

use autocoder_schema::{Check, SchemaError, TableSchema};
use serde::{Deserialize, Serialize};

/// A typed constraint on a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Constraint {
    /// One check on one column.
    Column {
        /// The column, exactly as in the table.
        column: String,
        /// The check its values must pass.
        check: Check,
    },
    /// The combined values of these columns are unique.
    UniqueTogether {
        /// The columns, exactly as in the table.
        columns: Vec<String>,
    },
}

impl Constraint {
    /// The columns the constraint reads.
    pub fn columns(&self) -> Vec<&str> {
        match self {
            Constraint::Column { column, .. } => vec![column.as_str()],
            Constraint::UniqueTogether { columns } => columns.iter().map(String::as_str).collect(),
        }
    }

    /// A short human reading, such as `quantity > 0` or `(order_id, line) is unique`.
    pub fn describe(&self) -> String {
        match self {
            Constraint::Column { column, check } => check.describe(column),
            Constraint::UniqueTogether { columns } => {
                format!("({}) is unique", columns.join(", "))
            }
        }
    }

    /// The name of the check as Pandera spells it (`unique` for several columns too).
    pub fn check_name(&self) -> &'static str {
        match self {
            Constraint::Column { check, .. } => check.name(),
            Constraint::UniqueTogether { .. } => "unique",
        }
    }

    /// Adds the constraint to `table` (validated there: the column exists, the check fits).
    pub fn add_to(&self, table: &mut TableSchema) -> Result<(), SchemaError> {
        match self {
            Constraint::Column { column, check } => table.add_check(column, check.clone()),
            Constraint::UniqueTogether { columns } => table.add_unique_together(columns.clone()),
        }
    }
}

/// Who turned the rule into a constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The deterministic parser (works offline).
    Parser,
    /// The model, through validated structured output.
    Llm,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Parser => "parser",
            Source::Llm => "model",
        })
    }
}

/// What became of one rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The rule is a typed constraint.
    Applied {
        /// The rule as the user wrote it.
        rule: String,
        /// What it became.
        constraint: Constraint,
        /// Who read it.
        source: Source,
    },
    /// The rule stays as text.
    Unapplied {
        /// The rule as the user wrote it.
        rule: String,
        /// Why it was not applied, and what would make it applicable.
        reason: String,
    },
}

impl Outcome {
    /// The rule as the user wrote it.
    pub fn rule(&self) -> &str {
        match self {
            Outcome::Applied { rule, .. } | Outcome::Unapplied { rule, .. } => rule,
        }
    }

    /// The constraint, when the rule was applied.
    pub fn constraint(&self) -> Option<&Constraint> {
        match self {
            Outcome::Applied { constraint, .. } => Some(constraint),
            Outcome::Unapplied { .. } => None,
        }
    }
}

impl fmt::Display for Outcome {
    /// One line for reports and prompts: the rule, then what it became or why it did not.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Applied {
                rule,
                constraint,
                source,
            } => write!(
                f,
                "{rule:?}: checked as `{}` (read by the {source})",
                constraint.describe()
            ),
            Outcome::Unapplied { rule, reason } => {
                write!(
                    f,
                    "{rule:?}: not checked automatically ({reason}); still applies"
                )
            }
        }
    }
}

/// Every rule as one line of text, applied ones and unapplied ones alike, for prompts.
pub fn rules_as_text(outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    for outcome in outcomes {
        let _ = writeln!(out, "- {outcome}");
    }
    out
}

//! The report `autocoder schema --constraint` prints: the Pandera schema with the checks, which
//! rules were applied (as what), which were not (why), and the violations found in the file.

use std::fmt::Write as _;
use std::path::Path;

use autocoder_llm::LlmClient;
use autocoder_schema::{TableSchema, render_pandera};
use serde::{Deserialize, Serialize};

use crate::llm::read_rules;
use crate::{
    CheckResult, Constraint, ConstraintError, Outcome, apply_outcomes, evaluate_path, parse_rules,
};

/// Everything the report shows; serializes as the `--format json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The table with the applied checks.
    pub schema: TableSchema,
    /// The Pandera module for `schema`.
    pub pandera: String,
    /// One outcome per rule, in the order given.
    pub rules: Vec<Outcome>,
    /// One result per applied constraint evaluated over the file.
    pub violations: Vec<CheckResult>,
}

/// Applies `rules` (read offline by the parser) to `table`, evaluates the applied constraints over
/// the file at `path`, and builds the report: what `autocoder schema FILE --constraint ...`
/// prints without a model.
pub fn report_for_file(
    path: &Path,
    mut table: TableSchema,
    rules: &[String],
) -> Result<Report, ConstraintError> {
    let mut outcomes = parse_rules(rules, &table);
    finish(path, &mut table, &mut outcomes)
}

/// [`report_for_file`] with the model reading the rules the parser does not understand.
pub async fn report_for_file_with_model(
    path: &Path,
    mut table: TableSchema,
    rules: &[String],
    client: &LlmClient,
) -> Result<Report, ConstraintError> {
    let mut outcomes = read_rules(rules, &table, client).await;
    finish(path, &mut table, &mut outcomes)
}

fn finish(
    path: &Path,
    table: &mut TableSchema,
    outcomes: &mut [Outcome],
) -> Result<Report, ConstraintError> {
    apply_outcomes(outcomes, table);
    let constraints: Vec<Constraint> = outcomes
        .iter()
        .filter_map(|o| o.constraint().cloned())
        .collect();
    let results = evaluate_path(path, table, &constraints)?;
    Ok(report(table, outcomes, &results))
}

/// Builds the report for `table` (with the applied checks already added), the rules' outcomes
/// and the evaluation results.
pub fn report(table: &TableSchema, outcomes: &[Outcome], results: &[CheckResult]) -> Report {
    Report {
        schema: table.clone(),
        pandera: render_pandera(table),
        rules: outcomes.to_vec(),
        violations: results.to_vec(),
    }
}

impl Report {
    /// The report as text for people: the Pandera module, then the rules, then the violations.
    pub fn to_text(&self) -> String {
        let mut out = self.pandera.clone();
        let applied: Vec<&Outcome> = self
            .rules
            .iter()
            .filter(|o| matches!(o, Outcome::Applied { .. }))
            .collect();
        let unapplied: Vec<&Outcome> = self
            .rules
            .iter()
            .filter(|o| matches!(o, Outcome::Unapplied { .. }))
            .collect();
        let _ = writeln!(out, "\n# Rules applied ({})", applied.len());
        for outcome in applied {
            if let Outcome::Applied {
                rule,
                constraint,
                source,
            } = outcome
            {
                let _ = writeln!(
                    out,
                    "#   {rule:?} -> {} (`{}`, by the {source})",
                    constraint.describe(),
                    constraint.check_name()
                );
            }
        }
        let _ = writeln!(out, "# Rules not applied ({})", unapplied.len());
        for outcome in unapplied {
            if let Outcome::Unapplied { rule, reason } = outcome {
                let _ = writeln!(out, "#   {rule:?}: {reason}");
            }
        }
        let _ = writeln!(out, "# Violations");
        for result in &self.violations {
            let _ = write!(
                out,
                "#   {}: {} of {} rows",
                result.description, result.violations, result.rows
            );
            if !result.examples.is_empty() {
                let shown: Vec<String> = result
                    .examples
                    .iter()
                    .map(|v| format!("row {} = {:?}", v.row, v.value))
                    .collect();
                let _ = write!(out, " (first: {})", shown.join(", "));
            }
            if result.unreadable > 0 {
                let _ = write!(
                    out,
                    "; {} values are not of the column's type",
                    result.unreadable
                );
            }
            out.push('\n');
        }
        out
    }
}

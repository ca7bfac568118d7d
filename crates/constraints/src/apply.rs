//! Turns a list of rules into outcomes and adds the applied ones to a table schema.

use autocoder_schema::TableSchema;

use crate::parse::{Parsed, parse_rule};
use crate::{Outcome, Source};

/// Reads every rule with the offline parser. Rules it does not understand stay unapplied with
/// the parser's reason (the model path, [`crate::llm`], can take them from there). The result has
/// one outcome per rule, in order: rules are never dropped.
pub fn parse_rules(rules: &[String], table: &TableSchema) -> Vec<Outcome> {
    rules
        .iter()
        .map(|rule| match parse_rule(rule, table) {
            Parsed::Constraint(constraint) => Outcome::Applied {
                rule: rule.clone(),
                constraint,
                source: Source::Parser,
            },
            Parsed::Refused(reason) => Outcome::Unapplied {
                rule: rule.clone(),
                reason,
            },
            Parsed::NotUnderstood(reason) => Outcome::Unapplied {
                rule: rule.clone(),
                reason: format!("{reason}; no model was asked"),
            },
        })
        .collect()
}

/// Adds every applied constraint to `table`. An applied constraint that no longer fits (the
/// table changed since parsing) becomes unapplied with the reason, so nothing is lost.
pub fn apply_outcomes(outcomes: &mut [Outcome], table: &mut TableSchema) {
    for outcome in outcomes.iter_mut() {
        if let Outcome::Applied {
            rule, constraint, ..
        } = outcome
            && let Err(err) = constraint.add_to(table)
        {
            *outcome = Outcome::Unapplied {
                rule: rule.clone(),
                reason: err.to_string(),
            };
        }
    }
}

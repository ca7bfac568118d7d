//! The deterministic parser: splits a rule into its column(s) and what it says about them, and
//! reads the common phrasings into a typed [`Constraint`], offline.

use autocoder_schema::TableSchema;

use crate::predicate::{Fail, Meaning, read_predicate};
use crate::resolve::resolve_column;
use crate::text::{starts_with_words, tidy};
use crate::{Constraint, ConstraintError};

/// What the parser made of a rule.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    /// A typed constraint, already validated against the table (the column exists, the check
    /// fits its type, bounds and patterns are sound).
    Constraint(Constraint),
    /// Understood and deliberately not applied; the reason says why and what would fix it. The
    /// model is not asked: it could only invent what the rule leaves out.
    Refused(String),
    /// Not understood; the model may read it.
    NotUnderstood(String),
}

/// The words that end a rule's subject (its column) and start what it says.
const VERBS: &[&str] = &[
    "must",
    "mustn't",
    "should",
    "shouldn't",
    "shall",
    "has to",
    "have to",
    "needs to",
    "need to",
    "need",
    "needn't",
    "needs",
    "is",
    "isn't",
    "are",
    "aren't",
    "cannot",
    "can't",
    "can",
    "may",
    "might",
    "will",
    "won't",
    "never",
    "always",
    "only",
    "has",
    "have",
    "contains",
    "contain",
    "starts with",
    "begins with",
    "ends with",
    "matches",
    "match",
    "looks like",
    "look like",
    "equals",
    "exceeds",
    "does",
    "doesn't",
    "do",
    "don't",
    "lies",
    "lie",
    "falls",
    "fall",
    ">=",
    "<=",
    ">",
    "<",
    "==",
    "=",
    "!=",
];

/// Parses one rule against `table`.
pub fn parse_rule(rule: &str, table: &TableSchema) -> Parsed {
    let text = tidy(rule);
    if text.is_empty() {
        return Parsed::Refused("the rule is empty".to_owned());
    }
    let (subject, predicate) = match special_forms(&text) {
        Some(split) => split,
        None => match split_subject(&text) {
            Some(split) => split,
            None => {
                return Parsed::NotUnderstood(
                    "no verb such as `must` or `is` separates the column from the rule".to_owned(),
                );
            }
        },
    };
    let columns = match subject_columns(&subject, table) {
        Ok(columns) => columns,
        Err(err @ ConstraintError::AmbiguousColumn { .. }) => {
            return Parsed::Refused(err.to_string());
        }
        Err(err) => return Parsed::NotUnderstood(err.to_string()),
    };
    let dtype = match columns.as_slice() {
        [one] => table.column(one).map(|c| c.dtype),
        _ => None,
    };
    let meaning = match read_predicate(&predicate, dtype, table) {
        Ok(meaning) => meaning,
        Err(Fail::Refused(reason)) => return Parsed::Refused(reason),
        Err(Fail::NotUnderstood(reason)) => return Parsed::NotUnderstood(reason),
    };
    let constraint = match (meaning, columns.len()) {
        (Meaning::Unique, 1) => Constraint::Column {
            column: columns[0].clone(),
            check: autocoder_schema::Check::Unique,
        },
        (Meaning::Unique, _) => Constraint::UniqueTogether { columns },
        (Meaning::Check(check), _) => Constraint::Column {
            column: columns[0].clone(),
            check,
        },
    };
    match validate(&constraint, table) {
        Ok(()) => Parsed::Constraint(constraint),
        Err(reason) => Parsed::Refused(reason),
    }
}

/// Checks a constraint against the table: the columns exist and the check fits.
pub(crate) fn validate(constraint: &Constraint, table: &TableSchema) -> Result<(), String> {
    let mut probe = table.clone();
    constraint.add_to(&mut probe).map_err(|e| e.to_string())
}

/// Rules that do not start with their column: "no two rows share the same X", "no duplicate X",
/// "the combination of A and B is unique" (the last is handled by the subject cleaner).
fn special_forms(text: &str) -> Option<(String, String)> {
    let lower = text.to_ascii_lowercase();
    for lead in [
        "no two rows share the same ",
        "no two rows have the same ",
        "no two records share the same ",
        "no two records have the same ",
        "there are no duplicate ",
        "there must be no duplicate ",
        "there should be no duplicate ",
        "no duplicate ",
        "no duplicates in ",
        "no duplicated ",
    ] {
        if lower.starts_with(lead) {
            let rest = &text[lead.len()..];
            let rest = rest
                .strip_suffix(" values")
                .or_else(|| rest.strip_suffix(" allowed"))
                .unwrap_or(rest);
            let rest = rest.strip_suffix(" values").unwrap_or(rest);
            return Some((rest.to_owned(), "has no duplicates".to_owned()));
        }
    }
    None
}

/// Splits at the first verb: `quantity` | `must be positive`.
fn split_subject(text: &str) -> Option<(String, String)> {
    let lower = text.to_ascii_lowercase();
    let mut best: Option<usize> = None;
    for (at, _) in lower.char_indices() {
        let starts_word = at > 0 && lower.as_bytes()[at - 1] == b' ';
        if starts_word && VERBS.iter().any(|v| starts_with_words(&lower[at..], v)) {
            best = Some(at);
            break;
        }
    }
    // A symbol glued to the column: "quantity>0".
    let at = best.or_else(|| lower.find(['>', '<', '=', '!']).filter(|&i| i > 0))?;
    Some((text[..at].trim().to_owned(), text[at..].trim().to_owned()))
}

/// The columns a subject names: one column, or several for uniqueness over a combination.
fn subject_columns(subject: &str, table: &TableSchema) -> Result<Vec<String>, ConstraintError> {
    let cleaned = clean_subject(subject);
    let whole = resolve_column(table, &cleaned);
    if let Ok(column) = &whole {
        return Ok(vec![column.name.clone()]);
    }
    let parts: Vec<&str> = cleaned
        .split([',', '&', '+', '/'])
        .flat_map(|p| p.split(" and "))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() < 2 {
        return whole.map(|c| vec![c.name.clone()]);
    }
    parts
        .iter()
        .map(|p| resolve_column(table, p).map(|c| c.name.clone()))
        .collect()
}

fn clean_subject(subject: &str) -> String {
    let mut s = subject.trim().trim_matches(['(', ')']).trim().to_owned();
    let leads = [
        "the combination of ",
        "the pair of ",
        "the pair ",
        "combination of ",
        "each combination of ",
        "every combination of ",
        "each pair of ",
        "the values in ",
        "the values of ",
        "values in ",
        "values of ",
        "the value of ",
        "value of ",
        "the column ",
        "column ",
        "the field ",
        "field ",
        "every ",
        "each ",
        "all ",
        "any ",
        "the ",
        "both ",
    ];
    let trails = [
        " column",
        " field",
        " values",
        " value",
        " together",
        " pairs",
        " pair",
        " col",
    ];
    let mut changed = true;
    while changed {
        changed = false;
        let lower = s.to_ascii_lowercase();
        for lead in leads {
            if lower.starts_with(lead) {
                s = s[lead.len()..].trim().to_owned();
                changed = true;
                break;
            }
        }
        let lower = s.to_ascii_lowercase();
        for trail in trails {
            if lower.ends_with(trail) && lower.len() > trail.len() {
                s = s[..s.len() - trail.len()].trim().to_owned();
                changed = true;
                break;
            }
        }
    }
    s.trim_matches(['(', ')']).trim().to_owned()
}

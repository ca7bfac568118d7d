//! The model path for rules the parser does not understand. The model fills in a
//! [`RuleAnswer`] through structured output; every answer is validated against the table (the
//! column exists, the check fits its type, bounds are numbers or dates, regular expressions
//! compile in Rust and use only constructs Python's `re` reads alike, value lists are non-empty).
//! A rejected answer gets one more call quoting the reason; a second rejection leaves the rule
//! unapplied with that reason. The prompt is `templates/constraints/rule.j2`.
//!
//! Python's `re` itself is not run here (libraries do not start processes): the portable subset
//! is checked in Rust by [`crate::check_portable_regex`], and the tests confirm it with the real
//! Python.

use autocoder_llm::{CallParams, LlmClient, LlmError, Message};
use autocoder_prompts::Prompts;
use autocoder_schema::{Check, DataType, Pattern, Scalar, TableSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::parse::{Parsed, parse_rule, validate};
use crate::regex_compat::check_portable_regex;
use crate::resolve::resolve_column;
use crate::values::scalar_for;
use crate::{Constraint, Outcome, Source};

/// The pipeline step name of the model call (the scripted server matches on it).
pub const STEP: &str = "constraint";

const TEMPLATE: &str = "constraints/rule.j2";

/// Most tokens one answer may take. A whole answer is under 150; a small model that loops in
/// `reason` (seen with Qwen2.5-Coder-1.5B: 1,500 tokens, twice, on one rule) stops here.
pub const ANSWER_MAX_TOKENS: u32 = 400;

/// The kind of check the model chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)] // Pandera's names, explained in the prompt
pub enum CheckKind {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    InRange,
    Isin,
    Notin,
    StrMatches,
    StrContains,
    StrStartswith,
    StrEndswith,
    StrLength,
    Pattern,
    Unique,
    NotNull,
}

impl CheckKind {
    const ALL: [&'static str; 17] = [
        "eq",
        "ne",
        "gt",
        "ge",
        "lt",
        "le",
        "in_range",
        "isin",
        "notin",
        "str_matches",
        "str_contains",
        "str_startswith",
        "str_endswith",
        "str_length",
        "pattern",
        "unique",
        "not_null",
    ];
}

/// The model's reading of one rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleAnswer {
    /// Whether the rule is one check; when false, `reason` says why.
    pub applicable: bool,
    /// Why the rule is not applicable.
    pub reason: Option<String>,
    /// The column (several only for `unique`).
    pub columns: Vec<String>,
    /// The check.
    pub check: Option<CheckKind>,
    /// The value of `eq` ... `le`.
    pub value: Option<String>,
    /// The lower bound of `in_range`, or the shortest length of `str_length`.
    pub min: Option<String>,
    /// The upper bound of `in_range`, or the longest length of `str_length`.
    pub max: Option<String>,
    /// Whether `min` is allowed (`in_range`; default true).
    pub include_min: Option<bool>,
    /// Whether `max` is allowed (`in_range`; default true).
    pub include_max: Option<bool>,
    /// The values of `isin` / `notin`.
    pub values: Option<Vec<String>>,
    /// The regular expression, literal text or pattern name.
    pub pattern: Option<String>,
}

/// What a valid answer means.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// The rule is this constraint.
    Constraint(Constraint),
    /// The model says the rule is not one check, for this reason.
    NotApplicable(String),
}

/// Validates `answer` against `table`; the error is the reason quoted back to the model.
pub fn validate_answer(answer: &RuleAnswer, table: &TableSchema) -> Result<Reading, String> {
    if !answer.applicable {
        return match answer.reason.as_deref().map(str::trim) {
            Some(reason) if !reason.is_empty() => Ok(Reading::NotApplicable(reason.to_owned())),
            _ => Err("`applicable` is false but `reason` is empty: say why".to_owned()),
        };
    }
    let Some(kind) = answer.check else {
        return Err("`applicable` is true but `check` is null: name the check".to_owned());
    };
    let mut columns = Vec::with_capacity(answer.columns.len());
    for name in &answer.columns {
        columns.push(
            resolve_column(table, name)
                .map_err(|e| e.to_string())?
                .name
                .clone(),
        );
    }
    let constraint = match (kind, columns.as_slice()) {
        (_, []) => return Err("`columns` is empty: name the column the rule is about".to_owned()),
        (CheckKind::Unique, [_, _, ..]) => Constraint::UniqueTogether { columns },
        (_, [column]) => Constraint::Column {
            column: column.clone(),
            check: check_of(kind, answer, column, table)?,
        },
        (_, _) => {
            return Err(format!(
                "`{}` takes one column, not {}",
                CheckKind::ALL[kind as usize],
                columns.len()
            ));
        }
    };
    validate(&constraint, table)?;
    Ok(Reading::Constraint(constraint))
}

fn check_of(
    kind: CheckKind,
    a: &RuleAnswer,
    column: &str,
    table: &TableSchema,
) -> Result<Check, String> {
    let name = CheckKind::ALL[kind as usize];
    let dtype = table
        .column(column)
        .map(|c| c.dtype)
        .ok_or_else(|| format!("no column `{column}`"))?;
    let need = |field: &Option<String>, what: &str| -> Result<String, String> {
        match field.as_deref().map(str::trim) {
            Some(v) if !v.is_empty() => Ok(v.to_owned()),
            _ => Err(format!(
                "`{name}` needs `{what}`, which is missing; if the rule does not state it, answer applicable=false instead of inventing one"
            )),
        }
    };
    let scalar = |field: &Option<String>, what: &str| {
        let text = need(field, what)?;
        scalar_for(&text, dtype, table).map_err(|e| format!("`{what}` of `{name}`: {e}"))
    };
    let length = |field: &Option<String>, what: &str| -> Result<Option<u64>, String> {
        match field.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some(v) => v
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("`{what}` of `str_length` must be a whole number, not `{v}`")),
        }
    };
    Ok(match kind {
        CheckKind::Eq => Check::Eq {
            value: scalar(&a.value, "value")?,
        },
        CheckKind::Ne => Check::Ne {
            value: scalar(&a.value, "value")?,
        },
        CheckKind::Gt => Check::Gt {
            value: scalar(&a.value, "value")?,
        },
        CheckKind::Ge => Check::Ge {
            value: scalar(&a.value, "value")?,
        },
        CheckKind::Lt => Check::Lt {
            value: scalar(&a.value, "value")?,
        },
        CheckKind::Le => Check::Le {
            value: scalar(&a.value, "value")?,
        },
        CheckKind::InRange => Check::InRange {
            min: scalar(&a.min, "min")?,
            max: scalar(&a.max, "max")?,
            include_min: a.include_min.unwrap_or(true),
            include_max: a.include_max.unwrap_or(true),
        },
        CheckKind::Isin => Check::Isin {
            values: value_list(a, name, dtype, table)?,
        },
        CheckKind::Notin => Check::Notin {
            values: value_list(a, name, dtype, table)?,
        },
        CheckKind::StrMatches | CheckKind::StrContains => {
            let pattern = need(&a.pattern, "pattern")?;
            check_portable_regex(&pattern)?;
            if kind == CheckKind::StrMatches {
                Check::StrMatches { pattern }
            } else {
                Check::StrContains { pattern }
            }
        }
        CheckKind::StrStartswith => Check::StrStartswith {
            prefix: need(&a.pattern, "pattern")?,
        },
        CheckKind::StrEndswith => Check::StrEndswith {
            suffix: need(&a.pattern, "pattern")?,
        },
        CheckKind::StrLength => Check::StrLength {
            min: length(&a.min, "min")?,
            max: length(&a.max, "max")?,
        },
        CheckKind::Pattern => {
            let text = need(&a.pattern, "pattern")?;
            let pattern = Pattern::from_name(&text).ok_or_else(|| {
                let names: Vec<&str> = Pattern::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "`{text}` is not a pattern name; use one of {}",
                    names.join(", ")
                )
            })?;
            Check::Pattern { pattern }
        }
        CheckKind::Unique => Check::Unique,
        CheckKind::NotNull => Check::NotNull,
    })
}

fn value_list(
    a: &RuleAnswer,
    name: &str,
    dtype: DataType,
    table: &TableSchema,
) -> Result<Vec<Scalar>, String> {
    let items: Vec<String> = a.values.clone().unwrap_or_default();
    if items.iter().all(|v| v.trim().is_empty()) {
        return Err(format!(
            "`{name}` needs a non-empty `values` list; if the rule names no values, answer applicable=false"
        ));
    }
    items
        .iter()
        .map(|v| scalar_for(&format!("\"{v}\""), dtype, table))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("`values` of `{name}`: {e}"))
}

/// The prompt for one rule, from `constraints/rule.j2` in `prompts`.
pub fn prompt(
    rule: &str,
    table: &TableSchema,
    parser_note: &str,
    prompts: &Prompts,
) -> Result<String, String> {
    let columns: Vec<_> = table
        .columns
        .iter()
        .map(|c| serde_json::json!({"name": c.name, "dtype": c.dtype.name()}))
        .collect();
    let patterns: Vec<&str> = Pattern::ALL.iter().map(|p| p.name()).collect();
    prompts
        .render(
            TEMPLATE,
            serde_json::json!({
                "table": table.name,
                "columns": columns,
                "rule": rule,
                "parser_note": parser_note,
                "checks": CheckKind::ALL.to_vec(),
                "patterns": patterns,
            }),
        )
        .map_err(|e| e.to_string())
}

/// Reads every rule: the offline parser first, the model for what the parser does not
/// understand. One outcome per rule, in order; a rule the model cannot apply either stays as text
/// with the reason.
pub async fn read_rules(rules: &[String], table: &TableSchema, client: &LlmClient) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(rules.len());
    for rule in rules {
        let outcome = match parse_rule(rule, table) {
            Parsed::Constraint(constraint) => Outcome::Applied {
                rule: rule.clone(),
                constraint,
                source: Source::Parser,
            },
            Parsed::Refused(reason) => Outcome::Unapplied {
                rule: rule.clone(),
                reason,
            },
            Parsed::NotUnderstood(note) => ask_model(rule, table, &note, client).await,
        };
        outcomes.push(outcome);
    }
    outcomes
}

async fn ask_model(rule: &str, table: &TableSchema, note: &str, client: &LlmClient) -> Outcome {
    let unapplied = |reason: String| Outcome::Unapplied {
        rule: rule.to_owned(),
        reason,
    };
    let text = match prompt(rule, table, note, client.prompts()) {
        Ok(text) => text,
        Err(reason) => return unapplied(reason),
    };
    let configured = client.config().params.max_tokens;
    let capped = CallParams {
        max_tokens: Some(configured.map_or(ANSWER_MAX_TOKENS, |m| m.min(ANSWER_MAX_TOKENS))),
        ..CallParams::default()
    };
    let answer = client
        .structured_validated_with::<RuleAnswer>(STEP, &[Message::user(text)], &capped, |a| {
            validate_answer(a, table).map(|_| ())
        })
        .await;
    match answer.map(|s| validate_answer(&s.value, table)) {
        Ok(Ok(Reading::Constraint(constraint))) => Outcome::Applied {
            rule: rule.to_owned(),
            constraint,
            source: Source::Llm,
        },
        Ok(Ok(Reading::NotApplicable(reason))) => unapplied(format!("the model: {reason}")),
        Ok(Err(reason)) | Err(LlmError::Rejected { reason, .. }) => {
            unapplied(format!("the model's answer was rejected: {reason}"))
        }
        Err(err) => {
            tracing::warn!(%err, rule, "the model could not read a rule");
            unapplied(format!("the model could not be asked: {err}"))
        }
    }
}

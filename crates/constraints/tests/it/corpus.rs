//! Runs every case of `testdata/constraints/*.json` through the parser: each rule must become
//! the expected check, or stay unapplied with a reason containing the expected words.

use std::path::{Path, PathBuf};

use autocoder_constraints::{Constraint, Outcome, parse_rules, rules_as_text};
use autocoder_schema::{Check, ColumnSchema, DataType, TableSchema};
use serde::Deserialize;

#[derive(Deserialize)]
struct CorpusFile {
    table: String,
    columns: Vec<(String, DataType)>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    rule: String,
    column: Option<String>,
    check: Option<Check>,
    columns: Option<Vec<String>>,
    unapplied: Option<String>,
}

pub(crate) fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/constraints")
}

pub(crate) fn table_of(file: &CorpusFileRef) -> TableSchema {
    let mut table = TableSchema::new(file.0.table.clone());
    for (name, dtype) in &file.0.columns {
        let mut column = ColumnSchema::new(name.clone(), *dtype);
        column.nullable = true;
        table.columns.push(column);
    }
    table
}

/// A loaded corpus file (kept opaque to other test modules).
pub(crate) struct CorpusFileRef(CorpusFile);

fn load_all() -> Vec<(PathBuf, CorpusFileRef)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let file: CorpusFile =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, CorpusFileRef(file))
        })
        .collect()
}

#[test]
fn every_corpus_rule_becomes_its_expected_check_or_stays_unapplied() {
    let mut failures = Vec::new();
    let mut total = 0;
    let mut unapplied = 0;
    for (path, file) in load_all() {
        let table = table_of(&file);
        for case in &file.0.cases {
            total += 1;
            let outcome = parse_rules(std::slice::from_ref(&case.rule), &table).remove(0);
            let expected = match (&case.column, &case.check, &case.columns, &case.unapplied) {
                (Some(column), Some(check), None, None) => Ok(Constraint::Column {
                    column: column.clone(),
                    check: check.clone(),
                }),
                (None, None, Some(columns), None) => Ok(Constraint::UniqueTogether {
                    columns: columns.clone(),
                }),
                (None, None, None, Some(reason)) => Err(reason.to_lowercase()),
                _ => panic!("{}: malformed case {:?}", path.display(), case.rule),
            };
            let ok = match (&expected, &outcome) {
                (Ok(want), Outcome::Applied { constraint, .. }) => want == constraint,
                (Err(words), Outcome::Unapplied { reason, .. }) => {
                    unapplied += 1;
                    reason.to_lowercase().contains(words)
                }
                _ => false,
            };
            if !ok {
                failures.push(format!(
                    "{:?}\n    expected: {expected:?}\n    got:      {outcome:?}",
                    case.rule
                ));
            }
        }
    }
    assert!(total >= 60, "the corpus has only {total} rules");
    assert!(
        unapplied >= 15,
        "the corpus has only {unapplied} must-stay-unapplied rules"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} corpus rules failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_survives_as_text_applied_or_not() {
    for (_, file) in load_all() {
        let table = table_of(&file);
        let rules: Vec<String> = file.0.cases.iter().map(|c| c.rule.clone()).collect();
        let outcomes = parse_rules(&rules, &table);
        assert_eq!(outcomes.len(), rules.len());
        let text = rules_as_text(&outcomes);
        for (rule, outcome) in rules.iter().zip(&outcomes) {
            assert!(
                text.contains(&format!("{rule:?}")),
                "{rule} is missing from:\n{text}"
            );
            assert_eq!(outcome.rule(), rule);
        }
    }
}

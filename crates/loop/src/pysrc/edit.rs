//! Applies a model's code edits exactly. A logic fix comes back as `{find, replace}` pairs rather
//! than a whole new script, so working parts stay untouched and we can check, without another
//! model call, that each requested change really landed: an excerpt that isn't in the script, or
//! is in it twice, is reported, never guessed at. A short script is fixed by a whole new version
//! (small models copy 40 lines more reliably than an exact excerpt); it becomes one edit whose
//! excerpt is the whole script, so the same checks apply.

use serde::{Deserialize, Serialize};

use crate::protocol::Edit;

/// What became of one edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum EditOutcome {
    /// Found once and replaced.
    Applied {
        /// Whether the match needed trailing whitespace or line endings ignored.
        loose: bool,
    },
    /// The excerpt is not in the script.
    NotFound,
    /// The excerpt occurs more than once; nothing was changed.
    Ambiguous {
        /// How many times it occurs.
        occurrences: usize,
    },
    /// `find` is empty or equal to `replace`: nothing to do.
    Empty,
}

impl EditOutcome {
    /// Whether the edit changed the script.
    pub fn applied(&self) -> bool {
        matches!(self, EditOutcome::Applied { .. })
    }
}

/// The script after the edits, and what happened to each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditReport {
    /// The new script.
    pub code: String,
    /// One outcome per edit, in order.
    pub outcomes: Vec<EditOutcome>,
}

impl EditReport {
    /// Whether the script differs from the one the edits were applied to.
    pub fn changed(&self, before: &str) -> bool {
        self.code != before
    }

    /// Human-readable notes on the edits that were not applied, for the next prompt.
    pub fn problems(&self, edits: &[Edit]) -> Vec<String> {
        self.outcomes
            .iter()
            .zip(edits)
            .filter_map(|(outcome, edit)| {
                let first_line = edit.find.lines().next().unwrap_or("").trim();
                match outcome {
                    EditOutcome::NotFound => Some(format!(
                        "the excerpt starting `{first_line}` is not in the script; copy it exactly"
                    )),
                    EditOutcome::Ambiguous { occurrences } => Some(format!(
                        "the excerpt starting `{first_line}` occurs {occurrences} times; include more lines so it is unique"
                    )),
                    EditOutcome::Empty => Some("an edit had an empty or unchanged `find`".to_owned()),
                    EditOutcome::Applied { .. } => None,
                }
            })
            .collect()
    }
}

/// Applies `edits` in order, each to the result of the previous ones.
pub fn apply_edits(code: &str, edits: &[Edit]) -> EditReport {
    let mut current = code.to_owned();
    let mut outcomes = Vec::with_capacity(edits.len());
    for edit in edits {
        let (next, outcome) = apply_one(&current, edit);
        current = next;
        outcomes.push(outcome);
    }
    EditReport {
        code: current,
        outcomes,
    }
}

fn apply_one(code: &str, edit: &Edit) -> (String, EditOutcome) {
    if edit.find.is_empty() || edit.find == edit.replace {
        return (code.to_owned(), EditOutcome::Empty);
    }
    match code.matches(edit.find.as_str()).count() {
        1 => {
            return (
                code.replacen(edit.find.as_str(), &edit.replace, 1),
                EditOutcome::Applied { loose: false },
            );
        }
        0 => {}
        occurrences => return (code.to_owned(), EditOutcome::Ambiguous { occurrences }),
    }
    // Models often drop trailing spaces or change line endings; match line by line ignoring them.
    let lines: Vec<&str> = code.split_inclusive('\n').collect();
    let wanted: Vec<&str> = edit.find.lines().map(str::trim_end).collect();
    let wanted = trim_blank_edges(&wanted);
    if wanted.is_empty() {
        return (code.to_owned(), EditOutcome::NotFound);
    }
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&start| {
            start + wanted.len() <= lines.len()
                && wanted
                    .iter()
                    .enumerate()
                    .all(|(i, want)| lines[start + i].trim_end() == *want)
        })
        .collect();
    match starts.as_slice() {
        [] => (code.to_owned(), EditOutcome::NotFound),
        [start] => {
            let mut out: String = lines[..*start].concat();
            out.push_str(&edit.replace);
            let rest = &lines[start + wanted.len()..];
            if !edit.replace.ends_with('\n') && !rest.is_empty() {
                out.push('\n');
            }
            out.push_str(&rest.concat());
            (out, EditOutcome::Applied { loose: true })
        }
        many => (
            code.to_owned(),
            EditOutcome::Ambiguous {
                occurrences: many.len(),
            },
        ),
    }
}

fn trim_blank_edges<'a>(lines: &'a [&'a str]) -> &'a [&'a str] {
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |i| i + 1);
    &lines[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "import pandas as pd\n\ndef total(df):\n    return df['qty'].sum()  \n\ndef mean(df):\n    return df['qty'].mean()\n";

    fn edit(find: &str, replace: &str) -> Edit {
        Edit {
            find: find.into(),
            replace: replace.into(),
        }
    }

    #[test]
    fn an_exact_unique_excerpt_is_replaced() {
        let report = apply_edits(SCRIPT, &[edit("df['qty'].mean()", "df['qty'].median()")]);
        assert_eq!(report.outcomes, vec![EditOutcome::Applied { loose: false }]);
        assert!(report.code.contains("median()") && !report.code.contains("mean()"));
    }

    #[test]
    fn trailing_whitespace_differences_still_match_whole_lines() {
        let report = apply_edits(
            SCRIPT,
            &[edit(
                "def total(df):\n    return df['qty'].sum()\n",
                "def total(df):\n    return float(df['qty'].sum())\n",
            )],
        );
        assert_eq!(report.outcomes, vec![EditOutcome::Applied { loose: true }]);
        assert!(
            report
                .code
                .contains("return float(df['qty'].sum())\n\ndef mean"),
            "{}",
            report.code
        );
    }

    #[test]
    fn missing_and_ambiguous_excerpts_change_nothing_and_say_why() {
        let edits = [edit("df['price']", "x"), edit("df['qty']", "y")];
        let report = apply_edits(SCRIPT, &edits);
        assert_eq!(
            report.outcomes,
            vec![
                EditOutcome::NotFound,
                EditOutcome::Ambiguous { occurrences: 2 }
            ]
        );
        assert!(!report.changed(SCRIPT));
        let problems = report.problems(&edits);
        assert!(problems[0].contains("not in the script"));
        assert!(problems[1].contains("2 times"));
    }

    #[test]
    fn edits_apply_in_sequence() {
        let report = apply_edits(
            SCRIPT,
            &[
                edit("def mean", "def average"),
                edit("def average(df)", "def average(frame)"),
            ],
        );
        assert!(report.outcomes.iter().all(EditOutcome::applied));
        assert!(report.code.contains("def average(frame)"));
    }

    #[test]
    fn no_op_edits_are_reported_as_empty() {
        let report = apply_edits(SCRIPT, &[edit("", "x"), edit("def mean", "def mean")]);
        assert_eq!(
            report.outcomes,
            vec![EditOutcome::Empty, EditOutcome::Empty]
        );
        assert!(!report.changed(SCRIPT));
    }
}

//! Reads the columns a task declares for a CSV output ("write `by_region.csv` with the columns
//! region and revenue (2 decimals), one row per region"), so the harness can check the header
//! row the script writes on the samples against them: a check from the user's own words that
//! needs no expected value from the model.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::request::{IoType, Output};

/// "`report.csv` with the columns", "`by_day.tsv` with columns", "`out.csv` with column": the
/// output's name and the rest of the line.
static WITH_COLUMNS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)`?([A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:csv|tsv))`?\s+with\s+(?:the\s+)?(?:header\s+|columns?\s+)(?:named\s+)?([^\n]*)",
    )
    .ok()
});

/// Parenthesized remarks ("revenue (2 decimals)"), which may hold commas of their own.
static REMARK: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\([^()]*\)").ok());

/// A column name as the list spells it: an identifier, maybe in backticks or quotes.
static NAME: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"^[`"']?([A-Za-z_][A-Za-z0-9_]*)[`"']?$"#).ok());

/// Words that end the list where a column would stand ("…, revenue, sorted by revenue").
const NOT_COLUMNS: &[&str] = &[
    "a",
    "an",
    "and",
    "as",
    "at",
    "each",
    "for",
    "from",
    "grouped",
    "highest",
    "in",
    "including",
    "lowest",
    "one",
    "ordered",
    "per",
    "plus",
    "rounded",
    "sorted",
    "that",
    "the",
    "then",
    "where",
    "which",
    "with",
    "write",
    "written",
];

/// The columns a task declares for one CSV output, in the order it lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputColumns {
    /// The CSV output (`by_region.csv`), as declared.
    pub output: String,
    /// The columns, in the task's order.
    pub columns: Vec<String>,
    /// The task's words the columns were read from.
    pub phrase: String,
}

/// The columns `task` declares for its CSV outputs: "`<output>` with (the) columns a, b and c",
/// where the output is one of `outputs` (a file). Remarks in parentheses are passed over; the
/// list ends at a word that cannot be a column ("sorted", "one", "for", ...) or after a name
/// followed by other words ("signups sorted by signups" ends with `signups`). Nothing when the
/// words do not give at least one name.
pub(crate) fn declared_columns(task: &str, outputs: &[Output]) -> Vec<OutputColumns> {
    let (Some(with_columns), Some(remark)) = (WITH_COLUMNS.as_ref(), REMARK.as_ref()) else {
        return Vec::new();
    };
    let mut found: Vec<OutputColumns> = Vec::new();
    for captures in with_columns.captures_iter(task) {
        let (Some(name), Some(rest), Some(whole)) =
            (captures.get(1), captures.get(2), captures.get(0))
        else {
            continue;
        };
        let list = &rest.as_str()[..sentence_end(rest.as_str(), &[';', ':'])];
        let Some(output) = outputs
            .iter()
            .find(|o| o.ty == IoType::File && o.name.eq_ignore_ascii_case(name.as_str()))
        else {
            continue;
        };
        if found.iter().any(|f| f.output == output.name) {
            continue;
        }
        let columns = columns_of(&remark.replace_all(list, " "));
        if !columns.is_empty() {
            found.push(OutputColumns {
                output: output.name.clone(),
                columns,
                phrase: task[whole.start()..rest.start() + list.len()]
                    .trim()
                    .to_owned(),
            });
        }
    }
    found
}

/// Where the sentence `text` begins ends: the first of `stops` (`;`, `:`), or `.` before a
/// space or the end, outside parentheses ("(2.5 decimals)", "(HH:MM)", `by_region.csv` do not
/// end it).
pub(crate) fn sentence_end(text: &str, stops: &[char]) -> usize {
    let mut depth = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && stops.contains(&c) => return at,
            '.' if depth == 0 && chars.peek().is_none_or(|(_, next)| next.is_whitespace()) => {
                return at;
            }
            _ => {}
        }
    }
    text.len()
}

/// The names a list of columns gives ("region and revenue", "a, b, c, sorted by a").
fn columns_of(list: &str) -> Vec<String> {
    let Some(name) = NAME.as_ref() else {
        return Vec::new();
    };
    let mut columns: Vec<String> = Vec::new();
    let items = list
        .split(',')
        .flat_map(|item| item.split(" and "))
        .map(str::trim)
        .filter(|item| !item.is_empty());
    for item in items {
        let mut words = item.split_whitespace();
        let Some(first) = words.next() else { continue };
        if NOT_COLUMNS.contains(&first.to_ascii_lowercase().as_str()) {
            break;
        }
        let Some(column) = name.captures(first).and_then(|c| c.get(1)) else {
            break;
        };
        if columns.iter().any(|c| c == column.as_str()) {
            break;
        }
        columns.push(column.as_str().to_owned());
        if words.next().is_some() {
            break;
        }
    }
    columns
}

#[cfg(test)]
pub(crate) mod tests {
    use super::declared_columns;
    use crate::request::{IoType, Output};

    /// Declared outputs by name: a file when the name has an extension, else an int.
    pub(crate) fn outputs(names: &[&str]) -> Vec<Output> {
        names
            .iter()
            .map(|name| Output {
                name: (*name).to_owned(),
                ty: if name.contains('.') {
                    IoType::File
                } else {
                    IoType::Int
                },
                path: format!("/var/outputs/{name}"),
            })
            .collect()
    }

    fn columns(task: &str, names: &[&str]) -> Vec<Vec<String>> {
        declared_columns(task, &outputs(names))
            .into_iter()
            .map(|c| c.columns)
            .collect()
    }

    #[test]
    fn the_list_ends_where_the_words_stop_being_columns() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Write by_region.csv with the columns region and revenue (rounded to 2 decimals), one row per region, highest first.",
                &["region", "revenue"],
            ),
            (
                "Write out.csv with columns country, customers, revenue (2 decimals), sorted by revenue descending.",
                &["country", "customers", "revenue"],
            ),
            (
                "Write out.csv with columns domain, signups sorted by signups descending then domain.",
                &["domain", "signups"],
            ),
            (
                "Write out.csv with columns carrier, name (the airline's name, empty when the carrier is not in the airlines table), flights, mean_dep_delay, sorted by mean_dep_delay",
                &["carrier", "name", "flights", "mean_dep_delay"],
            ),
            (
                "Write out.csv with columns date (YYYY-MM-DD) and events, one row per local day",
                &["date", "events"],
            ),
            (
                "Write out.csv with columns student, score, grade in input order (the score as given)",
                &["student", "score", "grade"],
            ),
            (
                "Write out.csv with columns id, name, email, updated_at for the kept rows",
                &["id", "name", "email", "updated_at"],
            ),
            (
                "Write `out.csv` with the columns `sku`, `name` and `order_qty`; sorted by sku",
                &["sku", "name", "order_qty"],
            ),
        ];
        for (task, expected) in cases {
            assert_eq!(
                columns(task, &["out.csv", "by_region.csv", "n"]),
                vec![expected.to_vec()],
                "{task}"
            );
        }
    }

    #[test]
    fn only_a_declared_file_output_with_named_columns_counts() {
        // Not a declared output, or not a file.
        assert!(columns("Write other.csv with columns a, b.", &["out.csv"]).is_empty());
        // Nothing that can be a column name.
        assert!(columns("Write out.csv with columns sorted by date.", &["out.csv"]).is_empty());
        assert!(columns("Each file has the columns date, amount.", &["by_team"]).is_empty());
        // The first mention of an output counts; names are the output's as declared.
        let found = declared_columns(
            "Write OUT.csv with columns x, y. Later, out.csv with columns z.",
            &outputs(&["out.csv"]),
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].output, "out.csv");
        assert_eq!(found[0].columns, ["x", "y"]);
        assert_eq!(found[0].phrase, "OUT.csv with columns x, y");
    }

    #[test]
    fn remarks_may_hold_what_ends_a_sentence_elsewhere() {
        let task = "Write out.csv with columns start (HH:MM; local), amount (2.5 or more), kind: one per row.";
        let found = declared_columns(task, &outputs(&["out.csv"]));
        assert_eq!(found[0].columns, ["start", "amount", "kind"]);
        assert_eq!(
            found[0].phrase,
            "out.csv with columns start (HH:MM; local), amount (2.5 or more), kind"
        );
    }

    /// Every task of the suite that lists a CSV output's columns is read as its reference
    /// solution writes them on the samples: the check cannot fail a right script there.
    #[test]
    fn the_suites_tasks_are_read_as_their_reference_outputs_have_them() {
        let tasks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals/tasks");
        let mut checked = 0;
        for task in std::fs::read_dir(&tasks).unwrap() {
            let dir = task.unwrap().path();
            let spec: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.join("task.json")).unwrap()).unwrap();
            let declared: Vec<Output> = spec["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    let (name, ty) = d.as_str().unwrap().split_once(':').unwrap();
                    Output {
                        name: name.to_owned(),
                        ty: if ty == "file" {
                            IoType::File
                        } else {
                            IoType::Str
                        },
                        path: String::new(),
                    }
                })
                .collect();
            for found in declared_columns(spec["prompt"].as_str().unwrap(), &declared) {
                let written = dir.join("expected/sample").join(&found.output);
                let text = std::fs::read_to_string(&written).unwrap();
                let header: Vec<&str> = text.lines().next().unwrap_or("").split(',').collect();
                assert_eq!(
                    header,
                    found.columns,
                    "{}: {}",
                    written.display(),
                    found.phrase
                );
                checked += 1;
            }
        }
        // 19 of the 24 tasks list the columns of a CSV output.
        assert_eq!(checked, 19);
    }
}

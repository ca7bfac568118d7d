//! Reads the order a task asks for a CSV output's rows ("write `domains.csv` with columns
//! domain, signups sorted by signups descending then domain"), so the harness can check the
//! rows the script writes on the samples: a check from the user's own words, like the header
//! row's ([`crate::output_columns`]), that needs no expected value from the model.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::output_columns::sentence_end;
use crate::request::{IoType, Output};

/// "sorted by", "ordered by", "sort by": what follows is the order.
static SORTED_BY: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:sorted|ordered|sort|order)\s+by\s+").ok());

/// Words a sort key's phrase may end with, and whether they mean descending.
const DIRECTIONS: &[(&str, bool)] = &[
    ("descending", true),
    ("desc", true),
    ("decreasing", true),
    ("ascending", false),
    ("asc", false),
    ("increasing", false),
];

/// The most words a key's name may take ("category name", "mean dep delay").
const KEY_WORDS: usize = 3;

/// One key of the order: the task's words for the column, and the direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortKey {
    /// The words naming the column (`["category", "name"]`); the harness matches them to the
    /// header row the script wrote.
    pub words: Vec<String>,
    /// Largest first.
    pub descending: bool,
}

/// The order a task asks for one CSV output's rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputOrder {
    /// The CSV output (`domains.csv`), as declared.
    pub output: String,
    /// The keys, first the one that decides.
    pub keys: Vec<SortKey>,
    /// The task's words the order was read from ("sorted by signups descending then domain").
    pub phrase: String,
}

/// The order `task` asks for each of its CSV outputs: "sorted by a [descending] [then b ...]"
/// in the sentence that names the output (from its name to the next full stop). The phrase
/// ends at a comma, a colon, a semicolon, a parenthesis or " and "; keys are split on "then";
/// a key of more than [`KEY_WORDS`] words, or with words that are not names, ends the list
/// (what is read is checked; what is not is not). Nothing for an output with no such words.
pub(crate) fn declared_order(task: &str, outputs: &[Output]) -> Vec<OutputOrder> {
    let Some(sorted_by) = SORTED_BY.as_ref() else {
        return Vec::new();
    };
    let lower = task.to_ascii_lowercase();
    let mut found = Vec::new();
    for output in outputs
        .iter()
        .filter(|o| o.ty == IoType::File && is_csv(&o.name))
    {
        let name = output.name.to_ascii_lowercase();
        let order = lower.match_indices(&name).find_map(|(at, _)| {
            let sentence = &task[at..at + sentence_end(&task[at..], &[])];
            let by = sorted_by.find(sentence)?;
            let rest = &sentence[by.end()..];
            let phrase = &rest[..phrase_end(rest)];
            let keys = keys_of(phrase);
            (!keys.is_empty()).then(|| OutputOrder {
                output: output.name.clone(),
                keys,
                phrase: sentence[by.start()..by.end() + phrase.len()]
                    .trim()
                    .to_owned(),
            })
        });
        found.extend(order);
    }
    found
}

fn is_csv(name: &str) -> bool {
    std::path::Path::new(name)
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("csv") || ext.eq_ignore_ascii_case("tsv"))
}

/// Where the words of an order end: a comma, colon, semicolon, parenthesis, full stop or
/// " and ".
fn phrase_end(text: &str) -> usize {
    let punctuation = text.find([',', ';', ':', '(', '.']).unwrap_or(text.len());
    let and = text.find(" and ").unwrap_or(text.len());
    punctuation.min(and)
}

/// The keys of "signups descending then domain", "species then sex", "category name".
fn keys_of(phrase: &str) -> Vec<SortKey> {
    let mut keys = Vec::new();
    for part in phrase.split(" then ") {
        let mut words: Vec<String> = part
            .split_whitespace()
            .map(|w| w.trim_matches(['`', '"', '\'']).to_owned())
            .filter(|w| !w.is_empty())
            .collect();
        if words.first().is_some_and(|w| w.eq_ignore_ascii_case("by")) {
            words.remove(0);
        }
        let mut descending = false;
        if let Some(last) = words.last()
            && let Some((_, down)) = DIRECTIONS
                .iter()
                .find(|(w, _)| last.eq_ignore_ascii_case(w))
        {
            descending = *down;
            words.pop();
        }
        let names = words
            .iter()
            .all(|w| w.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if words.is_empty() || words.len() > KEY_WORDS || !names {
            break;
        }
        keys.push(SortKey { words, descending });
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::declared_order;
    use crate::output_columns::tests::outputs;

    /// Each output's keys as "words" or "words desc".
    fn orders(task: &str, names: &[&str]) -> Vec<(String, Vec<String>)> {
        declared_order(task, &outputs(names))
            .into_iter()
            .map(|o| {
                let keys = o
                    .keys
                    .iter()
                    .map(|k| {
                        let words = k.words.join(" ");
                        if k.descending {
                            format!("{words} desc")
                        } else {
                            words
                        }
                    })
                    .collect();
                (o.output, keys)
            })
            .collect()
    }

    #[test]
    fn the_order_is_read_from_the_sentence_that_names_the_output() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Write out.csv with columns domain, signups sorted by signups descending then domain.",
                &["signups desc", "domain"],
            ),
            (
                "Write out.csv with columns country, customers, revenue (2 decimals), sorted by revenue descending, and the number of orders as unmatched.",
                &["revenue desc"],
            ),
            (
                "Write out.csv with columns category, orders, revenue (2 decimals), sorted by category name. Items whose ...",
                &["category name"],
            ),
            (
                "Write out.csv with columns species, sex, count, mean_body_mass_g sorted by species then sex, and write the species as heaviest.",
                &["species", "sex"],
            ),
            (
                "Write out.csv with csv.writer: the header order_id, customer_id, name, then one row per kept order, sorted by order_id: its order_id, customer_id.",
                &["order_id"],
            ),
            (
                "Write `out.csv` with columns user, sessions, clicks, sorted by `user`, and the total as total_sessions.",
                &["user"],
            ),
        ];
        for (task, expected) in cases {
            assert_eq!(
                orders(task, &["out.csv", "n"]),
                vec![(
                    "out.csv".to_owned(),
                    expected.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>()
                )],
                "{task}"
            );
        }
    }

    #[test]
    fn an_order_outside_the_outputs_sentence_or_not_of_names_is_not_read() {
        // "sorted by time" describes the clicks, not the output.
        let clicks = "Group each user's clicks into sessions: sorted by time, a click starts a new session when the gap has passed. Write sessions.csv with columns user, sessions, clicks, sorted by user, and the total as total_sessions.";
        assert_eq!(
            orders(clicks, &["sessions.csv", "total_sessions"]),
            vec![("sessions.csv".to_owned(), vec!["user".to_owned()])]
        );
        for task in [
            "Write out.csv with columns a, b.",
            "Write out.csv with columns a, b, one row per a; the rows are sorted by the time of their first click after the gap.",
            "Write out.csv with columns a, b, sorted by a-b.",
            "Sort the input by date. Write out.csv with columns a, b.",
            "Write report.csv with the columns a and b, sorted: one row per a.",
        ] {
            assert_eq!(orders(task, &["out.csv", "report.csv"]), vec![], "{task}");
        }
        // Only a declared CSV file.
        assert_eq!(orders("Write out.json sorted by a.", &["out.json"]), vec![]);
    }
}

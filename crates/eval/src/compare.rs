//! Comparing a script's outputs with the expected ones, with the tolerances real outputs need:
//! numbers within an absolute or relative error, CSV files whatever the column order (and row
//! order, when the task says rows have no order), the many spellings of a missing value, JSON
//! whatever the key order, date-times whatever their spelling of UTC.

use std::collections::BTreeMap;
use std::path::Path;

use autocoder_loop::request::IoType;
use autocoder_sandbox::Value;
use serde::{Deserialize, Serialize};

/// How one output is compared. Written in `task.json` as `{"kind": "csv", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Compare {
    /// Numbers (and durations, in seconds): equal within `abs` or `rel`.
    Number {
        /// Absolute tolerance.
        #[serde(default = "default_abs")]
        abs: f64,
        /// Relative tolerance.
        #[serde(default = "default_rel")]
        rel: f64,
    },
    /// Exactly equal values (integers, booleans).
    Exact,
    /// Text, line by line with trailing spaces and blank lines at the end ignored.
    Text {
        /// Letters' case ignored.
        #[serde(default)]
        ignore_case: bool,
        /// The lines as a multiset: their order does not matter.
        #[serde(default)]
        unordered_lines: bool,
    },
    /// The same instant written either way (`T` or space, `Z` or `+00:00`, zero fractions).
    Datetime,
    /// A CSV table.
    Csv(CsvRule),
    /// JSON text (a file, or a `str` output holding JSON).
    Json(JsonRule),
    /// A directory: the same file names, each compared by its own rule.
    Dir {
        /// `file name -> rule`; other files by their extension.
        #[serde(default)]
        files: BTreeMap<String, Compare>,
    },
}

fn default_abs() -> f64 {
    1e-6
}

fn default_rel() -> f64 {
    1e-6
}

/// How a CSV table is compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CsvRule {
    /// Rows have no order: both tables are sorted (by `keys`, else by every column).
    #[serde(default)]
    pub unordered: bool,
    /// The columns that identify a row (the sort order of an unordered table).
    #[serde(default)]
    pub keys: Vec<String>,
    /// Absolute tolerance of numeric cells.
    #[serde(default = "default_abs")]
    pub abs: f64,
    /// Relative tolerance of numeric cells.
    #[serde(default = "default_rel")]
    pub rel: f64,
    /// Text cells' case ignored.
    #[serde(default)]
    pub ignore_case: bool,
}

impl Default for CsvRule {
    fn default() -> Self {
        CsvRule {
            unordered: false,
            keys: Vec::new(),
            abs: default_abs(),
            rel: default_rel(),
            ignore_case: false,
        }
    }
}

/// How JSON is compared: objects by key, arrays in order unless `unordered_arrays`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonRule {
    /// Absolute tolerance of numbers.
    #[serde(default = "default_abs")]
    pub abs: f64,
    /// Relative tolerance of numbers.
    #[serde(default = "default_rel")]
    pub rel: f64,
    /// Arrays as multisets.
    #[serde(default)]
    pub unordered_arrays: bool,
}

impl Default for JsonRule {
    fn default() -> Self {
        JsonRule {
            abs: default_abs(),
            rel: default_rel(),
            unordered_arrays: false,
        }
    }
}

impl Compare {
    /// The rule an output of this name and type gets when the task names none.
    pub fn default_for(name: &str, ty: IoType) -> Self {
        match ty {
            IoType::Float | IoType::Timedelta => Compare::Number {
                abs: default_abs(),
                rel: default_rel(),
            },
            IoType::Int | IoType::Bool => Compare::Exact,
            IoType::Datetime => Compare::Datetime,
            IoType::Str => Compare::Text {
                ignore_case: false,
                unordered_lines: false,
            },
            IoType::File => Self::for_file(name),
            IoType::Dir => Compare::Dir {
                files: BTreeMap::new(),
            },
        }
    }

    fn for_file(name: &str) -> Self {
        let extension = Path::new(name)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("csv") => Compare::Csv(CsvRule::default()),
            Some("json") => Compare::Json(JsonRule::default()),
            _ => Compare::Text {
                ignore_case: false,
                unordered_lines: false,
            },
        }
    }

    /// `Ok(())` when `actual` matches `expected`; else what differs, briefly.
    pub fn check(&self, expected: &Value, actual: &Value) -> Result<(), String> {
        match self {
            Compare::Number { abs, rel } => {
                let (e, a) = (number(expected)?, number(actual)?);
                close(e, a, *abs, *rel)
                    .then_some(())
                    .ok_or_else(|| format!("expected {e}, got {a}"))
            }
            Compare::Exact => (expected == actual)
                .then_some(())
                .ok_or_else(|| format!("expected {}, got {}", show(expected), show(actual))),
            Compare::Text {
                ignore_case,
                unordered_lines,
            } => text_equal(
                &text_of(expected)?,
                &text_of(actual)?,
                *ignore_case,
                *unordered_lines,
            ),
            Compare::Datetime => {
                let (e, a) = (text_of(expected)?, text_of(actual)?);
                (canonical_datetime(&e) == canonical_datetime(&a))
                    .then_some(())
                    .ok_or_else(|| format!("expected {e}, got {a}"))
            }
            Compare::Csv(rule) => csv_equal(&text_of(expected)?, &text_of(actual)?, rule),
            Compare::Json(rule) => json_equal(&text_of(expected)?, &text_of(actual)?, rule),
            Compare::Dir { files } => dir_equal(expected, actual, files),
        }
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::Str(s) | Value::Datetime(s) => format!("{s:?}"),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Timedelta(us) => format!("{}s", *us as f64 / 1e6),
        Value::File(p) | Value::Dir(p) => p.display().to_string(),
    }
}

fn number(value: &Value) -> Result<f64, String> {
    match value {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        Value::Timedelta(us) => Ok(*us as f64 / 1e6),
        other => Err(format!("{} is not a number", show(other))),
    }
}

fn close(expected: f64, actual: f64, abs: f64, rel: f64) -> bool {
    if expected.is_nan() || actual.is_nan() {
        return expected.is_nan() && actual.is_nan();
    }
    (expected - actual).abs() <= abs.max(rel * expected.abs())
}

/// The text of a value: a string's, or a file's contents.
fn text_of(value: &Value) -> Result<String, String> {
    match value {
        Value::Str(s) | Value::Datetime(s) => Ok(s.clone()),
        Value::File(path) => std::fs::read(path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|err| format!("cannot read {}: {err}", path.display())),
        other => Err(format!("{} is not text", show(other))),
    }
}

fn lines(text: &str, ignore_case: bool) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let l = l.trim_end();
            if ignore_case {
                l.to_lowercase()
            } else {
                l.to_owned()
            }
        })
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

fn text_equal(
    expected: &str,
    actual: &str,
    ignore_case: bool,
    unordered: bool,
) -> Result<(), String> {
    let (mut e, mut a) = (lines(expected, ignore_case), lines(actual, ignore_case));
    if unordered {
        e.sort();
        a.sort();
    }
    if e.len() != a.len() {
        return Err(format!("expected {} lines, got {}", e.len(), a.len()));
    }
    match e.iter().zip(&a).position(|(x, y)| x != y) {
        None => Ok(()),
        Some(i) => Err(format!(
            "line {}: expected {:?}, got {:?}",
            i + 1,
            e[i],
            a[i]
        )),
    }
}

/// `2024-05-01T13:45:00Z`, `2024-05-01 13:45:00+00:00` and `2024-05-01T13:45:00.000000+00:00`
/// all become `2024-05-01T13:45:00+00:00`; a date alone is midnight.
pub(crate) fn canonical_datetime(text: &str) -> String {
    let t = text.trim();
    let (date, rest) = if t.len() > 10 {
        t.split_at(10)
    } else {
        (t, "")
    };
    let rest = rest.trim_start_matches(['T', ' ']);
    let (time, offset) = match rest.find(['+', '-', 'Z']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let offset = match offset {
        "Z" | "+0000" => "+00:00".to_owned(),
        o if o.len() == 5 => format!("{}:{}", &o[..3], &o[3..]),
        o => o.to_owned(),
    };
    let mut time = if time.is_empty() {
        "00:00:00".to_owned()
    } else {
        time.to_owned()
    };
    if time.len() == 5 {
        time.push_str(":00");
    }
    if time.contains('.') {
        time = time.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    format!("{date}T{time}{offset}")
}

/// The spellings of a missing cell pandas and people write.
fn is_missing(cell: &str) -> bool {
    matches!(
        cell.trim().to_ascii_lowercase().as_str(),
        "" | "nan" | "none" | "null" | "na" | "n/a" | "<na>" | "nat"
    )
}

/// Cells equal as numbers within tolerance, as booleans, as missing, or as text.
fn cell_equal(expected: &str, actual: &str, abs: f64, rel: f64, ignore_case: bool) -> bool {
    let (e, a) = (expected.trim(), actual.trim());
    if is_missing(e) || is_missing(a) {
        return is_missing(e) && is_missing(a);
    }
    if let (Ok(x), Ok(y)) = (e.parse::<f64>(), a.parse::<f64>()) {
        return close(x, y, abs, rel);
    }
    let bools = ["true", "false"];
    if bools.contains(&e.to_ascii_lowercase().as_str()) {
        return e.eq_ignore_ascii_case(a);
    }
    if ignore_case {
        e.to_lowercase() == a.to_lowercase()
    } else {
        e == a
    }
}

type Table = (Vec<String>, Vec<Vec<String>>);

fn read_csv(text: &str, which: &str) -> Result<Table, String> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|err| format!("{which} CSV: {err}"))?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|err| format!("{which} CSV: {err}"))?;
        if record.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        rows.push(record.iter().map(str::to_owned).collect());
    }
    Ok((header, rows))
}

/// A sort key for a cell: numbers rounded so tolerable differences sort alike.
fn sort_key(cell: &str) -> String {
    let c = cell.trim();
    if is_missing(c) {
        return String::new();
    }
    match c.parse::<f64>() {
        Ok(x) => format!("{x:+024.6}"),
        Err(_) => c.to_lowercase(),
    }
}

fn csv_equal(expected: &str, actual: &str, rule: &CsvRule) -> Result<(), String> {
    let (e_header, mut e_rows) = read_csv(expected, "expected")?;
    let (a_header, a_rows) = read_csv(actual, "actual")?;
    if e_header.len() == 1 && e_header[0].is_empty() && a_header.iter().all(String::is_empty) {
        return Ok(()); // both empty files
    }
    let mut columns = Vec::new();
    for name in &e_header {
        let Some(i) = a_header.iter().position(|h| h.eq_ignore_ascii_case(name)) else {
            return Err(format!(
                "no column {name:?} (columns: {})",
                a_header.join(", ")
            ));
        };
        columns.push(i);
    }
    if a_header.len() != e_header.len() {
        return Err(format!(
            "expected columns {}, got {}",
            e_header.join(", "),
            a_header.join(", ")
        ));
    }
    // The actual rows with columns in the expected order.
    let mut a_rows: Vec<Vec<String>> = a_rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .map(|&i| row.get(i).cloned().unwrap_or_default())
                .collect()
        })
        .collect();
    if e_rows.len() != a_rows.len() {
        return Err(format!(
            "expected {} rows, got {}",
            e_rows.len(),
            a_rows.len()
        ));
    }
    if rule.unordered {
        let mut order: Vec<usize> = Vec::new();
        for key in &rule.keys {
            match e_header.iter().position(|h| h == key) {
                Some(i) => order.push(i),
                None => return Err(format!("the rule's key {key:?} is not an expected column")),
            }
        }
        let rest: Vec<usize> = (0..e_header.len()).filter(|i| !order.contains(i)).collect();
        order.extend(rest);
        let key = |row: &Vec<String>| -> Vec<String> {
            order
                .iter()
                .map(|&i| sort_key(row.get(i).map_or("", String::as_str)))
                .collect()
        };
        e_rows.sort_by_key(key);
        a_rows.sort_by_key(key);
    }
    for (n, (e, a)) in e_rows.iter().zip(&a_rows).enumerate() {
        for (i, name) in e_header.iter().enumerate() {
            let (x, y) = (
                e.get(i).map_or("", String::as_str),
                a.get(i).map_or("", String::as_str),
            );
            if !cell_equal(x, y, rule.abs, rule.rel, rule.ignore_case) {
                return Err(format!(
                    "row {} column {name:?}: expected {x:?}, got {y:?}",
                    n + 1
                ));
            }
        }
    }
    Ok(())
}

fn json_equal(expected: &str, actual: &str, rule: &JsonRule) -> Result<(), String> {
    let e: serde_json::Value =
        serde_json::from_str(expected).map_err(|err| format!("expected JSON: {err}"))?;
    let a: serde_json::Value =
        serde_json::from_str(actual).map_err(|err| format!("not JSON: {err}"))?;
    json_value_equal(&e, &a, rule, "$")
}

fn json_value_equal(
    expected: &serde_json::Value,
    actual: &serde_json::Value,
    rule: &JsonRule,
    at: &str,
) -> Result<(), String> {
    use serde_json::Value as J;
    match (expected, actual) {
        (J::Number(x), J::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            close(x, y, rule.abs, rule.rel)
                .then_some(())
                .ok_or_else(|| format!("{at}: expected {x}, got {y}"))
        }
        (J::Object(x), J::Object(y)) => {
            let (xk, yk): (Vec<_>, Vec<_>) = (x.keys().collect(), y.keys().collect());
            if xk != yk {
                return Err(format!("{at}: expected keys {xk:?}, got {yk:?}"));
            }
            for (k, v) in x {
                json_value_equal(v, &y[k], rule, &format!("{at}.{k}"))?;
            }
            Ok(())
        }
        (J::Array(x), J::Array(y)) => {
            if x.len() != y.len() {
                return Err(format!("{at}: expected {} items, got {}", x.len(), y.len()));
            }
            if rule.unordered_arrays {
                let mut used = vec![false; y.len()];
                for (i, item) in x.iter().enumerate() {
                    let found = y.iter().enumerate().find(|(j, other)| {
                        !used[*j] && json_value_equal(item, other, rule, at).is_ok()
                    });
                    match found {
                        Some((j, _)) => used[j] = true,
                        None => return Err(format!("{at}[{i}]: {item} has no match")),
                    }
                }
                return Ok(());
            }
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                json_value_equal(p, q, rule, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (x, y) if x == y => Ok(()),
        (x, y) => Err(format!("{at}: expected {x}, got {y}")),
    }
}

fn dir_equal(
    expected: &Value,
    actual: &Value,
    files: &BTreeMap<String, Compare>,
) -> Result<(), String> {
    let (Value::Dir(e), Value::Dir(a)) = (expected, actual) else {
        return Err(format!("expected a directory, got {}", show(actual)));
    };
    let (e_names, a_names) = (file_names(e)?, file_names(a)?);
    if e_names != a_names {
        return Err(format!("expected files {e_names:?}, got {a_names:?}"));
    }
    for name in &e_names {
        let rule = files
            .get(name)
            .cloned()
            .unwrap_or_else(|| Compare::for_file(name));
        rule.check(&Value::File(e.join(name)), &Value::File(a.join(name)))
            .map_err(|err| format!("{name}: {err}"))?;
    }
    Ok(())
}

/// The files in `dir` (not recursive), sorted; a directory output holds files.
fn file_names(dir: &Path) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|err| format!("cannot list {}: {err}", dir.display()))?;
    for entry in entries.flatten() {
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv_rule(unordered: bool, keys: &[&str]) -> Compare {
        Compare::Csv(CsvRule {
            unordered,
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            abs: 0.01,
            ..CsvRule::default()
        })
    }

    fn text(s: &str) -> Value {
        Value::Str(s.to_owned())
    }

    #[test]
    fn numbers_match_within_tolerance_only() {
        let rule = Compare::Number {
            abs: 0.01,
            rel: 0.0,
        };
        assert!(
            rule.check(&Value::Float(25.5), &Value::Float(25.504))
                .is_ok()
        );
        assert!(rule.check(&Value::Float(25.5), &Value::Int(25)).is_err());
        assert!(rule.check(&Value::Float(3.0), &Value::Int(3)).is_ok());
        let rule = Compare::Number {
            abs: 0.0,
            rel: 1e-3,
        };
        assert!(
            rule.check(&Value::Float(1e6), &Value::Float(1e6 + 999.0))
                .is_ok()
        );
        assert!(
            rule.check(&Value::Float(1e6), &Value::Float(1e6 + 1001.0))
                .is_err()
        );
    }

    #[test]
    fn csv_ignores_column_order_number_spelling_and_missing_spelling() {
        let e = text("region,total,note\nnorth,3.0,\nsouth,2.5,x\n");
        let a = text("total,region,note\n3,north,NaN\n2.50,south,x\n");
        assert_eq!(csv_rule(false, &[]).check(&e, &a), Ok(()));
    }

    #[test]
    fn csv_row_order_matters_unless_unordered() {
        let e = text("k,v\na,1\nb,2\n");
        let a = text("k,v\nb,2\na,1\n");
        assert!(csv_rule(false, &[]).check(&e, &a).is_err());
        assert_eq!(csv_rule(true, &["k"]).check(&e, &a), Ok(()));
    }

    #[test]
    fn csv_reports_the_first_wrong_cell() {
        let e = text("k,v\na,1\nb,2\n");
        let a = text("k,v\na,1\nb,2.5\n");
        let err = csv_rule(false, &[]).check(&e, &a).unwrap_err();
        assert!(err.contains("row 2 column \"v\""), "{err}");
        let short = text("k,v\na,1\n");
        assert!(
            csv_rule(false, &[])
                .check(&e, &short)
                .unwrap_err()
                .contains("2 rows")
        );
        let other = text("k,w\na,1\nb,2\n");
        assert!(
            csv_rule(false, &[])
                .check(&e, &other)
                .unwrap_err()
                .contains("no column")
        );
    }

    #[test]
    fn csv_with_a_quoted_comma_compares_by_field() {
        let e = text("name,n\n\"Smith, J\",1\n");
        assert_eq!(
            csv_rule(false, &[]).check(&e, &text("n,name\n1,\"Smith, J\"\n")),
            Ok(())
        );
        assert!(
            csv_rule(false, &[])
                .check(&e, &text("name,n\nSmith,1\n"))
                .is_err()
        );
    }

    #[test]
    fn json_ignores_key_order_and_compares_numbers_with_tolerance() {
        let rule = Compare::Json(JsonRule {
            abs: 0.01,
            ..JsonRule::default()
        });
        let e = text(r#"{"a": 1.0, "b": [1, 2], "c": {"d": null}}"#);
        assert_eq!(
            rule.check(&e, &text(r#"{"c": {"d": null}, "b": [1, 2.001], "a": 1}"#)),
            Ok(())
        );
        assert!(
            rule.check(&e, &text(r#"{"a": 1, "b": [2, 1], "c": {"d": null}}"#))
                .is_err()
        );
        assert!(rule.check(&e, &text(r#"{"a": 1, "b": [1, 2]}"#)).is_err());
        assert!(rule.check(&e, &text("not json")).is_err());
        let unordered = Compare::Json(JsonRule {
            unordered_arrays: true,
            ..JsonRule::default()
        });
        assert_eq!(
            unordered.check(&text("[1, 2, 2]"), &text("[2, 1, 2]")),
            Ok(())
        );
        assert!(
            unordered
                .check(&text("[1, 2, 2]"), &text("[2, 1, 1]"))
                .is_err()
        );
    }

    #[test]
    fn datetimes_compare_as_instants_spelled_alike() {
        assert_eq!(
            canonical_datetime("2024-05-01 13:45:00Z"),
            "2024-05-01T13:45:00+00:00"
        );
        assert_eq!(
            canonical_datetime("2024-05-01T13:45:00.000+0000"),
            "2024-05-01T13:45:00+00:00"
        );
        assert_eq!(canonical_datetime("2024-05-01"), "2024-05-01T00:00:00");
        assert_eq!(
            canonical_datetime("2024-05-01T13:45"),
            "2024-05-01T13:45:00"
        );
        let e = Value::Datetime("2024-05-01T13:45:00+02:00".into());
        assert!(
            Compare::Datetime
                .check(&e, &Value::Datetime("2024-05-01 13:45:00+02:00".into()))
                .is_ok()
        );
        assert!(
            Compare::Datetime
                .check(&e, &Value::Datetime("2024-05-01T13:45:00+00:00".into()))
                .is_err()
        );
    }

    #[test]
    fn text_ignores_trailing_space_and_may_ignore_line_order() {
        let rule = Compare::Text {
            ignore_case: false,
            unordered_lines: false,
        };
        assert_eq!(rule.check(&text("a\nb\n"), &text("a  \nb\n\n")), Ok(()));
        assert!(rule.check(&text("a\nb\n"), &text("b\na\n")).is_err());
        let unordered = Compare::Text {
            ignore_case: true,
            unordered_lines: true,
        };
        assert_eq!(unordered.check(&text("a\nB\n"), &text("b\nA")), Ok(()));
    }

    #[test]
    fn directories_need_the_same_files_with_matching_contents() {
        let e = tempfile::tempdir().unwrap();
        let a = tempfile::tempdir().unwrap();
        std::fs::write(e.path().join("x.csv"), "k,v\na,1\n").unwrap();
        std::fs::write(a.path().join("x.csv"), "v,k\n1.0,a\n").unwrap();
        let rule = Compare::Dir {
            files: BTreeMap::new(),
        };
        let (ev, av) = (Value::Dir(e.path().into()), Value::Dir(a.path().into()));
        assert_eq!(rule.check(&ev, &av), Ok(()));
        std::fs::write(a.path().join("y.csv"), "k\n").unwrap();
        assert!(rule.check(&ev, &av).unwrap_err().contains("expected files"));
    }

    #[test]
    fn defaults_follow_the_type_and_extension() {
        assert_eq!(Compare::default_for("n", IoType::Int), Compare::Exact);
        assert!(matches!(
            Compare::default_for("r.csv", IoType::File),
            Compare::Csv(_)
        ));
        assert!(matches!(
            Compare::default_for("r.JSON", IoType::File),
            Compare::Json(_)
        ));
        assert!(matches!(
            Compare::default_for("r.txt", IoType::File),
            Compare::Text { .. }
        ));
    }
}

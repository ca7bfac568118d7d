//! Evaluates constraints over every record of a file, streaming: per check, how many rows
//! violate it and the first few row numbers with their values. Values are read the way the
//! emitted pandas reader reads them (same missing-value markers, same types), and checks follow
//! Pandera's semantics (missing values pass every check except `not_null`; `unique` reports every
//! occurrence of a repeated value, ignoring missing ones; uniqueness over several columns treats
//! missing values as equal).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use autocoder_profile::{Dialect, NullSpec as ProfileNulls, ScanOptions, scan};
use autocoder_schema::{Check, ColumnSchema, DataType, Scalar, TableSchema};
use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::{Constraint, ConstraintError, NullSpec};

/// How many example rows a result keeps.
pub const EXAMPLES: usize = 5;

/// One violating row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The 1-based data row (the header is not counted), as pandas' index + 1.
    pub row: u64,
    /// The field's text (for several columns: `a=1, b=x`).
    pub value: String,
}

/// What one constraint found over the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The constraint.
    pub constraint: Constraint,
    /// Its human reading (`quantity > 0`).
    pub description: String,
    /// Rows read.
    pub rows: u64,
    /// Rows that violate it.
    pub violations: u64,
    /// Values that are not of the column's type (pandas could not read the file with the schema's
    /// dtypes); they are not counted as violations.
    pub unreadable: u64,
    /// The first violating rows, in file order.
    pub examples: Vec<Violation>,
}

/// A value typed like pandas would read it.
#[derive(Debug, Clone, PartialEq)]
enum Val<'a> {
    Num(f64),
    Bool(bool),
    Time(String),
    Text(&'a str),
}

impl Val<'_> {
    fn compare(&self, other: &Val<'_>) -> Option<Ordering> {
        match (self, other) {
            (Val::Num(a), Val::Num(b)) => a.partial_cmp(b),
            (Val::Bool(a), Val::Bool(b)) => Some(a.cmp(b)),
            (Val::Time(a), Val::Time(b)) => Some(a.cmp(b)),
            (Val::Text(a), Val::Text(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    fn key(&self) -> String {
        match self {
            Val::Num(f) => format!("{f}"),
            Val::Bool(b) => b.to_string(),
            Val::Time(t) => t.clone(),
            Val::Text(s) => (*s).to_owned(),
        }
    }
}

/// Reads `field` as a value of `dtype`; `None` when it is not one.
fn typed(field: &str, dtype: DataType) -> Option<Val<'_>> {
    match dtype {
        DataType::Integer => field.trim().parse::<i64>().ok().map(|i| Val::Num(i as f64)),
        DataType::Float => field.trim().parse::<f64>().ok().map(Val::Num),
        DataType::Boolean => match field.trim() {
            "True" | "TRUE" | "true" => Some(Val::Bool(true)),
            "False" | "FALSE" | "false" => Some(Val::Bool(false)),
            _ => None,
        },
        DataType::Date | DataType::Datetime => time_key(field).map(Val::Time),
        DataType::String | DataType::Empty => Some(Val::Text(field)),
    }
}

/// A sortable key for an ISO 8601 date or datetime (`YYYY-MM-DDTHH:MM:SS.fffffffff`), ignoring
/// any UTC offset.
fn time_key(text: &str) -> Option<String> {
    let t = text.trim();
    let b = t.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if !(digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10))
    {
        return None;
    }
    let mut key = format!("{}T", &t[..10]);
    let rest = &t[10..];
    let time = rest.strip_prefix(['T', ' ']).unwrap_or("");
    let mut clock = [0u32; 3];
    let mut frac = String::new();
    let mut parts = time.split(['Z', '+']).next().unwrap_or("").splitn(2, '.');
    let hms = parts.next().unwrap_or("");
    // A trailing "-hh:mm" offset after the seconds.
    let hms = hms.get(..8.min(hms.len())).unwrap_or("");
    for (slot, part) in clock
        .iter_mut()
        .zip(hms.split(':').filter(|p| !p.is_empty()))
    {
        *slot = part.parse().ok()?;
    }
    if let Some(f) = parts.next() {
        frac = f.chars().take_while(char::is_ascii_digit).collect();
    }
    let _ = write!(
        key,
        "{:02}:{:02}:{:02}.{frac:0<9}",
        clock[0], clock[1], clock[2]
    );
    Some(key)
}

fn bound(scalar: &Scalar, dtype: DataType) -> Option<Val<'_>> {
    match scalar {
        Scalar::Int(i) => Some(Val::Num(*i as f64)),
        Scalar::Float(f) => Some(Val::Num(*f)),
        Scalar::Bool(b) => Some(Val::Bool(*b)),
        Scalar::Str(s) if dtype.is_temporal() => time_key(s).map(Val::Time),
        Scalar::Str(s) => Some(Val::Text(s)),
    }
}

/// A compiled test for one constraint.
#[derive(Debug, Clone)]
enum Test {
    Value(Check, Option<Regex>),
    NotNull,
    Unique,
    UniqueTogether,
}

#[derive(Debug, Clone)]
struct Plan {
    constraint: Constraint,
    columns: Vec<(usize, DataType)>,
    test: Test,
}

#[derive(Debug, Clone, Default)]
struct KeyState {
    count: u64,
    rows: Vec<Violation>,
}

#[derive(Debug, Clone, Default)]
struct State {
    violations: u64,
    unreadable: u64,
    examples: Vec<Violation>,
    seen: HashMap<String, KeyState>,
}

impl State {
    fn violate(&mut self, row: u64, value: &str) {
        self.violations += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(Violation {
                row,
                value: value.to_owned(),
            });
        }
    }
}

/// Evaluates constraints record by record. Clone a fresh one per chunk of a file and
/// [`Evaluator::merge`] the chunks (in any order) to evaluate in parallel.
#[derive(Debug, Clone)]
pub struct Evaluator {
    plans: Vec<Plan>,
    states: Vec<State>,
    nulls: NullSpec,
    rows: u64,
}

impl Evaluator {
    /// Prepares `constraints` on `table` for a file whose header is `header`.
    pub fn new(
        table: &TableSchema,
        constraints: &[Constraint],
        header: &[String],
    ) -> Result<Self, ConstraintError> {
        let index = |name: &str| -> Result<(usize, DataType), ConstraintError> {
            let position = header.iter().position(|h| h == name);
            let column = table.column(name);
            match (position, column) {
                (Some(i), Some(c)) => Ok((i, c.dtype)),
                _ => Err(ConstraintError::MissingColumn {
                    column: name.to_owned(),
                    header: header.to_vec(),
                }),
            }
        };
        let mut plans = Vec::with_capacity(constraints.len());
        for constraint in constraints {
            let columns = constraint
                .columns()
                .into_iter()
                .map(index)
                .collect::<Result<Vec<_>, _>>()?;
            let test = match constraint {
                Constraint::UniqueTogether { .. } => Test::UniqueTogether,
                Constraint::Column {
                    check: Check::NotNull,
                    ..
                } => Test::NotNull,
                Constraint::Column {
                    check: Check::Unique,
                    ..
                } => Test::Unique,
                Constraint::Column { check, .. } => {
                    let regex = match check {
                        Check::StrMatches { pattern } => {
                            Regex::new(&format!("^(?:{pattern})")).ok()
                        }
                        Check::StrContains { pattern } => Regex::new(pattern).ok(),
                        _ => None,
                    };
                    Test::Value(check.clone(), regex)
                }
            };
            plans.push(Plan {
                constraint: constraint.clone(),
                columns,
                test,
            });
        }
        let states = vec![State::default(); plans.len()];
        Ok(Self {
            plans,
            states,
            nulls: NullSpec::from_read_options(&table.read),
            rows: 0,
        })
    }

    /// An evaluator with the same checks and nothing counted yet (for another chunk).
    #[must_use]
    pub fn fresh(&self) -> Self {
        Self {
            plans: self.plans.clone(),
            states: vec![State::default(); self.plans.len()],
            nulls: self.nulls.clone(),
            rows: 0,
        }
    }

    /// Checks one record; `row` is its 1-based data row number. Missing trailing fields count
    /// as missing values.
    pub fn push<S: AsRef<str>>(&mut self, row: u64, fields: &[S]) {
        self.push_with(row, |i| fields.get(i).map_or("", AsRef::as_ref));
    }

    /// Checks one CSV record; `row` is its 1-based data row number.
    pub fn push_record(&mut self, row: u64, record: &csv::StringRecord) {
        self.push_with(row, |i| record.get(i).unwrap_or(""));
    }

    /// Moves every row number counted so far by `offset` (a chunk's rows were counted from 1).
    pub fn shift_rows(&mut self, offset: u64) {
        for state in &mut self.states {
            for v in &mut state.examples {
                v.row += offset;
            }
            for seen in state.seen.values_mut() {
                for v in &mut seen.rows {
                    v.row += offset;
                }
            }
        }
    }

    fn push_with<'r>(&mut self, row: u64, get: impl Fn(usize) -> &'r str) {
        self.rows += 1;
        for (plan, state) in self.plans.iter().zip(self.states.iter_mut()) {
            match &plan.test {
                Test::UniqueTogether => {
                    let mut key = String::new();
                    let mut shown = Vec::with_capacity(plan.columns.len());
                    for ((i, dtype), name) in plan.columns.iter().zip(plan.constraint.columns()) {
                        let field = get(*i);
                        if self.nulls.is_null(field) {
                            key.push('\u{0}');
                        } else {
                            key.push_str(
                                &typed(field, *dtype).map_or_else(|| field.to_owned(), |v| v.key()),
                            );
                        }
                        key.push('\u{1f}');
                        shown.push(format!("{name}={field}"));
                    }
                    remember(state, key, row, shown.join(", "));
                }
                test => {
                    let (i, dtype) = plan.columns[0];
                    let field = get(i);
                    let null = self.nulls.is_null(field);
                    match test {
                        Test::NotNull if null => state.violate(row, field),
                        Test::NotNull | Test::UniqueTogether => {}
                        _ if null => {}
                        Test::Unique => match typed(field, dtype) {
                            Some(Val::Num(f)) if f.is_nan() => {}
                            Some(v) => remember(state, v.key(), row, field.to_owned()),
                            None => state.unreadable += 1,
                        },
                        Test::Value(check, regex) => match typed(field, dtype) {
                            Some(Val::Num(f)) if f.is_nan() => {}
                            Some(v) => {
                                if !passes(check, regex.as_ref(), &v, field, dtype) {
                                    state.violate(row, field);
                                }
                            }
                            None => state.unreadable += 1,
                        },
                    }
                }
            }
        }
    }

    /// Adds the counts of `other` (another chunk of the same file).
    pub fn merge(&mut self, other: Evaluator) {
        self.rows += other.rows;
        for (mine, theirs) in self.states.iter_mut().zip(other.states) {
            mine.violations += theirs.violations;
            mine.unreadable += theirs.unreadable;
            mine.examples.extend(theirs.examples);
            mine.examples.sort_by_key(|v| v.row);
            mine.examples.truncate(EXAMPLES);
            for (key, seen) in theirs.seen {
                let entry = mine.seen.entry(key).or_default();
                entry.count += seen.count;
                entry.rows.extend(seen.rows);
                entry.rows.sort_by_key(|v| v.row);
                entry.rows.truncate(EXAMPLES);
            }
        }
    }

    /// The result per constraint, in the order given.
    pub fn finish(self) -> Vec<CheckResult> {
        let rows = self.rows;
        self.plans
            .into_iter()
            .zip(self.states)
            .map(|(plan, mut state)| {
                if matches!(plan.test, Test::Unique | Test::UniqueTogether) {
                    let mut examples = Vec::new();
                    for seen in state.seen.values().filter(|s| s.count > 1) {
                        state.violations += seen.count;
                        examples.extend(seen.rows.iter().cloned());
                    }
                    examples.sort_by_key(|v| v.row);
                    examples.truncate(EXAMPLES);
                    state.examples = examples;
                }
                CheckResult {
                    description: plan.constraint.describe(),
                    constraint: plan.constraint,
                    rows,
                    violations: state.violations,
                    unreadable: state.unreadable,
                    examples: state.examples,
                }
            })
            .collect()
    }
}

fn remember(state: &mut State, key: String, row: u64, value: String) {
    let entry = state.seen.entry(key).or_default();
    entry.count += 1;
    if entry.rows.len() < EXAMPLES {
        entry.rows.push(Violation { row, value });
    }
}

fn passes(
    check: &Check,
    regex: Option<&Regex>,
    value: &Val<'_>,
    field: &str,
    dtype: DataType,
) -> bool {
    let cmp = |s: &Scalar| bound(s, dtype).and_then(|b| value.compare(&b));
    let equal = |s: &Scalar| cmp(s) == Some(Ordering::Equal);
    match check {
        Check::Eq { value } => equal(value),
        Check::Ne { value } => !equal(value),
        Check::Gt { value } => cmp(value) == Some(Ordering::Greater),
        Check::Ge { value } => matches!(cmp(value), Some(Ordering::Greater | Ordering::Equal)),
        Check::Lt { value } => cmp(value) == Some(Ordering::Less),
        Check::Le { value } => matches!(cmp(value), Some(Ordering::Less | Ordering::Equal)),
        Check::InRange {
            min,
            max,
            include_min,
            include_max,
        } => {
            let lo = match cmp(min) {
                Some(Ordering::Greater) => true,
                Some(Ordering::Equal) => *include_min,
                _ => false,
            };
            let hi = match cmp(max) {
                Some(Ordering::Less) => true,
                Some(Ordering::Equal) => *include_max,
                _ => false,
            };
            lo && hi
        }
        Check::Isin { values } => values.iter().any(equal),
        Check::Notin { values } => !values.iter().any(equal),
        Check::StrMatches { .. } | Check::StrContains { .. } => {
            regex.is_some_and(|r| r.is_match(field))
        }
        Check::StrStartswith { prefix } => field.starts_with(prefix.as_str()),
        Check::StrEndswith { suffix } => field.ends_with(suffix.as_str()),
        Check::StrLength { min, max } => {
            let n = field.chars().count() as u64;
            min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m)
        }
        Check::Pattern { pattern } => pattern.matches(field),
        Check::Unique | Check::NotNull => true,
    }
}

/// Every check a schema states, as constraints: each column's checks, `not_null` for
/// non-nullable columns, `unique` for unique ones, and each set of columns unique together.
pub fn schema_constraints(table: &TableSchema) -> Vec<Constraint> {
    let mut out = Vec::new();
    for column in &table.columns {
        let ColumnSchema {
            name,
            nullable,
            unique,
            checks,
            ..
        } = column;
        let mut push = |check: Check| {
            out.push(Constraint::Column {
                column: name.clone(),
                check,
            });
        };
        if !nullable {
            push(Check::NotNull);
        }
        if *unique {
            push(Check::Unique);
        }
        for check in checks {
            push(check.clone());
        }
    }
    for columns in &table.unique_together {
        out.push(Constraint::UniqueTogether {
            columns: columns.clone(),
        });
    }
    out
}

/// How [`evaluate_path_with`] reads the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalOptions {
    /// Worker threads; `0` uses every core.
    pub threads: usize,
    /// Bytes per chunk (each chunk is evaluated by one thread).
    pub chunk_bytes: usize,
}

impl Default for EvalOptions {
    fn default() -> Self {
        let scan = ScanOptions::default();
        Self {
            threads: scan.threads,
            chunk_bytes: scan.chunk_bytes,
        }
    }
}

/// Reads the CSV file at `path` the way `table.read` says and evaluates `constraints` over every
/// record: one parallel pass with the profiler's reader ([`autocoder_profile::scan`]), one
/// [`Evaluator`] per chunk, merged in file order.
pub fn evaluate_path(
    path: &Path,
    table: &TableSchema,
    constraints: &[Constraint],
) -> Result<Vec<CheckResult>, ConstraintError> {
    evaluate_path_with(path, table, constraints, EvalOptions::default())
}

/// [`evaluate_path`] with explicit threads and chunk size.
pub fn evaluate_path_with(
    path: &Path,
    table: &TableSchema,
    constraints: &[Constraint],
    eval: EvalOptions,
) -> Result<Vec<CheckResult>, ConstraintError> {
    let header = read_header(path, table)?;
    let evaluator = Evaluator::new(table, constraints, &header)?;
    let dialect = Dialect {
        delimiter: u8::try_from(table.read.delimiter).unwrap_or(b','),
        quote: b'"',
        has_header: table.read.has_header,
        bom: table.read.bom,
    };
    let options = ScanOptions {
        dialect: Some(dialect),
        nulls: ProfileNulls::new(table.read.keep_default_na, table.read.na_values.clone()),
        threads: eval.threads,
        chunk_bytes: eval.chunk_bytes,
        ..ScanOptions::default()
    };
    let scanned = scan(
        path,
        &options,
        |_| evaluator.fresh(),
        |chunk: &mut Evaluator, record| {
            chunk.push_with(record.row_in_chunk(), |i| record.field(i).unwrap_or(""));
        },
    )?;
    let mut total = evaluator;
    for mut chunk in scanned.chunks {
        chunk.value.shift_rows(chunk.first_row - 1);
        total.merge(chunk.value);
    }
    tracing::debug!(
        rows = scanned.rows,
        checks = constraints.len(),
        "evaluated constraints"
    );
    Ok(total.finish())
}

/// The header as the file has it, or the schema's column names for files without one.
fn read_header(path: &Path, table: &TableSchema) -> Result<Vec<String>, ConstraintError> {
    if !table.read.has_header {
        return Ok(table.columns.iter().map(|c| c.name.clone()).collect());
    }
    let file = std::fs::File::open(path).map_err(|source| ConstraintError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(u8::try_from(table.read.delimiter).unwrap_or(b','))
        .has_headers(true)
        .flexible(true)
        .from_reader(file);
    let header = reader.headers().map_err(|source| ConstraintError::Csv {
        path: path.to_owned(),
        row: 0,
        source,
    })?;
    Ok(header
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').to_owned())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_keys_sort_like_timestamps() {
        assert_eq!(
            time_key("2024-01-02").unwrap(),
            "2024-01-02T00:00:00.000000000"
        );
        assert_eq!(
            time_key("2024-01-02 03:04").unwrap(),
            "2024-01-02T03:04:00.000000000"
        );
        assert_eq!(
            time_key("2024-01-02T03:04:05.5Z").unwrap(),
            "2024-01-02T03:04:05.500000000"
        );
        assert!(time_key("01/02/2024").is_none());
    }
}

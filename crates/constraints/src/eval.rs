//! Evaluates constraints record by record: per check, how many rows violate it and the first
//! few row numbers with their values. Values are read the way the emitted pandas reader reads
//! them (same missing-value markers, same types), and checks follow Pandera's semantics (missing
//! values pass every check except `not_null`; `unique` reports every occurrence of a repeated
//! value, ignoring missing ones; uniqueness over several columns treats missing values as equal).

use std::collections::HashMap;

use autocoder_schema::{Check, TableSchema};
use serde::{Deserialize, Serialize};

use crate::typed::{ColumnType, Compiled, Key, Val, typed};
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

/// A compiled test for one constraint.
#[derive(Debug, Clone)]
enum Test {
    Value(Compiled),
    NotNull,
    Unique,
    UniqueTogether,
}

#[derive(Debug, Clone)]
struct Plan {
    constraint: Constraint,
    columns: Vec<(usize, ColumnType)>,
    test: Test,
}

/// How often a value was seen: its first row, and for repeated values up to [`EXAMPLES`] rows
/// and the text.
#[derive(Debug, Clone, Default)]
struct KeyState {
    count: u64,
    first: u64,
    /// Later rows, only for repeated values (no allocation for unique ones).
    more: Vec<u64>,
}

impl KeyState {
    fn rows(&self) -> impl Iterator<Item = u64> + '_ {
        std::iter::once(self.first).chain(self.more.iter().copied())
    }

    fn absorb(&mut self, other: KeyState) {
        if self.count == 0 {
            *self = other;
            return;
        }
        let mut rows: Vec<u64> = self.rows().chain(other.rows()).collect();
        rows.sort_unstable();
        rows.truncate(EXAMPLES);
        self.first = rows[0];
        self.more = rows[1..].to_vec();
        self.count += other.count;
    }
}

#[derive(Debug, Clone, Default)]
struct State {
    violations: u64,
    unreadable: u64,
    examples: Vec<Violation>,
    seen: HashMap<Key, KeyState>,
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
        let index = |name: &str| -> Result<(usize, ColumnType), ConstraintError> {
            let position = header.iter().position(|h| h == name);
            let column = table.column(name);
            match (position, column) {
                (Some(i), Some(c)) => {
                    Ok((i, ColumnType::new(c.dtype, c.datetime_format.as_deref())))
                }
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
                    Test::Value(Compiled::new(check, columns[0].1.dtype))
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
                seen.first += offset;
                for r in &mut seen.more {
                    *r += offset;
                }
            }
        }
    }

    pub(crate) fn push_with<'r>(&mut self, row: u64, get: impl Fn(usize) -> &'r str) {
        self.rows += 1;
        for (plan, state) in self.plans.iter().zip(self.states.iter_mut()) {
            match &plan.test {
                Test::UniqueTogether => {
                    let mut key = String::new();
                    for (i, column) in &plan.columns {
                        let field = get(*i);
                        if !key.is_empty() {
                            key.push(SEPARATOR);
                        }
                        if self.nulls.is_null(field) {
                            key.push(MISSING);
                        } else {
                            match typed(field, column) {
                                Some(Val::Text(_)) | None => key.push_str(field),
                                Some(v) => key.push_str(&v.key().display()),
                            }
                        }
                    }
                    remember(state, Key::Text(key), row);
                }
                test => {
                    let (i, column) = &plan.columns[0];
                    let i = *i;
                    let field = get(i);
                    let null = self.nulls.is_null(field);
                    match test {
                        Test::NotNull if null => state.violate(row, field),
                        Test::NotNull | Test::UniqueTogether => {}
                        _ if null => {}
                        Test::Unique => match typed(field, column) {
                            Some(v) if v.is_nan() => {}
                            Some(v) => remember(state, v.key(), row),
                            None => state.unreadable += 1,
                        },
                        Test::Value(compiled) => match typed(field, column) {
                            Some(v) if v.is_nan() => {}
                            Some(v) => {
                                if !compiled.passes(&v, field) {
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
                mine.seen.entry(key).or_default().absorb(seen);
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
                    for (key, seen) in state.seen.iter().filter(|(_, s)| s.count > 1) {
                        state.violations += seen.count;
                        let value = shown(key, &plan);
                        examples.extend(seen.rows().map(|row| Violation {
                            row,
                            value: value.clone(),
                        }));
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

/// Separates the columns' values in the key of a combination (missing values are [`MISSING`]).
const SEPARATOR: char = '\u{1f}';
const MISSING: char = '\u{0}';

/// Counts one occurrence of `key`. Only repeated values get a list of rows.
fn remember(state: &mut State, key: Key, row: u64) {
    let entry = state.seen.entry(key).or_default();
    entry.count += 1;
    if entry.count == 1 {
        entry.first = row;
    } else if entry.more.len() + 1 < EXAMPLES {
        entry.more.push(row);
    }
}

/// How a repeated value is shown: the value, or `a=1, b=x` for a combination.
fn shown(key: &Key, plan: &Plan) -> String {
    match (&plan.test, key) {
        (Test::UniqueTogether, Key::Text(joined)) => plan
            .constraint
            .columns()
            .iter()
            .zip(joined.split(SEPARATOR))
            .map(|(name, part)| {
                let part = if part.starts_with(MISSING) { "" } else { part };
                format!("{name}={part}")
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => key.display(),
    }
}

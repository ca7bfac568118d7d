//! Reads what a rule says about its column (`must be positive`, `is one of a, b`, `looks like an
//! email`) into a typed check, given the column's type.

use autocoder_schema::{Check, DataType, Scalar, TableSchema};

use crate::compare::{Cmp, read_cmp, sign_word};
use crate::strings::{length, named_pattern, text_ops};
use crate::text::{Cursor, is_quoted, words};
use crate::values::{list_items, scalar_for, typed_values};

/// What a predicate means.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Meaning {
    /// A check on one column.
    Check(Check),
    /// The values (of one column, or of several together) are unique.
    Unique,
}

/// Why a predicate gave no check.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fail {
    /// Understood, and deliberately not applied (a missing bound, a permission, a negation
    /// without a built-in check). The model is not asked either.
    Refused(String),
    /// Not understood by the parser; the model may read it.
    NotUnderstood(String),
}

pub(crate) type Read = Result<Meaning, Fail>;

const NEGATIONS: &[&str] = &[
    "can never",
    "may never",
    "could never",
    "need not",
    "needn't",
    "does not need to",
    "doesn't need to",
    "do not need to",
    "don't need to",
    "must not",
    "mustn't",
    "should not",
    "shouldn't",
    "shall not",
    "cannot",
    "can't",
    "can not",
    "may not",
    "will not",
    "won't",
    "is not",
    "isn't",
    "are not",
    "aren't",
    "does not",
    "doesn't",
    "do not",
    "don't",
    "never",
    "not",
    "no",
];
const MODALS: &[&str] = &[
    "must",
    "should",
    "shall",
    "has to",
    "have to",
    "needs to",
    "need to",
    "is required to",
    "are required to",
    "is expected to",
    "are expected to",
    "will",
    "always",
    "is",
    "are",
    "be",
    "has",
    "have",
    "contain only",
    "only",
    "all",
    "each",
    "a value",
    "values",
    "value",
    "a number",
    "numbers",
    "an integer",
    "integers",
    "a decimal",
    "a date",
    "a string",
    "lies",
    "lie",
    "falls",
    "fall",
    "stays",
    "stay",
    "remains",
    "remain",
];
const PERMISSIONS: &[&str] = &[
    "may",
    "can",
    "could",
    "might",
    "is allowed to",
    "are allowed to",
];

/// Reads `predicate` (the rule after its column) for a column of type `dtype` (`None` when the
/// rule names several columns: then only uniqueness makes sense).
pub(crate) fn read_predicate(
    predicate: &str,
    dtype: Option<DataType>,
    table: &TableSchema,
) -> Read {
    let mut c = Cursor::new(predicate);
    let mut negated = false;
    loop {
        if c.eat_any(NEGATIONS).is_some() {
            negated = !negated;
        } else if c.eat_any(MODALS).is_none() {
            break;
        }
    }
    if !negated && c.eat_any(PERMISSIONS).is_some() {
        return Err(Fail::Refused(
            "it says what is allowed, not what is required; there is nothing to check".to_owned(),
        ));
    }
    let body = strip_fillers(c.rest());
    if let Some(read) = uniqueness(&body, negated) {
        return read;
    }
    let Some(dtype) = dtype else {
        return Err(Fail::Refused(
            "it names several columns; write one rule per column (only uniqueness spans columns)"
                .to_owned(),
        ));
    };
    if let Some(read) = nullness(&body, negated) {
        return read;
    }
    if let Some(read) = named_pattern(&body, negated, dtype) {
        return read;
    }
    if let Some(read) = length(&c, negated) {
        return read;
    }
    if let Some(read) = text_ops(&mut c.clone(), negated) {
        return read;
    }
    if let Some(read) = membership(&mut c.clone(), negated, dtype, table) {
        return read;
    }
    if let Some(cmp) = sign_word(&body).or_else(|| read_cmp(&mut c.clone())) {
        return comparison(cmp, negated, dtype, table);
    }
    let rest = c.rest_orig().trim();
    if is_quoted(rest) && list_items(rest).len() >= 2 {
        // "'pending', 'shipped' or 'delivered'": a list without "one of".
        let values = typed_values(&list_items(rest), dtype, table).map_err(Fail::Refused)?;
        return Ok(Meaning::Check(if negated {
            Check::Notin { values }
        } else {
            Check::Isin { values }
        }));
    }
    if is_quoted(rest) || (dtype == DataType::Boolean && matches!(body.as_str(), "true" | "false"))
    {
        return comparison(Cmp::Eq(rest.to_owned()), negated, dtype, table);
    }
    if VAGUE.iter().any(|w| words(&body).iter().any(|b| b == w)) {
        return Err(Fail::Refused(
            "it names no bound (a range, a limit or a list), and none is invented".to_owned(),
        ));
    }
    Err(Fail::NotUnderstood(format!(
        "the parser does not know the wording `{rest}`"
    )))
}

/// Words that promise a bound without giving one.
const VAGUE: &[&str] = &[
    "range",
    "reasonable",
    "realistic",
    "sensible",
    "valid",
    "plausible",
    "normal",
    "percentage",
    "bounded",
    "limited",
    "between",
    "within",
];

fn strip_fillers(body: &str) -> String {
    let mut b = body.trim().to_owned();
    for tail in [
        " for every row",
        " for all rows",
        " for each row",
        " in every row",
        " in all rows",
        " across rows",
        " across all rows",
        " at all times",
        " in the file",
        " in the data",
    ] {
        if let Some(stem) = b.strip_suffix(tail) {
            b = stem.to_owned();
        }
    }
    b
}

fn uniqueness(body: &str, negated: bool) -> Option<Read> {
    let unique_words = [
        "unique",
        "distinct",
        "all different",
        "different for every row",
        "unique values",
        "distinct values",
        "a unique identifier",
        "a unique key",
        "a unique id",
        "the primary key",
        "a primary key",
        "primary key",
        "unique together",
        "unique as a pair",
        "jointly unique",
        "unique in combination",
        "unique per row",
    ];
    let duplicate_words = [
        "duplicated",
        "duplicates",
        "duplicate",
        "duplicate values",
        "repeated",
        "repeat",
        "repeats",
    ];
    if unique_words.contains(&body) {
        return Some(if negated {
            Err(Fail::Refused(
                "it allows repeated values; there is nothing to check".to_owned(),
            ))
        } else {
            Ok(Meaning::Unique)
        });
    }
    if duplicate_words.contains(&body) {
        return Some(if negated {
            Ok(Meaning::Unique)
        } else {
            Err(Fail::Refused(
                "it requires repeated values, which no built-in check expresses".to_owned(),
            ))
        });
    }
    None
}

fn nullness(body: &str, negated: bool) -> Option<Read> {
    let missing = [
        "null",
        "empty",
        "missing",
        "blank",
        "na",
        "nan",
        "none",
        "nulls",
        "null values",
        "missing values",
        "empty values",
        "blanks",
        "left empty",
        "left blank",
    ];
    let present = [
        "required",
        "mandatory",
        "present",
        "always present",
        "provided",
        "populated",
        "filled",
        "filled in",
        "non-null",
        "nonnull",
        "non null",
        "non-empty",
        "nonempty",
        "non empty",
        "not-null",
        "specified",
        "known",
        "a required field",
        "a mandatory field",
        "required field",
    ];
    if missing.contains(&body) {
        return Some(if negated {
            Ok(Meaning::Check(Check::NotNull))
        } else {
            Err(Fail::Refused(
                "it requires values to be missing, which is not a useful check".to_owned(),
            ))
        });
    }
    if present.contains(&body) {
        return Some(if negated {
            Err(Fail::Refused(
                "it makes the column optional, which is already the default".to_owned(),
            ))
        } else {
            Ok(Meaning::Check(Check::NotNull))
        });
    }
    None
}

fn membership(
    c: &mut Cursor<'_>,
    negated: bool,
    dtype: DataType,
    table: &TableSchema,
) -> Option<Read> {
    let exclude = c
        .eat_any(&[
            "none of",
            "not one of",
            "not any of",
            "anything but",
            "anything except",
            "not in",
        ])
        .is_some();
    if !exclude {
        let interval = dtype.is_ordered()
            && c.peek_any(&["in [", "in ("])
            && list_items(&c.rest_orig()[2..]).len() == 2
            && !dtype.eq(&DataType::String);
        if interval {
            return None;
        }
        let phrase = c.eat_any(&[
            "one of the following values",
            "one of the following",
            "one of the values",
            "one of",
            "any of",
            "either",
            "among",
            "in the set",
            "in the list",
            "from the set",
            "from the list",
            "restricted to",
            "limited to",
            "in",
        ])?;
        let bare_in = phrase == 13;
        let listed = list_items(c.rest_orig()).len() >= 2
            || c.rest_orig().trim_start().starts_with(['{', '[', '(']);
        if bare_in && !listed {
            // "in stock", "in the past": not a list.
            return None;
        }
    }
    let items = list_items(c.rest_orig());
    let values = match typed_values(&items, dtype, table) {
        Ok(values) => values,
        Err(reason) => return Some(Err(Fail::Refused(reason))),
    };
    Some(Ok(Meaning::Check(if exclude ^ negated {
        Check::Notin { values }
    } else {
        Check::Isin { values }
    })))
}

fn comparison(cmp: Cmp, negated: bool, dtype: DataType, table: &TableSchema) -> Read {
    let cmp = if negated { cmp.negate() } else { Some(cmp) };
    let Some(cmp) = cmp else {
        return Err(Fail::Refused(
            "no built-in check says a value lies outside a range".to_owned(),
        ));
    };
    let v = |s: &str| {
        // A number stays a number on a text column, so the type check refuses it there.
        if dtype == DataType::String
            && !is_quoted(s)
            && let Some(n) = crate::values::number(s)
        {
            return Ok(n);
        }
        scalar_for(s, dtype, table).map_err(Fail::Refused)
    };
    let check = match cmp {
        Cmp::Gt(s) => Check::Gt { value: v(&s)? },
        Cmp::Ge(s) => Check::Ge { value: v(&s)? },
        Cmp::Lt(s) => Check::Lt { value: v(&s)? },
        Cmp::Le(s) => Check::Le { value: v(&s)? },
        Cmp::Eq(s) => Check::Eq { value: v(&s)? },
        Cmp::Ne(s) => Check::Ne { value: v(&s)? },
        Cmp::Between {
            lo,
            hi,
            include_lo,
            include_hi,
        } => Check::InRange {
            min: v(&lo)?,
            max: v(&hi)?,
            include_min: include_lo,
            include_max: include_hi,
        },
    };
    if let Check::InRange {
        min: Scalar::Str(_),
        ..
    } = &check
        && dtype == DataType::String
    {
        return Err(Fail::Refused(
            "a range of text values compares letters, not numbers; give the allowed values instead"
                .to_owned(),
        ));
    }
    Ok(Meaning::Check(check))
}

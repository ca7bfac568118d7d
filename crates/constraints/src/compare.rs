//! Comparisons as written in rules: `at least 5`, `between 1 and 10`, `100 or less`,
//! `positive`, `in [0, 1)`; with their negations (`not more than 5` is `at most 5`).

use crate::text::Cursor;

/// A comparison whose operands are still text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cmp {
    Gt(String),
    Ge(String),
    Lt(String),
    Le(String),
    Eq(String),
    Ne(String),
    Between {
        lo: String,
        hi: String,
        include_lo: bool,
        include_hi: bool,
    },
}

impl Cmp {
    /// The comparison that holds exactly when this one does not; `None` for ranges (there is no
    /// built-in "outside a range" check).
    pub(crate) fn negate(self) -> Option<Cmp> {
        Some(match self {
            Cmp::Gt(v) => Cmp::Le(v),
            Cmp::Ge(v) => Cmp::Lt(v),
            Cmp::Lt(v) => Cmp::Ge(v),
            Cmp::Le(v) => Cmp::Gt(v),
            Cmp::Eq(v) => Cmp::Ne(v),
            Cmp::Ne(v) => Cmp::Eq(v),
            Cmp::Between { .. } => return None,
        })
    }
}

const GE: &[&str] = &[
    "greater than or equal to",
    "greater than or equal",
    "greater or equal to",
    "more than or equal to",
    "larger than or equal to",
    "bigger than or equal to",
    "at least",
    "a minimum of",
    "minimum of",
    "minimum",
    "min",
    "on or after",
    "at or after",
    "at or above",
    ">=",
    "=>",
    "≥",
];
const LE: &[&str] = &[
    "less than or equal to",
    "less than or equal",
    "less or equal to",
    "smaller than or equal to",
    "at most",
    "a maximum of",
    "maximum of",
    "maximum",
    "max",
    "up to",
    "on or before",
    "at or before",
    "at or below",
    "<=",
    "=<",
    "≤",
];
const GT: &[&str] = &[
    "strictly greater than",
    "strictly more than",
    "greater than",
    "more than",
    "larger than",
    "bigger than",
    "higher than",
    "longer than",
    "later than",
    "above",
    "over",
    "exceeding",
    "exceeds",
    "exceed",
    "after",
    ">",
];
const LT: &[&str] = &[
    "strictly less than",
    "strictly smaller than",
    "less than",
    "smaller than",
    "lower than",
    "fewer than",
    "shorter than",
    "earlier than",
    "below",
    "under",
    "before",
    "<",
];
const EQ: &[&str] = &["equal to", "equals", "equal", "exactly", "==", "="];
const NE: &[&str] = &["different from", "unequal to", "!=", "<>", "≠"];
const AT_LEAST_SUFFIX: &[&str] = &[
    " or more",
    " or greater",
    " or higher",
    " or above",
    " or later",
    " or longer",
    " and above",
    " and up",
    " and over",
    " or over",
];
const AT_MOST_SUFFIX: &[&str] = &[
    " or less",
    " or fewer",
    " or lower",
    " or below",
    " or earlier",
    " or shorter",
    " and below",
    " and under",
    " or under",
];

type Make = fn(String) -> Cmp;

/// Reads a comparison at the cursor; the operands are the rest of the text, still unchecked.
pub(crate) fn read_cmp(c: &mut Cursor<'_>) -> Option<Cmp> {
    if let Some(range) = read_range(c) {
        return Some(range);
    }
    let ops: [(&[&str], Make); 6] = [
        (GE, Cmp::Ge),
        (LE, Cmp::Le),
        (GT, Cmp::Gt),
        (LT, Cmp::Lt),
        (NE, Cmp::Ne),
        (EQ, Cmp::Eq),
    ];
    for (phrases, make) in ops {
        if c.eat_any(phrases).is_some() {
            c.eat("of");
            return Some(make(c.rest_orig().trim().to_owned()));
        }
    }
    let rest = c.rest();
    let orig = c.rest_orig();
    for (suffixes, make) in [
        (AT_LEAST_SUFFIX, Cmp::Ge as fn(String) -> Cmp),
        (AT_MOST_SUFFIX, Cmp::Le),
    ] {
        for suffix in suffixes {
            if let Some(at) = rest.find(suffix) {
                let after = rest[at + suffix.len()..].trim();
                if after.is_empty() || after.starts_with("characters") || after.starts_with("chars")
                {
                    return Some(make(orig[..at].trim().to_owned()));
                }
            }
        }
    }
    None
}

fn read_range(c: &mut Cursor<'_>) -> Option<Cmp> {
    let start = c.clone();
    let strict = c.eat("strictly");
    let interval = c.peek_any(&["in [", "in (", "within [", "within ("]);
    let opener = c.eat_any(&[
        "between",
        "in the range of",
        "in the range",
        "within the range of",
        "within the range",
        "in range of",
        "in range",
        "within",
        "from",
        "ranging from",
        "range",
    ]);
    if opener.is_none() && !interval {
        // Not a range: "strictly" belongs to the comparison that follows.
        *c = start;
        return None;
    }
    if interval {
        c.eat_any(&["in", "within"]);
    }
    let text = c.rest_orig().trim();
    let (body, include_lo, include_hi) = brackets(text);
    let lower = body.to_ascii_lowercase();
    let (lo, hi) = [" and ", " to ", " through ", " thru ", ", ", ","]
        .iter()
        .find_map(|sep| lower.find(sep).map(|at| (at, sep.len())))
        .map(|(at, len)| (body[..at].trim(), body[at + len..].trim()))
        .or_else(|| {
            // "1-10": a dash between two plain numbers.
            let at = body.get(1..)?.find('-')? + 1;
            let (lo, hi) = (body[..at].trim(), body[at + 1..].trim());
            let plain =
                |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
            (plain(lo) && plain(hi)).then_some((lo, hi))
        })
        .unwrap_or((body.trim(), ""));
    let (hi, hi_flag) = inclusivity(hi);
    let (include_lo, include_hi) = match hi_flag {
        Some(flag) => (flag, flag),
        None if strict => (false, false),
        None => (include_lo, include_hi),
    };
    Some(Cmp::Between {
        lo: lo.to_owned(),
        hi: hi.to_owned(),
        include_lo,
        include_hi,
    })
}

/// Strips `[a, b)`-style brackets, returning the inside and which ends are included.
fn brackets(text: &str) -> (&str, bool, bool) {
    let open = text.chars().next();
    let close = text.chars().last();
    match (open, close) {
        (Some(o @ ('[' | '(')), Some(e @ (']' | ')'))) if text.len() >= 2 => {
            (&text[1..text.len() - 1], o == '[', e == ']')
        }
        _ => (text, true, true),
    }
}

/// Strips a trailing `inclusive` / `exclusive` (with optional parentheses).
fn inclusivity(text: &str) -> (&str, Option<bool>) {
    let lower = text.to_ascii_lowercase();
    for (word, flag) in [
        ("(inclusive)", true),
        ("(exclusive)", false),
        ("inclusive", true),
        ("exclusive", false),
        ("both inclusive", true),
        ("both exclusive", false),
    ] {
        if let Some(stem) = lower.strip_suffix(word) {
            let stem = text[..stem.len()].trim().trim_end_matches(',').trim();
            return (stem, Some(flag));
        }
    }
    (text, None)
}

/// A sign word (`positive`, `non-negative`, `zero`...) as a comparison with 0.
pub(crate) fn sign_word(body: &str) -> Option<Cmp> {
    let zero = || "0".to_owned();
    let mut b = body.trim();
    for article in ["a ", "an "] {
        b = b.strip_prefix(article).unwrap_or(b);
    }
    let word = b
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches(',');
    let tail: Vec<&str> = b.split_whitespace().skip(1).collect();
    let tail_ok = tail.is_empty()
        || matches!(
            tail.as_slice(),
            ["number" | "numbers" | "value" | "values" | "integer" | "integers" | "amount"]
        );
    let two = b.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
    let cmp = match two.as_str() {
        "strictly positive" => Some(Cmp::Gt(zero())),
        "strictly negative" => Some(Cmp::Lt(zero())),
        "non negative" => Some(Cmp::Ge(zero())),
        "non positive" => Some(Cmp::Le(zero())),
        "non zero" => Some(Cmp::Ne(zero())),
        _ => None,
    };
    if cmp.is_some() {
        return cmp;
    }
    match b {
        "zero or positive" | "positive or zero" | "zero or more" | "zero or greater" => {
            return Some(Cmp::Ge(zero()));
        }
        "zero or negative" | "negative or zero" | "zero or less" => return Some(Cmp::Le(zero())),
        _ => {}
    }
    if !tail_ok {
        return None;
    }
    match word {
        "positive" => Some(Cmp::Gt(zero())),
        "negative" => Some(Cmp::Lt(zero())),
        "non-negative" | "nonnegative" => Some(Cmp::Ge(zero())),
        "non-positive" | "nonpositive" => Some(Cmp::Le(zero())),
        "zero" => Some(Cmp::Eq(zero())),
        "non-zero" | "nonzero" => Some(Cmp::Ne(zero())),
        _ => None,
    }
}

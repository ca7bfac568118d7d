//! Checks on text columns as rules word them: named patterns ("looks like an email"), lengths
//! ("at most 50 characters"), prefixes, suffixes, substrings and regular expressions.

use autocoder_schema::{Check, DataType, Pattern};

use crate::compare::{Cmp, read_cmp};
use crate::predicate::{Fail, Meaning, Read};
use crate::regex_compat::check_portable_regex;
use crate::text::{Cursor, is_quoted, starts_with_words, unquote, words};

/// The pattern named by the words of a rule, if any.
fn pattern_named(words: &[String]) -> Option<Pattern> {
    let has = |w: &str| words.iter().any(|x| x == w);
    let pair = |a: &str, b: &str| words.windows(2).any(|p| p[0] == a && p[1] == b);
    let iso = has("iso") || has("iso-8601") || has("iso8601") || has("8601");
    Some(if has("email") || has("e-mail") {
        Pattern::Email
    } else if has("uuid") || has("guid") {
        Pattern::Uuid
    } else if has("ipv6") {
        Pattern::Ipv6
    } else if has("ipv4") || pair("ip", "address") {
        Pattern::Ipv4
    } else if has("url") || has("uri") || has("link") || pair("web", "address") {
        Pattern::Url
    } else if has("phone") || has("telephone") {
        Pattern::Phone
    } else if iso && (has("datetime") || has("timestamp")) {
        Pattern::IsoDatetime
    } else if (iso && has("date")) || has("yyyy-mm-dd") {
        Pattern::IsoDate
    } else if has("json") {
        Pattern::Json
    } else if has("currency") || pair("money", "amount") || pair("monetary", "amount") {
        Pattern::Currency
    } else if has("percentage") || has("percent") {
        Pattern::Percent
    } else if has("hex") || has("hexadecimal") {
        Pattern::Hex
    } else {
        return None;
    })
}

pub(crate) fn named_pattern(body: &str, negated: bool, dtype: DataType) -> Option<Read> {
    let leads = [
        "look like",
        "looks like",
        "resemble",
        "a valid",
        "valid",
        "a well-formed",
        "well-formed",
        "an",
        "a",
        "formatted as",
        "in",
        "match",
        "matches",
        "follow",
        "follows",
        "conform to",
        "be",
    ];
    if !leads.iter().any(|l| starts_with_words(body, l)) {
        return None;
    }
    let ws = words(body);
    let pattern = pattern_named(&ws)?;
    if pattern == Pattern::Percent && dtype.is_numeric() {
        return Some(Err(Fail::Refused(
            "a numeric percentage may mean 0..1 or 0..100; state the bounds (e.g. between 0 and 100)"
                .to_owned(),
        )));
    }
    Some(if negated {
        Err(Fail::Refused(format!(
            "no built-in check says a value does not look like {}",
            pattern.description()
        )))
    } else {
        Ok(Meaning::Check(Check::Pattern { pattern }))
    })
}

const LENGTH_WORDS: &[&str] = &[
    "characters",
    "character",
    "chars",
    "char",
    "letters",
    "digits",
    "long",
    "length",
];

pub(crate) fn length(c: &Cursor<'_>, negated: bool) -> Option<Read> {
    let ws = words(c.rest());
    if !ws.iter().any(|w| LENGTH_WORDS.contains(&w.as_str())) {
        return None;
    }
    let stop = ["in", "of", "a", "an", "the", "its", "string", "text"];
    let kept: Vec<&str> = c
        .rest_orig()
        .split_whitespace()
        .filter(|t| {
            let w = t
                .trim_matches(|ch: char| !ch.is_alphanumeric())
                .to_lowercase();
            !(LENGTH_WORDS.contains(&w.as_str()) || stop.contains(&w.as_str()))
        })
        .collect();
    let text = kept.join(" ");
    let mut inner = Cursor::new(&text);
    let cmp = read_cmp(&mut inner).or_else(|| {
        let rest = inner.rest_orig().trim();
        (!rest.is_empty() && rest.chars().all(|ch| ch.is_ascii_digit()))
            .then(|| Cmp::Eq(rest.to_owned()))
    });
    let Some(cmp) = cmp else {
        let explicit = ws.iter().any(|w| {
            matches!(
                w.as_str(),
                "length" | "long" | "characters" | "character" | "chars"
            )
        });
        if !explicit {
            return None;
        }
        return Some(Err(Fail::Refused(
            "it speaks of a length but names no number of characters".to_owned(),
        )));
    };
    let cmp = if negated { cmp.negate() } else { Some(cmp) };
    let Some(cmp) = cmp else {
        return Some(Err(Fail::Refused(
            "no built-in check says a length is outside a range".to_owned(),
        )));
    };
    Some(length_check(cmp).map(Meaning::Check).map_err(Fail::Refused))
}

fn length_check(cmp: Cmp) -> Result<Check, String> {
    let n = |s: &str| -> Result<u64, String> {
        let t = s.trim();
        if t.is_empty() {
            return Err("it names no length, and none is invented".to_owned());
        }
        t.parse::<u64>()
            .map_err(|_| format!("the length `{t}` is not a whole number of characters"))
    };
    let (min, max) = match cmp {
        Cmp::Gt(v) => (Some(n(&v)? + 1), None),
        Cmp::Ge(v) => (Some(n(&v)?), None),
        Cmp::Lt(v) => match n(&v)? {
            0 => return Err("no string is shorter than 0 characters".to_owned()),
            k => (None, Some(k - 1)),
        },
        Cmp::Le(v) => (None, Some(n(&v)?)),
        Cmp::Eq(v) => {
            let k = n(&v)?;
            (Some(k), Some(k))
        }
        Cmp::Ne(_) => {
            return Err("no built-in check says a length differs from a number".to_owned());
        }
        Cmp::Between {
            lo,
            hi,
            include_lo,
            include_hi,
        } => {
            let lo = n(&lo)? + u64::from(!include_lo);
            let hi = n(&hi)?;
            let hi = if include_hi { hi } else { hi.saturating_sub(1) };
            (Some(lo), Some(hi))
        }
    };
    Ok(Check::StrLength { min, max })
}

const STARTS: &[&str] = &[
    "start with",
    "starts with",
    "begin with",
    "begins with",
    "prefixed with",
    "the prefix",
    "prefix",
];
const ENDS: &[&str] = &[
    "end with",
    "ends with",
    "suffixed with",
    "the suffix",
    "suffix",
];
const CONTAINS: &[&str] = &[
    "contain",
    "contains",
    "include",
    "includes",
    "the substring",
];
const MATCHES: &[&str] = &[
    "match the regular expression",
    "matches the regular expression",
    "match the regex",
    "matches the regex",
    "match the pattern",
    "matches the pattern",
    "match regex",
    "matches regex",
    "match pattern",
    "matches pattern",
    "follow the pattern",
    "follows the pattern",
    "match",
    "matches",
];

pub(crate) fn text_ops(c: &mut Cursor<'_>, negated: bool) -> Option<Read> {
    let kinds: [(&[&str], u8); 4] = [(STARTS, 0), (ENDS, 1), (CONTAINS, 2), (MATCHES, 3)];
    let kind = kinds
        .iter()
        .find_map(|(phrases, k)| c.eat_any(phrases).map(|_| *k))?;
    c.eat_any(&[
        "the prefix",
        "the suffix",
        "the text",
        "the string",
        "the substring",
        "the regex",
        "the pattern",
        "regex",
        "pattern",
    ]);
    let operand = c.rest_orig().trim();
    let delimited = regex_literal(operand).is_some() || is_quoted(operand);
    let literal = regex_literal(operand).unwrap_or_else(|| unquote(operand));
    if !delimited
        && (literal.contains(char::is_whitespace)
            || CLASS_WORDS.contains(&literal.to_ascii_lowercase().as_str()))
    {
        return Some(Err(Fail::NotUnderstood(format!(
            "`{literal}` reads as a description, not as literal text; quote the text or write a /regex/"
        ))));
    }
    if literal.is_empty() {
        return Some(Err(Fail::Refused(
            "it names no text to look for, and none is invented".to_owned(),
        )));
    }
    if negated {
        return Some(Err(Fail::Refused(
            "no built-in check expresses the negation of a text match".to_owned(),
        )));
    }
    let check = match kind {
        0 => Check::StrStartswith {
            prefix: literal.to_owned(),
        },
        1 => Check::StrEndswith {
            suffix: literal.to_owned(),
        },
        2 => Check::StrContains {
            pattern: regex::escape(literal),
        },
        _ => {
            if let Err(reason) = check_portable_regex(literal) {
                return Some(Err(Fail::Refused(reason)));
            }
            Check::StrMatches {
                pattern: literal.to_owned(),
            }
        }
    };
    Some(Ok(Meaning::Check(check)))
}

/// Words that describe kinds of characters rather than text to look for.
const CLASS_WORDS: &[&str] = &[
    "digits",
    "digit",
    "numbers",
    "number",
    "letters",
    "letter",
    "spaces",
    "space",
    "whitespace",
    "uppercase",
    "lowercase",
    "punctuation",
    "alphanumeric",
    "symbols",
    "numerals",
];

/// The inside of `/.../`.
fn regex_literal(text: &str) -> Option<&str> {
    let t = text.trim();
    t.strip_prefix('/')?.strip_suffix('/')
}

//! The named patterns a string column can follow: the profiler reports how many values match
//! each, and a rule such as "email must look like an email" becomes a check with one of them.
//!
//! Each pattern except JSON is a regular expression written in the common subset of Rust's
//! `regex` and Python's `re`, anchored at both ends, so the profiler, the constraint evaluator and
//! the Pandera code we emit agree on what matches.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// A named pattern of string values.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// `name@example.com`.
    Email,
    /// `https://example.com/path` (http, https or ftp).
    Url,
    /// `123e4567-e89b-12d3-a456-426614174000`.
    Uuid,
    /// `192.168.0.1`.
    Ipv4,
    /// `2001:db8::1`.
    Ipv6,
    /// 7 to 15 digits with optional `+`, spaces, dots, dashes and parentheses.
    Phone,
    /// `2024-01-31`.
    IsoDate,
    /// `2024-01-31T12:30:00`, optionally with fractions and a UTC offset.
    IsoDatetime,
    /// `$1,234.56`, `€12`, `12.50 €`.
    Currency,
    /// `12.5%`.
    Percent,
    /// `-42`, `007`.
    IntegerText,
    /// `3.14`, `-0.5e3`.
    DecimalText,
    /// `yes`, `No`, `TRUE`, `f`, `0`, `on`...
    BooleanText,
    /// `0x1F` or 8 or more hex digits (hashes, ids).
    Hex,
    /// A JSON object or array.
    Json,
}

const EMAIL: &str = r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$";
const URL: &str = r"^(?:[Hh][Tt][Tt][Pp][Ss]?|[Ff][Tt][Pp])://[^\s/?#]+[^\s]*$";
const UUID: &str = r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";
const IPV4: &str = r"^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$";
const IPV6: &str = concat!(
    r"^(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}",
    r"|(?:[0-9A-Fa-f]{1,4}:){1,7}:",
    r"|(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}",
    r"|(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}",
    r"|(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}",
    r"|(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}",
    r"|(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}",
    r"|[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}",
    r"|:(?:(?::[0-9A-Fa-f]{1,4}){1,7}|:))$"
);
const PHONE: &str = r"^\+?\(?[0-9](?:[ ().-]*[0-9]){6,14}$";
const ISO_DATE: &str = r"^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$";
const ISO_DATETIME: &str = concat!(
    r"^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])",
    r"[T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:[.,][0-9]{1,9})?)?",
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])?$"
);
const CURRENCY: &str = concat!(
    r"^(?:[-+]?[$€£¥₹] ?[0-9]{1,3}(?:,?[0-9]{3})*(?:\.[0-9]{1,2})?",
    r"|\([$€£¥₹] ?[0-9]{1,3}(?:,?[0-9]{3})*(?:\.[0-9]{1,2})?\)",
    r"|[-+]?[0-9]{1,3}(?:,?[0-9]{3})*(?:\.[0-9]{1,2})? ?[$€£¥₹])$"
);
const PERCENT: &str = r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+) ?%$";
const INTEGER_TEXT: &str = r"^[-+]?[0-9]+$";
const DECIMAL_TEXT: &str = r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+)$";
const BOOLEAN_TEXT: &str = r"^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Yy][Ee][Ss]|[Nn][Oo]|[YyNnTtFf01]|[Oo][Nn]|[Oo][Ff][Ff])$";
const HEX: &str = r"^(?:0[xX][0-9A-Fa-f]+|[0-9A-Fa-f]{8,})$";

impl Pattern {
    /// All patterns, in a stable order.
    pub const ALL: [Pattern; 15] = [
        Pattern::Email,
        Pattern::Url,
        Pattern::Uuid,
        Pattern::Ipv4,
        Pattern::Ipv6,
        Pattern::Phone,
        Pattern::IsoDate,
        Pattern::IsoDatetime,
        Pattern::Currency,
        Pattern::Percent,
        Pattern::IntegerText,
        Pattern::DecimalText,
        Pattern::BooleanText,
        Pattern::Hex,
        Pattern::Json,
    ];

    /// The name used in JSON and prompts (`email`, `iso_date`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Email => "email",
            Pattern::Url => "url",
            Pattern::Uuid => "uuid",
            Pattern::Ipv4 => "ipv4",
            Pattern::Ipv6 => "ipv6",
            Pattern::Phone => "phone",
            Pattern::IsoDate => "iso_date",
            Pattern::IsoDatetime => "iso_datetime",
            Pattern::Currency => "currency",
            Pattern::Percent => "percent",
            Pattern::IntegerText => "integer_text",
            Pattern::DecimalText => "decimal_text",
            Pattern::BooleanText => "boolean_text",
            Pattern::Hex => "hex",
            Pattern::Json => "json",
        }
    }

    /// A few words for reports: "an email address", "a UUID", ...
    pub fn description(self) -> &'static str {
        match self {
            Pattern::Email => "an email address",
            Pattern::Url => "a URL",
            Pattern::Uuid => "a UUID",
            Pattern::Ipv4 => "an IPv4 address",
            Pattern::Ipv6 => "an IPv6 address",
            Pattern::Phone => "a phone number",
            Pattern::IsoDate => "an ISO 8601 date",
            Pattern::IsoDatetime => "an ISO 8601 datetime",
            Pattern::Currency => "a currency amount",
            Pattern::Percent => "a percentage",
            Pattern::IntegerText => "an integer",
            Pattern::DecimalText => "a decimal number",
            Pattern::BooleanText => "a boolean word",
            Pattern::Hex => "a hexadecimal string",
            Pattern::Json => "a JSON object or array",
        }
    }

    /// The regular expression, anchored with `^...$`, in the common subset of Rust `regex` and
    /// Python `re`; `None` for JSON, which no regular expression describes.
    pub fn regex_source(self) -> Option<&'static str> {
        Some(match self {
            Pattern::Email => EMAIL,
            Pattern::Url => URL,
            Pattern::Uuid => UUID,
            Pattern::Ipv4 => IPV4,
            Pattern::Ipv6 => IPV6,
            Pattern::Phone => PHONE,
            Pattern::IsoDate => ISO_DATE,
            Pattern::IsoDatetime => ISO_DATETIME,
            Pattern::Currency => CURRENCY,
            Pattern::Percent => PERCENT,
            Pattern::IntegerText => INTEGER_TEXT,
            Pattern::DecimalText => DECIMAL_TEXT,
            Pattern::BooleanText => BOOLEAN_TEXT,
            Pattern::Hex => HEX,
            Pattern::Json => return None,
        })
    }

    /// The regular expression for Python's `re.match`: the final `$` becomes `\Z`, because
    /// Python's `$` also matches before a trailing newline and Rust's does not.
    pub fn python_regex(self) -> Option<String> {
        self.regex_source()
            .map(|source| format!("{}\\Z", source.strip_suffix('$').unwrap_or(source)))
    }

    /// Whether `value` follows the pattern. This is the reference definition; the profiler may use
    /// faster matchers but is tested to agree with this one.
    pub fn matches(self, value: &str) -> bool {
        match self {
            Pattern::Json => is_json_container(value),
            _ => COMPILED[self as usize]
                .as_ref()
                .is_some_and(|re| re.is_match(value)),
        }
    }

    /// Finds a pattern by its name.
    pub fn from_name(name: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.name() == name)
    }
}

fn is_json_container(value: &str) -> bool {
    let trimmed = value.trim();
    (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok()
}

static COMPILED: LazyLock<Vec<Option<Regex>>> = LazyLock::new(|| {
    Pattern::ALL
        .iter()
        .map(|p| p.regex_source().and_then(|source| Regex::new(source).ok()))
        .collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_regex_compiles_and_order_matches_discriminants() {
        for (i, p) in Pattern::ALL.iter().enumerate() {
            assert_eq!(*p as usize, i);
            if let Some(source) = p.regex_source() {
                Regex::new(source).unwrap();
                assert!(source.starts_with('^') && source.ends_with('$'), "{p:?}");
            }
            assert_eq!(Pattern::from_name(p.name()), Some(*p));
        }
    }

    #[test]
    fn patterns_match_what_they_claim() {
        let cases: &[(Pattern, &[&str], &[&str])] = &[
            (
                Pattern::Email,
                &["a.b+c@example.co.uk", "x@y.io"],
                &["a@b", "@x.com", "a b@c.com"],
            ),
            (
                Pattern::Url,
                &["https://x.org/a?b=1", "ftp://h/f"],
                &["x.org", "http://", "https:// x"],
            ),
            (
                Pattern::Uuid,
                &["123e4567-e89b-12d3-a456-426614174000"],
                &["123e4567e89b12d3a456426614174000"],
            ),
            (
                Pattern::Ipv4,
                &["192.168.0.1", "0.0.0.0"],
                &["256.1.1.1", "1.2.3"],
            ),
            (
                Pattern::Ipv6,
                &["2001:db8::1", "::1", "fe80:0:0:0:0:0:0:1"],
                &["2001:db8:::1", "12345::"],
            ),
            (
                Pattern::Phone,
                &["+1 (555) 123-4567", "020 7946 0958", "5551234567"],
                &["02134", "555-12", "+"],
            ),
            (
                Pattern::IsoDate,
                &["2024-02-29"],
                &["2024-13-01", "2024-1-1", "24-01-01"],
            ),
            (
                Pattern::IsoDatetime,
                &[
                    "2024-01-31T12:30:00",
                    "2024-01-31 12:30",
                    "2024-01-31T12:30:00.123Z",
                    "2024-01-31T12:30:00+02:00",
                ],
                &["2024-01-31", "2024-01-31T25:00"],
            ),
            (
                Pattern::Currency,
                &["$1,234.56", "€12", "12.50 €", "-$5", "($3.00)"],
                &["1,234.56", "$1,23", "$"],
            ),
            (Pattern::Percent, &["12.5%", "-3 %", ".5%"], &["12.5", "%"]),
            (Pattern::IntegerText, &["-42", "007"], &["4.2", ""]),
            (
                Pattern::DecimalText,
                &["3.14", "-0.5e3", ".5", "1e9"],
                &["42", "1.2.3"],
            ),
            (
                Pattern::BooleanText,
                &["yes", "No", "TRUE", "f", "0", "off"],
                &["maybe", "2"],
            ),
            (Pattern::Hex, &["0x1F", "deadbeef00"], &["xyz", "abc"]),
            (
                Pattern::Json,
                &[r#"{"a": 1}"#, "[1, 2]"],
                &["{a: 1}", "1", "\"s\""],
            ),
        ];
        for (pattern, good, bad) in cases {
            for value in *good {
                assert!(pattern.matches(value), "{pattern:?} should match {value:?}");
            }
            for value in *bad {
                assert!(
                    !pattern.matches(value),
                    "{pattern:?} should not match {value:?}"
                );
            }
        }
    }

    #[test]
    fn python_regex_anchors_at_the_true_end() {
        assert_eq!(
            Pattern::IntegerText.python_regex().unwrap(),
            r"^[-+]?[0-9]+\Z"
        );
        assert!(Pattern::Json.python_regex().is_none());
        assert!(!Pattern::IntegerText.matches("12\n"));
    }
}

//! Named-pattern match counts and value shapes of a string column, measured on a bounded subset
//! of rows. Cheap hand-written tests reject most patterns before the reference regular
//! expression ([`Pattern::matches`]) confirms a match.

use std::collections::HashMap;

use autocoder_schema::Pattern;

use crate::{PatternRate, ShapeCount};

/// Longest shape kept; longer ones are cut and end with `…`.
const MAX_SHAPE: usize = 24;
/// Distinct shapes tracked per column; later new shapes are counted as `other`.
const MAX_SHAPES: usize = 256;

/// Pattern and shape counts of one column.
#[derive(Debug, Clone, Default)]
pub(crate) struct PatternCounts {
    values: u64,
    matches: [u64; Pattern::ALL.len()],
    shapes: HashMap<String, u64>,
    other_shapes: u64,
    scratch: String,
}

impl PatternCounts {
    pub(crate) fn add(&mut self, value: &str) {
        self.values += 1;
        let mask = candidates(value);
        for p in Pattern::ALL {
            if mask & (1 << p as u32) != 0 && p.matches(value) {
                self.matches[p as usize] += 1;
            }
        }
        shape_into(value, &mut self.scratch);
        if let Some(c) = self.shapes.get_mut(self.scratch.as_str()) {
            *c += 1;
        } else if self.shapes.len() < MAX_SHAPES {
            self.shapes.insert(self.scratch.clone(), 1);
        } else {
            self.other_shapes += 1;
        }
    }

    pub(crate) fn merge(&mut self, other: PatternCounts) {
        self.values += other.values;
        for (a, b) in self.matches.iter_mut().zip(other.matches) {
            *a += b;
        }
        for (s, c) in other.shapes {
            if let Some(x) = self.shapes.get_mut(&s) {
                *x += c;
            } else if self.shapes.len() < MAX_SHAPES {
                self.shapes.insert(s, c);
            } else {
                self.other_shapes += c;
            }
        }
        self.other_shapes += other.other_shapes;
    }

    /// Rates of the patterns matched at least once, highest first.
    pub(crate) fn rates(&self) -> Vec<PatternRate> {
        let mut rates: Vec<PatternRate> = Pattern::ALL
            .iter()
            .filter(|p| self.matches[**p as usize] > 0)
            .map(|&p| PatternRate {
                pattern: p,
                matches: self.matches[p as usize],
                rate: self.matches[p as usize] as f64 / self.values.max(1) as f64,
            })
            .collect();
        rates.sort_by(|a, b| b.matches.cmp(&a.matches).then(a.pattern.cmp(&b.pattern)));
        rates
    }

    /// The `n` most frequent shapes.
    pub(crate) fn top_shapes(&self, n: usize) -> Vec<ShapeCount> {
        let mut shapes: Vec<ShapeCount> = self
            .shapes
            .iter()
            .map(|(s, &c)| ShapeCount {
                shape: s.clone(),
                count: c,
            })
            .collect();
        shapes.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.shape.cmp(&b.shape)));
        shapes.truncate(n);
        shapes
    }
}

/// `A` for letters, `9` for digits, other characters as they are.
#[cfg(test)]
pub(crate) fn shape(value: &str) -> String {
    let mut out = String::new();
    shape_into(value, &mut out);
    out
}

/// [`shape`] into a reused buffer.
fn shape_into(value: &str, out: &mut String) {
    out.clear();
    for (i, c) in value.chars().enumerate() {
        if i == MAX_SHAPE {
            out.push('…');
            break;
        }
        out.push(if c.is_alphabetic() {
            'A'
        } else if c.is_ascii_digit() {
            '9'
        } else {
            c
        });
    }
}

/// The patterns `value` could match, by cheap necessary conditions (a bit per pattern).
fn candidates(value: &str) -> u32 {
    let b = value.as_bytes();
    let len = b.len();
    let first = b.first().copied().unwrap_or(0);
    let last = b.last().copied().unwrap_or(0);
    let has = |c: u8| memchr::memchr(c, b).is_some();
    let digits = b.iter().filter(|c| c.is_ascii_digit()).count();
    let hexish = b.iter().all(u8::is_ascii_hexdigit);
    let mut out = 0u32;
    if has(b'@') {
        out |= 1 << Pattern::Email as u32;
    }
    if has(b':') {
        if matches!(first, b'h' | b'H' | b'f' | b'F') {
            out |= 1 << Pattern::Url as u32;
        }
        out |= 1 << Pattern::Ipv6 as u32;
        if len >= 16 && first.is_ascii_digit() {
            out |= 1 << Pattern::IsoDatetime as u32;
        }
    }
    if len == 36 && has(b'-') {
        out |= 1 << Pattern::Uuid as u32;
    }
    if (7..=15).contains(&len) && first.is_ascii_digit() && has(b'.') {
        out |= 1 << Pattern::Ipv4 as u32;
    }
    if (7..=25).contains(&digits) {
        out |= 1 << Pattern::Phone as u32;
    }
    if len == 10 && first.is_ascii_digit() {
        out |= 1 << Pattern::IsoDate as u32;
    }
    if digits > 0 {
        out |= 1 << Pattern::Currency as u32;
        if last == b'%' {
            out |= 1 << Pattern::Percent as u32;
        }
        out |= 1 << Pattern::IntegerText as u32;
        out |= 1 << Pattern::DecimalText as u32;
    }
    if len <= 5 {
        out |= 1 << Pattern::BooleanText as u32;
    }
    if (hexish && len >= 8) || (len > 2 && (value.starts_with("0x") || value.starts_with("0X"))) {
        out |= 1 << Pattern::Hex as u32;
    }
    if matches!(first, b'{' | b'[') || value.trim_start().starts_with(['{', '[']) {
        out |= 1 << Pattern::Json as u32;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilters_agree_with_the_reference_patterns() {
        let values = [
            "a.b@example.com",
            "https://x.org/a?b",
            "123e4567-e89b-12d3-a456-426614174000",
            "192.168.0.1",
            "2001:db8::1",
            "+1 (555) 010-9999",
            "2024-01-31",
            "2024-01-31T12:30:00Z",
            "$1,234.56",
            "12.5%",
            "-42",
            "3.14",
            "yes",
            "0x1F",
            "deadbeef01",
            "{\"a\": [1, 2]}",
            "[1,2]",
            "plain words",
            "AB-1234",
            "",
            "f",
            "1",
        ];
        for v in values {
            let cands = candidates(v);
            for p in Pattern::ALL {
                if p.matches(v) {
                    assert!(
                        cands & (1 << p as u32) != 0,
                        "{v:?} matches {p:?} but was filtered"
                    );
                }
            }
        }
    }

    #[test]
    fn shapes_and_rates() {
        assert_eq!(shape("ABC-1234"), "AAA-9999");
        assert_eq!(shape("é1"), "A9");
        assert_eq!(shape(&"x".repeat(30)).chars().count(), MAX_SHAPE + 1);
        let mut c = PatternCounts::default();
        for v in ["a@b.io", "c@d.io", "nope"] {
            c.add(v);
        }
        let rates = c.rates();
        assert_eq!(rates[0].pattern, Pattern::Email);
        assert_eq!(rates[0].matches, 2);
        assert_eq!(c.top_shapes(1)[0].shape, "A@A.AA");
    }
}

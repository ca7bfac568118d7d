//! Named-pattern match counts and value shapes of a string column, measured on a bounded subset
//! of rows. `matchers` decides the patterns by hand, in agreement with the reference regular
//! expressions of [`Pattern::matches`].

mod matchers;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use autocoder_schema::Pattern;

use crate::sketch::hash::TextHasher;
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
    shapes: HashMap<String, u64, BuildHasherDefault<TextHasher>>,
    other_shapes: u64,
    scratch: String,
}

impl PatternCounts {
    pub(crate) fn add(&mut self, value: &str) {
        self.values += 1;
        let mut found = matchers::matching(value);
        while found != 0 {
            self.matches[found.trailing_zeros() as usize] += 1;
            found &= found - 1;
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
    if value.is_ascii() {
        for &c in value.as_bytes().iter().take(MAX_SHAPE) {
            out.push(if c.is_ascii_alphabetic() {
                'A'
            } else if c.is_ascii_digit() {
                '9'
            } else {
                char::from(c)
            });
        }
        if value.len() > MAX_SHAPE {
            out.push('…');
        }
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_rates() {
        assert_eq!(shape("ABC-1234"), "AAA-9999");
        assert_eq!(shape("é1"), "A9");
        assert_eq!(shape("a-1 ;"), "A-9 ;");
        assert_eq!(
            shape(&"é".repeat(30)),
            format!("{}…", "A".repeat(MAX_SHAPE))
        );
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

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
        let mut buf = [0u8; SHAPE_BYTES];
        let shape = if let Some(shape) = ascii_shape(value, &mut buf) {
            shape
        } else {
            shape_into(value, &mut self.scratch);
            self.scratch.as_str()
        };
        if let Some(c) = self.shapes.get_mut(shape) {
            *c += 1;
        } else if self.shapes.len() < MAX_SHAPES {
            self.shapes.insert(shape.to_owned(), 1);
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

/// The longest shape of an ASCII value in bytes: [`MAX_SHAPE`] bytes and `…`.
const SHAPE_BYTES: usize = MAX_SHAPE + '…'.len_utf8();

/// The shape of each ASCII byte: `A` for letters, `9` for digits, the byte itself otherwise.
static ASCII_SHAPES: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        #[allow(clippy::cast_possible_truncation)] // c < 128
        let byte = c as u8;
        table[c] = if byte.is_ascii_alphabetic() {
            b'A'
        } else if byte.is_ascii_digit() {
            b'9'
        } else {
            byte
        };
        c += 1;
    }
    table
};

/// [`shape_into`] of an ASCII value, built in `buf` with a table instead of pushing characters
/// one by one (this runs for every value of the measured rows); `None` for other values.
#[inline]
fn ascii_shape<'a>(value: &str, buf: &'a mut [u8; SHAPE_BYTES]) -> Option<&'a str> {
    if !value.is_ascii() {
        return None;
    }
    let b = value.as_bytes();
    let head = &b[..b.len().min(MAX_SHAPE)];
    for (slot, &c) in buf.iter_mut().zip(head) {
        *slot = ASCII_SHAPES[usize::from(c & 0x7f)];
    }
    let mut n = head.len();
    if b.len() > MAX_SHAPE {
        buf[n..].copy_from_slice("…".as_bytes());
        n = SHAPE_BYTES;
    }
    std::str::from_utf8(&buf[..n]).ok()
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

    #[test]
    fn the_ascii_table_agrees_with_the_general_shape() {
        let mut x: u64 = 5;
        for len in 0..40 {
            for _ in 0..200 {
                let value: String = (0..len)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        char::from(((x >> 33) % 128) as u8)
                    })
                    .collect();
                let mut buf = [0u8; SHAPE_BYTES];
                assert_eq!(ascii_shape(&value, &mut buf), Some(shape(&value).as_str()));
            }
        }
        assert_eq!(ascii_shape("é", &mut [0u8; SHAPE_BYTES]), None);
    }
}

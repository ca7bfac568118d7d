//! How a CSV file is written: its delimiter, quote, header, byte-order mark, encoding and the
//! lines pandas is told to skip, and how to guess the first four from the first bytes.

use serde::{Deserialize, Serialize};

use crate::Encoding;
use crate::classify::{Kind, classify};
use crate::temporal::ALL_FORMATS;

/// The delimiters [`Dialect::sniff`] considers, in order of preference on ties; a space is
/// considered after them (see [`Dialect::sniff`]).
pub const SNIFF_DELIMITERS: [u8; 4] = [b',', b'\t', b';', b'|'];

/// Records of the head the header vote looks at.
const VOTE_RECORDS: usize = 21;

/// The UTF-8 byte-order mark.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// How a CSV file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Dialect {
    /// The field delimiter (`,`, `\t`, `;`, `|`, ...), as a byte; JSON writes it as a
    /// one-character string.
    #[serde(with = "byte_as_char")]
    #[schemars(with = "String")]
    pub delimiter: u8,
    /// The quote character (`"`); quotes inside quoted fields are doubled.
    #[serde(with = "byte_as_char")]
    #[schemars(with = "String")]
    pub quote: u8,
    /// Whether the first record is a header with the column names.
    pub has_header: bool,
    /// Whether the file starts with a UTF-8 byte-order mark (skipped when reading).
    pub bom: bool,
    /// The text encoding (given, or UTF-16 found by its byte-order mark); absent in JSON for
    /// UTF-8.
    #[serde(default, skip_serializing_if = "is_utf8")]
    #[schemars(with = "String")]
    pub encoding: Encoding,
    /// Lines skipped at the start of the file, before the header (pandas' `skiprows`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skip_rows: u64,
    /// The comment character: from it to the end of its line is ignored, outside quotes
    /// (pandas' `comment`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "opt_byte_as_char"
    )]
    #[schemars(with = "Option<String>")]
    pub comment: Option<u8>,
}

fn is_utf8(e: &Encoding) -> bool {
    e.is_utf8()
}

#[allow(clippy::trivially_copy_pass_by_ref)] // the signature serde's `skip_serializing_if` expects
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for Dialect {
    fn default() -> Self {
        Self {
            delimiter: b',',
            quote: b'"',
            has_header: true,
            bom: false,
            encoding: Encoding::UTF8,
            skip_rows: 0,
            comment: None,
        }
    }
}

impl Dialect {
    /// Guesses the dialect from the first bytes of a file (a few tens of KiB are plenty): the
    /// byte-order mark; the delimiter among [`SNIFF_DELIMITERS`] that splits the lines into the
    /// most consistent number of fields (more fields win ties), or a space when none of them
    /// splits the first line and single spaces split every line alike with a numeric column
    /// (scikit-learn's `linnerud_*.csv`); and whether the first line is a header. It is when
    /// none of its fields is a number (pandas' assumption), or when its fields' types differ
    /// from the types of the rows below in more columns than they agree (Python's
    /// `csv.Sniffer` vote; `DuckDB`'s sniffer compares types too): `150,4,setosa` over rows of
    /// floats is a header.
    pub fn sniff(head: &[u8]) -> Dialect {
        let bom = head.starts_with(UTF8_BOM);
        let body = if bom { &head[UTF8_BOM.len()..] } else { head };
        let mut best = (b',', 0usize, 0usize); // delimiter, consistent lines, fields
        for delimiter in SNIFF_DELIMITERS {
            let counts = field_counts(body, delimiter, b'"', 50);
            let Some(&first) = counts.first() else {
                continue;
            };
            if first < 2 {
                continue;
            }
            let consistent = counts.iter().filter(|&&c| c == first).count();
            if consistent > best.1 || (consistent == best.1 && first > best.2) {
                best = (delimiter, consistent, first);
            }
        }
        if best.1 == 0 && space_delimited(body) {
            best.0 = b' ';
        }
        let delimiter = best.0;
        let has_header = looks_like_header(body, delimiter, b'"');
        Dialect {
            delimiter,
            has_header,
            bom,
            ..Dialect::default()
        }
    }

    /// The delimiter as a character (for pandas' `sep=`).
    pub fn delimiter_char(&self) -> char {
        char::from(self.delimiter)
    }

    /// A `csv-core` reader that keeps a leading U+FEFF as data. `csv-core` skips a byte-order
    /// mark at the start of the first input it reads, but we start readers at every chunk, and
    /// only the file's first bytes (handled once, in `source`) may be a byte-order mark.
    pub(crate) fn csv_reader(self) -> csv_core::Reader {
        let mut reader = csv_core::ReaderBuilder::new()
            .delimiter(self.delimiter)
            .quote(self.quote)
            .double_quote(true)
            .build();
        // A blank line is skipped without output and marks the reader as started.
        let _ = reader.read_record(b"\n", &mut [0u8; 1], &mut [0usize; 1]);
        reader
    }
}

/// Serializes an ASCII byte as a one-character string (`","`), and reads it back.
mod byte_as_char {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    #[allow(clippy::trivially_copy_pass_by_ref)] // the signature serde's `with` expects
    pub(super) fn serialize<S: Serializer>(byte: &u8, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_char(char::from(*byte))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_bytes() {
            [b] if b.is_ascii() => Ok(*b),
            _ => Err(D::Error::custom(format!(
                "expected one ASCII character, found {text:?}"
            ))),
        }
    }
}

/// [`byte_as_char`] for an optional byte.
mod opt_byte_as_char {
    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option, clippy::trivially_copy_pass_by_ref)] // serde's `with` signature
    pub(super) fn serialize<S: Serializer>(byte: &Option<u8>, s: S) -> Result<S::Ok, S::Error> {
        match byte {
            Some(b) => super::byte_as_char::serialize(b, s),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
        #[derive(Deserialize)]
        struct Wrapped(#[serde(with = "super::byte_as_char")] u8);
        Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
    }
}

/// Field counts of up to `max_records` complete records of `head`.
fn field_counts(head: &[u8], delimiter: u8, quote: u8, max_records: usize) -> Vec<usize> {
    let mut reader = dialect_of(delimiter, quote).csv_reader();
    let mut out = vec![0u8; 1 << 16];
    let mut ends = vec![0usize; 4096];
    let mut input = head;
    let mut counts = Vec::new();
    while counts.len() < max_records {
        let (result, nin, _, nend) = reader.read_record(input, &mut out, &mut ends);
        input = &input[nin..];
        match result {
            csv_core::ReadRecordResult::Record => counts.push(nend),
            csv_core::ReadRecordResult::InputEmpty
            | csv_core::ReadRecordResult::OutputFull
            | csv_core::ReadRecordResult::OutputEndsFull
            | csv_core::ReadRecordResult::End => break,
        }
    }
    counts
}

/// Up to `max` complete records of `head`, as text.
fn records(head: &[u8], dialect: Dialect, max: usize) -> Vec<Vec<String>> {
    let mut reader = dialect.csv_reader();
    let mut out = vec![0u8; head.len() + 1];
    let mut ends = vec![0usize; head.len() + 1];
    let mut input = head;
    let mut records = Vec::new();
    while records.len() < max {
        let (result, nin, _, nend) = reader.read_record(input, &mut out, &mut ends);
        input = &input[nin..];
        if result != csv_core::ReadRecordResult::Record {
            break;
        }
        let mut start = 0;
        let mut fields = Vec::with_capacity(nend);
        for &end in &ends[..nend] {
            fields.push(String::from_utf8_lossy(&out[start..end]).into_owned());
            start = end;
        }
        records.push(fields);
    }
    records
}

fn dialect_of(delimiter: u8, quote: u8) -> Dialect {
    Dialect {
        delimiter,
        quote,
        has_header: false,
        ..Dialect::default()
    }
}

/// Whether single spaces split every line of `body` into the same number (at least 2) of
/// non-empty fields, with one column numeric in every row below the first.
fn space_delimited(body: &[u8]) -> bool {
    let rows = records(body, dialect_of(b' ', b'"'), VOTE_RECORDS);
    let Some(first) = rows.first() else {
        return false;
    };
    if first.len() < 2
        || rows.len() < 2
        || rows
            .iter()
            .any(|r| r.len() != first.len() || r.iter().any(String::is_empty))
    {
        return false;
    }
    (0..first.len()).any(|i| {
        rows[1..]
            .iter()
            .all(|r| matches!(classify(&r[i], ALL_FORMATS), Kind::Int(_) | Kind::Float(_)))
    })
}

/// What a cell is, for the header vote: Python's `csv.Sniffer` tells `int`, `float` and text
/// of one length apart; dates and booleans are told apart too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Int,
    Float,
    Bool,
    Date,
    Datetime,
    Text(usize),
}

fn class(cell: &str) -> Option<Class> {
    if crate::nulls::PANDAS_NA_VALUES.contains(&cell) {
        return None;
    }
    Some(match classify(cell, ALL_FORMATS) {
        Kind::Int(_) => Class::Int,
        Kind::Float(_) => Class::Float,
        Kind::Bool(_) => Class::Bool,
        Kind::Date { .. } => Class::Date,
        Kind::Datetime { .. } | Kind::Stamp { .. } => Class::Datetime,
        Kind::Text => Class::Text(cell.chars().count()),
    })
}

fn looks_like_header(body: &[u8], delimiter: u8, quote: u8) -> bool {
    let rows = records(body, dialect_of(delimiter, quote), VOTE_RECORDS);
    let Some(header) = rows.first() else {
        return true;
    };
    let numeric = |f: &String| {
        let t = f.trim();
        !t.is_empty() && t.parse::<f64>().is_ok()
    };
    if !header.iter().any(numeric) {
        return true;
    }
    // The vote: +1 for each column whose rows agree on a class the first line's cell lacks,
    // -1 for each whose first cell has it; columns whose rows disagree do not vote.
    let mut votes = 0i64;
    for (i, cell) in header.iter().enumerate() {
        let mut body_class: Option<Class> = None;
        let mut consistent = true;
        for row in &rows[1..] {
            let Some(c) = row.get(i).and_then(|f| class(f)) else {
                continue;
            };
            match body_class {
                None => body_class = Some(c),
                Some(b) if b == c => {}
                // Integers among floats are floats, as a column's type.
                Some(Class::Float) if c == Class::Int => {}
                Some(Class::Int) if c == Class::Float => body_class = Some(Class::Float),
                Some(_) => consistent = false,
            }
        }
        let (Some(expected), true) = (body_class, consistent) else {
            continue;
        };
        match class(cell) {
            Some(c) if c == expected => votes -= 1,
            Some(Class::Int) if expected == Class::Float => votes -= 1,
            _ => votes += 1,
        }
    }
    votes > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_the_common_delimiters() {
        for (text, delimiter) in [
            ("a,b,c\n1,2,3\n4,5,6\n", b','),
            ("a\tb\tc\n1\t2\t3\n", b'\t'),
            ("a;b;c\n1,5;2;3\n4;5,5;6\n", b';'),
            ("a|b\n\"x,y\"|2\n", b'|'),
        ] {
            let d = Dialect::sniff(text.as_bytes());
            assert_eq!(d.delimiter, delimiter, "{text:?}");
            assert!(d.has_header);
            assert!(!d.bom);
        }
    }

    #[test]
    fn json_writes_characters() {
        let d = Dialect {
            delimiter: b'\t',
            ..Dialect::default()
        };
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(
            json,
            r#"{"delimiter":"\t","quote":"\"","has_header":true,"bom":false}"#
        );
        assert_eq!(serde_json::from_str::<Dialect>(&json).unwrap(), d);
        assert!(
            serde_json::from_str::<Dialect>(
                r#"{"delimiter":"ab","quote":"\"","has_header":true,"bom":false}"#
            )
            .is_err()
        );
    }

    #[test]
    fn sees_the_bom_and_a_missing_header() {
        let d = Dialect::sniff(b"\xEF\xBB\xBFid,name\n1,x\n");
        assert!(d.bom && d.has_header);
        let d = Dialect::sniff(b"1,alice\n2,bob\n");
        assert!(!d.has_header);
    }
}

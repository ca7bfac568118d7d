//! How a CSV file is written: its delimiter, quote, header and byte-order mark, and how to guess
//! them from the first bytes.

use serde::{Deserialize, Serialize};

/// The delimiters [`Dialect::sniff`] considers, in order of preference on ties.
pub const SNIFF_DELIMITERS: [u8; 4] = [b',', b'\t', b';', b'|'];

/// The UTF-8 byte-order mark.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// How a CSV file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dialect {
    /// The field delimiter (`,`, `\t`, `;`, `|`, ...), as a byte; JSON writes it as a
    /// one-character string.
    #[serde(with = "byte_as_char")]
    pub delimiter: u8,
    /// The quote character (`"`); quotes inside quoted fields are doubled.
    #[serde(with = "byte_as_char")]
    pub quote: u8,
    /// Whether the first record is a header with the column names.
    pub has_header: bool,
    /// Whether the file starts with a UTF-8 byte-order mark (skipped when reading).
    pub bom: bool,
}

impl Default for Dialect {
    fn default() -> Self {
        Self {
            delimiter: b',',
            quote: b'"',
            has_header: true,
            bom: false,
        }
    }
}

impl Dialect {
    /// Guesses the dialect from the first bytes of a file (a few tens of KiB are plenty): the
    /// byte-order mark, the delimiter among [`SNIFF_DELIMITERS`] that splits the lines into the
    /// most consistent number of fields (more fields win ties), and whether the first line is a
    /// header: it is, as pandas assumes, unless one of its fields is a number.
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
        let delimiter = best.0;
        let has_header = looks_like_header(body, delimiter, b'"');
        Dialect {
            delimiter,
            quote: b'"',
            has_header,
            bom,
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

/// Field counts of up to `max_records` complete records of `head`.
fn field_counts(head: &[u8], delimiter: u8, quote: u8, max_records: usize) -> Vec<usize> {
    let dialect = Dialect {
        delimiter,
        quote,
        has_header: false,
        bom: false,
    };
    let mut reader = dialect.csv_reader();
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

/// The first record's fields, when `head` holds it completely.
fn first_record(head: &[u8], dialect: Dialect) -> Option<Vec<String>> {
    let mut reader = dialect.csv_reader();
    let mut out = vec![0u8; head.len() + 1];
    let mut ends = vec![0usize; head.len() + 1];
    let (result, _, _, nend) = reader.read_record(head, &mut out, &mut ends);
    if result != csv_core::ReadRecordResult::Record {
        return None;
    }
    let mut start = 0;
    let mut fields = Vec::with_capacity(nend);
    for &end in &ends[..nend] {
        fields.push(String::from_utf8_lossy(&out[start..end]).into_owned());
        start = end;
    }
    Some(fields)
}

fn looks_like_header(body: &[u8], delimiter: u8, quote: u8) -> bool {
    let dialect = Dialect {
        delimiter,
        quote,
        has_header: false,
        bom: false,
    };
    let Some(fields) = first_record(body, dialect) else {
        return true;
    };
    fields.iter().all(|f| {
        let t = f.trim();
        t.is_empty() || t.parse::<f64>().is_err()
    })
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

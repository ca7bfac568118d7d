//! Parses the records of one chunk, checking UTF-8 and the number of fields. Most records are
//! split by hand at their structural bytes (`structural`: fields unquoted, or quoted without
//! doubled quotes); the others go through `csv-core`, which both paths agree with.

use std::cell::Cell;

use crate::chunks::{Chunk, count_newlines};
use crate::pipeline::ChunkFailure;
use crate::quotes::unclosed_quote;
use crate::structural::Structurals;
use crate::{Dialect, LongRows, NullSpec, ProfileError};

/// One record of a chunk: its fields as text, and where it is in the file.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// The text the fields are slices of.
    text: &'a str,
    /// Where each field is in `text`.
    spans: &'a [(usize, usize)],
    /// Where the record starts in its chunk (blank lines before it included).
    start: usize,
    lines: &'a Lines<'a>,
    row_in_chunk: u64,
    columns: usize,
    nulls: &'a NullSpec,
    /// Whether the chunk, and so every field, is ASCII.
    ascii: bool,
}

impl<'a> Record<'a> {
    /// The physical line (1-based) where the record starts.
    pub fn line(&self) -> u64 {
        self.lines.at(self.start)
    }

    /// The record's position in its chunk, from 1; add [`crate::ScanChunk::first_row`] - 1 for
    /// the 1-based data row in the file.
    pub fn row_in_chunk(&self) -> u64 {
        self.row_in_chunk
    }

    /// The number of fields in the file's record (may be fewer than the header's columns).
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether every field is ASCII (known for the whole chunk: false says nothing).
    #[inline]
    pub(crate) fn all_ascii(&self) -> bool {
        self.ascii
    }

    /// Whether the record has no fields at all.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The number of columns in the header.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Field `i` as written (`None` past the record's end).
    #[inline]
    pub fn field(&self, i: usize) -> Option<&'a str> {
        let &(start, end) = self.spans.get(i)?;
        self.text.get(start..end)
    }

    /// Field `i`, or `None` when it is missing: a null marker, or past the record's end.
    #[inline]
    pub fn value(&self, i: usize) -> Option<&'a str> {
        self.field(i).filter(|f| !self.nulls.is_null(f.as_bytes()))
    }

    /// Whether `text` is a missing-value marker for this scan.
    #[inline]
    pub fn is_null_text(&self, text: &str) -> bool {
        self.nulls.is_null(text.as_bytes())
    }

    /// The fields as written.
    pub fn fields(&self) -> impl Iterator<Item = &'a str> + '_ {
        (0..self.len()).filter_map(|i| self.field(i))
    }

    /// The fields' text end to end, and where each field ends in it.
    pub(crate) fn to_joined(self) -> (String, Vec<usize>) {
        let bytes = self.spans.iter().map(|&(start, end)| end - start).sum();
        let mut text = String::with_capacity(bytes);
        let mut ends = Vec::with_capacity(self.len());
        for field in self.fields() {
            text.push_str(field);
            ends.push(text.len());
        }
        (text, ends)
    }
}

/// The physical line numbers of a chunk's records, counted when first asked for (records ask in
/// file order, so the chunk's newlines are counted once).
#[derive(Debug)]
pub(crate) struct Lines<'a> {
    bytes: &'a [u8],
    counted_to: Cell<usize>,
    line: Cell<u64>,
}

impl<'a> Lines<'a> {
    fn new(bytes: &'a [u8], first_line: u64) -> Self {
        Self {
            bytes,
            counted_to: Cell::new(0),
            line: Cell::new(first_line),
        }
    }

    /// The line of the record starting at `start`, past the blank lines `csv-core` skips.
    fn at(&self, start: usize) -> u64 {
        let bytes = self.bytes;
        let mut first = start.min(bytes.len());
        while first < bytes.len() && (bytes[first] == b'\n' || bytes[first] == b'\r') {
            first += 1;
        }
        let counted_to = self.counted_to.get();
        if first > counted_to {
            self.line
                .set(self.line.get() + count_newlines(&bytes[counted_to..first]));
            self.counted_to.set(first);
        }
        self.line.get()
    }
}

/// How to parse a chunk.
pub(crate) struct ParseSettings<'a> {
    pub(crate) dialect: Dialect,
    pub(crate) nulls: &'a NullSpec,
    pub(crate) header: &'a [String],
    pub(crate) long_rows: LongRows,
    pub(crate) max_record_bytes: usize,
    pub(crate) source_name: &'a str,
}

/// What parsing a chunk found besides its records.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ChunkCounts {
    pub(crate) rows: u64,
    pub(crate) short_rows: u64,
    pub(crate) long_rows: u64,
    pub(crate) unclosed_quotes: u64,
}

/// Calls `each` with every record of `chunk` that has at most as many fields as the header
/// (longer records are skipped and counted, or an error, by `settings.long_rows`); records
/// with fewer fields are passed on and counted. `bad` is called with the line of each short or
/// skipped record.
pub(crate) fn parse_chunk(
    chunk: &Chunk,
    settings: &ParseSettings<'_>,
    mut each: impl FnMut(&Record<'_>),
    mut bad: impl FnMut(u64),
) -> Result<ChunkCounts, ChunkFailure> {
    let bytes = &chunk.bytes[..];
    let lines = Lines::new(bytes, chunk.first_line);
    // Fields are cut at ASCII bytes, so the fields of a valid chunk are valid. A chunk with
    // invalid UTF-8 goes through `csv-core` record by record, to name the record and column.
    let dialect = settings.dialect;
    let valid = if dialect.delimiter.is_ascii() && dialect.quote.is_ascii() {
        // SIMD validation (the chunk is read once more here, a few times faster than std).
        simdutf8::basic::from_utf8(bytes).ok()
    } else {
        None
    };
    let mut fallback = CsvCore::new(dialect, settings.header.len());
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(settings.header.len() + 1);
    let mut counts = ChunkCounts::default();
    let columns = settings.header.len();
    let mut splitter = Splitter::new(bytes, dialect, settings.max_record_bytes);
    let mut pos = 0usize;
    loop {
        let start = pos;
        let fast =
            valid.and_then(|text| splitter.split(pos, &mut spans).map(|split| (text, split)));
        let text = match fast {
            Some((_, Split::End)) => return Ok(counts),
            Some((text, Split::Record(next))) => {
                pos = next;
                text
            }
            None => {
                let (outlen, endlen) =
                    match fallback.read(chunk, &mut pos, settings, &lines, start)? {
                        Outcome::Record(outlen, endlen) => (outlen, endlen),
                        Outcome::End => return Ok(counts),
                        Outcome::Unclosed(at) => {
                            let line = lines.at(at);
                            if settings.long_rows == LongRows::Error {
                                return Err(ProfileError::UnclosedQuote {
                                    source_name: settings.source_name.to_owned(),
                                    line,
                                }
                                .into());
                            }
                            // The quote's line is one bad row; reading goes on after it.
                            counts.unclosed_quotes += 1;
                            bad(line);
                            pos = memchr::memchr(b'\n', &bytes[at..])
                                .map_or(bytes.len(), |n| at + n + 1);
                            continue;
                        }
                    };
                let fields = &fallback.ends[..endlen];
                spans.clear();
                let mut from = 0;
                for &end in fields {
                    spans.push((from, end));
                    from = end;
                }
                match std::str::from_utf8(&fallback.out[..outlen]) {
                    Ok(text) => text,
                    // A record with too many fields fails or is skipped below, unchecked.
                    Err(_) if spans.len() > columns => "",
                    Err(err) => return Err(invalid_utf8(&err, fields, settings, lines.at(start))),
                }
            }
        };
        if spans.len() > columns {
            let line = lines.at(start);
            match settings.long_rows {
                LongRows::Error => {
                    return Err(ProfileError::TooManyFields {
                        source_name: settings.source_name.to_owned(),
                        line,
                        expected: columns,
                        found: spans.len(),
                        reference: if dialect.has_header {
                            "header"
                        } else {
                            "first row"
                        },
                    }
                    .into());
                }
                LongRows::Skip => {
                    counts.long_rows += 1;
                    bad(line);
                    continue;
                }
            }
        }
        if spans.len() < columns {
            counts.short_rows += 1;
            bad(lines.at(start));
        }
        counts.rows += 1;
        each(&Record {
            text,
            spans: &spans,
            start,
            lines: &lines,
            row_in_chunk: counts.rows,
            columns,
            nulls: settings.nulls,
            ascii: chunk.ascii,
        });
    }
}

fn invalid_utf8(
    err: &std::str::Utf8Error,
    ends: &[usize],
    settings: &ParseSettings<'_>,
    line: u64,
) -> ChunkFailure {
    let at = err.valid_up_to();
    let col = ends.iter().position(|&end| end > at).unwrap_or(0);
    ProfileError::InvalidUtf8 {
        source_name: settings.source_name.to_owned(),
        line,
        column: settings
            .header
            .get(col)
            .cloned()
            .unwrap_or_else(|| format!("#{}", col + 1)),
    }
    .into()
}

/// What [`Splitter::split`] found.
enum Split {
    /// Only blank lines are left.
    End,
    /// A record, whose terminator ends before this position.
    Record(usize),
}

/// Splits simple records by their structural bytes.
struct Splitter<'a> {
    bytes: &'a [u8],
    dialect: Dialect,
    max_record_bytes: usize,
    structurals: Structurals<'a>,
}

impl<'a> Splitter<'a> {
    fn new(bytes: &'a [u8], dialect: Dialect, max_record_bytes: usize) -> Self {
        Self {
            bytes,
            dialect,
            max_record_bytes,
            structurals: Structurals::new(bytes, dialect.delimiter, dialect.quote),
        }
    }

    /// Splits the record at `pos` when it is simple: every field unquoted, or quoted without
    /// doubled quotes and followed by a delimiter or a line end, the record ended by a line end
    /// within the chunk and not longer than the record limit. `spans` receives the fields.
    /// `None` leaves the record to `csv-core`.
    #[inline]
    fn split(&mut self, mut pos: usize, spans: &mut Vec<(usize, usize)>) -> Option<Split> {
        let bytes = self.bytes;
        spans.clear();
        // `csv-core` skips blank lines before a record.
        while pos < bytes.len() && (bytes[pos] == b'\n' || bytes[pos] == b'\r') {
            pos += 1;
        }
        if pos == bytes.len() {
            return Some(Split::End);
        }
        let start = pos;
        let (quote, delimiter) = (self.dialect.quote, self.dialect.delimiter);
        let end = loop {
            let &first = bytes.get(pos)?;
            if first == quote {
                // The closing quote: the next structural byte that is a quote.
                let mut at = pos + 1;
                let close = loop {
                    let s = self.structurals.next_from(at)?;
                    if bytes[s] == quote {
                        break s;
                    }
                    at = s + 1;
                };
                spans.push((pos + 1, close));
                match *bytes.get(close + 1)? {
                    b'\n' | b'\r' => break close + 2,
                    b if b == delimiter => pos = close + 2,
                    // A doubled quote, or text after the closing quote.
                    _ => return None,
                }
            } else {
                // A quote inside an unquoted field is text.
                let mut at = pos;
                let end = loop {
                    let s = self.structurals.next_from(at)?;
                    if bytes[s] != quote {
                        break s;
                    }
                    at = s + 1;
                };
                spans.push((pos, end));
                if bytes[end] == delimiter {
                    pos = end + 1;
                } else {
                    break end + 1;
                }
            }
        };
        (end - start <= self.max_record_bytes).then_some(Split::Record(end))
    }
}

/// What [`CsvCore::read`] found.
enum Outcome {
    /// A record: (output bytes, fields).
    Record(usize, usize),
    /// The end of the chunk.
    End,
    /// The chunk's last record runs to the end of the input inside a quoted field opened at
    /// this position.
    Unclosed(usize),
}

/// `csv-core` with its buffers, for the records [`Splitter::split`] leaves.
struct CsvCore {
    reader: csv_core::Reader,
    out: Vec<u8>,
    ends: Vec<usize>,
}

impl CsvCore {
    fn new(dialect: Dialect, columns: usize) -> Self {
        Self {
            reader: dialect.csv_reader(),
            out: vec![0u8; 1 << 16],
            ends: vec![0usize; columns.max(8) + 1],
        }
    }

    /// Reads the record at `*pos` into `out` and `ends`. The reader is always between records
    /// here, so it can take over from [`Splitter::split`] at any record.
    fn read(
        &mut self,
        chunk: &Chunk,
        pos: &mut usize,
        settings: &ParseSettings<'_>,
        lines: &Lines<'_>,
        start: usize,
    ) -> Result<Outcome, ChunkFailure> {
        let bytes = &chunk.bytes[..];
        let (mut outlen, mut endlen) = (0usize, 0usize);
        let too_large = || {
            ChunkFailure::from(ProfileError::RecordTooLarge {
                source_name: settings.source_name.to_owned(),
                line: lines.at(start),
                limit: settings.max_record_bytes,
            })
        };
        loop {
            let (result, nin, nout, nend) = self.reader.read_record(
                &bytes[*pos..],
                &mut self.out[outlen..],
                &mut self.ends[endlen..],
            );
            *pos += nin;
            outlen += nout;
            endlen += nend;
            match result {
                csv_core::ReadRecordResult::InputEmpty => {
                    if *pos < bytes.len() {
                        continue;
                    }
                    // The chunk is consumed: finish a record left without a terminator.
                    let (r, _, nout, nend) = self.reader.read_record(
                        &[],
                        &mut self.out[outlen..],
                        &mut self.ends[endlen..],
                    );
                    outlen += nout;
                    endlen += nend;
                    if r != csv_core::ReadRecordResult::Record {
                        return Ok(Outcome::End);
                    }
                    if !chunk.last {
                        return Err(ChunkFailure::Boundary);
                    }
                    if let Some(at) = unclosed_quote(&bytes[start..], settings.dialect) {
                        return Ok(Outcome::Unclosed(start + at));
                    }
                }
                csv_core::ReadRecordResult::OutputFull => {
                    if self.out.len() > settings.max_record_bytes {
                        return Err(too_large());
                    }
                    self.out.resize(self.out.len() * 2, 0);
                    continue;
                }
                csv_core::ReadRecordResult::OutputEndsFull => {
                    self.ends.resize(self.ends.len() * 2, 0);
                    continue;
                }
                csv_core::ReadRecordResult::End => return Ok(Outcome::End),
                csv_core::ReadRecordResult::Record => {}
            }
            if outlen > settings.max_record_bytes {
                return Err(too_large());
            }
            return Ok(Outcome::Record(outlen, endlen));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every record of `bytes` by `csv-core` alone: (line, fields).
    fn reference(bytes: &[u8]) -> Vec<(u64, Vec<String>)> {
        let mut reader = Dialect::default().csv_reader();
        let mut out = vec![0u8; bytes.len() + 1];
        let mut ends = vec![0usize; bytes.len() + 1];
        let mut records = Vec::new();
        let mut pos = 0;
        loop {
            let mut first = pos;
            while first < bytes.len() && matches!(bytes[first], b'\n' | b'\r') {
                first += 1;
            }
            let line = 1 + count_newlines(&bytes[..first]);
            let (mut r, nin, mut nout, mut nend) =
                reader.read_record(&bytes[pos..], &mut out, &mut ends);
            pos += nin;
            if r == csv_core::ReadRecordResult::InputEmpty {
                let (r2, _, nout2, nend2) =
                    reader.read_record(&[], &mut out[nout..], &mut ends[nend..]);
                (r, nout, nend) = (r2, nout + nout2, nend + nend2);
            }
            if r != csv_core::ReadRecordResult::Record {
                return records;
            }
            let mut start = 0;
            let fields = ends[..nend]
                .iter()
                .map(|&end| {
                    let f = String::from_utf8_lossy(&out[start..end]).into_owned();
                    start = end;
                    f
                })
                .collect();
            let _ = nout;
            records.push((line, fields));
        }
    }

    fn parsed(bytes: &[u8]) -> Result<Vec<(u64, Vec<String>)>, ChunkFailure> {
        let chunk = Chunk {
            index: 0,
            bytes: bytes.to_vec(),
            first_line: 1,
            last: true,
            ascii: bytes.is_ascii(),
        };
        let header: Vec<String> = (0..64).map(|i| format!("c{i}")).collect();
        let nulls = NullSpec::default();
        let settings = ParseSettings {
            dialect: Dialect::default(),
            nulls: &nulls,
            header: &header,
            long_rows: LongRows::Error,
            max_record_bytes: 1 << 20,
            source_name: "t.csv",
        };
        let mut records = Vec::new();
        parse_chunk(
            &chunk,
            &settings,
            |r| records.push((r.line(), r.fields().map(str::to_owned).collect())),
            |_| {},
        )?;
        Ok(records)
    }

    #[test]
    fn the_fast_split_agrees_with_csv_core() {
        let pieces = [
            "a", "bc", ",", "\"", "\"\"", "\n", "\r", "\r\n", " ", "é", "\u{feff}", "x\"y",
        ];
        let mut x: u64 = 7;
        // Short texts, then longer ones whose records cross the splitter's 64-byte blocks.
        for case in 0..7_000 {
            let mut text = String::new();
            let length = if case < 5_000 { case % 24 } else { case % 160 };
            for _ in 0..length {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                text.push_str(pieces[(x >> 33) as usize % pieces.len()]);
            }
            let ours = parsed(text.as_bytes());
            if unclosed_quote(text.as_bytes(), Dialect::default()).is_some() {
                // `csv-core` reads the rest as one field; the profiler refuses.
                assert!(
                    matches!(
                        ours,
                        Err(ChunkFailure::Error(ProfileError::UnclosedQuote { .. }))
                    ),
                    "{text:?}"
                );
            } else {
                assert_eq!(ours.unwrap(), reference(text.as_bytes()), "{text:?}");
            }
        }
    }
}

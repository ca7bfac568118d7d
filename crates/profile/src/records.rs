//! Parses the records of one chunk with `csv-core`, checking UTF-8 and the number of fields.

use crate::chunks::Chunk;
use crate::pipeline::ChunkFailure;
use crate::{Dialect, LongRows, NullSpec, ProfileError};

/// One record of a chunk: its fields as text, and where it is in the file.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    text: &'a str,
    ends: &'a [usize],
    line: u64,
    row_in_chunk: u64,
    columns: usize,
    nulls: &'a NullSpec,
}

impl<'a> Record<'a> {
    /// The physical line (1-based) where the record starts.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The record's position in its chunk, from 1; add [`crate::ScanChunk::first_row`] - 1 for
    /// the 1-based data row in the file.
    pub fn row_in_chunk(&self) -> u64 {
        self.row_in_chunk
    }

    /// The number of fields in the file's record (may be fewer than the header's columns).
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the record has no fields at all.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The number of columns in the header.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Field `i` as written (`None` past the record's end).
    #[inline]
    pub fn field(&self, i: usize) -> Option<&'a str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.text.get(start..end)
    }

    /// Field `i`, or `None` when it is missing: a null marker, or past the record's end.
    #[inline]
    pub fn value(&self, i: usize) -> Option<&'a str> {
        self.field(i).filter(|f| !self.nulls.is_null(f.as_bytes()))
    }

    /// The fields as written.
    pub fn fields(&self) -> impl Iterator<Item = &'a str> + '_ {
        (0..self.len()).filter_map(|i| self.field(i))
    }

    /// The fields' text end to end, and where each field ends in it.
    pub(crate) fn raw(&self) -> (&'a str, &'a [usize]) {
        (self.text, self.ends)
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
}

/// Calls `each` with every record of `chunk` that has at most as many fields as the header
/// (longer records are skipped and counted, or an error, by `settings.long_rows`); records
/// with fewer fields are passed on and counted. `bad` is called with the line of each short or
/// skipped record.
#[allow(clippy::too_many_lines)] // the csv-core state machine reads best in one piece
pub(crate) fn parse_chunk(
    chunk: &Chunk,
    settings: &ParseSettings<'_>,
    mut each: impl FnMut(&Record<'_>),
    mut bad: impl FnMut(u64),
) -> Result<ChunkCounts, ChunkFailure> {
    let bytes = &chunk.bytes[..];
    let mut reader = settings.dialect.csv_reader();
    let mut out = vec![0u8; 1 << 16];
    let mut ends = vec![0usize; settings.header.len().max(8) + 1];
    let mut counts = ChunkCounts::default();
    let (mut outlen, mut endlen) = (0usize, 0usize);
    let mut pos = 0usize;
    let mut record_start = 0usize;
    let mut newlines_counted_to = 0usize;
    let mut line = chunk.first_line;
    let columns = settings.header.len();
    loop {
        let (result, nin, nout, nend) =
            reader.read_record(&bytes[pos..], &mut out[outlen..], &mut ends[endlen..]);
        pos += nin;
        outlen += nout;
        endlen += nend;
        match result {
            csv_core::ReadRecordResult::InputEmpty => {
                if pos < bytes.len() {
                    continue;
                }
                // The chunk is consumed: finish a record left without a terminator.
                let (r, _, nout, nend) =
                    reader.read_record(&[], &mut out[outlen..], &mut ends[endlen..]);
                outlen += nout;
                endlen += nend;
                if r != csv_core::ReadRecordResult::Record {
                    return Ok(counts);
                }
                if !chunk.last {
                    return Err(ChunkFailure::Boundary);
                }
            }
            csv_core::ReadRecordResult::OutputFull => {
                if out.len() > settings.max_record_bytes {
                    return Err(ProfileError::RecordTooLarge {
                        source_name: settings.source_name.to_owned(),
                        line: line_of(bytes, record_start, &mut newlines_counted_to, &mut line),
                        limit: settings.max_record_bytes,
                    }
                    .into());
                }
                out.resize(out.len() * 2, 0);
                continue;
            }
            csv_core::ReadRecordResult::OutputEndsFull => {
                ends.resize(ends.len() * 2, 0);
                continue;
            }
            csv_core::ReadRecordResult::End => return Ok(counts),
            csv_core::ReadRecordResult::Record => {}
        }
        // A complete record.
        let rec_line = line_of(bytes, record_start, &mut newlines_counted_to, &mut line);
        if outlen > settings.max_record_bytes {
            return Err(ProfileError::RecordTooLarge {
                source_name: settings.source_name.to_owned(),
                line: rec_line,
                limit: settings.max_record_bytes,
            }
            .into());
        }
        record_start = pos;
        let fields = &ends[..endlen];
        let (o, e) = (outlen, endlen);
        outlen = 0;
        endlen = 0;
        if e > columns {
            match settings.long_rows {
                LongRows::Error => {
                    return Err(ProfileError::TooManyFields {
                        source_name: settings.source_name.to_owned(),
                        line: rec_line,
                        expected: columns,
                        found: e,
                    }
                    .into());
                }
                LongRows::Skip => {
                    counts.long_rows += 1;
                    bad(rec_line);
                    continue;
                }
            }
        }
        let text = match std::str::from_utf8(&out[..o]) {
            Ok(t) => t,
            Err(err) => {
                let at = err.valid_up_to();
                let col = fields.iter().position(|&end| end > at).unwrap_or(0);
                return Err(ProfileError::InvalidUtf8 {
                    source_name: settings.source_name.to_owned(),
                    line: rec_line,
                    column: settings
                        .header
                        .get(col)
                        .cloned()
                        .unwrap_or_else(|| format!("#{}", col + 1)),
                }
                .into());
            }
        };
        if e < columns {
            counts.short_rows += 1;
            bad(rec_line);
        }
        counts.rows += 1;
        each(&Record {
            text,
            ends: fields,
            line: rec_line,
            row_in_chunk: counts.rows,
            columns,
            nulls: settings.nulls,
        });
    }
}

/// The physical line where the record starting at `start` begins, skipping the blank lines
/// `csv-core` passes over; keeps a running count of newlines.
fn line_of(bytes: &[u8], start: usize, counted_to: &mut usize, line: &mut u64) -> u64 {
    let mut first = start;
    while first < bytes.len() && (bytes[first] == b'\n' || bytes[first] == b'\r') {
        first += 1;
    }
    let first = first.min(bytes.len());
    if first > *counted_to {
        *line += crate::chunks::count_newlines(&bytes[*counted_to..first]);
        *counted_to = first;
    }
    *line
}

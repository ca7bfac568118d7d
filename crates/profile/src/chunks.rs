//! Cuts a byte stream into chunks that end on record boundaries, so that workers can parse them
//! independently and in parallel.
//!
//! The fast way ([`Boundary::QuoteParity`]) counts quote bytes: a newline is a record boundary
//! when an even number of quotes precede it in the chunk (chunks start on boundaries). A stray
//! quote inside an unquoted field breaks that reasoning, so workers check that each chunk's last
//! record ends exactly at the chunk's end; when one does not, the profile is redone with
//! [`Boundary::Parse`], which runs the CSV parser itself to find the boundaries.

use std::io::Read;

use crate::encoding::MalformedAt;
use crate::quotes::unclosed_quote;
use crate::{Dialect, Encoding, ProfileError};

/// How chunk boundaries are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Boundary {
    /// Count quotes (fast, verified by the workers).
    QuoteParity,
    /// Parse records (exact, sequential).
    Parse,
}

/// A piece of the input that starts and ends on record boundaries.
#[derive(Debug)]
pub(crate) struct Chunk {
    /// Position in the stream, from 0.
    pub(crate) index: u64,
    /// The bytes.
    pub(crate) bytes: Vec<u8>,
    /// The physical line (1-based) of the first byte.
    pub(crate) first_line: u64,
    /// Whether this is the last chunk (its last record may lack a newline).
    pub(crate) last: bool,
    /// Whether every byte is ASCII (then every field is, and its length counts its characters).
    pub(crate) ascii: bool,
}

/// Reads `reader` after `leftover` and hands out chunks of about `chunk_bytes`.
pub(crate) struct Chunker<'a> {
    pub(crate) reader: Box<dyn Read + Send + 'a>,
    pub(crate) buf: Vec<u8>,
    pub(crate) line: u64,
    pub(crate) eof: bool,
    pub(crate) index: u64,
    pub(crate) chunk_bytes: usize,
    pub(crate) max_record_bytes: usize,
    pub(crate) dialect: Dialect,
    pub(crate) boundary: Boundary,
    pub(crate) source_name: String,
    /// Buffers of finished chunks, for reuse.
    pub(crate) recycled: Option<std::sync::mpsc::Receiver<Vec<u8>>>,
    /// Bytes read so far (after decompression and decoding).
    pub(crate) bytes_read: u64,
    /// The input's encoding, for errors.
    pub(crate) encoding: Encoding,
    /// Whether the input is gzip, for errors.
    pub(crate) gzip: bool,
}

impl Chunker<'_> {
    /// Reads until `buf` holds at least `want` bytes or the input ends.
    pub(crate) fn fill_to(&mut self, want: usize) -> Result<(), ProfileError> {
        if self.eof || self.buf.len() >= want {
            return Ok(());
        }
        let missing = want - self.buf.len();
        self.buf.reserve(missing);
        // `read_to_end` fills the spare capacity without zeroing it first.
        let before = self.buf.len();
        let result = (&mut self.reader)
            .take(missing as u64)
            .read_to_end(&mut self.buf);
        let n = self.buf.len() - before;
        self.bytes_read += n as u64;
        match result {
            Ok(_) => {
                if n < missing {
                    self.eof = true;
                }
                Ok(())
            }
            Err(error) => Err(self.read_error(error)),
        }
    }

    /// The error for a read that failed partway, naming the line reached.
    fn read_error(&self, error: std::io::Error) -> ProfileError {
        if let Some(MalformedAt(line)) = error.get_ref().and_then(|e| e.downcast_ref()) {
            return ProfileError::InvalidEncoding {
                source_name: self.source_name.clone(),
                line: *line,
                encoding: self.encoding.python_name(),
            };
        }
        ProfileError::Read {
            source_name: self.source_name.clone(),
            line: self.line + count_newlines(&self.buf),
            bytes: self.bytes_read,
            hint: if self.gzip {
                " (`gzip -t FILE` tests a .gz file)"
            } else {
                ""
            },
            error,
        }
    }

    /// The next chunk, or `None` at the end of the input.
    pub(crate) fn next_chunk(&mut self) -> Result<Option<Chunk>, ProfileError> {
        let target = self.chunk_bytes;
        // Read a little past the target to find the end of the record there.
        let mut want = target.saturating_add(256 << 10);
        loop {
            self.fill_to(want)?;
            if self.buf.is_empty() {
                return Ok(None);
            }
            // With quote parity, what the bytes before `target` hold is counted in one pass.
            let mut counted = None;
            let cut = if self.eof && self.buf.len() <= target {
                Some(self.buf.len())
            } else {
                let target = target.min(self.buf.len());
                match self.boundary {
                    Boundary::QuoteParity => {
                        let head = census(&self.buf[..target], self.dialect.quote);
                        counted = Some((target, head));
                        cut_by_parity(&self.buf, target, self.dialect.quote, head.quotes)
                    }
                    Boundary::Parse => cut_by_parsing(&self.buf, target, self.dialect),
                }
            };
            let cut = match cut {
                Some(cut) => cut,
                // The rest is one record without a final newline.
                None if self.eof => self.buf.len(),
                None => {
                    if self.buf.len() > self.max_record_bytes.saturating_add(target) {
                        return Err(self.too_large());
                    }
                    want = self.buf.len().saturating_mul(2);
                    continue;
                }
            };
            let mut rest = self
                .recycled
                .as_ref()
                .and_then(|r| r.try_recv().ok())
                .unwrap_or_default();
            rest.clear();
            rest.extend_from_slice(&self.buf[cut..]);
            let mut bytes = std::mem::replace(&mut self.buf, rest);
            bytes.truncate(cut);
            let whole = match counted {
                Some((at, head)) if at <= cut => head.and(census(&bytes[at..], self.dialect.quote)),
                _ => census(&bytes, self.dialect.quote),
            };
            if whole.nul
                && let Some(pos) = memchr::memchr(0, &bytes)
            {
                let line = self.line + count_newlines(&bytes[..pos]);
                return Err(ProfileError::Binary {
                    source_name: self.source_name.clone(),
                    line,
                });
            }
            let chunk = Chunk {
                index: self.index,
                first_line: self.line,
                last: self.eof && self.buf.is_empty(),
                ascii: !whole.high,
                bytes,
            };
            self.line += whole.newlines;
            self.index += 1;
            return Ok(Some(chunk));
        }
    }
}

impl Chunker<'_> {
    /// The error for a buffer that holds no record end: a quote that never closes (named by
    /// its line), or a record over the limit.
    fn too_large(&self) -> ProfileError {
        if let Some(at) = unclosed_quote(&self.buf, self.dialect) {
            return ProfileError::UnclosedQuote {
                source_name: self.source_name.clone(),
                line: self.line + count_newlines(&self.buf[..at]),
            };
        }
        ProfileError::RecordTooLarge {
            source_name: self.source_name.clone(),
            line: self.line,
            limit: self.max_record_bytes,
        }
    }
}

pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// What [`census`] counts in a piece of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Census {
    pub(crate) quotes: u64,
    pub(crate) newlines: u64,
    /// Whether there is a NUL byte.
    pub(crate) nul: bool,
    /// Whether there is a byte outside ASCII.
    pub(crate) high: bool,
}

impl Census {
    /// The census of this piece followed by `next`.
    fn and(self, next: Census) -> Census {
        Census {
            quotes: self.quotes + next.quotes,
            newlines: self.newlines + next.newlines,
            nul: self.nul || next.nul,
            high: self.high || next.high,
        }
    }
}

/// Counts quotes and newlines and looks for a NUL byte and for bytes outside ASCII in one pass
/// (three `memchr` passes read the chunk three times): per-lane byte counters over blocks of 64
/// bytes, which the compiler turns into vector compares, summed every 255 blocks before they
/// could overflow.
pub(crate) fn census(bytes: &[u8], quote: u8) -> Census {
    const LANES: usize = 64;
    let mut total = Census {
        quotes: 0,
        newlines: 0,
        nul: false,
        high: false,
    };
    let (mut nul, mut any) = (0u8, 0u8);
    let mut runs = bytes.chunks_exact(LANES * 255);
    for run in &mut runs {
        let (mut quotes, mut newlines) = ([0u8; LANES], [0u8; LANES]);
        let (mut nuls, mut ors) = ([0u8; LANES], [0u8; LANES]);
        for block in run.chunks_exact(LANES) {
            for i in 0..LANES {
                let b = block[i];
                quotes[i] += u8::from(b == quote);
                newlines[i] += u8::from(b == b'\n');
                nuls[i] |= u8::from(b == 0);
                ors[i] |= b;
            }
        }
        total.quotes += quotes.iter().map(|&n| u64::from(n)).sum::<u64>();
        total.newlines += newlines.iter().map(|&n| u64::from(n)).sum::<u64>();
        nul |= nuls.iter().fold(0, |a, &n| a | n);
        any |= ors.iter().fold(0, |a, &n| a | n);
    }
    for &b in runs.remainder() {
        total.quotes += u64::from(b == quote);
        total.newlines += u64::from(b == b'\n');
        nul |= u8::from(b == 0);
        any |= b;
    }
    total.nul = nul != 0;
    total.high = !any.is_ascii();
    total
}

/// The end of the first line at or after `target` that an even number of quotes precede;
/// `quotes` is the number before `target`.
fn cut_by_parity(buf: &[u8], target: usize, quote: u8, quotes: u64) -> Option<usize> {
    let mut odd = quotes % 2 == 1;
    for pos in memchr::memchr2_iter(quote, b'\n', &buf[target..]) {
        let at = target + pos;
        if buf[at] == quote {
            odd = !odd;
        } else if !odd {
            return Some(at + 1);
        }
    }
    None
}

/// The end of the first record that ends at or after `target`, found by parsing from the start.
fn cut_by_parsing(buf: &[u8], target: usize, dialect: Dialect) -> Option<usize> {
    let mut reader = dialect.csv_reader();
    let mut out = vec![0u8; 1 << 16];
    let mut ends = vec![0usize; 1024];
    let mut pos = 0;
    loop {
        let (result, nin, _, _) = reader.read_record(&buf[pos..], &mut out, &mut ends);
        pos += nin;
        match result {
            csv_core::ReadRecordResult::Record => {
                if pos >= target {
                    return Some(pos);
                }
            }
            csv_core::ReadRecordResult::OutputFull | csv_core::ReadRecordResult::OutputEndsFull => {
            }
            csv_core::ReadRecordResult::InputEmpty | csv_core::ReadRecordResult::End => {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(text: &str, chunk_bytes: usize, boundary: Boundary) -> Vec<String> {
        let mut chunker = Chunker {
            reader: Box::new(text.as_bytes()),
            buf: Vec::new(),
            line: 1,
            eof: false,
            index: 0,
            chunk_bytes,
            max_record_bytes: 1 << 20,
            dialect: Dialect::default(),
            boundary,
            source_name: "t.csv".into(),
            recycled: None,
            bytes_read: 0,
            encoding: Encoding::UTF8,
            gzip: false,
        };
        let mut out = Vec::new();
        while let Some(c) = chunker.next_chunk().unwrap() {
            out.push(String::from_utf8(c.bytes).unwrap());
        }
        out
    }

    #[test]
    fn the_census_agrees_with_counting_byte_by_byte() {
        let alphabet = "ab\"\n\0,\ré".as_bytes();
        let mut x: u64 = 3;
        for len in [
            0,
            1,
            63,
            64,
            65,
            64 * 255 - 1,
            64 * 255,
            64 * 255 + 1,
            3 * 64 * 255 + 77,
        ] {
            for (nul_allowed, high_allowed) in [(false, false), (true, false), (false, true)] {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        let b = alphabet[(x >> 33) as usize % alphabet.len()];
                        match b {
                            0 if !nul_allowed => b'a',
                            0x80.. if !high_allowed => b'b',
                            _ => b,
                        }
                    })
                    .collect();
                let count = |c: u8| bytes.iter().map(|&b| u64::from(b == c)).sum::<u64>();
                assert_eq!(
                    census(&bytes, b'"'),
                    Census {
                        quotes: count(b'"'),
                        newlines: count(b'\n'),
                        nul: count(0) > 0,
                        high: !bytes.is_ascii(),
                    },
                    "{len}"
                );
            }
        }
    }

    #[test]
    fn cuts_respect_quoted_newlines() {
        let text = "1,\"a\nb\nc\"\n2,x\n3,\"\"\"q\"\"\n\"\n4,y\n";
        for boundary in [Boundary::QuoteParity, Boundary::Parse] {
            for size in 1..text.len() + 2 {
                let parts = chunks(text, size, boundary);
                assert_eq!(parts.concat(), text);
                for p in &parts {
                    assert!(
                        ["1,\"a\nb\nc\"\n", "2,x\n", "3,\"\"\"q\"\"\n\"\n", "4,y\n"]
                            .iter()
                            .any(|r| p.ends_with(r)),
                        "{boundary:?} {size}: {p:?}"
                    );
                }
            }
        }
    }
}

//! Opens an input (a file, a `.gz` file, or standard input), decodes it to UTF-8 when it has
//! another encoding, blanks the lines pandas would skip, skips the byte-order mark, settles the
//! dialect and reads the header.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::chunks::{Boundary, Chunker, count_newlines};
use crate::dialect::UTF8_BOM;
use crate::filter::LineFilter;
use crate::quotes::unclosed_quote;
use crate::{Dialect, Encoding, ProfileError};

/// How many bytes the dialect is sniffed from.
const SNIFF_BYTES: usize = 64 << 10;

/// An input ready to be cut into chunks, with its header read.
pub(crate) struct Opened<'a> {
    pub(crate) chunker: Chunker<'a>,
    pub(crate) dialect: Dialect,
    /// Column names as pandas names them.
    pub(crate) header: Vec<String>,
    /// Bytes of the byte-order mark and the header.
    pub(crate) header_bytes: u64,
    /// The file's size when known (0 for pipes and compressed input).
    pub(crate) total_bytes: u64,
}

/// Opens `path` (`-` is standard input); gzip is recognised by its magic bytes. Returns the
/// reader, the size on disk (0 when unknown or compressed) and whether it is gzip.
pub(crate) fn open_path(path: &Path) -> Result<(Box<dyn Read + Send>, u64, bool), ProfileError> {
    if path.as_os_str() == "-" {
        let stdin: Box<dyn Read + Send> = Box::new(std::io::stdin());
        let (reader, gz) = sniff_gzip(stdin, "-")?;
        return Ok((reader, 0, gz));
    }
    let file = File::open(path).map_err(|e| ProfileError::io(path, e))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let boxed: Box<dyn Read + Send> = Box::new(file);
    let (reader, gz) = sniff_gzip(boxed, &path.display().to_string())?;
    Ok((reader, if gz { 0 } else { size }, gz))
}

/// Wraps `reader` in a gzip decoder when its first bytes are gzip's magic; says whether.
pub(crate) fn gunzip_if_needed<'a>(
    reader: Box<dyn Read + Send + 'a>,
    name: &str,
) -> Result<(Box<dyn Read + Send + 'a>, bool), ProfileError> {
    sniff_gzip(reader, name)
}

/// Peeks at the first two bytes; wraps the reader in a gzip decoder when they are gzip's magic.
fn sniff_gzip<'a>(
    reader: Box<dyn Read + Send + 'a>,
    name: &str,
) -> Result<(Box<dyn Read + Send + 'a>, bool), ProfileError> {
    let (magic, whole) = peek(reader, 2).map_err(|e| ProfileError::io(name, e))?;
    let gz = magic == [0x1f, 0x8b];
    if gz {
        let decoder = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(256 << 10, whole));
        Ok((Box::new(decoder), true))
    } else {
        Ok((whole, false))
    }
}

/// The first `n` bytes of `reader` (fewer at its end), and a reader that yields them again.
fn peek<'a>(
    mut reader: Box<dyn Read + Send + 'a>,
    n: u64,
) -> std::io::Result<(Vec<u8>, Box<dyn Read + Send + 'a>)> {
    let mut head = Vec::with_capacity(2);
    (&mut reader).take(n).read_to_end(&mut head)?;
    let whole: Box<dyn Read + Send + 'a> =
        Box::new(std::io::Cursor::new(head.clone()).chain(reader));
    Ok((head, whole))
}

/// Settings for [`open`].
pub(crate) struct OpenSettings {
    pub(crate) source_name: String,
    pub(crate) dialect: Option<Dialect>,
    pub(crate) has_header: Option<bool>,
    pub(crate) chunk_bytes: usize,
    pub(crate) max_record_bytes: usize,
    pub(crate) boundary: Boundary,
    /// The encoding when given; `None` reads UTF-8, or UTF-16 when a byte-order mark says so.
    pub(crate) encoding: Option<Encoding>,
    /// Lines to skip before the header.
    pub(crate) skip_rows: u64,
    /// The comment character.
    pub(crate) comment: Option<u8>,
    /// Whether the input was gzip (for the advice when reading fails).
    pub(crate) gzip: bool,
}

/// Reads the head of `reader`, settles the dialect and the header, and returns the chunker
/// positioned on the first data record.
#[allow(clippy::too_many_lines)] // one sequence: adapters, chunker, sniffing, header checks
pub(crate) fn open<'a>(
    reader: Box<dyn Read + Send + 'a>,
    total_bytes: u64,
    settings: &OpenSettings,
) -> Result<Opened<'a>, ProfileError> {
    let name = settings.source_name.clone();
    let (reader, encoding, total_bytes) = decoded(reader, total_bytes, settings)?;
    let quote = settings.dialect.map_or(b'"', |d| d.quote);
    let reader: Box<dyn Read + Send + 'a> = if settings.skip_rows > 0 || settings.comment.is_some()
    {
        Box::new(LineFilter::new(
            reader,
            settings.skip_rows,
            settings.comment,
            quote,
        ))
    } else {
        reader
    };
    let mut chunker = Chunker {
        reader,
        buf: Vec::new(),
        line: 1,
        eof: false,
        index: 0,
        chunk_bytes: settings.chunk_bytes.max(1),
        max_record_bytes: settings.max_record_bytes,
        dialect: Dialect::default(),
        boundary: settings.boundary,
        source_name: name.clone(),
        recycled: None,
        bytes_read: 0,
        encoding,
        gzip: settings.gzip,
    };
    chunker.fill_to(SNIFF_BYTES)?;
    let bom = chunker.buf.starts_with(UTF8_BOM);
    if bom {
        chunker.buf.drain(..UTF8_BOM.len());
    }
    if chunker.buf.is_empty() {
        return Err(ProfileError::Empty { source_name: name });
    }
    let mut dialect = settings
        .dialect
        .unwrap_or_else(|| Dialect::sniff(&chunker.buf));
    dialect.bom = bom;
    dialect.encoding = encoding;
    dialect.skip_rows = settings.skip_rows;
    dialect.comment = settings.comment;
    if let Some(h) = settings.has_header {
        dialect.has_header = h;
    }
    chunker.dialect = dialect;

    // The first record: the header, or the first data row (to count the columns).
    let mut want = SNIFF_BYTES;
    let (fields, consumed) = loop {
        if let Some(found) = first_record_with_len(&chunker.buf, dialect, chunker.eof) {
            break found;
        }
        if chunker.eof {
            return Err(ProfileError::Empty { source_name: name });
        }
        if want > settings.max_record_bytes {
            if let Some(at) = unclosed_quote(&chunker.buf, dialect) {
                return Err(ProfileError::UnclosedQuote {
                    source_name: name,
                    line: 1 + count_newlines(&chunker.buf[..at]),
                });
            }
            return Err(ProfileError::RecordTooLarge {
                source_name: name,
                line: 1,
                limit: settings.max_record_bytes,
            });
        }
        want *= 2;
        chunker.fill_to(want)?;
    };
    if let Some(at) = unclosed_quote(&chunker.buf[..consumed], dialect) {
        return Err(ProfileError::UnclosedQuote {
            source_name: name,
            line: 1 + count_newlines(&chunker.buf[..at]),
        });
    }
    if let Some(pos) = memchr::memchr(0, &chunker.buf[..consumed]) {
        return Err(ProfileError::Binary {
            source_name: name,
            line: 1 + count_newlines(&chunker.buf[..pos]),
        });
    }
    let mut header_bytes = u64::from(bom) * UTF8_BOM.len() as u64;
    let header = if dialect.has_header {
        for (i, f) in fields.iter().enumerate() {
            if f.is_err() {
                return Err(ProfileError::InvalidUtf8 {
                    source_name: name,
                    line: 1,
                    column: format!("#{}", i + 1),
                });
            }
        }
        let names: Vec<String> = fields.into_iter().map(Result::unwrap_or_default).collect();
        chunker.line += count_newlines(&chunker.buf[..consumed]);
        chunker.buf.drain(..consumed);
        header_bytes += consumed as u64;
        pandas_names(&names)
    } else {
        (1..=fields.len()).map(|i| format!("column_{i}")).collect()
    };
    Ok(Opened {
        chunker,
        dialect,
        header,
        header_bytes,
        total_bytes,
    })
}

/// `reader` decoded to UTF-8 when the settings or a UTF-16 byte-order mark ask for it, with the
/// encoding and the total bytes (unknown, 0, once decoded).
fn decoded<'a>(
    reader: Box<dyn Read + Send + 'a>,
    total_bytes: u64,
    settings: &OpenSettings,
) -> Result<(Box<dyn Read + Send + 'a>, Encoding, u64), ProfileError> {
    let (encoding, reader) = if let Some(e) = settings.encoding {
        (e, reader)
    } else {
        let (head, whole) =
            peek(reader, 2).map_err(|e| ProfileError::io(&settings.source_name, e))?;
        (
            Encoding::sniff_utf16(&head).unwrap_or(Encoding::UTF8),
            whole,
        )
    };
    if encoding.is_utf8() {
        Ok((reader, encoding, total_bytes))
    } else {
        Ok((encoding.decoder(reader), encoding, 0))
    }
}

type Fields = Vec<Result<String, std::string::FromUtf8Error>>;

/// The first record of `buf` and the bytes it takes (with its terminator), when complete.
fn first_record_with_len(buf: &[u8], dialect: Dialect, eof: bool) -> Option<(Fields, usize)> {
    let mut reader = dialect.csv_reader();
    let mut out = vec![0u8; buf.len() + 1];
    let mut ends = vec![0usize; buf.len() + 1];
    let (result, nin, nout, nend) = reader.read_record(buf, &mut out, &mut ends);
    match result {
        csv_core::ReadRecordResult::Record => {
            let mut consumed = nin;
            // Swallow the `\n` of a `\r\n` terminator.
            if buf.get(consumed.wrapping_sub(1)) == Some(&b'\r')
                && buf.get(consumed) == Some(&b'\n')
            {
                consumed += 1;
            }
            Some((split(&out, &ends[..nend]), consumed))
        }
        csv_core::ReadRecordResult::InputEmpty if eof => {
            // The only record has no terminator: finish it.
            let (r, _, _, nend2) = reader.read_record(&[], &mut out[nout..], &mut ends[nend..]);
            (r == csv_core::ReadRecordResult::Record)
                .then(|| (split(&out, &ends[..nend + nend2]), nin))
        }
        _ => None,
    }
}

fn split(out: &[u8], ends: &[usize]) -> Fields {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let f = String::from_utf8(out[start..end].to_vec());
            start = end;
            f
        })
        .collect()
}

/// Column names as pandas makes them: empty names become `Unnamed: i` (0-based position),
/// repeated names get `.1`, `.2`, ... .
pub(crate) fn pandas_names(raw: &[String]) -> Vec<String> {
    let mut names: Vec<String> = raw
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if n.is_empty() {
                format!("Unnamed: {i}")
            } else {
                n.clone()
            }
        })
        .collect();
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for name in &mut names {
        let base = name.clone();
        let mut count = seen.get(&base).copied().unwrap_or(0);
        if count > 0 {
            let mut candidate = format!("{base}.{count}");
            while seen.contains_key(&candidate) {
                count += 1;
                candidate = format!("{base}.{count}");
            }
            seen.insert(base, count + 1);
            seen.insert(candidate.clone(), 1);
            *name = candidate;
        } else {
            seen.insert(base, 1);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_pandas() {
        let raw: Vec<String> = ["a", "", "a", "b", "a"]
            .iter()
            .map(|s| (*s).into())
            .collect();
        assert_eq!(pandas_names(&raw), ["a", "Unnamed: 1", "a.1", "b", "a.2"]);
    }
}

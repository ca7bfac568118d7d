//! Checks the Thrift structures of a Parquet file before parquet (60) reads them: the footer's
//! metadata, and the page headers of each row group's column chunks. parquet skips a field it
//! does not know element by element, and an element can cost it no input: a boolean in a list
//! reads no byte, and a page header's reader skips 8 or 16 bytes past the end without an error.
//! So a 1 KB page header that declares a list of 2^31 elements keeps it busy for minutes.
//!
//! Every element of a well-formed list takes at least one byte, so a structure holds at most as
//! many elements as it has bytes. Here each structure is walked the way parquet walks it, and a
//! list that would take the count of elements past that is refused. Anything else malformed
//! stops the walk without a verdict: parquet reports it as it reads (an error, not a loop).
//! Only headers are read (a few hundred bytes a page); the pages themselves are hopped over.
//!
//! Page headers are walked with the fields parquet's reader knows read by their declared types,
//! as parquet reads them, so both walks stay in step. The footer is walked by its type bytes
//! only: a footer whose known fields carry the wrong type bytes can lead the two walks apart
//! (parquet then mostly fails on the next field it knows), and is not checked further.

use std::fs::File;
use std::os::unix::fs::FileExt;

use parquet::file::metadata::ParquetMetaData;

/// The trailer: the metadata's length and `PAR1`.
const TRAILER: u64 = 8;
/// How deep parquet follows nested structures when it skips (deeper is its error).
const MAX_DEPTH: u32 = 64;
/// The first read of a page header; doubled while the header is longer.
const FIRST_WINDOW: u64 = 512;

/// Why a walk stopped.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// The bytes ran out: more are needed, or the header runs past its chunk.
    Short,
    /// Malformed in a way parquet reports itself.
    Malformed,
    /// A list parquet would loop over for too long: the reason.
    Refused(String),
}

/// A Thrift compact-protocol walk over `bytes`, consuming input as parquet's skipping does.
struct Walk<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Elements the structure may still hold.
    budget: u64,
}

impl Walk<'_> {
    fn byte(&mut self) -> Result<u8, Stop> {
        let b = *self.bytes.get(self.pos).ok_or(Stop::Short)?;
        self.pos += 1;
        Ok(b)
    }

    fn skip(&mut self, n: u64) -> Result<(), Stop> {
        let n = usize::try_from(n).map_err(|_| Stop::Malformed)?;
        let end = self.pos.checked_add(n).ok_or(Stop::Malformed)?;
        if end > self.bytes.len() {
            return Err(Stop::Short);
        }
        self.pos = end;
        Ok(())
    }

    /// An unsigned varint, as parquet reads one: as many bytes as have their high bit set.
    fn varint(&mut self) -> Result<u64, Stop> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f).wrapping_shl(shift);
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift = shift.wrapping_add(7);
        }
    }

    fn zigzag(&mut self) -> Result<i64, Stop> {
        let v = self.varint()?;
        Ok((v >> 1).cast_signed() ^ -((v & 1).cast_signed()))
    }

    /// Takes `count` elements from the budget, or refuses the list that declares them.
    fn elements(&mut self, count: u64, at: usize, what: &str) -> Result<(), Stop> {
        if count > self.budget {
            return Err(Stop::Refused(format!(
                "a Thrift {what} of {count} elements at byte {at} of the structure, which has room for {} more",
                self.budget
            )));
        }
        self.budget -= count;
        Ok(())
    }

    /// Skips a value of compact type `ty` as parquet's skipping does (a boolean list element
    /// takes no byte there, as a field's boolean, which is in its type byte).
    fn value(&mut self, ty: u8, depth: u32) -> Result<(), Stop> {
        if depth == 0 {
            return Err(Stop::Refused(format!(
                "structures nested more than {MAX_DEPTH} deep"
            )));
        }
        match ty {
            1 | 2 => Ok(()),
            3 => self.skip(1),
            4..=6 => self.varint().map(|_| ()),
            7 => self.skip(8),
            8 => {
                let n = self.varint()?;
                self.skip(n)
            }
            9 | 10 => {
                let at = self.pos;
                let header = self.byte()?;
                if header == 0 {
                    return Ok(());
                }
                let element = header & 0x0f;
                if !(1..=13).contains(&element) {
                    return Err(Stop::Malformed);
                }
                let count = match header >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                if count > i32::MAX as u64 {
                    return Err(Stop::Malformed);
                }
                self.elements(count, at, "list")?;
                for _ in 0..count {
                    self.value(element, depth - 1)?;
                }
                Ok(())
            }
            11 => {
                let at = self.pos;
                let count = self.varint()?;
                if count > i32::MAX as u64 {
                    return Err(Stop::Malformed);
                }
                if count == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                let (key, val) = (kv >> 4, kv & 0x0f);
                if !(1..=13).contains(&key) || !(1..=13).contains(&val) {
                    return Err(Stop::Malformed);
                }
                self.elements(count.saturating_mul(2), at, "map")?;
                for _ in 0..count {
                    self.value(key, depth - 1)?;
                    self.value(val, depth - 1)?;
                }
                Ok(())
            }
            12 => self.fields(Shape::Any, depth - 1).map(|_| ()),
            13 => self.skip(16),
            _ => Err(Stop::Malformed),
        }
    }

    /// Walks a struct of `shape` to its stop byte, reading each field the parquet reader knows
    /// by its declared type (as parquet does, whatever the type byte says) and every other one
    /// by its type byte. Returns the last `i32` field 3 read (a page header's compressed size).
    fn fields(&mut self, shape: Shape, depth: u32) -> Result<Option<i64>, Stop> {
        if depth == 0 {
            return Err(Stop::Refused(format!(
                "structures nested more than {MAX_DEPTH} deep"
            )));
        }
        let mut last = 0i16;
        let mut field_3 = None;
        loop {
            let head = self.byte()?;
            let ty = head & 0x0f;
            if ty == 0 {
                return Ok(field_3);
            }
            if ty > 13 {
                return Err(Stop::Malformed);
            }
            let id = match head >> 4 {
                0 => i16::try_from(self.zigzag()?).map_err(|_| Stop::Malformed)?,
                delta => last.checked_add(i16::from(delta)).ok_or(Stop::Malformed)?,
            };
            last = id;
            match shape.declared(id) {
                Some(Declared::Int) => {
                    let v = self.zigzag()?;
                    if id == 3 {
                        field_3 = Some(v);
                    }
                }
                Some(Declared::Bool) => {
                    if !matches!(ty, 1 | 2) {
                        return Err(Stop::Malformed);
                    }
                }
                Some(Declared::Struct(inner)) => {
                    self.fields(inner, depth - 1)?;
                }
                None => self.value(ty, depth)?,
            }
        }
    }
}

/// The structs whose fields parquet's page-header reader (without statistics, its default)
/// reads by their declared types.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// Every field read by its type byte.
    Any,
    PageHeader,
    DataPageHeader,
    IndexPageHeader,
    DictionaryPageHeader,
    DataPageHeaderV2,
}

/// How parquet reads a field it knows.
#[derive(Debug, Clone, Copy)]
enum Declared {
    /// A zigzag varint (`i32`, `i64`, an enum).
    Int,
    /// A boolean, in the field's type byte.
    Bool,
    Struct(Shape),
}

impl Shape {
    fn declared(self, id: i16) -> Option<Declared> {
        use Declared::{Bool, Int, Struct};
        match (self, id) {
            (Shape::PageHeader | Shape::DataPageHeader, 1..=4)
            | (Shape::DictionaryPageHeader, 1 | 2)
            | (Shape::DataPageHeaderV2, 1..=6) => Some(Int),
            (Shape::DictionaryPageHeader, 3) | (Shape::DataPageHeaderV2, 7) => Some(Bool),
            (Shape::PageHeader, 5) => Some(Struct(Shape::DataPageHeader)),
            (Shape::PageHeader, 6) => Some(Struct(Shape::IndexPageHeader)),
            (Shape::PageHeader, 7) => Some(Struct(Shape::DictionaryPageHeader)),
            (Shape::PageHeader, 8) => Some(Struct(Shape::DataPageHeaderV2)),
            _ => None,
        }
    }
}

/// Checks the footer of the Parquet file `file` (`len` bytes). A file that is not Parquet, or
/// whose footer does not fit, is left to parquet's own error.
pub(crate) fn check_footer(file: &File, len: u64) -> Result<(), String> {
    if len < TRAILER {
        return Ok(());
    }
    let mut trailer = [0u8; 8];
    if file.read_exact_at(&mut trailer, len - TRAILER).is_err() || &trailer[4..] != b"PAR1" {
        return Ok(());
    }
    let meta_len = u64::from(u32::from_le_bytes([
        trailer[0], trailer[1], trailer[2], trailer[3],
    ]));
    let Some(start) = (len - TRAILER).checked_sub(meta_len) else {
        return Ok(());
    };
    let mut bytes = vec![0u8; usize::try_from(meta_len).map_err(|e| e.to_string())?];
    file.read_exact_at(&mut bytes, start)
        .map_err(|e| format!("reading the footer: {e}"))?;
    let mut walk = Walk {
        bytes: &bytes,
        pos: 0,
        budget: meta_len,
    };
    match walk.value(12, MAX_DEPTH) {
        Err(Stop::Refused(why)) => Err(format!("the footer's metadata holds {why}")),
        _ => Ok(()),
    }
}

/// Checks the page headers of every column chunk of row group `group`.
pub(crate) fn check_row_group(
    file: &File,
    len: u64,
    metadata: &ParquetMetaData,
    group: usize,
) -> Result<(), String> {
    let Some(row_group) = metadata.row_groups().get(group) else {
        return Ok(());
    };
    for (column, chunk) in row_group.columns().iter().enumerate() {
        let start = chunk
            .dictionary_page_offset()
            .unwrap_or_else(|| chunk.data_page_offset());
        let (Ok(start), Ok(size)) = (u64::try_from(start), u64::try_from(chunk.compressed_size()))
        else {
            continue;
        };
        let end = start.saturating_add(size).min(len);
        check_pages(file, start, end, len)
            .map(|_| ())
            .map_err(|why| {
                format!(
                    "row group {group}, column {} ({}): {why}",
                    column + 1,
                    chunk.column_path()
                )
            })?;
    }
    Ok(())
}

/// How far a walk over a column chunk's pages went.
#[derive(Debug, PartialEq, Eq)]
struct Walked {
    /// Page headers walked.
    pages: u64,
    /// Whether the last page ended exactly at the chunk's end (otherwise the walk stopped at
    /// something malformed, left to parquet).
    to_the_end: bool,
}

/// Walks the page headers of the column chunk at `start..end` of a `len`-byte file, hopping
/// over each page. A header that runs past the chunk's end is walked on to the file's end, as
/// parquet reads it.
fn check_pages(file: &File, start: u64, end: u64, len: u64) -> Result<Walked, String> {
    let mut budget = len.saturating_sub(start);
    let mut pos = start;
    let mut window = FIRST_WINDOW;
    let mut buf = Vec::new();
    let mut pages = 0;
    let stopped = |pages| {
        Ok(Walked {
            pages,
            to_the_end: false,
        })
    };
    while pos < end {
        let want = window.min(len.saturating_sub(pos));
        buf.resize(usize::try_from(want).map_err(|e| e.to_string())?, 0);
        if file.read_exact_at(&mut buf, pos).is_err() {
            return stopped(pages);
        }
        let mut walk = Walk {
            bytes: &buf,
            pos: 0,
            budget,
        };
        let page_size = match walk.fields(Shape::PageHeader, MAX_DEPTH) {
            Ok(size) => size,
            Err(Stop::Short) if want < len.saturating_sub(pos) => {
                window = window.saturating_mul(2);
                continue;
            }
            Err(Stop::Refused(why)) => {
                return Err(format!("the page header at byte {pos} holds {why}"));
            }
            Err(_) => return stopped(pages),
        };
        // parquet reads the page (or fails) and goes on after it.
        let Some(size) = page_size.and_then(|s| u64::try_from(s).ok()) else {
            return stopped(pages);
        };
        pages += 1;
        budget = walk.budget;
        window = FIRST_WINDOW;
        pos = pos.saturating_add(walk.pos as u64).saturating_add(size);
    }
    Ok(Walked {
        pages,
        to_the_end: pos == end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(bytes: &[u8]) -> (Result<(), Stop>, usize) {
        let mut w = Walk {
            bytes,
            pos: 0,
            budget: bytes.len() as u64,
        };
        let r = w.value(12, MAX_DEPTH);
        (r, w.pos)
    }

    #[test]
    fn a_page_header_field_parquet_knows_is_read_by_its_declared_type() {
        // PageHeader field 3 (compressed size) written with a list's type byte: parquet reads
        // a varint there, and so does the walk (a list would swallow the stop byte).
        let bytes = [0x15, 0x00, 0x15, 0x02, 0x19, 0x08, 0x00];
        let mut w = Walk {
            bytes: &bytes,
            pos: 0,
            budget: 7,
        };
        assert_eq!(w.fields(Shape::PageHeader, MAX_DEPTH), Ok(Some(4)));
        assert_eq!(w.pos, bytes.len());
        // A dictionary page header's `is_sorted` must be a boolean (parquet's error otherwise).
        let dict = [0x7c, 0x15, 0x02, 0x15, 0x00, 0x15, 0x00, 0x00, 0x00];
        let mut w = Walk {
            bytes: &dict,
            pos: 0,
            budget: 9,
        };
        assert_eq!(w.fields(Shape::PageHeader, MAX_DEPTH), Err(Stop::Malformed));
    }

    /// Every page of files parquet writes (statistics in the headers, dictionary pages, both
    /// data page versions) is walked to the chunk's end: the walk keeps in step with the file.
    #[test]
    fn the_walk_reaches_the_end_of_every_column_chunk_parquet_writes() {
        use std::sync::Arc;

        use arrow_array::{Int64Array, RecordBatch, StringArray};
        use arrow_schema::{DataType, Field, Schema};
        use parquet::arrow::ArrowWriter;
        use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
        use parquet::file::reader::{FileReader, SerializedFileReader};

        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
        ]));
        let ids: Int64Array = (0..20_000i64).map(|i| (i % 7 != 0).then_some(i)).collect();
        let names: StringArray = (0..20_000).map(|i| Some(format!("n{}", i % 300))).collect();
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(names)]).unwrap();
        for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            let props = WriterProperties::builder()
                .set_writer_version(version)
                .set_statistics_enabled(EnabledStatistics::Page)
                .set_data_page_size_limit(256)
                .set_data_page_row_count_limit(100)
                .set_write_batch_size(32)
                .set_max_row_group_row_count(Some(5_000))
                .build();
            let file = tempfile::tempfile().unwrap();
            let mut writer =
                ArrowWriter::try_new(file.try_clone().unwrap(), schema.clone(), Some(props))
                    .unwrap();
            writer.write(&batch).unwrap();
            writer.close().unwrap();
            let reader = SerializedFileReader::new(file.try_clone().unwrap()).unwrap();
            let mut chunks = 0;
            for g in 0..reader.num_row_groups() {
                let group = reader.get_row_group(g).unwrap();
                for c in 0..group.num_columns() {
                    let meta = group.metadata().column(c);
                    let start = meta
                        .dictionary_page_offset()
                        .unwrap_or_else(|| meta.data_page_offset());
                    let start = u64::try_from(start).unwrap();
                    let end = start + u64::try_from(meta.compressed_size()).unwrap();
                    let pages = group.get_column_page_reader(c).unwrap().count() as u64;
                    assert!(pages > 3, "{version:?}: {pages} pages");
                    assert_eq!(
                        check_pages(&file, start, end, file.metadata().unwrap().len()),
                        Ok(Walked {
                            pages,
                            to_the_end: true
                        }),
                        "{version:?}, row group {g}, column {c}"
                    );
                    chunks += 1;
                }
            }
            assert_eq!(chunks, 8);
        }
    }

    #[test]
    fn a_struct_is_walked_to_its_stop_byte() {
        // i32 field 1 = 3, binary field 2 = "ab", bool field 3, list field 4 of two i32s,
        // struct field 5 { i64 field 1 = -1 }, field 100 (long form) double, stop.
        let bytes = [
            0x15, 0x06, 0x28, 0x02, b'a', b'b', 0x31, 0x19, 0x25, 0x02, 0x04, 0x1c, 0x16, 0x01,
            0x00, 0x07, 0xc8, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0xff,
        ];
        assert_eq!(walk(&bytes), (Ok(()), bytes.len() - 1));
    }

    #[test]
    fn a_list_longer_than_its_structure_is_refused() {
        // Field 15 (delta), a list of booleans whose count, 2^31 - 1, follows as a varint.
        let bytes = [0xf9, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00];
        let (r, _) = walk(&bytes);
        assert!(
            matches!(&r, Err(Stop::Refused(why)) if why.contains("2147483647 elements at byte 1")),
            "{r:?}"
        );
        // Booleans as parquet skips them (no byte each), as many as the structure has bytes.
        assert_eq!(walk(&[0xf9, 0x21, 0x00]), (Ok(()), 3));
        // A map's pairs count twice.
        let map = [0x1b, 0x7f, 0x11, 0x00];
        assert!(matches!(walk(&map).0, Err(Stop::Refused(_))));
    }

    #[test]
    fn malformed_bytes_stop_the_walk_without_a_verdict() {
        assert_eq!(walk(&[0x1e]).0, Err(Stop::Malformed));
        assert_eq!(walk(&[0x19, 0x2e]).0, Err(Stop::Malformed));
        assert_eq!(walk(&[0x15]).0, Err(Stop::Short));
        // A field id past `i16`, in the long form.
        assert_eq!(
            walk(&[0x05, 0xfe, 0xff, 0x07, 0x00]).0,
            Err(Stop::Malformed)
        );
        // Structs nested past parquet's depth are refused: the walk cannot follow them.
        let deep: Vec<u8> = std::iter::repeat_n(0x1c, 80).chain([0x00]).collect();
        assert!(matches!(walk(&deep).0, Err(Stop::Refused(_))));
    }
}

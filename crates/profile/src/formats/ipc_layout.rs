//! Checks the layout of an Arrow IPC file or stream before arrow-ipc decodes it: every block and
//! message lies inside the file, and every buffer of a record or dictionary batch lies inside its
//! message's body. arrow-ipc (60) trusts these numbers: a buffer past its body panics in
//! `Buffer::slice_with_length`, a negative block length in `read_block`, a metadata length under
//! eight bytes in `parse_message`. Only metadata is read here (a few hundred bytes a batch).
//!
//! The rows the batches declare are bounded by the file's size too (see [`RowBudget`]): a
//! column of nulls costs no bytes, and neither does a batch with no columns, so a 1 KB file can
//! declare 2^62 rows, which arrow-ipc accepts and profiling them never ends.

use std::io::{Read, Seek, SeekFrom};

use arrow_ipc::{Message, root_as_footer, root_as_message};

/// The continuation marker before an encapsulated message's length (IPC format 0.15 on).
const CONTINUATION: [u8; 4] = [0xff; 4];
/// What ends a file: the footer's length and the magic bytes.
const TRAILER: u64 = 10;

/// Checks an IPC file of `len` bytes (`ARROW1` ... footer, length, `ARROW1`).
pub(crate) fn check_file<R: Read + Seek>(reader: &mut R, len: u64) -> Result<(), String> {
    if len < TRAILER {
        return Err(format!(
            "the file has {len} bytes, fewer than an Arrow IPC file's trailer"
        ));
    }
    let mut trailer = [0u8; 10];
    read_at(reader, len - TRAILER, &mut trailer)?;
    let footer_len = arrow_ipc::reader::read_footer_length(trailer)
        .map_err(|e| e.to_string())
        .and_then(|n| u64::try_from(n).map_err(|e| e.to_string()))?;
    let footer_start = (len - TRAILER).checked_sub(footer_len).ok_or_else(|| {
        format!("the footer's length ({footer_len} bytes) is past the file's start")
    })?;
    let mut footer_bytes = vec![0u8; usize::try_from(footer_len).map_err(|e| e.to_string())?];
    read_at(reader, footer_start, &mut footer_bytes)?;
    let footer =
        root_as_footer(&footer_bytes).map_err(|e| format!("the footer is not valid: {e}"))?;
    let mut budget = RowBudget::new(len);
    let mut blocks = Vec::new();
    for (kind, list) in [
        ("dictionary batch", footer.dictionaries()),
        ("record batch", footer.recordBatches()),
    ] {
        for (index, block) in list.into_iter().flatten().enumerate() {
            blocks.push((kind, index + 1, block));
        }
    }
    for (kind, number, block) in blocks {
        let at = |what: String| format!("{kind} {number}: {what}");
        let offset = u64::try_from(block.offset()).map_err(|_| at("a negative offset".into()))?;
        let meta = u64::try_from(block.metaDataLength())
            .ok()
            .filter(|m| *m >= 8)
            .ok_or_else(|| at(format!("metadata of {} bytes", block.metaDataLength())))?;
        let body = u64::try_from(block.bodyLength())
            .map_err(|_| at(format!("a body of {} bytes", block.bodyLength())))?;
        offset
            .checked_add(meta)
            .and_then(|e| e.checked_add(body))
            .filter(|e| *e <= footer_start)
            .ok_or_else(|| {
                at(format!(
                    "{meta} bytes of metadata and {body} of body from byte {offset} do not fit in the {footer_start} bytes before the footer"
                ))
            })?;
        let mut metadata = vec![0u8; usize::try_from(meta).map_err(|e| e.to_string())?];
        read_at(reader, offset, &mut metadata)?;
        let flatbuffer = if metadata[..4] == CONTINUATION {
            &metadata[8..]
        } else {
            &metadata[4..]
        };
        let message = root_as_message(flatbuffer)
            .map_err(|e| at(format!("its metadata is not valid: {e}")))?;
        check_buffers(&message, body).map_err(at)?;
        budget.spend(&message).map_err(at)?;
    }
    Ok(())
}

/// Checks an IPC stream of `len` bytes: each message (length, metadata, body) in turn, up to
/// the end-of-stream marker or the end of the file.
pub(crate) fn check_stream<R: Read + Seek>(reader: &mut R, len: u64) -> Result<(), String> {
    let mut position = 0u64;
    let mut budget = RowBudget::new(len);
    for number in 1u64.. {
        let start = position;
        let at = |what: String| format!("message {number} (byte {start}): {what}");
        if start == len {
            return Ok(());
        }
        let mut word = [0u8; 4];
        read_at(reader, start, &mut word).map_err(at)?;
        let mut prefix = 4;
        if word == CONTINUATION {
            read_at(reader, start + 4, &mut word).map_err(at)?;
            prefix = 8;
        }
        let meta = u64::from(u32::from_le_bytes(word));
        if meta == 0 {
            return Ok(()); // the end-of-stream marker
        }
        let body_start = (start + prefix)
            .checked_add(meta)
            .filter(|e| *e <= len)
            .ok_or_else(|| {
                at(format!(
                    "{meta} bytes of metadata run past the end of the file"
                ))
            })?;
        let mut metadata = vec![0u8; usize::try_from(meta).map_err(|e| e.to_string())?];
        read_at(reader, start + prefix, &mut metadata).map_err(at)?;
        let message = root_as_message(&metadata)
            .map_err(|e| at(format!("its metadata is not valid: {e}")))?;
        let body = u64::try_from(message.bodyLength())
            .map_err(|_| at(format!("a body of {} bytes", message.bodyLength())))?;
        position = body_start
            .checked_add(body)
            .filter(|e| *e <= len)
            .ok_or_else(|| {
                at(format!(
                    "a body of {body} bytes runs past the end of the file"
                ))
            })?;
        check_buffers(&message, body).map_err(at)?;
        budget.spend(&message).map_err(at)?;
    }
    Ok(())
}

/// The rows a file's record batches may declare in all: eight a byte of the file (a column
/// that is not all nulls takes at least a bit a row, as a boolean's values or a validity
/// bitmap, and arrow-ipc checks each array's buffers against its length), plus
/// [`RowBudget::FREE_ROWS`] for tables whose columns are all of type null, or that have none.
struct RowBudget {
    left: u64,
    file_len: u64,
}

impl RowBudget {
    /// Rows a file may declare beyond eight a byte.
    const FREE_ROWS: u64 = 1 << 20;

    fn new(file_len: u64) -> Self {
        Self {
            left: Self::allowed(file_len),
            file_len,
        }
    }

    /// The rows a file of `file_len` bytes may declare in all.
    fn allowed(file_len: u64) -> u64 {
        file_len.saturating_mul(8).saturating_add(Self::FREE_ROWS)
    }

    /// Takes the rows of `message` when it is a record batch.
    fn spend(&mut self, message: &Message<'_>) -> Result<(), String> {
        let Some(batch) = message.header_as_record_batch() else {
            return Ok(());
        };
        let rows = u64::try_from(batch.length())
            .map_err(|_| format!("a row count of {}", batch.length()))?;
        self.left = self.left.checked_sub(rows).ok_or_else(|| {
            format!(
                "it declares {rows} rows, which brings the file past the {} rows a {}-byte \
                 file can hold (eight a byte, and {} more for columns of nulls only); the file \
                 is corrupt, or its columns hold no values at all",
                Self::allowed(self.file_len),
                self.file_len,
                Self::FREE_ROWS
            )
        })?;
        Ok(())
    }
}

/// Every buffer of the message's record batch (or dictionary batch) inside its `body` bytes.
fn check_buffers(message: &Message<'_>, body: u64) -> Result<(), String> {
    let batch = message
        .header_as_record_batch()
        .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()));
    let Some(batch) = batch else {
        return Ok(());
    };
    for (index, buffer) in batch.buffers().into_iter().flatten().enumerate() {
        let fits = u64::try_from(buffer.offset())
            .ok()
            .zip(u64::try_from(buffer.length()).ok())
            .and_then(|(offset, length)| offset.checked_add(length))
            .is_some_and(|end| end <= body);
        if !fits {
            return Err(format!(
                "buffer {index} ({} bytes at offset {}) lies outside the message's {body}-byte body",
                buffer.length(),
                buffer.offset()
            ));
        }
    }
    Ok(())
}

fn read_at<R: Read + Seek>(reader: &mut R, offset: u64, buf: &mut [u8]) -> Result<(), String> {
    reader
        .seek(SeekFrom::Start(offset))
        .and_then(|_| reader.read_exact(buf))
        .map_err(|e| format!("reading {} bytes at byte {offset}: {e}", buf.len()))
}

//! Arrow IPC files and streams whose offsets and lengths lie: each is a clear error naming what
//! is wrong, never a panic or an abort. arrow-ipc trusts these numbers, so before the layout
//! check a buffer past its message body panicked (found by the `profile_formats` fuzz target)
//! and a negative block length panicked in its reader.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{DataType, Field, Schema};
use autocoder_profile::{ProfileError, ProfileOptions, profile_path};

/// Four rows of an id (with a null) and a name (with a null); also written as Parquet by
/// `parquet_layout`.
pub(crate) fn batch() -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(40)])),
            Arc::new(StringArray::from(vec![
                Some("a"),
                Some("bb"),
                None,
                Some("dddd"),
            ])),
        ],
    )
    .unwrap()
}

fn file_bytes() -> Vec<u8> {
    let batch = batch();
    let mut writer = FileWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    writer.into_inner().unwrap()
}

fn stream_bytes() -> Vec<u8> {
    let batch = batch();
    let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    writer.into_inner().unwrap()
}

/// The error of profiling `bytes` as an Arrow file; panics if it profiled.
fn error_of(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.arrow");
    std::fs::write(&path, bytes).unwrap();
    match profile_path(&path, &ProfileOptions::default(), &|_, _| {}) {
        Ok(_) => panic!("a corrupt file profiled"),
        Err(err @ ProfileError::Corrupt { .. }) => err.to_string(),
        Err(other) => panic!("not reported as corrupt: {other}"),
    }
}

/// The footer's first record-batch block (offset, metadata length, body length) and where its
/// 24 bytes are in the file.
fn first_block(bytes: &[u8]) -> (i64, i32, i64, usize) {
    let len = bytes.len();
    let footer_len =
        arrow_ipc::reader::read_footer_length(bytes[len - 10..].try_into().unwrap()).unwrap();
    let footer = arrow_ipc::root_as_footer(&bytes[len - 10 - footer_len..len - 10]).unwrap();
    let block = footer.recordBatches().unwrap().get(0);
    let mut pattern = block.offset().to_le_bytes().to_vec();
    pattern.extend(block.metaDataLength().to_le_bytes());
    pattern.extend([0; 4]);
    pattern.extend(block.bodyLength().to_le_bytes());
    let at = bytes
        .windows(pattern.len())
        .rposition(|w| w == pattern.as_slice())
        .unwrap();
    (
        block.offset(),
        block.metaDataLength(),
        block.bodyLength(),
        at,
    )
}

#[test]
fn the_untouched_file_and_stream_profile() {
    for (name, bytes) in [
        ("data.arrow", file_bytes()),
        ("data.arrows", stream_bytes()),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let profile = profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap();
        assert_eq!(profile.rows, 4, "{name}");
    }
}

#[test]
fn a_buffer_past_its_message_body_is_an_error() {
    let mut bytes = file_bytes();
    let (offset, meta, _, _) = first_block(&bytes);
    // The record batch's buffer list: (offset, length) pairs of i64 in its metadata; move the
    // first buffer that has bytes far past the body.
    let start = usize::try_from(offset).unwrap();
    let end = start + usize::try_from(meta).unwrap();
    let metadata = &bytes[start..end];
    let message = arrow_ipc::root_as_message(&metadata[8..]).unwrap();
    let buffer = message
        .header_as_record_batch()
        .unwrap()
        .buffers()
        .unwrap()
        .iter()
        .find(|b| b.length() > 0)
        .unwrap();
    let mut pattern = buffer.offset().to_le_bytes().to_vec();
    pattern.extend(buffer.length().to_le_bytes());
    let at = start
        + metadata
            .windows(16)
            .position(|w| w == pattern.as_slice())
            .unwrap();
    bytes[at..at + 8].copy_from_slice(&327_688i64.to_le_bytes());
    let err = error_of(&bytes);
    assert!(err.contains("record batch 1"), "{err}");
    assert!(
        err.contains("at offset 327688) lies outside the message's"),
        "{err}"
    );
}

#[test]
fn block_lengths_that_do_not_fit_are_errors() {
    for (body, expected) in [
        (0x2800_0000_0240_i64, "do not fit"),
        (-8, "a body of -8 bytes"),
    ] {
        let mut bytes = file_bytes();
        let (_, _, _, at) = first_block(&bytes);
        bytes[at + 16..at + 24].copy_from_slice(&body.to_le_bytes());
        let err = error_of(&bytes);
        assert!(err.contains("record batch 1"), "{err}");
        assert!(err.contains(expected), "{err}");
    }
    let mut bytes = file_bytes();
    let (_, _, _, at) = first_block(&bytes);
    bytes[at + 8..at + 12].copy_from_slice(&4i32.to_le_bytes());
    let err = error_of(&bytes);
    assert!(err.contains("metadata of 4 bytes"), "{err}");
}

#[test]
fn a_stream_cut_inside_a_body_is_an_error() {
    let bytes = stream_bytes();
    // The end-of-stream marker is the last 8 bytes; cut into the batch's body before it.
    let cut = &bytes[..bytes.len() - 8 - 10];
    let err = error_of(cut);
    assert!(err.contains("runs past the end of the file"), "{err}");
    assert!(!Path::new("data.arrow").exists());
}

/// A batch of any length is profiled in slices (a null column costs nothing in Arrow, so a
/// 1 KB file declared four billion rows and the per-row state of one unit took 4 GB, found by
/// fuzzing): the statistics over a 200,000-row batch come out as over the whole batch.
#[test]
fn a_long_batch_is_profiled_in_slices_with_the_same_statistics() {
    let n: i64 = 200_000;
    let values: Vec<Option<i64>> = (0..n).map(|i| (i % 7 != 0).then_some(i)).collect();
    let schema = Schema::new(vec![Field::new("v", DataType::Int64, true)]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(Int64Array::from(values.clone()))],
    )
    .unwrap();
    let mut writer = FileWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(&batch).unwrap();
    let bytes = writer.into_inner().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.arrow");
    std::fs::write(&path, bytes).unwrap();
    let profile = profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(profile.rows, 200_000);
    let column = &profile.columns[0];
    let nulls = values.iter().filter(|v| v.is_none()).count() as u64;
    assert_eq!(column.nulls, nulls);
    assert_eq!(column.count, 200_000 - nulls);
    let json = serde_json::to_value(column).unwrap();
    assert_eq!(json["min"], 1, "{json}");
    assert_eq!(json["max"], 199_999, "{json}");
    let sum: i64 = values.iter().flatten().sum();
    assert_eq!(json["numeric"]["sum"].as_f64(), Some(sum as f64), "{json}");
    assert_eq!(json["monotonic"], "strictly_increasing", "{json}");
}

/// `batch` written as an IPC file, or as a stream when `stream`.
fn written(batch: &RecordBatch, stream: bool) -> Vec<u8> {
    if stream {
        let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
        writer.write(batch).unwrap();
        writer.into_inner().unwrap()
    } else {
        let mut writer = FileWriter::try_new(Vec::new(), &batch.schema()).unwrap();
        writer.write(batch).unwrap();
        writer.into_inner().unwrap()
    }
}

/// Profiles `bytes` as an Arrow file on another thread; panics if that takes over a minute.
fn profiled_within_a_minute(bytes: Vec<u8>) -> Result<autocoder_profile::Profile, ProfileError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.arrow");
        std::fs::write(&path, bytes).unwrap();
        let _ = tx.send(profile_path(&path, &ProfileOptions::default(), &|_, _| {}));
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("profiling took over a minute")
}

/// A column of nulls, or no column at all, costs no bytes, so a few hundred bytes declared
/// 5.9e18 rows (found by the `profile_formats` fuzz target: it never ended). Such a count is
/// refused by the size of the file, in files and streams alike.
#[test]
fn more_rows_than_the_file_can_hold_is_an_error() {
    use arrow_array::{NullArray, RecordBatchOptions};
    let nulls = Schema::new(vec![Field::new("nothing", DataType::Null, true)]);
    let null_column =
        RecordBatch::try_new(Arc::new(nulls), vec![Arc::new(NullArray::new(1 << 40))]).unwrap();
    let no_columns = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(5_925_611_209_712_730_116)),
    )
    .unwrap();
    for (what, batch) in [("a null column", &null_column), ("no columns", &no_columns)] {
        for stream in [false, true] {
            let err = match profiled_within_a_minute(written(batch, stream)) {
                Ok(p) => panic!("{what} (stream {stream}): profiled {} rows", p.rows),
                Err(e) => e.to_string(),
            };
            assert!(err.contains("rows a"), "{what}: {err}");
            assert!(
                err.contains("record batch 1") || err.contains("message 2"),
                "{what}: {err}"
            );
        }
    }
}

/// Under the bound, a table of nulls only still profiles.
#[test]
fn a_column_of_nulls_within_the_bound_profiles() {
    use arrow_array::NullArray;
    let nulls = Schema::new(vec![Field::new("nothing", DataType::Null, true)]);
    let batch =
        RecordBatch::try_new(Arc::new(nulls), vec![Arc::new(NullArray::new(300_000))]).unwrap();
    for stream in [false, true] {
        let profile = profiled_within_a_minute(written(&batch, stream)).unwrap();
        assert_eq!(profile.rows, 300_000);
        assert_eq!(profile.columns[0].nulls, 300_000);
    }
}

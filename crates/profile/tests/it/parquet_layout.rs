//! Parquet files whose Thrift structures declare lists parquet would loop over for minutes:
//! parquet (60) skips a field it does not know element by element, and a boolean element costs
//! it no input, so a page header or footer that declares 2^31 of them kept the profiler busy
//! (found by the `profile_formats` fuzz target: a 1,369-byte file ran for over two minutes).
//! Each is now a clear error, within seconds; a well-formed file still profiles.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use autocoder_profile::{Profile, ProfileError, ProfileOptions, profile_path};
use parquet::arrow::ArrowWriter;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// Unknown fields (ids 15, 30, ...), each a list of 2^31 - 1 booleans: a Thrift struct's
/// field header `0xf9` (delta 15, list), the list header `0xf1` (long count, booleans) and
/// the count as a varint. Forty of them are 2^36 elements for parquet to skip one by one.
fn endless_lists() -> Vec<u8> {
    [0xf9, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07].repeat(40)
}

fn file_bytes() -> Vec<u8> {
    let batch = crate::ipc_layout::batch();
    let mut writer = ArrowWriter::try_new(Vec::new(), batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.into_inner().unwrap()
}

/// Where the first column chunk of the first row group starts (its first page header).
fn first_page_header(bytes: &[u8]) -> usize {
    let file = tempfile::tempfile().unwrap();
    std::io::Write::write_all(&mut &file, bytes).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let column = reader.metadata().row_group(0).column(0);
    let start = column
        .dictionary_page_offset()
        .unwrap_or_else(|| column.data_page_offset());
    usize::try_from(start).unwrap()
}

/// Profiles `bytes` as a Parquet file on another thread; panics if that takes over a minute
/// (parquet's skipping loop took many minutes before the check).
fn profiled(bytes: Vec<u8>) -> Result<Profile, ProfileError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.parquet");
        std::fs::write(&path, bytes).unwrap();
        let _ = tx.send(profile_path(
            Path::new(&path),
            &ProfileOptions::default(),
            &|_, _| {},
        ));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("profiling the file did not end within a minute")
}

fn corrupt(bytes: Vec<u8>) -> String {
    match profiled(bytes) {
        Ok(_) => panic!("a corrupt file profiled"),
        Err(err @ ProfileError::Corrupt { .. }) => err.to_string(),
        Err(other) => panic!("not reported as corrupt: {other}"),
    }
}

#[test]
fn a_well_formed_file_still_profiles() {
    let profile = profiled(file_bytes()).unwrap();
    assert_eq!(profile.rows, 4);
    assert_eq!(profile.columns.len(), 2);
}

#[test]
fn a_page_header_declaring_endless_lists_is_an_error_naming_the_column() {
    let mut bytes = file_bytes();
    let at = first_page_header(&bytes);
    // The unknown fields open the page header; the rest of the file shifts (the footer is
    // found from the end, and the error comes before any later offset is used).
    bytes.splice(at..at, endless_lists());
    let error = corrupt(bytes);
    assert!(
        error.contains("row group 0, column 1 (\"id\")")
            && error.contains(&format!("the page header at byte {at}"))
            && error.contains("2147483647 elements"),
        "{error}"
    );
}

#[test]
fn a_footer_declaring_endless_lists_is_an_error() {
    let mut bytes = file_bytes();
    let len = bytes.len();
    let meta_len = u32::from_le_bytes(bytes[len - 8..len - 4].try_into().unwrap());
    let footer = len - 8 - meta_len as usize;
    let lists = endless_lists();
    bytes.splice(footer..footer, lists.iter().copied());
    let new_len = meta_len + u32::try_from(lists.len()).unwrap();
    let end = bytes.len();
    bytes[end - 8..end - 4].copy_from_slice(&new_len.to_le_bytes());
    let error = corrupt(bytes);
    assert!(
        error.contains("the footer's metadata holds a Thrift list of 2147483647 elements"),
        "{error}"
    );
}

/// Found by the `profile_formats` fuzz target (its first byte picks the format): a page header
/// that runs past its column chunk and on to the end of the file, where parquet's skipping of
/// unknown fields read the file's end over and over (minutes for 3.5 KB). Now an error at once.
#[test]
fn a_page_header_skipping_on_past_the_end_of_the_file_is_an_error() {
    let found = include_bytes!("../data/fuzz-parquet-header-past-the-end.bin");
    let err = corrupt(found[1..].to_vec());
    assert!(err.contains("row group"), "{err}");
}

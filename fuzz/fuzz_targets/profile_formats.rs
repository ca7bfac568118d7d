//! Arbitrary bytes through the readers of the other input formats: the first byte picks the
//! format (Parquet, Arrow IPC, JSON Lines, JSON array, Excel), the rest is the file, written
//! with the format's extension and read with the format forced (the magic bytes are prepended
//! for half of the inputs, so that readers get past their first check). Any error is fine; a
//! panic, a hang or a profile whose columns disagree with its rows is a finding.
#![no_main]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use autocoder_profile::{FileFormat, ProfileOptions, profile_path};
use libfuzzer_sys::fuzz_target;

const FORMATS: [(FileFormat, &str, &[u8]); 5] = [
    (FileFormat::Parquet, "parquet", b"PAR1"),
    (FileFormat::Arrow, "arrow", b"ARROW1\0\0"),
    (FileFormat::Jsonl, "jsonl", b"{"),
    (FileFormat::Json, "json", b"["),
    (FileFormat::Xlsx, "xlsx", b"PK\x03\x04"),
];

fuzz_target!(|input: &[u8]| {
    let Some((&selector, data)) = input.split_first() else {
        return;
    };
    let (format, extension, magic) = FORMATS[usize::from(selector) % FORMATS.len()];
    let mut bytes = Vec::with_capacity(data.len() + magic.len());
    if selector & 0x80 != 0 {
        bytes.extend_from_slice(magic);
    }
    bytes.extend_from_slice(data);
    let path = temp_path(extension);
    if std::fs::write(&path, &bytes).is_err() {
        return;
    }
    let options = ProfileOptions {
        sample_rows: 3,
        threads: 2,
        input_format: Some(format),
        ..ProfileOptions::default()
    };
    let result = profile_path(&path, &options, &|_, _| {});
    let _ = std::fs::remove_file(&path);
    if let Ok(profile) = result {
        assert_eq!(profile.format, format);
        for c in &profile.columns {
            assert_eq!(c.count + c.nulls, profile.rows, "{}", c.name);
        }
    }
});

/// A fresh path under the system temp directory, with the format's extension.
fn temp_path(extension: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "autocoder-fuzz-{}-{n}.{extension}",
        std::process::id()
    ))
}

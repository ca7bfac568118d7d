//! Arbitrary bytes through the readers of the other input formats: the first byte picks the
//! format (Parquet, Arrow IPC, JSON Lines, JSON array, Excel), the rest is the file, written
//! with the format's extension and read with the format forced (the magic bytes are prepended
//! for half of the inputs, so that readers get past their first check). Any error is fine; a
//! panic, a hang or a profile whose columns disagree with its rows is a finding.
//!
//! Except one kind of panic: one raised inside a decoding crate (arrow-ipc, parquet, calamine:
//! a file under `~/.cargo/registry`) on a profiler thread, which the profiler catches and reports
//! as a corrupt file (`formats::runner`), so users get an error. Those print `caught upstream
//! panic:` and the run goes on; a panic in our own code, or on the fuzzer's thread, aborts as
//! before.
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

fuzz_target!(init: keep_going_on_caught_upstream_panics(), |input: &[u8]| {
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

/// Replaces libFuzzer's abort-on-every-panic hook with one that lets a decoding crate's panic on a
/// profiler thread through (the profiler turns it into an error) and aborts on any other.
fn keep_going_on_caught_upstream_panics() {
    let abort = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let on_profiler_thread = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("profile-reader") || n.starts_with("profile-worker"));
        let in_dependency = info
            .location()
            .is_some_and(|l| l.file().contains("/.cargo/registry/"));
        if on_profiler_thread && in_dependency {
            eprintln!("caught upstream panic: {info}");
            return;
        }
        abort(info);
    }));
}

/// A fresh path under the system temp directory, with the format's extension.
fn temp_path(extension: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "autocoder-fuzz-{}-{n}.{extension}",
        std::process::id()
    ))
}

//! Arbitrary bytes through dialect sniffing and the whole profiler, once as a reader
//! (sequential) and once as a file split into tiny chunks on two threads. Any result is fine
//! except a panic, and the two ways of reading must agree on rows, types and null counts.
//! The first byte picks reading options (comment character, skipped lines, latin-1, skipping
//! bad rows), so that those paths are fuzzed too.
#![no_main]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use autocoder_profile::{Dialect, Encoding, LongRows, ProfileOptions, profile_path, profile_reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, data)) = input.split_first() else {
        return;
    };
    let _ = Dialect::sniff(data);
    let options = ProfileOptions {
        sample_rows: 3,
        threads: 1,
        comment: (selector & 1 == 1).then_some(b'#'),
        skip_rows: u64::from((selector >> 1) & 3),
        encoding: if selector & 8 == 8 {
            Encoding::for_label("latin-1")
        } else {
            None
        },
        long_rows: if selector & 16 == 16 {
            LongRows::Skip
        } else {
            LongRows::Error
        },
        ..ProfileOptions::default()
    };
    let sequential = profile_reader(data, "fuzz", &options, &|_, _| {});

    let path = temp_path();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let chunked = ProfileOptions {
        threads: 2,
        chunk_bytes: 64,
        ..options.clone()
    };
    let parallel = profile_path(&path, &chunked, &|_, _| {});
    let _ = std::fs::remove_file(&path);
    match (&sequential, &parallel) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.rows, b.rows, "row counts differ");
            assert_eq!(a.columns.len(), b.columns.len(), "column counts differ");
            for (x, y) in a.columns.iter().zip(&b.columns) {
                assert_eq!(x.dtype, y.dtype, "dtype of {}", x.name);
                assert_eq!(x.nulls, y.nulls, "nulls of {}", x.name);
                assert_eq!(x.count, y.count, "count of {}", x.name);
            }
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "reader and chunked file disagree: {:?} vs {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
});

/// A fresh path under the system temp directory (no extra crates in the fuzz build).
fn temp_path() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("autocoder-fuzz-{}-{n}.csv", std::process::id()))
}

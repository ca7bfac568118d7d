//! The unprivileged uids sandboxes run as when autocoder is root: one per run, from a range
//! (`AUTOCODER_SANDBOX_UIDS=START-END`, default [`DEFAULT_SANDBOX_UIDS`]), never one a running
//! process uses, and held by a lock file for the run so two autocoder processes never share one.
//! A run's own uid makes `RLIMIT_NPROC` count that run's processes only, and keeps runs from
//! signalling or reading each other.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::SandboxError;

/// The environment variable that sets the range of sandbox uids, `START-END` (inclusive).
pub const SANDBOX_UIDS_ENV_VAR: &str = "AUTOCODER_SANDBOX_UIDS";
/// The default range of sandbox uids: above the ranges distributions give users and system
/// services, and above the first subordinate-uid blocks (`/etc/subuid` starts at 100000).
pub const DEFAULT_SANDBOX_UIDS: (u32, u32) = (200_000, 299_999);

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A uid held for one run (its lock is released when this is dropped).
#[derive(Debug)]
pub(crate) struct UidLease {
    pub(crate) uid: u32,
    _lock: std::fs::File,
}

/// The configured range: `AUTOCODER_SANDBOX_UIDS`, else the default.
pub(crate) fn range() -> Result<(u32, u32), SandboxError> {
    match std::env::var(SANDBOX_UIDS_ENV_VAR) {
        Ok(text) => parse_range(&text),
        Err(_) => Ok(DEFAULT_SANDBOX_UIDS),
    }
}

fn parse_range(text: &str) -> Result<(u32, u32), SandboxError> {
    let bad = || SandboxError::BackendUnavailable {
        backend: "bwrap",
        reason: format!(
            "{SANDBOX_UIDS_ENV_VAR}={text:?} is not a uid range: write START-END with 1000 <= START <= END < 4294967295, e.g. 200000-299999"
        ),
    };
    let (start, end) = text.trim().split_once('-').ok_or_else(bad)?;
    let start: u32 = start.trim().parse().map_err(|_| bad())?;
    let end: u32 = end.trim().parse().map_err(|_| bad())?;
    if start < 1000 || end < start || end == u32::MAX {
        return Err(bad());
    }
    Ok((start, end))
}

/// Takes a uid from the range that no running process uses and no other run holds.
pub(crate) fn lease() -> Result<UidLease, SandboxError> {
    let (start, end) = range()?;
    let used = uids_in_use();
    let dir = lock_dir();
    std::fs::create_dir_all(&dir).map_err(SandboxError::io("creating", &dir))?;
    let size = u64::from(end - start) + 1;
    let offset = u64::from(std::process::id()).wrapping_mul(7919)
        + u64::from(NEXT.fetch_add(1, Ordering::Relaxed));
    for i in 0..size.min(100_000) {
        let uid = start + u32::try_from((offset + i) % size).unwrap_or(0);
        if used.contains(&uid) {
            continue;
        }
        let path = dir.join(uid.to_string());
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(SandboxError::io("opening the uid lock", &path))?;
        if fs4::fs_std::FileExt::try_lock_exclusive(&file).unwrap_or(false) {
            return Ok(UidLease { uid, _lock: file });
        }
    }
    Err(SandboxError::BackendUnavailable {
        backend: "bwrap",
        reason: format!(
            "every uid in {start}-{end} is in use by a process or another run; widen {SANDBOX_UIDS_ENV_VAR}"
        ),
    })
}

/// Where the per-uid lock files live: `/run/autocoder/uids` (only root leases uids), else
/// `/tmp/autocoder-uids`. Not `$TMPDIR`: every autocoder process must see the same locks.
fn lock_dir() -> PathBuf {
    let run = Path::new("/run");
    if run.is_dir() && std::fs::create_dir_all(run.join("autocoder/uids")).is_ok() {
        run.join("autocoder/uids")
    } else {
        PathBuf::from("/tmp/autocoder-uids")
    }
}

/// The effective uids of running processes (the owners of their `/proc` entries).
fn uids_in_use() -> HashSet<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashSet::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .as_encoded_bytes()
                .iter()
                .all(u8::is_ascii_digit)
        })
        .filter_map(|e| e.metadata().ok().map(|m| m.uid()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_bad_ones_say_how() {
        assert_eq!(parse_range("300000-300009").unwrap(), (300_000, 300_009));
        assert_eq!(parse_range(" 5000 - 5000 ").unwrap(), (5000, 5000));
        for bad in ["", "5", "10-20", "9000-8000", "a-b", "1000-4294967295"] {
            let err = parse_range(bad).unwrap_err().to_string();
            assert!(err.contains("START-END"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_leased_uid_is_not_in_use_and_not_leased_twice() {
        let a = lease().unwrap();
        let b = lease().unwrap();
        assert_ne!(a.uid, b.uid);
        assert!(!uids_in_use().contains(&a.uid));
        let (start, end) = range().unwrap();
        assert!((start..=end).contains(&a.uid));
    }
}

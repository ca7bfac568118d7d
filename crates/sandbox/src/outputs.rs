//! Reading a run's outputs back from the host's outputs directory without trusting them: only
//! regular files and directories are read (a FIFO, socket or device is refused without being
//! opened), symbolic links must stay inside the directory, a scalar output is read only up to
//! its cap, and file and directory outputs are bounded in bytes and entries together.

use std::collections::BTreeMap;
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::io::{self, IoType, Value};
use crate::spec::Limits;

/// Most entries a directory output may hold (all of them together).
const MAX_ENTRIES: u64 = 100_000;

/// Reads and parses every declared output from the host's outputs directory `dir`.
pub(crate) fn read_outputs(
    dir: &Path,
    wanted: &[(String, IoType)],
    limits: &Limits,
) -> Result<BTreeMap<String, Value>, SandboxError> {
    let root = std::fs::canonicalize(dir).map_err(SandboxError::io("resolving", dir))?;
    let mut files = Budget {
        bytes: 0,
        entries: 0,
        cap: limits.output_files_bytes,
    };
    let mut out = BTreeMap::new();
    for (name, kind) in wanted {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return Err(SandboxError::OutputMissing { name: name.clone() });
        };
        let (path, meta) = resolve(name, &root, &path, meta)?;
        let bad = |reason: String| SandboxError::BadOutput {
            name: name.clone(),
            kind: kind.name(),
            reason,
        };
        let value = match kind {
            IoType::File if meta.is_file() => {
                files.add(name, meta.len())?;
                Value::File(path)
            }
            IoType::Dir if meta.is_dir() => {
                walk(name, &root, &path, &mut files)?;
                Value::Dir(path)
            }
            IoType::File | IoType::Dir => {
                return Err(bad(format!("it is {}", what_is(&meta))));
            }
            _ => {
                let text = read_scalar(name, *kind, &path, &meta, limits.scalar_output_bytes)?;
                io::parse_output(name, *kind, &text)?
            }
        };
        out.insert(name.clone(), value);
    }
    Ok(out)
}

/// Bytes and entries of file and directory outputs so far, against the cap.
struct Budget {
    bytes: u64,
    entries: u64,
    cap: u64,
}

impl Budget {
    fn add(&mut self, name: &str, bytes: u64) -> Result<(), SandboxError> {
        self.bytes = self.bytes.saturating_add(bytes);
        self.entries += 1;
        if self.bytes > self.cap {
            return Err(SandboxError::OutputTooLarge {
                name: name.to_owned(),
                size: self.bytes,
                cap: self.cap,
                what: "file and directory outputs in total",
                flag: "--max-output-files",
            });
        }
        if self.entries > MAX_ENTRIES {
            return Err(SandboxError::BadOutput {
                name: name.to_owned(),
                kind: "dir",
                reason: format!("the outputs hold more than {MAX_ENTRIES} files and directories"),
            });
        }
        Ok(())
    }
}

/// Follows `path` if it is a symbolic link, which must lead inside `root`; returns the path to
/// read and what it is (never opened).
fn resolve(
    name: &str,
    root: &Path,
    path: &Path,
    meta: Metadata,
) -> Result<(PathBuf, Metadata), SandboxError> {
    if !meta.file_type().is_symlink() {
        return Ok((path.to_owned(), meta));
    }
    let escapes = || SandboxError::OutputEscapes {
        name: name.to_owned(),
        link: path.to_owned(),
    };
    let target = std::fs::canonicalize(path).map_err(|_| escapes())?;
    if !target.starts_with(root) {
        return Err(escapes());
    }
    let meta = std::fs::symlink_metadata(&target).map_err(|_| escapes())?;
    Ok((target, meta))
}

/// What a file system entry is, for messages.
fn what_is(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO (named pipe), not a regular file or directory"
    } else if t.is_socket() {
        "a socket, not a regular file or directory"
    } else if t.is_block_device() || t.is_char_device() {
        "a device, not a regular file or directory"
    } else if t.is_dir() {
        "a directory (declare it as `dir`)"
    } else if t.is_file() {
        "a regular file where a directory was declared"
    } else {
        "neither a regular file nor a directory"
    }
}

/// Checks a directory output: every entry a regular file, directory or inward link, within the
/// budget.
fn walk(name: &str, root: &Path, dir: &Path, budget: &mut Budget) -> Result<(), SandboxError> {
    for entry in std::fs::read_dir(dir).map_err(SandboxError::io("listing", dir))? {
        let entry = entry.map_err(SandboxError::io("listing", dir))?;
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).map_err(SandboxError::io("reading", &path))?;
        let is_link = meta.file_type().is_symlink();
        let (target, meta) = resolve(name, root, &path, meta)?;
        if meta.is_dir() {
            budget.add(name, 0)?;
            // A link to a directory is checked where it points, not walked twice.
            if !is_link {
                walk(name, root, &target, budget)?;
            }
        } else if meta.is_file() {
            budget.add(name, meta.len())?;
        } else {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            return Err(SandboxError::BadOutput {
                name: name.to_owned(),
                kind: "dir",
                reason: format!("{} is {}", rel.display(), what_is(&meta)),
            });
        }
    }
    Ok(())
}

/// Reads a scalar output of at most `cap` bytes as UTF-8 text.
fn read_scalar(
    name: &str,
    kind: IoType,
    path: &Path,
    meta: &Metadata,
    cap: u64,
) -> Result<String, SandboxError> {
    let bad = |reason: String| SandboxError::BadOutput {
        name: name.to_owned(),
        kind: kind.name(),
        reason,
    };
    if !meta.is_file() {
        return Err(bad(format!("it is {}", what_is(meta))));
    }
    let too_large = |size| SandboxError::OutputTooLarge {
        name: name.to_owned(),
        size,
        cap,
        what: "a scalar output",
        flag: "--max-scalar-output",
    };
    if meta.len() > cap {
        return Err(too_large(meta.len()));
    }
    let bytes = read_regular(path, cap).map_err(|e| match e {
        ReadError::TooLarge(n) => too_large(n),
        ReadError::NotRegular(m) => bad(format!("it is {}", what_is(&m))),
        ReadError::Io(source) => SandboxError::Io {
            action: "reading",
            path: path.to_owned(),
            source,
        },
    })?;
    String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8 text".into()))
}

/// Why [`read_regular`] read nothing.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The file has more than the cap (at least this many bytes).
    TooLarge(u64),
    /// It is not a regular file (checked after opening, in case it was swapped).
    NotRegular(Box<Metadata>),
    /// The operating system's error.
    Io(std::io::Error),
}

/// Reads a regular file of at most `cap` bytes: opened without following a final link and
/// without blocking (a FIFO swapped in after a check does not hang us), checked again once open.
pub(crate) fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
        .map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(Box::new(meta)));
    }
    if meta.len() > cap {
        return Err(ReadError::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn scalars_are_capped_and_fifos_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("n"), "42\n").unwrap();
        std::fs::write(dir.path().join("big"), "x".repeat(2000)).unwrap();
        let fifo = dir.path().join("pipe");
        let mut mkfifo = crate::exec::command("mkfifo");
        mkfifo.arg(&fifo);
        let made = crate::exec::run(mkfifo, 1 << 10, None, false)
            .await
            .unwrap();
        assert!(made.status.unwrap().success());
        let limits = Limits {
            scalar_output_bytes: 1000,
            ..Limits::default()
        };
        let read = |name: &str, kind| read_outputs(dir.path(), &[(name.to_owned(), kind)], &limits);
        assert_eq!(read("n", IoType::Int).unwrap()["n"], Value::Int(42));
        let err = read("big", IoType::Str).unwrap_err();
        assert!(err.to_string().contains("over the 1000 bytes cap"), "{err}");
        let err = read("pipe", IoType::Str).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        let err = read("pipe", IoType::File).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
        assert!(matches!(
            read_regular(&fifo, 10),
            Err(ReadError::NotRegular(_))
        ));
    }
}

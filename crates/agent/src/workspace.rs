//! File operations confined to the workspace. Every path is relative to the workspace's root
//! and opened beneath it with `openat2(RESOLVE_BENEATH)`: `..`, absolute paths and links that
//! lead outside (also one the sandboxed code made after any check of ours) are refused by the
//! kernel at the moment of the open, not by a string test before it. Directories are created
//! and entered one component at a time, never through a link.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Why a file operation was refused or failed; the text is what the model sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// The path leaves the workspace (absolute, `..`, or through a link).
    Outside(String),
    /// Anything else (missing file, not UTF-8, too large ...).
    Failed(String),
}

impl FileError {
    /// The message for the model.
    pub fn message(&self) -> &str {
        match self {
            Self::Outside(m) | Self::Failed(m) => m,
        }
    }
}

/// The workspace: a directory every file tool works beneath.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    dir: OwnedFd,
}

/// The most bytes `read` returns of one file.
pub(crate) const READ_CAP: u64 = 256 << 10;

impl Workspace {
    /// Opens `root` (which must exist) as the workspace.
    pub fn open(root: &Path) -> std::io::Result<Self> {
        let dir = rustix::fs::open(
            root,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Self {
            root: root.to_owned(),
            dir,
        })
    }

    /// The workspace directory on the host.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads a UTF-8 text file (at most 256 KiB; more is cut with a note).
    pub fn read(&self, path: &str) -> Result<String, FileError> {
        let rel = relative(path)?;
        let fd = self.open_beneath(&rel, OFlags::RDONLY, Mode::empty(), path)?;
        let mut file = File::from(fd);
        let mut bytes = Vec::new();
        Read::by_ref(&mut file)
            .take(READ_CAP + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| FileError::Failed(format!("cannot read {path}: {e}")))?;
        let cut = bytes.len() as u64 > READ_CAP;
        bytes.truncate(usize::try_from(READ_CAP).unwrap_or(usize::MAX));
        let mut text = String::from_utf8(bytes)
            .map_err(|_| FileError::Failed(format!("{path} is not a UTF-8 text file")))?;
        if cut {
            let _ = write!(
                text,
                "\n[... {path} is longer than {READ_CAP} bytes; cut here]"
            );
        }
        Ok(text)
    }

    /// Writes `contents` to `path`, creating its directories; returns the bytes written.
    pub fn write(&self, path: &str, contents: &str) -> Result<usize, FileError> {
        let rel = relative(path)?;
        let Some(name) = rel.file_name() else {
            return Err(FileError::Failed(format!("{path} names no file")));
        };
        let parent = self.make_dirs(rel.parent().unwrap_or(Path::new("")), path)?;
        let fd = rustix::fs::openat2(
            parent.as_ref().map_or(self.dir.as_fd(), AsFd::as_fd),
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| refusal(e, path))?;
        let mut file = File::from(fd);
        file.write_all(contents.as_bytes())
            .map_err(|e| FileError::Failed(format!("cannot write {path}: {e}")))?;
        Ok(contents.len())
    }

    /// Lists `dir` (the workspace for `""` or `.`) recursively, up to `limit` entries, one
    /// `path<TAB>size` line per file and `path/` per directory; links are shown, not followed.
    pub fn list(&self, dir: &str, limit: usize) -> Result<Vec<String>, FileError> {
        let rel = if dir.trim().is_empty() || dir.trim() == "." {
            PathBuf::new()
        } else {
            relative(dir)?
        };
        let start = if rel.as_os_str().is_empty() {
            rustix::io::dup(&self.dir).map_err(|e| FileError::Failed(e.to_string()))?
        } else {
            self.open_beneath(&rel, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty(), dir)?
        };
        let mut lines = Vec::new();
        walk(&start, &rel, limit, &mut lines)
            .map_err(|e| FileError::Failed(format!("cannot list {dir}: {e}")))?;
        if lines.len() >= limit {
            lines.push(format!("[... listing stopped after {limit} entries]"));
        }
        Ok(lines)
    }

    fn open_beneath(
        &self,
        rel: &Path,
        flags: OFlags,
        mode: Mode,
        shown: &str,
    ) -> Result<OwnedFd, FileError> {
        rustix::fs::openat2(
            &self.dir,
            rel,
            flags | OFlags::CLOEXEC,
            mode,
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| refusal(e, shown))
    }

    /// Creates and enters `rel`'s directories one at a time, refusing links; `None` is the root.
    fn make_dirs(&self, rel: &Path, shown: &str) -> Result<Option<OwnedFd>, FileError> {
        let mut current: Option<OwnedFd> = None;
        for component in rel.components() {
            let Component::Normal(name) = component else {
                continue;
            };
            let at = current.as_ref().map_or(self.dir.as_fd(), AsFd::as_fd);
            match rustix::fs::mkdirat(at, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(refusal(e, shown)),
            }
            let next = rustix::fs::openat2(
                at,
                name,
                OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
            )
            .map_err(|e| {
                let link = rustix::fs::statat(at, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| {
                        rustix::fs::FileType::from_raw_mode(st.st_mode)
                            == rustix::fs::FileType::Symlink
                    });
                refusal(if link { Errno::LOOP } else { e }, shown)
            })?;
            current = Some(next);
        }
        Ok(current)
    }
}

/// `path` as a clean relative path, or the refusal: absolute paths and `..` leave the workspace.
fn relative(path: &str) -> Result<PathBuf, FileError> {
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err(FileError::Failed("the path is empty".into()));
    }
    let p = Path::new(trimmed);
    if p.is_absolute() {
        // Name the workspace file the model most likely meant: the same file name.
        let name = p
            .file_name()
            .map_or_else(|| "solution.py".into(), |n| n.to_string_lossy());
        let outputs = if p.starts_with(autocoder_loop::request::OUTPUTS_DIR) {
            format!(
                " ({} is where the script writes its outputs when it runs: write the script, not its outputs)",
                autocoder_loop::request::OUTPUTS_DIR
            )
        } else {
            String::new()
        };
        return Err(FileError::Outside(format!(
            "{trimmed} is an absolute path; paths are relative to the workspace (the current directory): `{name}`, not `{trimmed}`{outputs}"
        )));
    }
    let mut clean = PathBuf::new();
    for component in p.components() {
        match component {
            Component::Normal(c) => clean.push(c),
            Component::CurDir => {}
            _ => {
                return Err(FileError::Outside(format!(
                    "{trimmed} leaves the workspace (`..`); only files inside it can be used"
                )));
            }
        }
    }
    if clean.as_os_str().is_empty() {
        return Err(FileError::Failed(format!("{trimmed} names no file")));
    }
    Ok(clean)
}

/// The message for a failed open: leaving the workspace is a refusal, the rest a failure.
fn refusal(errno: Errno, path: &str) -> FileError {
    match errno {
        Errno::XDEV => FileError::Outside(format!(
            "{path} resolves outside the workspace (through a link); only files inside it can be used"
        )),
        Errno::LOOP | Errno::MLINK => FileError::Outside(format!(
            "{path} goes through a symbolic link, which file tools do not follow; use the file it points to inside the workspace"
        )),
        Errno::NOENT => FileError::Failed(format!("{path} does not exist")),
        Errno::ISDIR => FileError::Failed(format!("{path} is a directory")),
        Errno::NOTDIR => FileError::Failed(format!("a part of {path} is not a directory")),
        Errno::NOSYS => FileError::Failed(
            "this kernel lacks openat2 (Linux 5.6 or later is needed for agent file tools)".into(),
        ),
        other => FileError::Failed(format!("{path}: {other}")),
    }
}

fn walk(
    dir: &OwnedFd,
    prefix: &Path,
    limit: usize,
    lines: &mut Vec<String>,
) -> std::io::Result<()> {
    let mut entries: Vec<(Vec<u8>, rustix::fs::FileType)> = Vec::new();
    // Sorted by name below (file types have no order).
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes().to_vec();
        if name == b"." || name == b".." {
            continue;
        }
        entries.push((name, entry.file_type()));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in entries {
        if lines.len() >= limit {
            return Ok(());
        }
        let path = prefix.join(OsStr::from_bytes(&name));
        let shown = path.display();
        match kind {
            rustix::fs::FileType::Directory => {
                lines.push(format!("{shown}/"));
                let sub = rustix::fs::openat(
                    dir,
                    OsStr::from_bytes(&name),
                    OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                walk(&sub, &path, limit, lines)?;
            }
            rustix::fs::FileType::Symlink => lines.push(format!("{shown} (link)")),
            _ => {
                let size = rustix::fs::statat(
                    dir,
                    OsStr::from_bytes(&name),
                    rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                )
                .map_or(0, |s| s.st_size);
                lines.push(format!("{shown}\t{size}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An absolute path is refused with the workspace file it most likely meant; under the
    /// outputs directory, with what that directory is for (the local model wrote its outputs
    /// and then its tests there, turn after turn).
    #[test]
    fn an_absolute_path_is_refused_with_the_file_it_meant() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let Err(FileError::Outside(why)) = ws.write("/var/outputs/test_solution.py", "x") else {
            panic!("an absolute path was written");
        };
        assert!(
            why.contains("`test_solution.py`, not `/var/outputs/test_solution.py`")
                && why.contains("/var/outputs is where the script writes its outputs when it runs"),
            "{why}"
        );
        let Err(FileError::Outside(why)) = ws.read("/etc/passwd") else {
            panic!("an absolute path was read");
        };
        assert!(why.ends_with("`passwd`, not `/etc/passwd`"), "{why}");
    }

    #[test]
    fn reads_writes_and_lists_inside() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        ws.write("a/b/c.txt", "hello").unwrap();
        assert_eq!(ws.read("a/b/c.txt").unwrap(), "hello");
        assert_eq!(ws.read("./a/b/c.txt").unwrap(), "hello");
        let listing = ws.list(".", 100).unwrap();
        assert_eq!(listing, vec!["a/", "a/b/", "a/b/c.txt\t5"]);
    }

    #[test]
    fn refuses_paths_and_links_that_leave() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        for bad in ["/etc/passwd", "../x", "a/../../x"] {
            assert!(matches!(ws.read(bad), Err(FileError::Outside(_))), "{bad}");
            assert!(
                matches!(ws.write(bad, "x"), Err(FileError::Outside(_))),
                "{bad}"
            );
        }
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("s")).unwrap();
        assert!(matches!(ws.read("link/secret"), Err(FileError::Outside(_))));
        assert!(matches!(ws.read("s"), Err(FileError::Outside(_))));
        let through = ws.write("link/new", "x");
        assert!(matches!(through, Err(FileError::Outside(_))), "{through:?}");
        assert!(matches!(ws.write("s", "x"), Err(FileError::Outside(_))));
        assert!(!outside.path().join("new").exists());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).unwrap(),
            "s"
        );
        // A link inside the workspace to a file inside it reads.
        ws.write("real.txt", "r").unwrap();
        std::os::unix::fs::symlink("real.txt", dir.path().join("alias")).unwrap();
        assert_eq!(ws.read("alias").unwrap(), "r");
    }
}

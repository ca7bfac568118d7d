//! Path arguments against the workspace: lexically first (`..` may not climb out, absolute paths
//! only inside the workspace or the policy's system paths), then through symbolic links that
//! already exist (a link in the workspace pointing outside is refused).
//!
//! This is a check at decision time. The command then runs in the sandbox, which is the wall:
//! a link made between the check and the run is the sandbox's to contain.

use std::path::{Component, Path, PathBuf};

use crate::decision::{Denial, DenyKind};

/// How a command uses a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
    Delete,
}

/// The absolute paths outside the workspace a policy lets commands use.
#[derive(Debug, Clone, Default)]
pub(crate) struct SystemPaths {
    pub(crate) read: Vec<PathBuf>,
    pub(crate) write: Vec<PathBuf>,
}

/// The directory commands run in, as given and with links resolved (when it exists).
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    root: PathBuf,
    canonical: Option<PathBuf>,
}

impl Workspace {
    pub(crate) fn new(root: &Path) -> Self {
        let absolute = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let root = normalize_absolute(&absolute);
        let canonical = std::fs::canonicalize(&root).ok();
        Self { root, canonical }
    }

    /// Whether `path`, with links resolved, is in the workspace (true when nothing exists to
    /// resolve).
    pub(crate) fn holds(&self, path: &Path) -> bool {
        match (&self.canonical, std::fs::canonicalize(path)) {
            (Some(root), Ok(resolved)) => resolved.starts_with(root),
            _ => true,
        }
    }

    /// The workspace directory (absolute, `..` removed).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }
}

/// `/a/./b/../c` as `/a/c`, without touching the file system; `..` above `/` stays at `/`.
fn normalize_absolute(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// A relative path's normal form, or `None` when `..` climbs above its start.
fn normalize_relative(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

fn under(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| format!("`{}`", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn outside(arg: &str, access: Access, system: &SystemPaths) -> Denial {
    let allowed = match access {
        Access::Read => {
            let mut all = system.read.clone();
            all.extend(
                system
                    .write
                    .iter()
                    .filter(|p| !system.read.contains(p))
                    .cloned(),
            );
            all
        }
        Access::Write => system.write.clone(),
        Access::Delete => Vec::new(),
    };
    let verb = match access {
        Access::Read => "read",
        Access::Write => "write",
        Access::Delete => "delete",
    };
    let also = if allowed.is_empty() {
        String::new()
    } else {
        format!(" (and {verb} only {} outside it)", list(&allowed))
    };
    Denial::new(
        DenyKind::Path,
        format!(
            "`{arg}` is outside the workspace; commands may {verb} files in the workspace only{also}: use a path relative to it"
        ),
    )
}

/// Checks one path argument, as the command would use it from the workspace directory.
pub(crate) fn check(
    arg: &str,
    access: Access,
    workspace: &Workspace,
    system: &SystemPaths,
) -> Result<(), Denial> {
    if arg == "-" && access == Access::Read {
        return Ok(()); // stdin
    }
    let path = Path::new(arg);
    let (relative, full) = if path.is_absolute() {
        let normal = normalize_absolute(path);
        let inside = normal
            .strip_prefix(&workspace.root)
            .ok()
            .or_else(|| {
                workspace
                    .canonical
                    .as_deref()
                    .and_then(|c| normal.strip_prefix(c).ok())
            })
            .map(Path::to_path_buf);
        let Some(relative) = inside else {
            let allowed = match access {
                Access::Read => under(&normal, &system.read) || under(&normal, &system.write),
                Access::Write => under(&normal, &system.write),
                Access::Delete => false,
            };
            return if allowed {
                Ok(())
            } else {
                Err(outside(arg, access, system))
            };
        };
        (relative, path.to_path_buf())
    } else {
        let relative = normalize_relative(path).ok_or_else(|| outside(arg, access, system))?;
        (relative, workspace.root.join(path))
    };
    if access == Access::Delete && relative.as_os_str().is_empty() {
        return Err(Denial::new(
            DenyKind::Path,
            format!(
                "`{arg}` is the workspace itself, which may not be deleted; name the files in it instead"
            ),
        ));
    }
    through_links(arg, full, access, workspace, system)
}

/// The deepest existing ancestor of the path as written (the kernel resolves `link/..`
/// physically, so the unnormalised path is what counts), with links resolved, must stay in the
/// workspace (or, for reads, in the policy's readable system paths).
fn through_links(
    arg: &str,
    mut probe: PathBuf,
    access: Access,
    workspace: &Workspace,
    system: &SystemPaths,
) -> Result<(), Denial> {
    let Some(canonical_root) = &workspace.canonical else {
        return Ok(()); // no workspace on disk: nothing to resolve
    };
    let resolved = loop {
        if let Ok(resolved) = std::fs::canonicalize(&probe) {
            break resolved;
        }
        if !probe.pop() {
            return Ok(());
        }
    };
    if resolved.starts_with(canonical_root) {
        return Ok(());
    }
    if access == Access::Read && (under(&resolved, &system.read) || under(&resolved, &system.write))
    {
        return Ok(());
    }
    Err(Denial::new(
        DenyKind::Path,
        format!(
            "`{arg}` resolves through a symbolic link to `{}`, outside the workspace",
            resolved.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system() -> SystemPaths {
        SystemPaths {
            read: vec![PathBuf::from("/usr/share/dict")],
            write: vec![PathBuf::from("/dev/null")],
        }
    }

    #[test]
    fn lexical_rules() {
        let ws = Workspace::new(Path::new("/nonexistent/ws"));
        let ok = |arg: &str, access| check(arg, access, &ws, &system()).is_ok();
        assert!(ok("data.csv", Access::Read));
        assert!(ok("a/../b", Access::Write));
        assert!(ok("/nonexistent/ws/x", Access::Write));
        assert!(ok("/usr/share/dict/words", Access::Read));
        assert!(ok("/dev/null", Access::Write));
        assert!(ok("-", Access::Read));
        assert!(!ok("../x", Access::Read));
        assert!(!ok("a/../../x", Access::Read));
        assert!(!ok("/usr/share/dict/../../../etc/passwd", Access::Read));
        assert!(!ok("/usr/share/dict/words", Access::Write));
        assert!(!ok("/", Access::Delete));
        assert!(!ok(".", Access::Delete));
        assert!(!ok("/nonexistent/ws", Access::Delete));
        assert!(ok("sub", Access::Delete));
    }
}

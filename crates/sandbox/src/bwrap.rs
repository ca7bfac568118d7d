//! The bubblewrap command line: a read-only system, sized scratch file systems (`/tmp`, the work
//! directory), the contract's directories, new namespaces, the seccomp filter, a cleared
//! environment, then the limits wrapper.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::drop_uid;

/// One bind mount into the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    pub(crate) host: PathBuf,
    pub(crate) dest: PathBuf,
    pub(crate) writable: bool,
}

/// Everything bubblewrap needs besides the command.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) mounts: Vec<Mount>,
    /// Writable tmpfs mounts and their sizes in bytes (made before `mounts`, which may lie
    /// inside them).
    pub(crate) scratch: Vec<(PathBuf, u64)>,
    pub(crate) chdir: PathBuf,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) network: bool,
    /// When we are root: the unprivileged uid the command is switched to (`RLIMIT_NPROC` does
    /// not apply to root, so a fork bomb would not be contained otherwise).
    pub(crate) run_as: Option<u32>,
    /// The descriptor bubblewrap reads the seccomp program from (and closes).
    pub(crate) seccomp_fd: Option<std::os::fd::RawFd>,
    /// With `run_as`: the descriptor bubblewrap copies the uid switch program from, into
    /// [`drop_uid::SANDBOX_PATH`] (none when `setpriv` does the switch).
    pub(crate) drop_uid_fd: Option<std::os::fd::RawFd>,
}

const SYSTEM_DIRS: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// The bubblewrap arguments (everything before the command).
pub(crate) fn args(plan: &Plan) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |items: &[&dyn AsRefOs]| a.extend(items.iter().map(|i| i.os()));
    push(&[&"--ro-bind", &"/usr", &"/usr"]);
    for dir in SYSTEM_DIRS {
        match std::fs::read_link(dir) {
            Ok(target) => push(&[&"--symlink", &target, dir]),
            Err(_) if Path::new(dir).is_dir() => push(&[&"--ro-bind", dir, dir]),
            Err(_) => {}
        }
    }
    push(&[
        &"--ro-bind",
        &"/etc",
        &"/etc",
        &"--proc",
        &"/proc",
        &"--dev",
        &"/dev",
    ]);
    // Directories bubblewrap creates for mount points are 0700 unless told otherwise; an
    // unprivileged uid must be able to walk through them.
    let mut made: BTreeSet<PathBuf> = ["/", "/usr", "/etc", "/proc", "/dev"]
        .iter()
        .map(PathBuf::from)
        .collect();
    for (dest, size) in &plan.scratch {
        for anc in parents(dest) {
            if made.insert(anc.to_path_buf()) {
                push(&[&"--perms", &"0755", &"--dir", &anc]);
            }
        }
        made.insert(dest.clone());
        push(&[
            &"--perms",
            &"1777",
            &"--size",
            &size.to_string(),
            &"--tmpfs",
            dest,
        ]);
    }
    for m in &plan.mounts {
        if m.dest.starts_with("/usr") && !m.writable {
            continue;
        }
        for anc in parents(&m.dest) {
            if made.insert(anc.to_path_buf()) && !under_bound(anc, plan) {
                push(&[&"--perms", &"0755", &"--dir", &anc]);
            }
        }
        made.insert(m.dest.clone());
        let flag = if m.writable { "--bind" } else { "--ro-bind" };
        push(&[&flag, &m.host, &m.dest]);
    }
    if let Some(fd) = plan.drop_uid_fd {
        let path = Path::new(drop_uid::SANDBOX_PATH);
        if let Some(dir) = path.parent() {
            push(&[&"--perms", &"0755", &"--dir", &dir]);
        }
        push(&[&"--perms", &"0555", &"--file", &fd.to_string(), &path]);
    }
    // The root itself is a tmpfs bubblewrap made; nothing may be written there.
    push(&[&"--remount-ro", &"/"]);
    push(&[&"--chdir", &plan.chdir]);
    push(&[
        &"--unshare-pid",
        &"--unshare-ipc",
        &"--unshare-uts",
        &"--unshare-cgroup-try",
    ]);
    if !plan.network {
        push(&[&"--unshare-net"]);
    }
    if plan.run_as.is_some() {
        push(&[&"--cap-add", &"CAP_SETUID", &"--cap-add", &"CAP_SETGID"]);
    } else {
        push(&[&"--unshare-user"]);
    }
    if let Some(fd) = plan.seccomp_fd {
        push(&[&"--seccomp", &fd.to_string()]);
    }
    push(&[
        &"--hostname",
        &"sandbox",
        &"--die-with-parent",
        &"--new-session",
        &"--clearenv",
    ]);
    for (k, v) in &plan.env {
        push(&[&"--setenv", k, v]);
    }
    push(&[&"--"]);
    a
}

/// The ancestors of `dest` below `/`, outermost first (not `dest` itself).
fn parents(dest: &Path) -> Vec<&Path> {
    let mut all: Vec<&Path> = dest.ancestors().skip(1).collect();
    all.pop(); // `/`
    all.reverse();
    all
}

/// Whether `dir` lies inside an earlier mount (then bubblewrap must not create it).
fn under_bound(dir: &Path, plan: &Plan) -> bool {
    plan.mounts
        .iter()
        .any(|m| dir.starts_with(&m.dest) && dir != m.dest)
}

/// Anything that turns into an `OsString` argument.
trait AsRefOs {
    fn os(&self) -> OsString;
}
impl AsRefOs for &str {
    fn os(&self) -> OsString {
        OsString::from(*self)
    }
}
impl AsRefOs for String {
    fn os(&self) -> OsString {
        OsString::from(self)
    }
}
impl AsRefOs for PathBuf {
    fn os(&self) -> OsString {
        self.clone().into_os_string()
    }
}
impl AsRefOs for &Path {
    fn os(&self) -> OsString {
        self.as_os_str().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_walkable_parents_for_mounts_outside_usr() {
        let plan = Plan {
            mounts: vec![Mount {
                host: "/root/.pyenv/v".into(),
                dest: "/root/.pyenv/v".into(),
                writable: false,
            }],
            scratch: vec![("/tmp".into(), 1 << 20), ("/var/work".into(), 2 << 20)],
            chdir: "/tmp".into(),
            env: vec![("HOME".into(), "/tmp".into())],
            network: false,
            run_as: Some(200_000),
            seccomp_fd: Some(5),
            drop_uid_fd: Some(6),
        };
        let text: Vec<String> = args(&plan)
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let joined = text.join(" ");
        assert!(joined.contains("--perms 0755 --dir /root --perms 0755 --dir /root/.pyenv --ro-bind /root/.pyenv/v /root/.pyenv/v"), "{joined}");
        assert!(joined.contains("--unshare-net"));
        assert!(joined.contains("--perms 1777 --size 1048576 --tmpfs /tmp --perms 0755 --dir /var --perms 1777 --size 2097152 --tmpfs /var/work"), "{joined}");
        assert!(joined.contains("--seccomp 5"), "{joined}");
        assert!(
            joined.contains("--perms 0755 --dir /.autocoder --perms 0555 --file 6 /.autocoder/drop-uid --remount-ro /"),
            "{joined}"
        );
        assert!(joined.contains("--clearenv --setenv HOME /tmp --"));
        assert!(!joined.contains("--unshare-user"));
    }
}

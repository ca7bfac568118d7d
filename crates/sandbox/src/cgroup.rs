//! Whole-run limits: a cgroup per run holding every process of the sandbox, with the run's
//! memory (no swap), process and CPU limits. cgroup v2 where a writable hierarchy has the
//! controllers, else v1 (memory, pids and cpu hierarchies); where neither can be created (not
//! root, no delegation) runs fall back to per-process rlimits alone, which `sandbox doctor` says.
//!
//! A cgroup is `autocoder-<pid>-<n>` under this process's own cgroup in each hierarchy; the child
//! joins it before `exec` (see `child`), so nothing it starts escapes. After the run it is
//! removed; one left by a killed process is listed by `sandbox doctor` and removed by
//! `sandbox clean`.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::cleanup;
use crate::spec::Limits;

/// Which cgroup interface a machine offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
}

/// Where run cgroups are created: per controller (v1) or once (v2), this process's cgroup.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub(crate) version: Version,
    /// (controller, directory of our own cgroup); v2 has one entry named `unified`.
    pub(crate) parents: Vec<(&'static str, PathBuf)>,
}

const V1_CONTROLLERS: [&str; 3] = ["memory", "pids", "cpu"];
static NEXT: AtomicU32 = AtomicU32::new(0);
/// The layout, found once per process; `Err` says why there is none.
static LAYOUT: LazyLock<Result<Layout, String>> = LazyLock::new(find_layout);

/// This machine's layout, or why run cgroups cannot be made here.
pub(crate) fn layout() -> Result<&'static Layout, String> {
    LAYOUT.as_ref().map_err(Clone::clone)
}

fn find_layout() -> Result<Layout, String> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let mounts = parse_mounts(&mountinfo);
    let v2 = mounts.iter().find(|m| m.fstype == "cgroup2").and_then(|m| {
        let path = own_path(&own, str::is_empty)?;
        let dir = m.dir_of(&path);
        let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
        let has = |c| controllers.split_whitespace().any(|x| x == c);
        (has("memory") && has("pids")).then(|| Layout {
            version: Version::V2,
            parents: vec![("unified", dir)],
        })
    });
    if let Some(layout) = v2 {
        return Ok(layout);
    }
    let mut parents = Vec::new();
    for controller in V1_CONTROLLERS {
        let Some(m) = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == controller))
        else {
            continue;
        };
        let Some(path) = own_path(&own, |cs| cs.split(',').any(|c| c == controller)) else {
            continue;
        };
        parents.push((controller, m.dir_of(&path)));
    }
    if parents.iter().any(|(c, _)| *c == "memory") && parents.iter().any(|(c, _)| *c == "pids") {
        Ok(Layout {
            version: Version::V1,
            parents,
        })
    } else {
        Err("no cgroup v2 hierarchy with the memory and pids controllers, and no v1 memory and pids hierarchies".into())
    }
}

/// One cgroup mount from `/proc/self/mountinfo`.
#[derive(Debug, PartialEq)]
struct CgroupMount {
    root: String,
    point: PathBuf,
    fstype: String,
    options: String,
}

impl CgroupMount {
    /// The directory of the cgroup `path` (as `/proc/self/cgroup` names it) in this mount.
    fn dir_of(&self, path: &str) -> PathBuf {
        let rel = path
            .strip_prefix(self.root.as_str())
            .unwrap_or(path)
            .trim_start_matches('/');
        if rel.is_empty() {
            self.point.clone()
        } else {
            self.point.join(rel)
        }
    }
}

fn parse_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let fstype = right.next()?;
            let _source = right.next()?;
            let options = right.next().unwrap_or("");
            if fstype != "cgroup" && fstype != "cgroup2" {
                return None;
            }
            Some(CgroupMount {
                root: (*left.get(3)?).to_owned(),
                point: PathBuf::from(*left.get(4)?),
                fstype: fstype.to_owned(),
                options: options.to_owned(),
            })
        })
        .collect()
}

/// Our cgroup's path in the hierarchy whose controller list matches `wanted`.
fn own_path(proc_cgroup: &str, wanted: impl Fn(&str) -> bool) -> Option<String> {
    proc_cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        wanted(controllers).then(|| path.to_owned())
    })
}

/// A run's cgroup (one directory per v1 hierarchy), removed by [`RunCgroup::remove`].
#[derive(Debug)]
pub(crate) struct RunCgroup {
    version: Version,
    dirs: Vec<(&'static str, PathBuf)>,
    procs: Vec<std::fs::File>,
}

impl RunCgroup {
    /// Creates the run's cgroup with `limits`; `Err` says why not (then rlimits alone hold).
    pub(crate) fn create(limits: &Limits) -> Result<Self, String> {
        let layout = layout()?;
        let name = format!(
            "autocoder-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut run = Self {
            version: layout.version,
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        for (controller, parent) in &layout.parents {
            if layout.version == Version::V2 {
                enable_controllers(parent);
            }
            let dir = parent.join(&name);
            std::fs::create_dir(&dir).map_err(|e| {
                format!("cannot create the cgroup {} ({e}); run as root, or delegate a cgroup to this user", dir.display())
            })?;
            cleanup::track_cgroup(&dir);
            run.dirs.push((controller, dir));
        }
        // From here on, `run` is removed again on every error (its Drop).
        run.write_limits(limits)?;
        // v1: the child joins through `tasks`, which moves the calling thread only (the forked
        // child has just the one). Writing `0` there is the one migration the kernel does
        // without the global `cgroup_threadgroup_rwsem`, whose writer waits out an RCU grace
        // period when the lock was idle: through `cgroup.procs` that wait cost 10-33 ms per
        // start. v2 domain cgroups take processes only (`cgroup.procs`).
        let join_file = match run.version {
            Version::V1 => "tasks",
            Version::V2 => "cgroup.procs",
        };
        for (_, dir) in &run.dirs {
            let path = dir.join(join_file);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            run.procs.push(file);
        }
        Ok(run)
    }

    fn write_limits(&self, l: &Limits) -> Result<(), String> {
        let period: u64 = 100_000;
        let quota = u64::from(l.cpu_millis) * period / 1000;
        for (controller, dir) in &self.dirs {
            let files: Vec<(&str, String)> = match (self.version, *controller) {
                (Version::V2, _) => vec![
                    ("memory.max", l.memory_bytes.to_string()),
                    ("memory.swap.max", "0".into()),
                    ("pids.max", l.processes.to_string()),
                    ("cpu.max", format!("{quota} {period}")),
                ],
                (Version::V1, "memory") => vec![
                    ("memory.limit_in_bytes", l.memory_bytes.to_string()),
                    // Memory plus swap: the same, so nothing swaps out past the limit.
                    ("memory.memsw.limit_in_bytes", l.memory_bytes.to_string()),
                ],
                (Version::V1, "pids") => vec![("pids.max", l.processes.to_string())],
                (Version::V1, _) => vec![
                    ("cpu.cfs_period_us", period.to_string()),
                    ("cpu.cfs_quota_us", quota.to_string()),
                ],
            };
            for (file, value) in files {
                let path = dir.join(file);
                match std::fs::write(&path, &value) {
                    Ok(()) => {}
                    // Optional knobs: swap accounting off, or no cpu controller in v2.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        tracing::debug!(path = %path.display(), "cgroup knob missing");
                    }
                    Err(e) => return Err(format!("cannot set {}: {e}", path.display())),
                }
            }
        }
        Ok(())
    }

    /// The open `tasks` (v1) or `cgroup.procs` (v2) descriptors the child writes itself into.
    pub(crate) fn join_fds(&self) -> Vec<std::os::fd::RawFd> {
        self.procs.iter().map(AsRawFd::as_raw_fd).collect()
    }

    /// Whether the kernel's OOM killer killed a process of the run.
    pub(crate) fn oom_killed(&self) -> bool {
        let (file, key) = match self.version {
            Version::V1 => ("memory.oom_control", "oom_kill"),
            Version::V2 => ("memory.events", "oom_kill"),
        };
        self.dirs
            .iter()
            .filter(|(c, _)| matches!(*c, "memory" | "unified"))
            .filter_map(|(_, d)| std::fs::read_to_string(d.join(file)).ok())
            .any(|text| {
                text.lines().any(|l| {
                    l.strip_prefix(key)
                        .and_then(|n| n.trim().parse::<u64>().ok())
                        .is_some_and(|n| n > 0)
                })
            })
    }

    /// Kills what is left in the cgroup and removes it (waiting up to a few seconds for the
    /// kernel to reap the processes).
    pub(crate) async fn remove(mut self) {
        self.procs.clear();
        let dirs = std::mem::take(&mut self.dirs);
        remove_dirs(dirs.into_iter().map(|(_, d)| d).collect()).await;
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        // A cancelled run: try once now; what is still busy stays registered for
        // `cleanup::shutdown` (or `sandbox clean`).
        for (_, dir) in self.dirs.drain(..) {
            if std::fs::remove_dir(&dir).is_ok() {
                cleanup::untrack_cgroup(&dir);
            }
        }
    }
}

/// In v2, a child cgroup gets controllers only if its parent lists them in
/// `cgroup.subtree_control`; ask for them (it fails harmlessly where not allowed).
fn enable_controllers(parent: &Path) {
    let _ = std::fs::write(parent.join("cgroup.subtree_control"), "+memory +pids +cpu");
}

/// Removes cgroup directories, killing their processes if any linger.
pub(crate) async fn remove_dirs(mut dirs: Vec<PathBuf>) {
    for attempt in 0..300 {
        dirs.retain(|dir| match std::fs::remove_dir(dir) {
            Ok(()) => {
                cleanup::untrack_cgroup(dir);
                false
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                cleanup::untrack_cgroup(dir);
                false
            }
            Err(_) => true,
        });
        if dirs.is_empty() {
            return;
        }
        if attempt % 50 == 10 {
            for dir in &dirs {
                kill_members(dir).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tracing::warn!(
        ?dirs,
        "cgroups still busy; `autocoder sandbox clean` removes them later"
    );
}

/// Sends SIGKILL to every process in the cgroup `dir` (through `kill(1)`: no `unsafe`).
async fn kill_members(dir: &Path) {
    let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    let pids: Vec<&str> = text.split_whitespace().collect();
    if pids.is_empty() {
        return;
    }
    let mut cmd = crate::exec::command("kill");
    cmd.arg("-KILL").arg("--").args(&pids);
    let _ = crate::exec::run(cmd, 1 << 12, Some(Duration::from_secs(5)), false).await;
}

/// Run cgroups in this machine's hierarchies: `(directory, pid of the process that made it)`.
pub(crate) fn existing() -> Vec<(PathBuf, u32)> {
    let Ok(layout) = layout() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (_, parent) in &layout.parents {
        for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name
                .strip_prefix("autocoder-")
                .and_then(|r| r.split('-').next())
                .and_then(|p| p.parse().ok())
            {
                found.push((entry.path(), pid));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
30 23 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
34 30 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
35 30 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
40 30 0:36 /docker/abc /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn mounts_and_own_paths_are_read_from_proc() {
        let mounts = parse_mounts(MOUNTINFO);
        assert_eq!(mounts.len(), 4);
        assert_eq!(mounts[0].point, Path::new("/sys/fs/cgroup/memory"));
        assert!(mounts[2].options.split(',').any(|o| o == "cpu"));
        let own = "8:pids:/\n4:memory:/process_api/d8\n1:cpu,cpuacct:/\n0::/docker/abc/x\n";
        let memory = own_path(own, |c| c.split(',').any(|x| x == "memory")).unwrap();
        assert_eq!(
            mounts[0].dir_of(&memory),
            Path::new("/sys/fs/cgroup/memory/process_api/d8")
        );
        let cpu = own_path(own, |c| c.split(',').any(|x| x == "cpu")).unwrap();
        assert_eq!(
            mounts[2].dir_of(&cpu),
            Path::new("/sys/fs/cgroup/cpu,cpuacct")
        );
        // A namespaced v2 mount: paths are relative to its root.
        let unified = own_path(own, str::is_empty).unwrap();
        assert_eq!(
            mounts[3].dir_of(&unified),
            Path::new("/sys/fs/cgroup/unified/x")
        );
    }
}

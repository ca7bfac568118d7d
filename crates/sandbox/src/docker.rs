//! The Docker backend over the engine's API (bollard): a locally built Debian base image (the
//! environment images of `docker_image` build on it), one short-lived container per run with no
//! network, a read-only root, sized scratch file systems, memory/pids/ulimits, autocoder's
//! seccomp profile, typed bind mounts, the same `/var/inputs` / `/var/outputs` contract, and
//! removal on every path (exit, timeout, drop, and `cleanup::shutdown` after a signal).

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::models::{
    ContainerCreateBody, HostConfig, HostConfigLogConfig, Mount as DockerMount, MountTypeEnum,
    ResourcesUlimits,
};
use bollard::query_parameters::{
    CreateContainerOptions, CreateImageOptions, LogsOptions, RemoveContainerOptions,
};
use futures_util::StreamExt;

use crate::bwrap::Mount;
use crate::error::SandboxError;
use crate::exec::{self, Finished};
use crate::spec::Limits;

/// Where the Docker backend's base image comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerConfig {
    /// The base image tag; built from a Debian root file system when the engine lacks it.
    pub base_image: String,
    /// The Debian suite debootstrap installs (default: the host's, so host-built interpreters run).
    pub suite: String,
    /// The Debian mirror.
    pub mirror: String,
    /// Where the root file system is kept between builds.
    pub rootfs_cache: PathBuf,
    /// The network of the one container that has any: the one installing system packages with
    /// apt (`bridge`, Docker's default; `host` where the bridge has no route out).
    pub build_network: String,
}

impl Default for DockerConfig {
    fn default() -> Self {
        let suite = host_suite().unwrap_or_else(|| "bookworm".to_owned());
        let rootfs_cache = crate::EnvCache::default_dir()
            .parent()
            .map_or_else(|| std::env::temp_dir().join("autocoder"), Path::to_path_buf)
            .join("docker-base");
        Self {
            base_image: format!("autocoder/base:{suite}"),
            suite,
            mirror: "http://deb.debian.org/debian".into(),
            rootfs_cache,
            build_network: "bridge".into(),
        }
    }
}

/// Libraries a host-built `CPython` needs besides libc (its `_ssl`, `_ctypes`, `_sqlite3` ...).
const BASE_PACKAGES: &str = "libssl3,libffi8,libsqlite3-0,libbz2-1.0,liblzma5,libreadline8,libncursesw6,libgdbm6,zlib1g,libuuid1,libexpat1,ca-certificates";

fn host_suite() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .map(|s| s.trim_matches('"').to_owned())
        .filter(|s| !s.is_empty())
}

pub(crate) fn unavailable(reason: impl std::fmt::Display) -> SandboxError {
    SandboxError::BackendUnavailable {
        backend: "docker",
        reason: reason.to_string(),
    }
}

/// Connects to the local engine and checks that it answers.
pub(crate) async fn connect() -> Result<Docker, SandboxError> {
    let docker = Docker::connect_with_local_defaults().map_err(unavailable)?;
    docker.ping().await.map_err(|e| {
        unavailable(format!(
            "the engine does not answer ({e}); start it or set DOCKER_HOST"
        ))
    })?;
    Ok(docker)
}

/// Makes sure the base image exists, building it from a Debian root file system (debootstrap,
/// then `docker import`) the first time. Concurrent callers wait on a file lock.
pub(crate) async fn ensure_base_image(
    docker: &Docker,
    cfg: &DockerConfig,
) -> Result<(), SandboxError> {
    if docker.inspect_image(&cfg.base_image).await.is_ok() {
        return Ok(());
    }
    std::fs::create_dir_all(&cfg.rootfs_cache)
        .map_err(SandboxError::io("creating", &cfg.rootfs_cache))?;
    let lock_path = cfg.rootfs_cache.join("base.lock");
    let _lock = tokio::task::spawn_blocking(move || crate::cache::lock_exclusive(&lock_path))
        .await
        .map_err(|e| SandboxError::Task(e.to_string()))??;
    if docker.inspect_image(&cfg.base_image).await.is_ok() {
        return Ok(());
    }
    let rootfs = cfg.rootfs_cache.join(format!("{}-rootfs", cfg.suite));
    if !rootfs.join("usr").is_dir() {
        tracing::warn!(suite = %cfg.suite, "building the Docker base image from Debian with debootstrap (once, a few minutes)");
        let staging = cfg.rootfs_cache.join(format!("{}-rootfs.tmp", cfg.suite));
        let _ = std::fs::remove_dir_all(&staging);
        let mut cmd = exec::command("debootstrap");
        cmd.args([
            "--variant=minbase",
            &format!("--include={BASE_PACKAGES}"),
            &cfg.suite,
        ])
        .arg(&staging)
        .arg(&cfg.mirror);
        step(
            cmd,
            "debootstrap (install it with `apt-get install debootstrap`; it needs root)",
        )
        .await?;
        std::fs::rename(&staging, &rootfs).map_err(SandboxError::io("moving", &staging))?;
    }
    // Bind-mounted interpreters under /root must be reachable by the unprivileged run uid.
    {
        use std::os::unix::fs::PermissionsExt;
        let root = rootfs.join("root");
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755))
            .map_err(SandboxError::io("opening up", &root))?;
    }
    let tar = cfg.rootfs_cache.join(format!("{}-rootfs.tar", cfg.suite));
    let mut cmd = exec::command("tar");
    cmd.arg("-C").arg(&rootfs).arg("-cf").arg(&tar).arg(".");
    step(cmd, "tar").await?;
    let bytes = tokio::fs::read(&tar)
        .await
        .map_err(SandboxError::io("reading", &tar))?;
    let (repo, tag) = cfg
        .base_image
        .rsplit_once(':')
        .unwrap_or((&cfg.base_image, "latest"));
    let options = CreateImageOptions {
        from_src: Some("-".into()),
        repo: Some(repo.into()),
        tag: Some(tag.into()),
        ..Default::default()
    };
    let mut stream =
        docker.create_image(Some(options), Some(bollard::body_full(bytes.into())), None);
    while let Some(item) = stream.next().await {
        item.map_err(|e| unavailable(format!("importing the base image failed: {e}")))?;
    }
    let _ = std::fs::remove_file(&tar);
    tracing::info!(image = %cfg.base_image, "Docker base image imported");
    Ok(())
}

pub(crate) async fn step(cmd: tokio::process::Command, what: &str) -> Result<(), SandboxError> {
    let done = exec::run(cmd, 1 << 20, Some(Duration::from_secs(1800)), false).await?;
    if done.status.is_some_and(|s| s.success()) {
        Ok(())
    } else {
        Err(unavailable(format!(
            "{what} failed: {}",
            done.stderr.trim()
        )))
    }
}

/// One container run.
pub(crate) struct ContainerRun<'a> {
    pub(crate) image: &'a str,
    pub(crate) argv: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) mounts: Vec<Mount>,
    pub(crate) workdir: String,
    pub(crate) uid: u32,
    pub(crate) network: bool,
    pub(crate) limits: Limits,
    /// Whether the work directory is a scratch file system (else a writable bind mount).
    pub(crate) work_scratch: bool,
    /// The run's name, put on the container as [`RUN_NAME_LABEL`].
    pub(crate) run_name: Option<&'a str>,
}

/// The labels that let a later process reap this container if this one dies before removing it.
pub(crate) fn reaped_labels() -> HashMap<String, String> {
    HashMap::from([
        (SANDBOX_LABEL.to_owned(), "1".to_owned()),
        (PID_LABEL.to_owned(), std::process::id().to_string()),
    ])
}

/// Creates the container `name` (a `what` container, for the error) and arms its removal.
pub(crate) async fn create_removable(
    docker: &Docker,
    name: &str,
    body: ContainerCreateBody,
    what: &str,
) -> Result<Remover, SandboxError> {
    let options = CreateContainerOptions {
        name: Some(name.to_owned()),
        ..Default::default()
    };
    // Armed before the request: a run cancelled while the engine creates the container must
    // still remove it (removing one that never came to be is a 404, taken as done).
    let guard = Remover::new(docker, name);
    docker
        .create_container(Some(options), body)
        .await
        .map_err(|e| unavailable(format!("creating the {what} container failed: {e}")))?;
    Ok(guard)
}

/// Removes the container when dropped (timeout, error, cancellation by Ctrl-C) unless disarmed.
pub(crate) struct Remover {
    docker: Docker,
    name: String,
    armed: bool,
}

impl Remover {
    /// Arms removal of the container `name`.
    pub(crate) fn new(docker: &Docker, name: &str) -> Self {
        crate::cleanup::track_container(name);
        Self {
            docker: docker.clone(),
            name: name.to_owned(),
            armed: true,
        }
    }

    /// The container was removed (or is meant to stay).
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Remover {
    fn drop(&mut self) {
        if self.armed
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let (docker, name) = (self.docker.clone(), self.name.clone());
            handle.spawn(async move { remove(&docker, &name).await });
        }
    }
}

pub(crate) async fn remove(docker: &Docker, name: &str) {
    let options = RemoveContainerOptions {
        force: true,
        v: true,
        ..Default::default()
    };
    match docker.remove_container(name, Some(options)).await {
        // Removed, or already gone.
        Ok(())
        | Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => crate::cleanup::untrack_container(name),
        Err(e) => {
            tracing::warn!(container = name, error = %e, "could not remove the container");
        }
    }
}

/// The label on every container autocoder creates, and the one naming the creating process.
pub(crate) const SANDBOX_LABEL: &str = "autocoder.sandbox";
pub(crate) const PID_LABEL: &str = "autocoder.pid";
/// The label naming the run a container belongs to (`autocoder generate --name`).
pub const RUN_NAME_LABEL: &str = "autocoder.run-name";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// Every container autocoder made (labelled [`SANDBOX_LABEL`]): its id and the pid of the
/// process that made it.
pub(crate) async fn labelled_containers(docker: &Docker) -> Vec<(String, Option<u32>)> {
    let options = bollard::query_parameters::ListContainersOptions {
        all: true,
        filters: Some(HashMap::from([(
            "label".to_owned(),
            vec![format!("{SANDBOX_LABEL}=1")],
        )])),
        ..Default::default()
    };
    let Ok(containers) = docker.list_containers(Some(options)).await else {
        return Vec::new();
    };
    containers
        .into_iter()
        .filter_map(|c| {
            let pid = c
                .labels
                .as_ref()
                .and_then(|l| l.get(PID_LABEL))
                .and_then(|p| p.parse().ok());
            Some((c.id?, pid))
        })
        .collect()
}

/// Removes containers left by autocoder processes that no longer exist (killed before their
/// cleanup could run), so no run leaves an orphan behind for long.
/// Removes every container labelled as this process's: after a cancel, a create request the
/// engine was still serving when the run was dropped leaves one that nothing tracks.
pub(crate) async fn remove_own(docker: &Docker) {
    let own = std::process::id();
    for (id, pid) in labelled_containers(docker).await {
        if pid == Some(own) {
            remove(docker, &id).await;
        }
    }
}

async fn reap_orphans(docker: &Docker) {
    for (id, pid) in labelled_containers(docker).await {
        let alive = pid.is_some_and(|p| Path::new("/proc").join(p.to_string()).exists());
        if !alive {
            tracing::info!(container = %id, "removing a container orphaned by a dead autocoder process");
            remove(docker, &id).await;
        }
    }
}

/// This machine's cores, in thousandths.
fn host_cpu_millis() -> u32 {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .try_into()
        .unwrap_or(u32::MAX / 1000)
        .saturating_mul(1000)
}

/// The container's configuration: limits, mounts, no network, read-only root, no capabilities.
fn container_body(run: &ContainerRun<'_>) -> ContainerCreateBody {
    let l = &run.limits;
    let ulimit = |name: &str, v: u64| {
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        ResourcesUlimits {
            name: Some(name.into()),
            soft: Some(v),
            hard: Some(v),
        }
    };
    // Typed mounts: a path may hold any character, `:` included.
    let mounts = run
        .mounts
        .iter()
        .map(|m| DockerMount {
            typ: Some(MountTypeEnum::BIND),
            source: Some(m.host.display().to_string()),
            target: Some(m.dest.display().to_string()),
            read_only: Some(!m.writable),
            ..Default::default()
        })
        .collect();
    let scratch = format!("rw,exec,nosuid,nodev,size={},mode=1777", l.scratch_bytes);
    let host_config = HostConfig {
        mounts: Some(mounts),
        memory: i64::try_from(l.memory_bytes).ok(),
        memory_swap: i64::try_from(l.memory_bytes).ok(),
        pids_limit: i64::try_from(l.processes).ok(),
        // The engine refuses a quota above the machine's cores (which would limit nothing).
        nano_cpus: Some(i64::from(l.cpu_millis.min(host_cpu_millis())) * 1_000_000),
        readonly_rootfs: Some(true),
        // Sized scratch file systems; the engine mounts them before the binds inside them.
        tmpfs: Some(if run.work_scratch {
            HashMap::from([
                ("/tmp".to_owned(), scratch.clone()),
                (crate::sandbox::WORK_DIR.to_owned(), scratch),
            ])
        } else {
            HashMap::from([("/tmp".to_owned(), scratch)])
        }),
        ulimits: Some(vec![
            ulimit("cpu", l.cpu_seconds),
            ulimit("nofile", l.open_files),
            ulimit("fsize", l.file_size_bytes),
            ulimit("core", 0),
        ]),
        cap_drop: Some(vec!["ALL".into()]),
        security_opt: Some(vec![
            "no-new-privileges".into(),
            format!("seccomp={}", crate::seccomp::docker_profile(run.network)),
        ]),
        network_mode: Some(if run.network {
            "bridge".into()
        } else {
            "none".into()
        }),
        log_config: Some(HostConfigLogConfig {
            typ: Some("json-file".into()),
            config: Some(HashMap::from([(
                "max-size".to_owned(),
                format!("{}", (l.output_cap_bytes * 4).max(1 << 20)),
            )])),
        }),
        ..Default::default()
    };
    // The engine resets a tmpfs working directory to mode 0755 (root's), so the container
    // starts in `/` and `env` moves into the work directory.
    let mut cmd = vec![
        "/usr/bin/env".to_owned(),
        format!("--chdir={}", run.workdir),
    ];
    cmd.extend(run.argv.iter().cloned());
    ContainerCreateBody {
        image: Some(run.image.to_owned()),
        cmd: Some(cmd),
        env: Some(run.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        working_dir: Some("/".to_owned()),
        user: Some(format!("{0}:{0}", run.uid)),
        network_disabled: Some(!run.network),
        hostname: Some("sandbox".into()),
        labels: Some({
            let mut labels = reaped_labels();
            if let Some(name) = run.run_name {
                labels.insert(RUN_NAME_LABEL.to_owned(), name.to_owned());
            }
            labels
        }),
        host_config: Some(host_config),
        ..Default::default()
    }
}

/// Runs one container to completion (or timeout), returns its output and whether it was OOM-killed.
pub(crate) async fn run(
    docker: &Docker,
    run: ContainerRun<'_>,
) -> Result<(Finished, bool), SandboxError> {
    let l = &run.limits;
    let name = format!(
        "autocoder-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let body = container_body(&run);
    reap_orphans(docker).await;
    let start = Instant::now();
    // Armed before the request: see `create_removable`.
    let mut guard = Remover::new(docker, &name);
    docker
        .create_container(
            Some(CreateContainerOptions {
                name: Some(name.clone()),
                ..Default::default()
            }),
            body,
        )
        .await
        .map_err(|e| unavailable(format!("creating the container failed: {e}")))?;
    docker
        .start_container(
            &name,
            None::<bollard::query_parameters::StartContainerOptions>,
        )
        .await
        .map_err(|e| unavailable(format!("starting the container failed: {e}")))?;
    let mut wait = docker.wait_container(
        &name,
        None::<bollard::query_parameters::WaitContainerOptions>,
    );
    let timed_out = tokio::time::timeout(l.wall_timeout, async {
        while wait.next().await.is_some() {}
    })
    .await
    .is_err();
    let duration = start.elapsed();
    if timed_out {
        let _ = docker
            .kill_container(
                &name,
                None::<bollard::query_parameters::KillContainerOptions>,
            )
            .await;
    }
    let state = match docker
        .inspect_container(
            &name,
            None::<bollard::query_parameters::InspectContainerOptions>,
        )
        .await
    {
        Ok(container) => container.state,
        // The engine went away during the run: nothing is known of how it ended.
        Err(e) => {
            return Err(unavailable(format!(
                "the engine stopped answering during the run ({e})"
            )));
        }
    };
    let oom = state.as_ref().and_then(|s| s.oom_killed).unwrap_or(false);
    let code = state
        .as_ref()
        .and_then(|s| s.exit_code)
        .and_then(|c| i32::try_from(c).ok());
    let (stdout, stderr) = logs(docker, &name, l.output_cap_bytes).await;
    remove(docker, &name).await;
    guard.disarm();
    let status = if timed_out {
        None
    } else {
        code.map(|c| ExitStatus::from_raw((c & 0xff) << 8))
    };
    Ok((
        Finished {
            status,
            stdout,
            stderr,
            timed_out,
            duration,
        },
        oom,
    ))
}

pub(crate) async fn logs(docker: &Docker, name: &str, cap: usize) -> (String, String) {
    let options = LogsOptions {
        stdout: true,
        stderr: true,
        follow: false,
        tail: "all".into(),
        ..Default::default()
    };
    let mut stream = docker.logs(name, Some(options));
    let (mut out, mut err) = (Capped::new(cap), Capped::new(cap));
    while let Some(Ok(chunk)) = stream.next().await {
        match chunk {
            bollard::container::LogOutput::StdErr { message } => err.push(&message),
            bollard::container::LogOutput::StdOut { message }
            | bollard::container::LogOutput::Console { message } => {
                out.push(&message);
            }
            bollard::container::LogOutput::StdIn { .. } => {}
        }
    }
    (out.finish(), err.finish())
}

struct Capped {
    kept: Vec<u8>,
    dropped: u64,
    cap: usize,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Self {
            kept: Vec::new(),
            dropped: 0,
            cap,
        }
    }
    fn push(&mut self, bytes: &[u8]) {
        let take = self.cap.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..take]);
        self.dropped += (bytes.len() - take) as u64;
    }
    fn finish(self) -> String {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        if self.dropped > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("[... truncated ");
            text.push_str(&self.dropped.to_string());
            text.push_str(" bytes]");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_run_labels_its_container() {
        let mut run = ContainerRun {
            image: "autocoder/env:x",
            argv: vec!["python".into()],
            env: Vec::new(),
            mounts: Vec::new(),
            workdir: "/var/work".into(),
            uid: 1000,
            network: false,
            limits: Limits::default(),
            run_name: Some("sales-report"),
            work_scratch: true,
        };
        let labels = container_body(&run).labels.unwrap();
        assert_eq!(labels[RUN_NAME_LABEL], "sales-report");
        assert_eq!(labels[SANDBOX_LABEL], "1");
        run.run_name = None;
        let labels = container_body(&run).labels.unwrap();
        assert!(!labels.contains_key(RUN_NAME_LABEL));
    }
}

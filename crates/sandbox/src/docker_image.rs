//! Docker images per environment, built locally once and reused: the interpreter's installation
//! goes into `autocoder/python:<version>-<hash>` (on the base image, or on the system package
//! layer `autocoder/sys:<hash>` when the environment asks for Debian packages; shared by every
//! environment on that interpreter and layer), the environment into [`docker_image_for`] (on the
//! interpreter's image).
//! Both keep the host paths, so the virtual environment's links and `pyvenv.cfg` stay valid and
//! runs need no mount of the environment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bollard::Docker;
use bollard::models::{ContainerConfig, ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CommitContainerOptions, RemoveImageOptions, UploadToContainerOptions,
};

use crate::docker::{self, DockerConfig, PID_LABEL, SANDBOX_LABEL};
use crate::env::{Env, fnv1a64};
use crate::error::SandboxError;
use crate::exec;

/// The repository of environment images: an environment `py3.11-<hash>` runs in
/// `autocoder/env:py3.11-<hash>`.
pub const ENV_IMAGE_REPO: &str = "autocoder/env";

/// The tag of the Docker image that holds `env` (`autocoder/env:<env id>`, or
/// `autocoder/env:<env id>-sys<hash>` with system packages), e.g. for a run's record.
/// [`crate::Sandbox::prepare_docker_image`] builds it; Docker runs build it on demand.
pub fn docker_image_for(env: &Env) -> String {
    if env.system_packages.is_empty() {
        return format!("{ENV_IMAGE_REPO}:{}", env.id);
    }
    format!(
        "{ENV_IMAGE_REPO}:{}-sys{:016x}",
        env.id,
        fnv1a64(env.system_packages.join("\n").as_bytes())
    )
}

/// A local Docker image holding an environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerImage {
    /// Its tag, [`docker_image_for`] the environment.
    pub tag: String,
    /// The engine's image id (`sha256:...`).
    pub id: String,
    /// Whether this call built it (false: it was reused).
    pub built: bool,
}

/// The image with the interpreter's installation (`base_prefix`) for `env`, on `below` (the
/// system package layer, if any; the tag of one without stays what it always was).
fn python_image_for(env: &Env, below: Option<&str>) -> String {
    // Tags allow letters, digits, `_`, `.` and `-` only (a version may read `3.14.0+`).
    let version: String = env
        .python_version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut key = env.base_prefix.as_os_str().as_encoded_bytes().to_vec();
    if let Some(below) = below {
        key.push(b'\n');
        key.extend_from_slice(below.as_bytes());
    }
    format!("autocoder/python:{version}-{:016x}", fnv1a64(&key))
}

/// Labels recording what an image was built from; a mismatch means rebuild.
pub(crate) const FROM_LABEL: &str = "autocoder.from";
const PATH_LABEL: &str = "autocoder.path";

/// Makes sure the environment's image exists (building the base, system package and interpreter
/// images first when needed) and returns it.
pub(crate) async fn ensure_env_image(
    docker: &Docker,
    cfg: &DockerConfig,
    env: &Env,
) -> Result<DockerImage, SandboxError> {
    for p in [&env.root, &env.base_prefix] {
        refuse_hidden_path(p)?;
    }
    docker::ensure_base_image(docker, cfg).await?;
    let sys = crate::system::ensure_sys_image(docker, cfg, &env.system_packages).await?;
    let below = sys.as_ref().map(|s| s.tag.as_str());
    let python = ensure_layer(
        docker,
        cfg,
        below.unwrap_or(&cfg.base_image),
        &python_image_for(env, below),
        &env.base_prefix,
        &interpreter_excludes(env),
    )
    .await?;
    ensure_layer(
        docker,
        cfg,
        &python.tag,
        &docker_image_for(env),
        &env.root,
        &[],
    )
    .await
}

/// Parts of the interpreter's installation a virtual environment never uses: its own
/// site-packages (environments do not include system site-packages) and the stdlib test suite.
fn interpreter_excludes(env: &Env) -> Vec<PathBuf> {
    let minor = env
        .python_version
        .splitn(3, '.')
        .take(2)
        .collect::<Vec<_>>()
        .join(".");
    let lib = env.base_prefix.join("lib").join(format!("python{minor}"));
    vec![lib.join("site-packages").join("*"), lib.join("test")]
}

/// Paths the container covers with its own mounts (`/tmp` is a tmpfs, `/var/...` the contract's
/// directories) cannot hold an environment.
fn refuse_hidden_path(p: &Path) -> Result<(), SandboxError> {
    let hidden = [
        "/tmp",
        "/var/work",
        "/var/inputs",
        "/var/outputs",
        "/var/task",
        "/proc",
        "/dev",
        "/sys",
    ];
    if p.starts_with("/usr") || hidden.iter().any(|h| p.starts_with(h)) {
        return Err(SandboxError::BackendUnavailable {
            backend: "docker",
            reason: format!(
                "the environment or its interpreter lives under {}, a path the container's own file system or mounts cover; keep the environment cache ({}) and the interpreter (pyenv, uv python) outside /usr, /tmp and the sandbox's /var directories",
                p.display(),
                crate::CACHE_DIR_ENV_VAR
            ),
        });
    }
    Ok(())
}

/// `tag` = `from` plus a copy of the host directory `path` at the same place, built once (under a
/// file lock) and reused while `from` and `path` are unchanged.
async fn ensure_layer(
    docker: &Docker,
    cfg: &DockerConfig,
    from: &str,
    tag: &str,
    path: &Path,
    excludes: &[PathBuf],
) -> Result<DockerImage, SandboxError> {
    let from_id = image_id(docker, from)
        .await
        .ok_or_else(|| docker::unavailable(format!("the image {from} disappeared")))?;
    let want = HashMap::from([
        (FROM_LABEL.to_owned(), from_id),
        (PATH_LABEL.to_owned(), path.display().to_string()),
    ]);
    if let Some(image) = reusable(docker, tag, &want).await {
        return Ok(image);
    }
    let (slug, _lock) = lock_tag(cfg, tag).await?;
    if let Some(image) = reusable(docker, tag, &want).await {
        return Ok(image);
    }
    let stale = image_id(docker, tag).await;
    tracing::info!(image = tag, from, path = %path.display(), "building a Docker image");
    let tar_file = pack(cfg, &slug, path, excludes).await?;
    let id = commit_copy(docker, from, tag, &slug, tar_file.path(), want).await?;
    tracing::info!(image = tag, %id, "Docker image built");
    if let Some(old) = stale.filter(|old| *old != id) {
        // Untagged now; still in use (a running container, a child image) means it stays.
        if let Err(e) = docker
            .remove_image(&old, None::<RemoveImageOptions>, None)
            .await
        {
            tracing::debug!(image = %old, error = %e, "the stale image stays");
        }
    }
    Ok(DockerImage {
        tag: tag.to_owned(),
        id,
        built: true,
    })
}

/// Takes the build lock of the image `tag` (waiting for a concurrent builder); returns the tag as
/// a file name and the lock, held until dropped.
pub(crate) async fn lock_tag(
    cfg: &DockerConfig,
    tag: &str,
) -> Result<(String, std::fs::File), SandboxError> {
    std::fs::create_dir_all(&cfg.rootfs_cache)
        .map_err(SandboxError::io("creating", &cfg.rootfs_cache))?;
    let slug = tag.replace([':', '/'], "_");
    let lock_path = cfg.rootfs_cache.join(format!("{slug}.lock"));
    let lock = tokio::task::spawn_blocking(move || crate::cache::lock_exclusive(&lock_path))
        .await
        .map_err(|e| SandboxError::Task(e.to_string()))??;
    Ok((slug, lock))
}

/// A container of `from` with the tar `tar` unpacked at `/`, committed as `tag` with `labels`;
/// returns the new image's id. The container is removed on every path.
async fn commit_copy(
    docker: &Docker,
    from: &str,
    tag: &str,
    slug: &str,
    tar: &Path,
    labels: HashMap<String, String>,
) -> Result<String, SandboxError> {
    // A container of this name can only be left by a build that was killed: we hold the lock.
    let name = format!("autocoder-build-{slug}");
    docker::remove(docker, &name).await;
    let body = ContainerCreateBody {
        image: Some(from.to_owned()),
        cmd: Some(vec!["true".into()]),
        // Reaped like a run's container if this process dies mid-build.
        labels: Some(docker::reaped_labels()),
        network_disabled: Some(true),
        host_config: Some(HostConfig {
            network_mode: Some("none".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut guard = docker::create_removable(docker, &name, body, "build").await?;
    let file = tokio::fs::File::open(tar)
        .await
        .map_err(SandboxError::io("reading", tar))?;
    let upload = UploadToContainerOptions {
        path: "/".into(),
        ..Default::default()
    };
    docker
        .upload_to_container(&name, Some(upload), bollard::body_try_stream(chunks(file)))
        .await
        .map_err(|e| {
            docker::unavailable(format!(
                "copying {} into the image {tag} failed: {e}",
                tar.display()
            ))
        })?;
    let committed = commit(docker, &name, tag, labels).await;
    docker::remove(docker, &name).await;
    guard.disarm();
    committed
}

/// Commits the (stopped) container `name` as `tag` with `labels`; returns the image's id.
pub(crate) async fn commit(
    docker: &Docker,
    name: &str,
    tag: &str,
    mut labels: HashMap<String, String>,
) -> Result<String, SandboxError> {
    let (repo, version) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
    let commit = CommitContainerOptions {
        container: Some(name.to_owned()),
        repo: Some(repo.into()),
        tag: Some(version.into()),
        pause: false,
        ..Default::default()
    };
    // The commit merges the container's labels in: blank the build's own.
    labels.insert(SANDBOX_LABEL.to_owned(), String::new());
    labels.insert(PID_LABEL.to_owned(), String::new());
    let config = ContainerConfig {
        labels: Some(labels),
        ..Default::default()
    };
    docker
        .commit_container(commit, config)
        .await
        .map(|c| c.id)
        .map_err(|e| docker::unavailable(format!("committing the image {tag} failed: {e}")))
}

/// A tar of the host directory `path` (minus `excludes`), owned by root and readable by all.
async fn pack(
    cfg: &DockerConfig,
    slug: &str,
    path: &Path,
    excludes: &[PathBuf],
) -> Result<tempfile::NamedTempFile, SandboxError> {
    let tar_file = tempfile::Builder::new()
        .prefix(&format!(".{slug}-"))
        .suffix(".tar")
        .tempfile_in(&cfg.rootfs_cache)
        .map_err(SandboxError::io("creating a file in", &cfg.rootfs_cache))?;
    let relative = path
        .strip_prefix("/")
        .map_err(|_| docker::unavailable(format!("{} is not absolute", path.display())))?;
    let mut cmd = exec::command("tar");
    cmd.args([
        "-C",
        "/",
        "--numeric-owner",
        "--owner=0",
        "--group=0",
        "--mode=a+rX",
    ]);
    for e in excludes {
        cmd.arg(format!(
            "--exclude={}",
            e.strip_prefix("/").unwrap_or(e).display()
        ));
    }
    cmd.arg("-cf").arg(tar_file.path()).arg(relative);
    docker::step(cmd, "packing the environment with tar").await?;
    Ok(tar_file)
}

pub(crate) async fn image_id(docker: &Docker, tag: &str) -> Option<String> {
    docker.inspect_image(tag).await.ok().and_then(|i| i.id)
}

/// The image `tag` when it exists with the `want`ed labels.
pub(crate) async fn reusable(
    docker: &Docker,
    tag: &str,
    want: &HashMap<String, String>,
) -> Option<DockerImage> {
    let image = docker.inspect_image(tag).await.ok()?;
    let labels = image.config.and_then(|c| c.labels).unwrap_or_default();
    let matches = want.iter().all(|(k, v)| labels.get(k) == Some(v));
    if !matches {
        tracing::info!(image = tag, "the Docker image is stale; rebuilding it");
        return None;
    }
    Some(DockerImage {
        tag: tag.to_owned(),
        id: image.id?,
        built: false,
    })
}

/// The file's bytes as a stream of 1 MiB chunks, so big environments are never held in memory.
fn chunks(
    file: tokio::fs::File,
) -> impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static {
    futures_util::stream::try_unfold(file, |mut file| async move {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0_u8; 1 << 20];
        let n = file.read(&mut buf).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.truncate(n);
        Ok(Some((bytes::Bytes::from(buf), file)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(version: &str) -> Env {
        Env {
            id: crate::EnvId("py3.14-00000000000000ff".into()),
            root: "/cache/envs/py3.14-00000000000000ff".into(),
            python: "/cache/envs/py3.14-00000000000000ff/bin/python".into(),
            base_prefix: "/opt/python".into(),
            python_version: version.into(),
            system_packages: Vec::new(),
            resolved: Vec::new(),
            freshly_built: false,
        }
    }

    #[test]
    fn tags_are_valid_docker_references() {
        assert_eq!(
            docker_image_for(&env("3.14.0")),
            "autocoder/env:py3.14-00000000000000ff"
        );
        let python = python_image_for(&env("3.14.0+"), None);
        assert!(python.starts_with("autocoder/python:3.14.0_-"), "{python}");
        // Images built before system packages existed keep their tags.
        assert_eq!(
            python_image_for(&env("3.14.0"), None),
            "autocoder/python:3.14.0-".to_owned() + &format!("{:016x}", fnv1a64(b"/opt/python"))
        );
        let on_sys = python_image_for(&env("3.14.0"), Some("autocoder/sys:00000000000000aa"));
        assert_ne!(on_sys, python_image_for(&env("3.14.0"), None));
        let mut with_jq = env("3.14.0");
        with_jq.system_packages = vec!["jq".into()];
        let tag = docker_image_for(&with_jq);
        assert!(
            tag.starts_with("autocoder/env:py3.14-00000000000000ff-sys") && tag.len() <= 128,
            "{tag}"
        );
        let excluded = interpreter_excludes(&env("3.14.0"));
        assert_eq!(
            excluded[1],
            Path::new("/opt/python/lib/python3.14/test"),
            "{excluded:?}"
        );
    }

    #[test]
    fn paths_the_container_covers_are_refused() {
        for p in ["/tmp/envs/x", "/usr/lib/python3", "/var/work/env"] {
            assert!(refuse_hidden_path(Path::new(p)).is_err(), "{p}");
        }
        assert!(refuse_hidden_path(Path::new("/root/.cache/autocoder/envs/x")).is_ok());
    }
}

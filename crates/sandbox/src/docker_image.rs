//! Docker images per environment, built locally once and reused: the interpreter's installation
//! goes into `autocoder/python:<version>-<hash>` (on the base image, or on the system package
//! layer `autocoder/sys:<hash>` when the environment asks for Debian packages; shared by every
//! environment on that interpreter and layer), the environment into [`docker_image_for`] (on the
//! interpreter's image).
//! Both sit at fixed paths in the image, whatever their host paths: the interpreter at
//! `/opt/autocoder/python`, the environment (a relocatable venv) at `/opt/autocoder/venv`, its
//! links into the interpreter and its `pyvenv.cfg` rewritten to match. So an environment cache
//! under `/tmp`, `/var` or a home directory works, and runs need no mount of the environment.

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
/// How the image lays files out (images of the older host-path layout are rebuilt).
const LAYOUT_LABEL: &str = "autocoder.layout";
const LAYOUT: &str = "fixed-paths-1";

/// Where an environment image holds the interpreter's installation.
pub(crate) const PYTHON_HOME: &str = "/opt/autocoder/python";
/// Where an environment image holds the virtual environment.
pub(crate) const VENV: &str = "/opt/autocoder/venv";

/// The environment's interpreter inside its image.
pub(crate) fn in_image_python() -> PathBuf {
    Path::new(VENV).join("bin/python")
}

/// The environment's `bin` directory inside its image.
pub(crate) fn in_image_bin() -> PathBuf {
    Path::new(VENV).join("bin")
}

/// `LD_LIBRARY_PATH` for the moved interpreter: a `--enable-shared` build finds `libpython` by an
/// absolute run path into its host prefix, which the image does not have.
pub(crate) fn library_path_var() -> (String, String) {
    ("LD_LIBRARY_PATH".to_owned(), format!("{PYTHON_HOME}/lib"))
}

/// Makes sure the environment's image exists (building the base, system package and interpreter
/// images first when needed) and returns it.
pub(crate) async fn ensure_env_image(
    docker: &Docker,
    cfg: &DockerConfig,
    env: &Env,
) -> Result<DockerImage, SandboxError> {
    refuse_system_interpreter(&env.base_prefix)?;
    docker::ensure_base_image(docker, cfg).await?;
    let sys = crate::system::ensure_sys_image(docker, cfg, &env.system_packages).await?;
    let below = sys.as_ref().map(|s| s.tag.as_str());
    let python = ensure_layer(
        docker,
        cfg,
        below.unwrap_or(&cfg.base_image),
        &python_image_for(env, below),
        &Copy {
            from: &env.base_prefix,
            to: Path::new(PYTHON_HOME),
            links: vec![(env.base_prefix.as_path(), Path::new(PYTHON_HOME))],
            excludes: interpreter_excludes(env),
            config: None,
        },
    )
    .await?;
    let config = venv_config(env)?;
    ensure_layer(
        docker,
        cfg,
        &python.tag,
        &docker_image_for(env),
        &Copy {
            from: &env.root,
            to: Path::new(VENV),
            links: vec![
                (env.root.as_path(), Path::new(VENV)),
                (env.base_prefix.as_path(), Path::new(PYTHON_HOME)),
            ],
            excludes: Vec::new(),
            config: Some(config),
        },
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

/// A system interpreter's files are spread over `/usr` (shared with everything else); the image
/// needs an installation of its own (pyenv, uv python, a prefix build).
fn refuse_system_interpreter(p: &Path) -> Result<(), SandboxError> {
    if p.starts_with("/usr") || p == Path::new("/") {
        return Err(SandboxError::BackendUnavailable {
            backend: "docker",
            reason: format!(
                "the interpreter's installation is {}, part of the system; the Docker backend copies the interpreter into its image, so use one installed in a directory of its own (pyenv, `uv python install`) and point {} at it",
                p.display(),
                crate::PYTHON_ENV_VAR
            ),
        });
    }
    Ok(())
}

/// The environment's `pyvenv.cfg` with the host paths of the interpreter and the environment
/// replaced by their places in the image.
fn venv_config(env: &Env) -> Result<String, SandboxError> {
    let path = env.root.join("pyvenv.cfg");
    let text = std::fs::read_to_string(&path).map_err(SandboxError::io("reading", &path))?;
    let (base, root) = (
        env.base_prefix.display().to_string(),
        env.root.display().to_string(),
    );
    Ok(text
        .lines()
        .map(|line| line.replace(&root, VENV).replace(&base, PYTHON_HOME))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n")
}

/// A host directory copied into an image at another path.
pub(crate) struct Copy<'a> {
    pub(crate) from: &'a Path,
    pub(crate) to: &'a Path,
    /// Absolute link targets to rewrite: (host prefix, prefix in the image).
    pub(crate) links: Vec<(&'a Path, &'a Path)>,
    pub(crate) excludes: Vec<PathBuf>,
    /// A `pyvenv.cfg` to put in place of the copied one.
    pub(crate) config: Option<String>,
}

/// `tag` = `from` plus a copy of the host directory `path` at the same place, built once (under a
/// file lock) and reused while `from` and `path` are unchanged.
async fn ensure_layer(
    docker: &Docker,
    cfg: &DockerConfig,
    from: &str,
    tag: &str,
    copy: &Copy<'_>,
) -> Result<DockerImage, SandboxError> {
    let path = copy.from;
    let from_id = image_id(docker, from)
        .await
        .ok_or_else(|| docker::unavailable(format!("the image {from} disappeared")))?;
    let want = HashMap::from([
        (FROM_LABEL.to_owned(), from_id),
        (PATH_LABEL.to_owned(), path.display().to_string()),
        (LAYOUT_LABEL.to_owned(), LAYOUT.to_owned()),
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
    let tar_file = pack(cfg, &slug, copy).await?;
    let config = ContainerConfig {
        labels: Some(want),
        ..Default::default()
    };
    let id = commit_copy(docker, from, tag, &slug, tar_file.path(), config).await?;
    tracing::info!(image = tag, %id, "Docker image built");
    if let Some(old) = stale.filter(|old| *old != id) {
        remove_stale(docker, &old).await;
    }
    Ok(DockerImage {
        tag: tag.to_owned(),
        id,
        built: true,
    })
}

/// Removes the image `old`, which a rebuild untagged; one still in use (a running container, a
/// child image) stays.
pub(crate) async fn remove_stale(docker: &Docker, old: &str) {
    if let Err(e) = docker
        .remove_image(old, None::<RemoveImageOptions>, None)
        .await
    {
        tracing::debug!(image = %old, error = %e, "the stale image stays");
    }
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

/// A container of `from` with the tar `tar` unpacked at `/`, committed as `tag` with `config`
/// (labels, and for a runnable image its entry point) over `from`'s; returns the new image's
/// id. The container is removed on every path.
pub(crate) async fn commit_copy(
    docker: &Docker,
    from: &str,
    tag: &str,
    slug: &str,
    tar: &Path,
    config: ContainerConfig,
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
    let committed = commit(docker, &name, tag, config).await;
    docker::remove(docker, &name).await;
    guard.disarm();
    committed
}

/// Commits the (stopped) container `name` as `tag` with `config` over the container's own
/// (Docker fills what `config` leaves unset from it); returns the image's id.
pub(crate) async fn commit(
    docker: &Docker,
    name: &str,
    tag: &str,
    mut config: ContainerConfig,
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
    let labels = config.labels.get_or_insert_with(HashMap::new);
    labels.insert(SANDBOX_LABEL.to_owned(), String::new());
    labels.insert(PID_LABEL.to_owned(), String::new());
    docker
        .commit_container(commit, config)
        .await
        .map(|c| c.id)
        .map_err(|e| docker::unavailable(format!("committing the image {tag} failed: {e}")))
}

/// A tar of `copy.from` (minus its excludes) at `copy.to`, owned by root and readable by all,
/// absolute links rewritten, with `copy.config` as its `pyvenv.cfg`.
pub(crate) async fn pack(
    cfg: &DockerConfig,
    slug: &str,
    copy: &Copy<'_>,
) -> Result<tempfile::NamedTempFile, SandboxError> {
    let tar_file = tempfile::Builder::new()
        .prefix(&format!(".{slug}-"))
        .suffix(".tar")
        .tempfile_in(&cfg.rootfs_cache)
        .map_err(SandboxError::io("creating a file in", &cfg.rootfs_cache))?;
    let relative = |p: &Path| -> Result<PathBuf, SandboxError> {
        p.strip_prefix("/")
            .map(Path::to_path_buf)
            .map_err(|_| docker::unavailable(format!("{} is not absolute", p.display())))
    };
    let (from, to) = (relative(copy.from)?, relative(copy.to)?);
    let owned = ["--numeric-owner", "--owner=0", "--group=0", "--mode=a+rX"];
    let mut cmd = exec::command("tar");
    cmd.args(["-C", "/"]).args(owned);
    // Member names (and hard link targets) move from `from` to `to`; absolute symbolic link
    // targets into the copied trees move to their places in the image.
    cmd.arg(format!(
        "--transform=s|^{}|{}|rh",
        sed_escape(&from.display().to_string()),
        sed_replacement(&to.display().to_string())
    ));
    for (host, image) in &copy.links {
        cmd.arg(format!(
            "--transform=s|^{}|{}|s",
            sed_escape(&host.display().to_string()),
            sed_replacement(&image.display().to_string())
        ));
    }
    for e in &copy.excludes {
        cmd.arg(format!(
            "--exclude={}",
            e.strip_prefix("/").unwrap_or(e).display()
        ));
    }
    cmd.arg("-cf").arg(tar_file.path()).arg(&from);
    docker::step(cmd, "packing the environment with tar").await?;
    if let Some(config) = &copy.config {
        // Appended after the copied `pyvenv.cfg`, which the engine's extraction replaces.
        let fix = tempfile::tempdir_in(&cfg.rootfs_cache).map_err(SandboxError::io(
            "creating a directory in",
            &cfg.rootfs_cache,
        ))?;
        let file = fix.path().join(&to).join("pyvenv.cfg");
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(SandboxError::io("creating", parent))?;
        }
        std::fs::write(&file, config).map_err(SandboxError::io("writing", &file))?;
        let mut cmd = exec::command("tar");
        cmd.arg("-C")
            .arg(fix.path())
            .args(owned)
            .arg("-rf")
            .arg(tar_file.path())
            .arg(to.join("pyvenv.cfg"));
        docker::step(cmd, "adding pyvenv.cfg with tar").await?;
    }
    Ok(tar_file)
}

/// `text` as the literal replacement of a GNU tar `--transform` delimited by `|`.
fn sed_replacement(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '|' | '&') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` as a literal regular expression in a GNU tar `--transform` delimited by `|`.
fn sed_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '|' | '.' | '[' | ']' | '*' | '^' | '$' | '&') {
            out.push('\\');
        }
        out.push(c);
    }
    out
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
    fn only_a_system_interpreter_is_refused() {
        assert!(refuse_system_interpreter(Path::new("/usr")).is_err());
        for p in [
            "/tmp/python",
            "/var/work/env",
            "/root/.pyenv/versions/3.11.7",
        ] {
            assert!(refuse_system_interpreter(Path::new(p)).is_ok(), "{p}");
        }
        assert_eq!(sed_escape("/a.b|c[d]"), "/a\\.b\\|c\\[d\\]");
    }
}

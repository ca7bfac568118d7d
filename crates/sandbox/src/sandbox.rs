//! Running a command in a sandbox: the backends, the limits wrapper, the outcome.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::bwrap::{self, Mount, Plan};
use crate::cache::which;
use crate::docker::{self, DockerConfig};
use crate::docker_image::{self, DockerImage};
use crate::env::Env;
use crate::error::SandboxError;
use crate::exec;
use crate::io::{self, IoType, OUTPUTS_DIR, Value};
use crate::spec::{Limits, RunOutcome, RunSpec};
use crate::system;

/// The environment variable scripts read to find the outputs directory (`/var/outputs` in a
/// sandbox; the host directory with `--sandbox none`).
pub const OUTPUTS_ENV_VAR: &str = "AUTOCODER_OUTPUTS_DIR";
/// Where the script is mounted inside the sandbox.
pub const TASK_DIR: &str = "/var/task";
/// The work directory inside the sandbox (writable, current directory).
pub const WORK_DIR: &str = "/var/work";

/// How code is isolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// bubblewrap namespaces on this machine (the default on Linux).
    #[default]
    Bwrap,
    /// A Docker container per run (bollard), in an image per environment
    /// ([`crate::docker_image_for`]) built locally on a Debian base image and reused.
    Docker,
    /// No isolation at all: only rlimits, a cleared environment and the timeout. For machines
    /// without namespaces; warns on every run.
    None,
}

impl Backend {
    /// The name users type (`--sandbox bwrap|docker|none`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bwrap => "bwrap",
            Self::Docker => "docker",
            Self::None => "none",
        }
    }

    /// Parses a name typed by a user.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Bwrap, Self::Docker, Self::None]
            .into_iter()
            .find(|b| b.name() == name)
    }
}

/// Runs scripts and test suites in isolation with one backend.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    backend: Backend,
    docker: DockerConfig,
}

/// A prepared command: the argv inside the sandbox plus what must be mounted for it.
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    pub(crate) argv: Vec<OsString>,
    pub(crate) mounts: Vec<Mount>,
    pub(crate) env: Vec<(String, String)>,
}

static NEXT_UID: AtomicU32 = AtomicU32::new(0);

impl Sandbox {
    /// A sandbox using `backend`.
    pub fn new(backend: Backend) -> Self {
        Self {
            backend,
            docker: DockerConfig::default(),
        }
    }

    /// Uses `config` for the Docker backend's base image.
    #[must_use]
    pub fn with_docker_config(mut self, config: DockerConfig) -> Self {
        self.docker = config;
        self
    }

    /// Builds (once; later calls reuse it) the Docker image that holds `env`, tagged
    /// [`crate::docker_image_for`] `env`; Docker runs do this on demand, so calling it is only
    /// needed to build ahead of time or to learn the image's id.
    pub async fn prepare_docker_image(&self, env: &Env) -> Result<DockerImage, SandboxError> {
        let client = docker::connect().await?;
        docker_image::ensure_env_image(&client, &self.docker, env).await
    }

    /// Readies `env` for this backend, so that a missing system package shows before any run:
    /// Docker builds (or reuses) the environment's image, its system package layer included;
    /// bubblewrap and none check that the host has [`Env::system_packages`]
    /// ([`SandboxError::SystemPackagesUnavailable`] otherwise), as they cannot install any.
    /// Runs do the same on demand. Returns the image for Docker.
    pub async fn prepare(&self, env: &Env) -> Result<Option<DockerImage>, SandboxError> {
        if self.backend == Backend::Docker {
            return self.prepare_docker_image(env).await.map(Some);
        }
        system::check_host(&env.system_packages, self.backend.name()).await?;
        Ok(None)
    }

    /// Checks that the backend can work here, also asking the Docker engine when that is the
    /// backend; the error says what is missing and how to fix it.
    pub async fn check_ready(&self) -> Result<(), SandboxError> {
        self.check()?;
        if self.backend == Backend::Docker {
            docker::connect().await?;
        }
        Ok(())
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Checks that the backend can work here; the error says how to fix it.
    pub fn check(&self) -> Result<(), SandboxError> {
        if self.backend != Backend::Docker && which("prlimit").is_none() {
            return Err(SandboxError::BackendUnavailable {
                backend: self.backend.name(),
                reason: "`prlimit` (util-linux) is missing; install util-linux".into(),
            });
        }
        match self.backend {
            Backend::Bwrap if which("bwrap").is_none() => Err(SandboxError::BwrapMissing),
            Backend::Bwrap if is_root() && which("setpriv").is_none() => Err(SandboxError::BackendUnavailable {
                backend: "bwrap",
                reason: "running as root needs `setpriv` (util-linux) to drop to an unprivileged uid".into(),
            }),
            _ => Ok(()),
        }
    }

    /// Runs `spec.script` with its typed inputs and reads its typed outputs.
    pub async fn run(&self, spec: &RunSpec) -> Result<RunOutcome, SandboxError> {
        let in_sandbox = self.backend != Backend::None;
        let script_name = spec
            .script
            .file_name()
            .ok_or_else(|| SandboxError::BadInput {
                name: "script".into(),
                reason: format!("{} is not a file", spec.script.display()),
            })?;
        let mut argv: Vec<OsString> = vec![spec.env.python.clone().into_os_string()];
        let mut mounts = Vec::new();
        if in_sandbox {
            argv.push(Path::new(TASK_DIR).join(script_name).into_os_string());
            mounts.push(Mount {
                host: spec.script.clone(),
                dest: Path::new(TASK_DIR).join(script_name),
                writable: false,
            });
            for file in &spec.support_files {
                let Some(name) = file.file_name().filter(|_| file.is_file()) else {
                    return Err(SandboxError::BadInput {
                        name: "support file".into(),
                        reason: format!("{} is not an existing file", file.display()),
                    });
                };
                mounts.push(Mount {
                    host: file.clone(),
                    dest: Path::new(TASK_DIR).join(name),
                    writable: false,
                });
            }
        } else {
            argv.push(spec.script.clone().into_os_string());
        }
        for input in &spec.inputs {
            io::check_name(&input.name)?;
            argv.push(format!("--{}", input.name).into());
            match &input.value {
                Value::File(p) | Value::Dir(p) => {
                    let is_file = matches!(input.value, Value::File(_));
                    let ok = if is_file { p.is_file() } else { p.is_dir() };
                    if !ok {
                        return Err(SandboxError::BadInput {
                            name: input.name.clone(),
                            reason: format!(
                                "{} is not an existing {}",
                                p.display(),
                                input.value.io_type().name()
                            ),
                        });
                    }
                    if in_sandbox {
                        let dest = PathBuf::from(io::mount_point(&input.name, p, is_file));
                        argv.push(dest.clone().into_os_string());
                        mounts.push(Mount {
                            host: p.clone(),
                            dest,
                            writable: false,
                        });
                    } else {
                        argv.push(p.clone().into_os_string());
                    }
                }
                other => argv.push(other.argv_text().unwrap_or_default().into()),
            }
        }
        argv.extend(spec.extra_args.iter().map(OsString::from));
        for (name, kind) in &spec.outputs {
            io::check_output_name(name, *kind)?;
            // A stale output from an earlier run in the same directory must not pass for a new one.
            let old = spec.outputs_dir.join(name);
            match std::fs::symlink_metadata(&old) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&old)
                    .map_err(SandboxError::io("removing the stale output", &old))?,
                Ok(_) => std::fs::remove_file(&old)
                    .map_err(SandboxError::io("removing the stale output", &old))?,
                Err(_) => {}
            }
        }
        let invocation = Invocation {
            argv,
            mounts,
            env: Vec::new(),
        };
        let mut outcome = self.execute(spec, invocation).await?;
        if outcome.success() {
            outcome.outputs = read_outputs(&spec.outputs_dir, &spec.outputs);
        }
        Ok(outcome)
    }

    /// Runs a prepared invocation under `spec`'s environment, directories and limits.
    pub(crate) async fn execute(
        &self,
        spec: &RunSpec,
        inv: Invocation,
    ) -> Result<RunOutcome, SandboxError> {
        self.check()?;
        if self.backend != Backend::Docker {
            system::check_host(&spec.env.system_packages, self.backend.name()).await?;
        }
        let limits = &spec.limits;
        let in_sandbox = self.backend != Backend::None;
        let run_as = match self.backend {
            Backend::Bwrap => is_root().then(next_uid),
            Backend::Docker => Some(if is_root() { next_uid() } else { own_uid() }),
            Backend::None => None,
        };
        let (work, outputs) = if in_sandbox {
            (PathBuf::from(WORK_DIR), PathBuf::from(OUTPUTS_DIR))
        } else {
            (spec.work_dir.clone(), spec.outputs_dir.clone())
        };
        let env = sandbox_env(spec, &inv, &outputs);
        if !in_sandbox {
            tracing::warn!(
                "running WITHOUT a sandbox (--sandbox none): the script can read your files and use the network"
            );
            let mut argv = limits_wrapper(limits, None);
            argv.extend(inv.argv.iter().cloned());
            let mut cmd = exec::command(&argv[0]);
            cmd.args(&argv[1..])
                .env_clear()
                .envs(env)
                .current_dir(&spec.work_dir);
            let done = exec::run(
                cmd,
                limits.output_cap_bytes,
                Some(limits.wall_timeout),
                true,
            )
            .await?;
            return Ok(outcome_of(done, false, false));
        }
        if let Some(uid) = run_as.filter(|_| is_root()) {
            for d in [&spec.work_dir, &spec.outputs_dir] {
                std::os::unix::fs::chown(d, Some(uid), Some(uid))
                    .map_err(SandboxError::io("handing over", d))?;
            }
        }
        let docker = self.backend == Backend::Docker;
        let (mounts, staging) = sandbox_mounts(spec, &inv, run_as.is_some(), docker)?;
        let mut image_tag = None;
        let (done, oom) = if docker {
            let client = docker::connect().await?;
            let image = docker_image::ensure_env_image(&client, &self.docker, &spec.env).await?;
            image_tag = Some(image.tag.clone());
            let run = docker::ContainerRun {
                image: &image.tag,
                argv: inv
                    .argv
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
                env,
                mounts,
                workdir: work.display().to_string(),
                uid: run_as.unwrap_or(65_534),
                network: spec.network,
                limits: *limits,
            };
            docker::run(&client, run).await?
        } else {
            let mut argv = limits_wrapper(limits, run_as);
            argv.extend(inv.argv.iter().cloned());
            let plan = Plan {
                mounts,
                chdir: work,
                env,
                network: spec.network,
                run_as,
            };
            let mut cmd = exec::command("bwrap");
            cmd.args(bwrap::args(&plan)).args(&argv);
            tracing::debug!(cmd = ?cmd.as_std(), "starting sandboxed process");
            (
                exec::run(
                    cmd,
                    limits.output_cap_bytes,
                    Some(limits.wall_timeout),
                    false,
                )
                .await?,
                false,
            )
        };
        drop(staging);
        Ok(RunOutcome {
            docker_image: image_tag,
            ..outcome_of(done, true, oom)
        })
    }
}

/// The mounts of a sandboxed run: the invocation's, the work and outputs directories, the
/// environment and its interpreter; private input files are staged (the guard keeps them alive).
fn sandbox_mounts(
    spec: &RunSpec,
    inv: &Invocation,
    unprivileged: bool,
    docker: bool,
) -> Result<(Vec<Mount>, Option<tempfile::TempDir>), SandboxError> {
    let mut mounts = inv.mounts.clone();
    // The unprivileged uid must be able to read the inputs: copy private files.
    let staging = if unprivileged {
        stage_private_files(&mut mounts)?
    } else {
        None
    };
    mounts.push(Mount {
        host: spec.work_dir.clone(),
        dest: WORK_DIR.into(),
        writable: true,
    });
    mounts.push(Mount {
        host: spec.outputs_dir.clone(),
        dest: OUTPUTS_DIR.into(),
        writable: true,
    });
    // Docker runs find the environment in its image (`docker_image_for`), not in a mount.
    for p in [&spec.env.root, &spec.env.base_prefix] {
        if !docker && !p.starts_with("/usr") && !mounts.iter().any(|m| p.starts_with(&m.dest)) {
            mounts.push(Mount {
                host: p.clone(),
                dest: p.clone(),
                writable: false,
            });
        }
    }
    Ok((mounts, staging))
}

/// The script's whole environment: a fixed allow-list, then the invocation's and the caller's
/// explicit variables. Nothing is inherited from this process.
fn sandbox_env(spec: &RunSpec, inv: &Invocation, outputs: &Path) -> Vec<(String, String)> {
    let env_bin = spec.env.root.join("bin");
    let mut env: Vec<(String, String)> = vec![
        (
            "PATH".into(),
            format!("{}:/usr/local/bin:/usr/bin:/bin", env_bin.display()),
        ),
        ("HOME".into(), "/tmp".into()),
        ("TMPDIR".into(), "/tmp".into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("LC_ALL".into(), "C.UTF-8".into()),
        ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ("PYTHONUNBUFFERED".into(), "1".into()),
        ("PYTHONHASHSEED".into(), "0".into()),
        ("MPLBACKEND".into(), "Agg".into()),
        (OUTPUTS_ENV_VAR.into(), outputs.display().to_string()),
    ];
    env.extend(inv.env.iter().cloned());
    env.extend(spec.env_vars.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// Copies read-only mounted files that others may not read into a private staging directory
/// (readable by the sandbox's uid) and points their mounts there; the directory lives as long as
/// the returned guard.
fn stage_private_files(mounts: &mut [Mount]) -> Result<Option<tempfile::TempDir>, SandboxError> {
    use std::os::unix::fs::PermissionsExt;
    let mut staging: Option<tempfile::TempDir> = None;
    for (i, m) in mounts.iter_mut().enumerate() {
        let meta = std::fs::metadata(&m.host).map_err(SandboxError::io("reading", &m.host))?;
        let readable = if meta.is_dir() { 0o005 } else { 0o004 };
        if m.writable || meta.permissions().mode() & readable == readable {
            continue;
        }
        if meta.is_dir() {
            return Err(SandboxError::BadInput {
                name: m.dest.display().to_string(),
                reason: format!(
                    "the directory {} is private (not world-readable); the sandbox runs as an unprivileged user, so `chmod -R o+rX` it",
                    m.host.display()
                ),
            });
        }
        if staging.is_none() {
            staging = Some(tempfile::tempdir().map_err(SandboxError::io(
                "creating a staging directory in",
                std::env::temp_dir(),
            ))?);
        }
        let Some(dir) = staging.as_ref() else {
            continue;
        };
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .map_err(SandboxError::io("opening up", dir.path()))?;
        let copy = dir.path().join(i.to_string());
        std::fs::copy(&m.host, &copy).map_err(SandboxError::io("staging", &m.host))?;
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o444))
            .map_err(SandboxError::io("opening up", &copy))?;
        m.host = copy;
    }
    Ok(staging)
}

/// `[setpriv ...] prlimit ... --`: the limits, applied right before the interpreter starts.
fn limits_wrapper(l: &Limits, run_as: Option<u32>) -> Vec<OsString> {
    let mut a: Vec<String> = Vec::new();
    if let Some(uid) = run_as {
        a.extend([
            "setpriv".into(),
            format!("--reuid={uid}"),
            format!("--regid={uid}"),
            "--clear-groups".into(),
            "--inh-caps=-all".into(),
            "--bounding-set=-all".into(),
            "--".into(),
        ]);
    }
    a.extend([
        "prlimit".into(),
        format!("--as={}", l.memory_bytes),
        format!("--cpu={}:{}", l.cpu_seconds, l.cpu_seconds + 1),
        format!("--nproc={}", l.processes),
        format!("--fsize={}", l.file_size_bytes),
        format!("--nofile={}", l.open_files),
        "--core=0".into(),
        "--".into(),
    ]);
    a.into_iter().map(OsString::from).collect()
}

const SIGKILL: i32 = 9;
const SIGXCPU: i32 = 24;

fn outcome_of(done: exec::Finished, in_sandbox: bool, oom_killed: bool) -> RunOutcome {
    let mut exit_code = done.status.and_then(|s| s.code());
    let mut signal = done.status.and_then(|s| s.signal());
    // bubblewrap reports a child killed by signal N as exit code 128 + N.
    if in_sandbox && let Some(code) = exit_code.filter(|c| (129..160).contains(c)) {
        signal = Some(code - 128);
        exit_code = None;
    }
    let memory_exceeded = oom_killed
        || !done.timed_out
            && ([
                "MemoryError",
                "Cannot allocate memory",
                "std::bad_alloc",
                "Unable to allocate",
                "out of memory",
            ]
            .iter()
            .any(|m| done.stderr.contains(m))
                || signal == Some(SIGKILL));
    let cpu_exceeded = signal == Some(SIGXCPU);
    RunOutcome {
        exit_code,
        signal,
        stdout: done.stdout,
        stderr: done.stderr,
        timed_out: done.timed_out,
        memory_exceeded,
        cpu_exceeded,
        duration: done.duration,
        outputs: Ok(BTreeMap::new()),
        docker_image: None,
    }
}

/// Reads and parses every declared output from the host's outputs directory.
fn read_outputs(
    dir: &Path,
    wanted: &[(String, IoType)],
) -> Result<BTreeMap<String, Value>, SandboxError> {
    let mut out = BTreeMap::new();
    for (name, kind) in wanted {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(SandboxError::OutputMissing { name: name.clone() });
        }
        io::refuse_escaping_links(name, dir, &path)?;
        let value = match kind {
            IoType::File if path.is_file() => Value::File(path),
            IoType::Dir if path.is_dir() => Value::Dir(path),
            IoType::File | IoType::Dir => {
                return Err(SandboxError::BadOutput {
                    name: name.clone(),
                    kind: kind.name(),
                    reason: "it has the wrong kind (file vs directory)".into(),
                });
            }
            _ => {
                let bytes = std::fs::read(&path).map_err(SandboxError::io("reading", &path))?;
                let text = String::from_utf8(bytes).map_err(|_| SandboxError::BadOutput {
                    name: name.clone(),
                    kind: kind.name(),
                    reason: "it is not UTF-8 text".into(),
                })?;
                io::parse_output(name, *kind, &text)?
            }
        };
        out.insert(name.clone(), value);
    }
    Ok(out)
}

fn own_uid() -> u32 {
    std::fs::metadata("/proc/self").map_or(65_534, |m| std::os::unix::fs::MetadataExt::uid(&m))
}

pub(crate) fn is_root() -> bool {
    // The owner of /proc/self is our effective uid.
    std::os::unix::fs::MetadataExt::uid(&match std::fs::metadata("/proc/self") {
        Ok(m) => m,
        Err(_) => return false,
    }) == 0
}

/// A fresh unprivileged uid per run, so the process limit counts this run's processes only.
fn next_uid() -> u32 {
    let n = NEXT_UID.fetch_add(1, Ordering::Relaxed);
    200_000 + (std::process::id().wrapping_mul(7919).wrapping_add(n)) % 100_000
}

//! Running a command in a sandbox: the backends, the limits wrapper, the outcome.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::bwrap::{Mount, Plan};
use crate::cache::which;
use crate::docker::{self, DockerConfig};
use crate::docker_image::{self, DockerImage};
use crate::env::Env;
use crate::error::SandboxError;
use crate::io::{self, OUTPUTS_DIR, Value};
use crate::spec::{RunOutcome, RunSpec};
use crate::{host, outputs, staging, system, uids};

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
    pub(crate) docker: DockerConfig,
}

/// A prepared command: the argv inside the sandbox plus what must be mounted for it.
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    pub(crate) argv: Vec<OsString>,
    pub(crate) mounts: Vec<Mount>,
    pub(crate) env: Vec<(String, String)>,
    /// Mount the run's work directory itself read-write as [`WORK_DIR`] (a command over a
    /// workspace) instead of its entries read-only over a scratch file system.
    pub(crate) work_writable: bool,
}

impl Invocation {
    /// A command over the run's usual read-only work directory.
    pub(crate) fn new(argv: Vec<OsString>, mounts: Vec<Mount>, env: Vec<(String, String)>) -> Self {
        Self {
            argv,
            mounts,
            env,
            work_writable: false,
        }
    }
}

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
        match self.backend {
            Backend::Bwrap if which("bwrap").is_none() => Err(SandboxError::BwrapMissing),
            Backend::Bwrap if is_root() && crate::drop_uid::PROGRAM.is_none() && which("setpriv").is_none() => Err(SandboxError::BackendUnavailable {
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
                let Some(name) = file.file_name().filter(|_| file.exists()) else {
                    return Err(SandboxError::BadInput {
                        name: "support file".into(),
                        reason: format!("{} is not an existing file or directory", file.display()),
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
        if let Some(flag) = &spec.outputs_arg {
            argv.push(flag.into());
            argv.push(if in_sandbox {
                OUTPUTS_DIR.into()
            } else {
                spec.outputs_dir.clone().into_os_string()
            });
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
            work_writable: false,
        };
        let mut outcome = self.execute(spec, invocation).await?;
        if outcome.success() {
            outcome.outputs = collect_outputs(spec, outcome.duration).await;
        }
        Ok(outcome)
    }

    /// Runs a prepared invocation under `spec`'s environment, directories and limits; the
    /// secrets' values are masked in what it captured.
    pub(crate) async fn execute(
        &self,
        spec: &RunSpec,
        inv: Invocation,
    ) -> Result<RunOutcome, SandboxError> {
        let mut outcome = self.execute_unmasked(spec, inv).await?;
        crate::secrets::mask_in_place(&mut outcome.stdout, &spec.secrets);
        crate::secrets::mask_in_place(&mut outcome.stderr, &spec.secrets);
        Ok(outcome)
    }

    async fn execute_unmasked(
        &self,
        spec: &RunSpec,
        mut inv: Invocation,
    ) -> Result<RunOutcome, SandboxError> {
        self.check()?;
        if self.backend != Backend::Docker {
            system::check_host(&spec.env.system_packages, self.backend.name()).await?;
        }
        let limits = &spec.limits;
        let docker = self.backend == Backend::Docker;
        if self.backend == Backend::None {
            tracing::warn!(
                "running WITHOUT a sandbox (--sandbox none): the script can read your files and use the network"
            );
            let env = sandbox_env(spec, &inv, &spec.outputs_dir, &spec.env.root.join("bin"));
            let done = host::run_unsandboxed(spec, &inv, env).await?;
            return Ok(host::outcome_of(done, false, false));
        }
        // As root, the script runs as a uid of its own; otherwise as ourselves.
        let lease = if is_root() {
            Some(uids::lease()?)
        } else {
            None
        };
        let run_as = lease.as_ref().map(|l| l.uid);
        if let Some(uid) = run_as {
            std::os::unix::fs::chown(&spec.outputs_dir, Some(uid), Some(uid))
                .map_err(SandboxError::io("handing over", &spec.outputs_dir))?;
            if inv.work_writable {
                crate::command::hand_over(&spec.work_dir, uid)?;
            }
        }
        let (mounts, staging) = staging::sandbox_mounts(spec, &inv, run_as, docker)?;
        let outputs = PathBuf::from(OUTPUTS_DIR);
        let outcome = if docker {
            let client = docker::connect().await?;
            let image = docker_image::ensure_env_image(&client, &self.docker, &spec.env).await?;
            // The image holds the environment at fixed paths, whatever its host path.
            let python = docker_image::in_image_python();
            for arg in &mut inv.argv {
                if *arg == spec.env.python.as_os_str() {
                    *arg = python.clone().into_os_string();
                }
            }
            let mut env = sandbox_env(spec, &inv, &outputs, &docker_image::in_image_bin());
            env.push(docker_image::library_path_var());
            let run = docker::ContainerRun {
                image: &image.tag,
                argv: inv
                    .argv
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
                env,
                mounts,
                workdir: WORK_DIR.to_owned(),
                uid: run_as.unwrap_or_else(own_uid),
                network: spec.network,
                limits: *limits,
                work_scratch: !inv.work_writable,
                run_name: spec.run_name.as_deref(),
            };
            let (done, oom) = docker::run(&client, run).await?;
            RunOutcome {
                docker_image: Some(image.tag.clone()),
                ..host::outcome_of(done, true, oom)
            }
        } else {
            let env = sandbox_env(spec, &inv, &outputs, &spec.env.root.join("bin"));
            let plan = Plan {
                mounts,
                scratch: if inv.work_writable {
                    vec![(PathBuf::from("/tmp"), limits.scratch_bytes)]
                } else {
                    vec![
                        (PathBuf::from("/tmp"), limits.scratch_bytes),
                        (PathBuf::from(WORK_DIR), limits.scratch_bytes),
                    ]
                },
                chdir: PathBuf::from(WORK_DIR),
                env,
                network: spec.network,
                run_as,
                seccomp_fd: None,
                drop_uid_fd: None,
            };
            host::run_bwrap(spec, &inv, plan).await?
        };
        drop(staging);
        drop(lease);
        Ok(outcome)
    }
}

/// Reads the declared outputs within what is left of the wall-clock timeout (at least a
/// second), on a blocking thread.
async fn collect_outputs(
    spec: &RunSpec,
    used: Duration,
) -> Result<std::collections::BTreeMap<String, Value>, SandboxError> {
    let left = spec
        .limits
        .wall_timeout
        .saturating_sub(used)
        .max(Duration::from_secs(1));
    let (dir, wanted, limits) = (spec.outputs_dir.clone(), spec.outputs.clone(), spec.limits);
    let reading =
        tokio::task::spawn_blocking(move || outputs::read_outputs(&dir, &wanted, &limits));
    match tokio::time::timeout(left, reading).await {
        Ok(joined) => joined.map_err(|e| SandboxError::Task(e.to_string()))?,
        Err(_) => Err(SandboxError::OutputsTimedOut {
            seconds: spec.limits.wall_timeout.as_secs(),
        }),
    }
}

/// The script's whole environment: a fixed allow-list, then the invocation's and the caller's
/// explicit variables. Nothing is inherited from this process.
fn sandbox_env(
    spec: &RunSpec,
    inv: &Invocation,
    outputs: &Path,
    env_bin: &Path,
) -> Vec<(String, String)> {
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
    env.extend(
        spec.secrets
            .iter()
            .map(|s| (s.name.clone(), s.value().to_owned())),
    );
    env
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

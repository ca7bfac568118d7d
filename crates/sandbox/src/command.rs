//! Running a parsed command over a writable workspace: programs from their argv (never a shell
//! string), joined into pipelines and `&&` / `||` / `;` steps, with redirections to files, in
//! the same sandbox, limits and cgroup as script runs, the workspace mounted read-write as the
//! current directory. A small helper (`helpers/run_steps.py`, run by the environment's Python
//! inside the sandbox) starts the programs and wires their pipes.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::bwrap::Mount;
use crate::cleanup;
use crate::env::Env;
use crate::error::SandboxError;
use crate::sandbox::{Backend, Invocation, Sandbox, WORK_DIR};
use crate::spec::{Limits, RunOutcome, RunSpec};

const RUNNER_PY: &str = include_str!("helpers/run_steps.py");
/// Where the helper and the steps are mounted inside the sandbox.
const HELPER_DIR: &str = "/var/autocoder";

/// When a step runs, judged on the exit status of the last step that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunIf {
    /// Always (the first step, or after `;`).
    Always,
    /// After `&&`: when the last status was 0.
    Succeeded,
    /// After `||`: when the last status was not 0.
    Failed,
}

/// Where a program's stdout or stderr goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// The stdout channel: the next program's stdin in a pipeline, else the captured stdout.
    Stdout,
    /// The captured stderr.
    Stderr,
    /// A file, relative to the workspace (or `/dev/null`).
    File {
        /// The file.
        path: PathBuf,
        /// Append instead of truncating.
        append: bool,
    },
}

/// One program of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Program {
    /// The program (looked up on the sandbox's `PATH`) and its arguments.
    pub argv: Vec<String>,
    /// A file to read stdin from (relative to the workspace); else the previous program's
    /// stdout in a pipeline, or nothing.
    pub stdin: Option<PathBuf>,
    /// Where stdout goes.
    pub stdout: Stream,
    /// Where stderr goes.
    pub stderr: Stream,
}

impl Program {
    /// `argv` with the usual streams.
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Self {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            stdin: None,
            stdout: Stream::Stdout,
            stderr: Stream::Stderr,
        }
    }
}

/// A pipeline and when it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandStep {
    /// When it runs.
    pub when: RunIf,
    /// The programs, each one's stdout piped into the next one's stdin.
    pub pipeline: Vec<Program>,
}

/// A command to run over a writable workspace.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// The environment whose `bin/` comes first on `PATH` (its Python also runs the helper).
    pub env: Env,
    /// The steps, in order.
    pub steps: Vec<CommandStep>,
    /// The workspace on the host: mounted read-write as the current directory
    /// ([`WORK_DIR`] inside the sandbox).
    pub workspace: PathBuf,
    /// Resource limits (the wall-clock timeout covers the whole command).
    pub limits: Limits,
    /// Environment variables on top of the fixed allow-list.
    pub env_vars: BTreeMap<String, String>,
    /// Variables like `env_vars` whose values are masked in the captured output.
    pub secrets: Vec<crate::Secret>,
}

impl CommandSpec {
    /// One program, run in `workspace` with default limits.
    pub fn argv<S: Into<String>>(
        env: Env,
        workspace: &Path,
        argv: impl IntoIterator<Item = S>,
    ) -> Self {
        Self {
            env,
            steps: vec![CommandStep {
                when: RunIf::Always,
                pipeline: vec![Program::new(argv)],
            }],
            workspace: workspace.to_owned(),
            limits: Limits::default(),
            env_vars: BTreeMap::new(),
            secrets: Vec::new(),
        }
    }
}

impl Sandbox {
    /// Runs `spec`'s steps with the workspace writable and the network off. A failing command is
    /// an outcome (its exit code; 127 for a program that does not exist), not an error; stdout
    /// and stderr are cut at [`Limits::output_cap_bytes`].
    pub async fn run_command(&self, spec: &CommandSpec) -> Result<RunOutcome, SandboxError> {
        if spec.steps.iter().any(|s| s.pipeline.is_empty())
            || spec
                .steps
                .iter()
                .flat_map(|s| &s.pipeline)
                .any(|p| p.argv.is_empty())
        {
            return Err(SandboxError::BadInput {
                name: "command".into(),
                reason: "every step needs at least one program with a name".into(),
            });
        }
        if !spec.workspace.is_dir() {
            return Err(SandboxError::BadInput {
                name: "workspace".into(),
                reason: format!("{} is not an existing directory", spec.workspace.display()),
            });
        }
        let scratch = cleanup::temp_dir("cmd")?;
        let helper = scratch.path().join("run_steps.py");
        let steps = scratch.path().join("steps.json");
        let outputs = scratch.path().join("outputs");
        let json = serde_json::to_vec(&spec.steps).map_err(|source| SandboxError::Json {
            what: "the command's steps".into(),
            source,
        })?;
        for (path, bytes) in [(&helper, RUNNER_PY.as_bytes()), (&steps, json.as_slice())] {
            std::fs::write(path, bytes).map_err(SandboxError::io("writing", path))?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
                .map_err(SandboxError::io("opening up", path))?;
        }
        std::fs::create_dir_all(&outputs).map_err(SandboxError::io("creating", &outputs))?;
        let in_sandbox = self.backend() != Backend::None;
        let (helper_at, steps_at) = if in_sandbox {
            let dir = Path::new(HELPER_DIR);
            (dir.join("run_steps.py"), dir.join("steps.json"))
        } else {
            (helper.clone(), steps.clone())
        };
        let mounts = vec![
            Mount {
                host: helper,
                dest: helper_at.clone(),
                writable: false,
            },
            Mount {
                host: steps,
                dest: steps_at.clone(),
                writable: false,
            },
        ];
        let argv: Vec<OsString> = vec![
            spec.env.python.clone().into_os_string(),
            "-I".into(),
            helper_at.into_os_string(),
            steps_at.into_os_string(),
        ];
        let run = RunSpec {
            env: spec.env.clone(),
            script: PathBuf::new(),
            support_files: Vec::new(),
            inputs: Vec::new(),
            extra_args: Vec::new(),
            outputs: Vec::new(),
            outputs_arg: None,
            work_dir: spec.workspace.clone(),
            outputs_dir: outputs,
            limits: spec.limits,
            network: false,
            env_vars: spec.env_vars.clone(),
            run_name: None,
            secrets: spec.secrets.clone(),
        };
        tracing::debug!(steps = spec.steps.len(), workspace = %spec.workspace.display(), dir = WORK_DIR, "running a command");
        let outcome = self
            .execute(
                &run,
                Invocation {
                    argv,
                    mounts,
                    env: Vec::new(),
                    work_writable: true,
                },
            )
            .await;
        drop(scratch);
        outcome
    }
}

/// Hands the workspace to `uid` (the unprivileged uid a sandboxed command runs as, when we are
/// root), so the command can write it; links are changed themselves, never followed.
pub(crate) fn hand_over(dir: &Path, uid: u32) -> Result<(), SandboxError> {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid))
        .map_err(SandboxError::io("handing over", dir))?;
    let entries = std::fs::read_dir(dir).map_err(SandboxError::io("listing", dir))?;
    for entry in entries {
        let entry = entry.map_err(SandboxError::io("listing", dir))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(SandboxError::io("reading", &path))?;
        if kind.is_dir() {
            hand_over(&path, uid)?;
        } else {
            std::os::unix::fs::lchown(&path, Some(uid), Some(uid))
                .map_err(SandboxError::io("handing over", &path))?;
        }
    }
    Ok(())
}

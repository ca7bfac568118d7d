//! What to run (`RunSpec`, `Limits`) and what came of it (`RunOutcome`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::env::Env;
use crate::error::SandboxError;
use crate::io::{Input, IoType, Value};

/// Resource limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Address-space limit in bytes (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// CPU time in seconds (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Processes and threads (`RLIMIT_NPROC`; in Docker, the pids limit).
    pub processes: u64,
    /// Largest file the script may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: u64,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Wall-clock time after which the whole process tree is killed.
    pub wall_timeout: Duration,
    /// Bytes kept of stdout and of stderr each; the rest is cut with a marker.
    pub output_cap_bytes: usize,
    /// CPU cores the run may use at once, in thousandths: the run's CPU quota, in its cgroup
    /// (bubblewrap, `none`) or container (Docker). Without a cgroup it is not enforced; the
    /// CPU-seconds limit still is.
    pub cpu_millis: u32,
    /// Size of each of the sandbox's scratch file systems, `/tmp` and the work directory (memory
    /// backed, so this also counts against the memory limit where a cgroup holds the run).
    pub scratch_bytes: u64,
    /// Largest scalar output (`str`, `int`, ...) read back, in bytes; a larger one is an error.
    pub scalar_output_bytes: u64,
    /// Bytes of all file and directory outputs of a run together; more is an error.
    pub output_files_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: 4 << 30,
            cpu_seconds: 120,
            processes: 256,
            file_size_bytes: 1 << 30,
            open_files: 1024,
            wall_timeout: Duration::from_secs(180),
            output_cap_bytes: 1 << 20,
            cpu_millis: 1000,
            scratch_bytes: 1 << 30,
            scalar_output_bytes: 1 << 20,
            output_files_bytes: 4 << 30,
        }
    }
}

/// One run of a script in a sandbox.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The environment whose interpreter runs the script.
    pub env: Env,
    /// The script on the host; it appears read-only at `/var/task/<its file name>`.
    pub script: PathBuf,
    /// Other files the script imports (its own modules), mounted read-only beside it in
    /// `/var/task/`. Only these files are shared, never their whole directory.
    pub support_files: Vec<PathBuf>,
    /// Typed inputs, passed as `--name value` (files and directories mounted read-only under
    /// `/var/inputs/`).
    pub inputs: Vec<Input>,
    /// Extra arguments appended verbatim after the inputs (never through a shell).
    pub extra_args: Vec<String>,
    /// Outputs to read back from `/var/outputs/<name>` when the script succeeds.
    pub outputs: Vec<(String, IoType)>,
    /// The option through which the script takes its outputs directory (`--outputs-dir`):
    /// when set, it is passed after the inputs with the directory as the script sees it
    /// (`/var/outputs` in a sandbox, the host directory with the `none` backend). `None` for a
    /// script that writes to the hard-wired `/var/outputs`.
    pub outputs_arg: Option<String>,
    /// The writable work directory on the host (the current directory inside, `/var/work`).
    pub work_dir: PathBuf,
    /// The outputs directory on the host (`/var/outputs` inside).
    pub outputs_dir: PathBuf,
    /// Resource limits.
    pub limits: Limits,
    /// Whether the script may use the network (default: no).
    pub network: bool,
    /// Environment variables given to the script, on top of the fixed allow-list (`PATH`,
    /// `HOME=/tmp`, `LANG`, ...). Nothing else from the caller's environment gets in.
    pub env_vars: BTreeMap<String, String>,
    /// The run's name (`autocoder generate --name`), for people: the Docker backend labels
    /// the container with it ([`crate::RUN_NAME_LABEL`]).
    pub run_name: Option<String>,
    /// Environment variables like [`RunSpec::env_vars`] whose values are masked in the
    /// captured stdout and stderr (and, for pytest, its reports).
    pub secrets: Vec<crate::Secret>,
}

impl RunSpec {
    /// A run of `script` in `env` with default limits, using `run_dir/work` and `run_dir/outputs`
    /// (created here).
    pub fn new(env: Env, script: impl Into<PathBuf>, run_dir: &Path) -> Result<Self, SandboxError> {
        let work_dir = run_dir.join("work");
        let outputs_dir = run_dir.join("outputs");
        for d in [&work_dir, &outputs_dir] {
            std::fs::create_dir_all(d).map_err(SandboxError::io("creating", d))?;
        }
        Ok(Self {
            env,
            script: script.into(),
            support_files: Vec::new(),
            inputs: Vec::new(),
            extra_args: Vec::new(),
            outputs: Vec::new(),
            outputs_arg: None,
            work_dir,
            outputs_dir,
            limits: Limits::default(),
            network: false,
            env_vars: BTreeMap::new(),
            run_name: None,
            secrets: Vec::new(),
        })
    }

    /// Adds an input.
    #[must_use]
    pub fn input(mut self, name: &str, value: Value) -> Self {
        self.inputs.push(Input {
            name: name.to_owned(),
            value,
        });
        self
    }

    /// Declares an output.
    #[must_use]
    pub fn output(mut self, name: &str, kind: IoType) -> Self {
        self.outputs.push((name.to_owned(), kind));
        self
    }
}

/// What came of a run. A failing script is an outcome, not an error.
#[derive(Debug)]
pub struct RunOutcome {
    /// The script's exit code (`None` when it was killed by a signal or timed out).
    pub exit_code: Option<i32>,
    /// The signal that killed it, if any.
    pub signal: Option<i32>,
    /// Standard output, cut at the cap with a `[... truncated N bytes]` marker.
    pub stdout: String,
    /// Standard error, cut likewise.
    pub stderr: String,
    /// Killed at the wall-clock timeout.
    pub timed_out: bool,
    /// Stopped by the memory limit (a `MemoryError`, an allocation failure, or an OOM kill).
    pub memory_exceeded: bool,
    /// Stopped by the CPU-time limit.
    pub cpu_exceeded: bool,
    /// Wall-clock time of the run, sandbox start included.
    pub duration: Duration,
    /// The declared outputs, parsed; an error names the first missing or invalid one. Empty when
    /// the script did not succeed.
    pub outputs: Result<BTreeMap<String, Value>, SandboxError>,
    /// The Docker image the run used ([`crate::docker_image_for`] its environment), for the
    /// run's record; `None` with the other backends.
    pub docker_image: Option<String>,
}

impl RunOutcome {
    /// Whether the script exited with code 0 within its limits.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// How the script failed, as users are told (`hit the time limit`, `hit the memory
    /// limit`, `exited with 1`); `None` when it succeeded.
    pub fn failure(&self) -> Option<String> {
        if self.success() {
            None
        } else if self.timed_out {
            Some("hit the time limit".to_owned())
        } else if self.memory_exceeded {
            Some("hit the memory limit".to_owned())
        } else {
            Some(format!("exited with {}", self.exit_code.unwrap_or(-1)))
        }
    }
}

//! Runs untrusted Python in isolation: builds cached environments with exactly the packages a
//! script needs (uv, else venv + pip), then runs the script, or pytest on it, inside bubblewrap
//! (default), a Docker container, or (`Backend::None`, loudly) no sandbox at all, with no network,
//! no secrets, a cleared environment and hard resource limits, passing typed inputs as
//! `--name value` and reading typed outputs back from `/var/outputs/<name>`.
//!
//! The pieces, in the order the loop uses them: [`imports_to_packages`] (which distributions a
//! script needs), [`EnvCache::ensure`] (an [`Env`] per [`EnvSpec`], built once), [`Sandbox::run`]
//! (a [`RunSpec`] in, a [`RunOutcome`] out) and [`Sandbox::run_pytest`] (a [`TestReport`] with
//! one [`Outcome`] per test). [`Sandbox::run_command`] runs a parsed command (argv vectors
//! in pipelines and `&&` / `||` / `;` steps, never a shell string) over a workspace mounted
//! read-write, for the agent's `shell` tool. [`doctor`] says which backends work on this machine.
//!
//! With [`Backend::Docker`], every environment gets its own image, [`docker_image_for`] it
//! (`autocoder/env:<env id>`), built locally the first time a run needs it (or ahead of time with
//! [`Sandbox::prepare_docker_image`]) and reused afterwards: the interpreter's installation is
//! copied into `autocoder/python:<version>-<hash>` on the Debian base image (built once with
//! debootstrap, see [`DockerConfig`]), the environment into the env image on top, both at their
//! host paths. Runs mount only their inputs, outputs and work directory; the image a run used is
//! in [`RunOutcome::docker_image`], for the run's record.
//! [`Sandbox::build_script_image`] puts a script on top as a runnable image of its own
//! ([`ScriptImage`]).
//!
//! Debian packages a script needs beyond Python ([`EnvSpec::with_system_packages`]) are not part
//! of the virtual environment: the Docker backend installs them with apt into a layer
//! `autocoder/sys:<hash>` below the interpreter's image (the one build step with network), and
//! the host backends, which cannot install anything, check that the host has them
//! ([`Sandbox::prepare`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), autocoder_sandbox::SandboxError> {
//! use autocoder_sandbox::{EnvCache, EnvSpec, IoType, RunSpec, Sandbox, Value};
//! let env = EnvCache::new(EnvCache::default_dir()).ensure(&EnvSpec::new(&["pandas"])?).await?;
//! let dir = tempfile::tempdir().map_err(|e| autocoder_sandbox::SandboxError::Task(e.to_string()))?;
//! let spec = RunSpec::new(env, "solution.py", dir.path())?
//!     .input("data", Value::File("sales.csv".into()))
//!     .output("total", IoType::Float);
//! let outcome = Sandbox::default().run(&spec).await?;
//! println!("{:?} {:?}", outcome.exit_code, outcome.outputs);
//! # Ok(()) }
//! ```

mod bwrap;
mod cache;
mod cgroup;
mod child;
mod cleanup;
mod command;
mod docker;
mod docker_image;
mod doctor;
mod drop_uid;
mod env;
mod error;
mod exec;
mod host;
mod imports;
mod io;
mod outputs;
mod pytest;
mod python;
mod sandbox;
mod script_image;
mod seccomp;
mod secrets;
mod spec;
mod staging;
mod system;
mod terminal;
mod uids;

pub use cache::{CACHE_DIR_ENV_VAR, EnvCache, UV_ENV_VAR, failed_package};
pub use cleanup::{Leftover, clean, leftovers, shutdown, temp_dir};
pub use command::{CommandSpec, CommandStep, Program, RunIf, Stream};
pub use docker::{DockerConfig, RUN_NAME_LABEL};
pub use docker_image::{DockerImage, ENV_IMAGE_REPO, docker_image_for};
pub use doctor::{Finding, doctor};
pub use env::{BASE_PACKAGES, Env, EnvId, EnvSpec, Requirement, check_system_package};
pub use error::SandboxError;
pub use imports::{IMPORT_TO_DISTRIBUTION, ImportAnalysis, imports_to_packages};
pub use io::{INPUTS_DIR, Input, IoType, OUTPUTS_DIR, Value, parse_output};
pub use pytest::{CollectionError, Outcome, PytestSpec, SourceFile, TestCase, TestReport};
pub use python::{Interpreter, PYTHON_ENV_VAR, PythonSpec, find_python_version, is_python_version};
pub use sandbox::{Backend, OUTPUTS_ENV_VAR, Sandbox, TASK_DIR, WORK_DIR};
pub use script_image::{SCRIPT_IN_IMAGE, ScriptImage};
pub use secrets::{MASK, Secret, mask};
pub use spec::{Limits, RunOutcome, RunSpec};
pub use system::SYS_IMAGE_REPO;
pub use terminal::escape_for_terminal;
pub use uids::{DEFAULT_SANDBOX_UIDS, SANDBOX_UIDS_ENV_VAR};

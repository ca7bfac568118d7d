//! Errors from building environments and running code in a sandbox.

use std::path::PathBuf;

/// Why an environment could not be built, or a sandboxed run could not be carried out.
///
/// A run whose *script* fails is not an error: it is a [`crate::RunOutcome`] with a non-zero exit
/// code. These variants are failures of the machinery, or of the caller's request.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A requested package does not exist on the package index.
    #[error(
        "package `{package}` was not found on the package index; check its name (the import name often differs from the distribution name) or pick another package"
    )]
    PackageNotFound {
        /// The package as it was requested.
        package: String,
    },
    /// The installer could not resolve or install the package set, for a reason other than a
    /// missing package (conflicting versions, a build failure, no network ...).
    #[error("installing {packages} into a new environment failed:\n{message}")]
    InstallFailed {
        /// The requested packages, space separated.
        packages: String,
        /// The installer's own explanation (its stderr).
        message: String,
    },
    /// A requirement string is not of the form `name` or `name<spec>`.
    #[error(
        "`{requirement}` is not a valid requirement: write a package name, optionally followed by a version spec such as `pandas>=2.2`"
    )]
    BadRequirement {
        /// The offending requirement.
        requirement: String,
    },
    /// A system package name is not a Debian package name.
    #[error(
        "`{package}` is not a valid Debian package name: use lower-case letters, digits and `+ . -`, starting with a letter or digit, without a version or architecture (e.g. `ffmpeg`, `libgomp1`)"
    )]
    BadSystemPackage {
        /// The offending name.
        package: String,
    },
    /// apt knows no package of this name (or it has no installation candidate, e.g. a virtual
    /// package) in the Docker base image's Debian release.
    #[error(
        "system package `{package}` was not found by apt in the sandbox image's Debian release; check its name (`apt-cache search WORD`) or pick another package. apt said:\n{message}"
    )]
    SystemPackageNotFound {
        /// The package as it was requested.
        package: String,
        /// What apt said about it (e.g. which packages replace it).
        message: String,
    },
    /// apt could not install the system packages for a reason other than a missing package.
    #[error("installing the system packages {packages} into a Docker image failed:\n{message}")]
    SystemInstallFailed {
        /// The requested packages, space separated.
        packages: String,
        /// apt's own explanation (the end of its output).
        message: String,
    },
    /// The backend runs on the host's read-only system, which lacks these packages.
    #[error(
        "system packages not installed on this machine: {}; the {backend} sandbox uses the host's system and cannot install them: run with `--sandbox docker` (which installs them into the image) or install them on the host (`apt-get install {}`)",
        packages.join(", "),
        packages.join(" ")
    )]
    SystemPackagesUnavailable {
        /// The missing packages, sorted.
        packages: Vec<String>,
        /// The backend's name.
        backend: &'static str,
    },
    /// The Python interpreter could not be found or did not answer as expected.
    #[error(
        "the Python interpreter `{python}` is not usable: {reason}; install Python 3 or point AUTOCODER_PYTHON at an interpreter"
    )]
    PythonNotUsable {
        /// The interpreter as configured.
        python: String,
        /// What went wrong.
        reason: String,
    },
    /// No installed interpreter has the requested version.
    #[error(
        "Python {version} is not installed on this machine (looked in {looked}); environments are built offline, so uv can provide an interpreter only from the ones it has installed already (its cache): install it first with network (`uv python install {version}`, or pyenv), or give an interpreter's path instead of a version"
    )]
    PythonVersionNotFound {
        /// The version asked for (`3.12`).
        version: String,
        /// Where interpreters were looked for.
        looked: String,
    },
    /// bubblewrap is not installed.
    #[error(
        "bubblewrap (`bwrap`) is not installed; install it with `apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap` (Fedora), or run with `--sandbox none` on a machine without namespaces (no isolation)"
    )]
    BwrapMissing,
    /// The backend could not set the sandbox up for this run (bubblewrap exited with its own
    /// error before the program started): a failure of the machine, not of the script.
    #[error("the {backend} sandbox could not start the run: {message}")]
    BackendFailed {
        /// The backend's name.
        backend: &'static str,
        /// What it said.
        message: String,
    },
    /// A backend cannot run on this machine.
    #[error("the {backend} sandbox backend is not available: {reason}")]
    BackendUnavailable {
        /// The backend's name.
        backend: &'static str,
        /// Why it cannot run.
        reason: String,
    },
    /// An input's name cannot be used as a command-line flag and file name, or an output's as a
    /// file name in the outputs directory.
    #[error(
        "input or output name `{name}` is not allowed: use letters, digits and underscores, starting with a letter (file and directory outputs may also use `-` and an extension, like `report.csv`)"
    )]
    BadName {
        /// The offending name.
        name: String,
    },
    /// An input does not match its declared type or points at a missing file.
    #[error("input `{name}`: {reason}")]
    BadInput {
        /// The input's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A declared output was not written by the script.
    #[error("output `{name}` is missing: the script must write it to /var/outputs/{name}")]
    OutputMissing {
        /// The output's name.
        name: String,
    },
    /// An output was written but does not parse as its declared type.
    #[error("output `{name}` ({kind}) is not valid: {reason}")]
    BadOutput {
        /// The output's name.
        name: String,
        /// The declared type.
        kind: &'static str,
        /// What is wrong with the value.
        reason: String,
    },
    /// An output is (or contains) a symbolic link that points outside the outputs directory.
    #[error(
        "output `{name}` contains a symbolic link `{link}` that points outside the sandbox; refused"
    )]
    OutputEscapes {
        /// The output's name.
        name: String,
        /// The offending link, on the host.
        link: PathBuf,
    },
    /// An output (or all file and directory outputs together) is larger than its cap; nothing
    /// of it was read.
    #[error(
        "output `{name}` is {}, over the {} cap for {what}; write less, or raise the cap (`{flag}`)",
        human_bytes(*size),
        human_bytes(*cap)
    )]
    OutputTooLarge {
        /// The output's name.
        name: String,
        /// Its size (for files and directories: of all file outputs up to this one).
        size: u64,
        /// The cap.
        cap: u64,
        /// Which cap: "a scalar output" or "file and directory outputs in total".
        what: &'static str,
        /// The command-line flag that raises it.
        flag: &'static str,
    },
    /// Reading the outputs did not finish within the run's wall-clock timeout.
    #[error(
        "reading the script's outputs did not finish within the {seconds} s wall-clock timeout; write fewer or smaller outputs"
    )]
    OutputsTimedOut {
        /// The timeout, in seconds.
        seconds: u64,
    },
    /// pytest did not leave a report, so its outcome cannot be read.
    #[error("pytest produced no report (exit code {exit_code:?}); its stderr was:\n{stderr}")]
    PytestNoReport {
        /// pytest's exit code.
        exit_code: Option<i32>,
        /// The (capped) stderr.
        stderr: String,
    },
    /// A process could not be started.
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A file system operation failed.
    #[error("{action} `{path}`: {source}")]
    Io {
        /// What we were doing ("creating", "reading", ...).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A helper's or a metadata file's JSON did not parse.
    #[error("reading JSON from {what}: {source}")]
    Json {
        /// Where the JSON came from.
        what: String,
        /// The parser's reason.
        #[source]
        source: serde_json::Error,
    },
    /// A blocking task panicked or was cancelled.
    #[error("a background task failed: {0}")]
    Task(String),
}

impl SandboxError {
    /// Whether the machinery failed rather than the request or the code: the backend could not
    /// start or set up the run, the Docker engine went away, a process could not be spawned.
    /// Such a step may succeed when tried again (`--sandbox-retries`); a failing script or test
    /// is never an error at all, so never one of these.
    pub fn is_infrastructure(&self) -> bool {
        matches!(
            self,
            Self::BackendFailed { .. }
                | Self::BackendUnavailable { .. }
                | Self::Spawn { .. }
                | Self::Task(_)
        )
    }

    /// Wraps an I/O error with what we were doing and where.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}

/// `bytes` for people: `512 bytes`, `1.5 KiB`, `256.0 MiB`, `4.0 GiB`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

//! `autocoder sandbox run|doctor`: try a script in the same sandbox the loop uses, and see which
//! sandbox backends work on this machine.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::output;
use anyhow::Context;
use autocoder_sandbox::{
    Backend, EnvCache, EnvSpec, Limits, PythonSpec, RunSpec, Sandbox, doctor, imports_to_packages,
};

/// `autocoder sandbox ...`
#[derive(Debug, clap::Args)]
pub(crate) struct SandboxArgs {
    #[command(subcommand)]
    pub(crate) command: SandboxCommand,
}

/// The sandbox subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum SandboxCommand {
    /// Run a Python script in the sandbox, with the packages it needs.
    Run(RunArgs),
    /// Report which sandbox backends work on this machine, and why not.
    Doctor {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `autocoder sandbox run SCRIPT [--package P]... [--system-package P]... [-- ARGS]`
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The script to run.
    pub(crate) script: PathBuf,
    /// A package to install (pip name, optional version spec); repeatable. Without any, the
    /// script's imports decide.
    #[arg(long = "package", short = 'p', value_name = "P")]
    pub(crate) packages: Vec<String>,
    /// A Debian package the script needs (e.g. `ffmpeg`); repeatable. `--sandbox docker`
    /// installs it into the image; bwrap and none check that this machine has it.
    #[arg(long = "system-package", value_name = "P")]
    pub(crate) system_packages: Vec<String>,
    /// The isolation: bwrap (default on Linux), docker, or none (no isolation, warns).
    #[arg(long, default_value = "bwrap", value_parser = ["bwrap", "docker", "none"])]
    pub(crate) sandbox: String,
    /// The interpreter environments are built on (default: `$AUTOCODER_PYTHON`, else `python3`).
    #[arg(long)]
    pub(crate) python: Option<PathBuf>,
    /// Kill the script after this many seconds.
    #[arg(long, default_value_t = 180)]
    pub(crate) timeout: u64,
    /// Memory limit in MiB.
    #[arg(long, default_value_t = 4096)]
    pub(crate) memory_mb: u64,
    /// Allow network access (off by default).
    #[arg(long)]
    pub(crate) network: bool,
    /// Arguments passed to the script, after `--`.
    #[arg(last = true)]
    pub(crate) args: Vec<String>,
}

/// Runs the subcommand; returns the process exit code: the script's own for `run`, 1 from
/// `doctor` when no isolating backend works.
pub(crate) async fn run(args: SandboxArgs) -> anyhow::Result<i32> {
    match args.command {
        SandboxCommand::Run(run) => run_script(run).await,
        SandboxCommand::Doctor { json } => run_doctor(json).await,
    }
}

async fn run_script(args: RunArgs) -> anyhow::Result<i32> {
    let script = std::fs::canonicalize(&args.script)
        .with_context(|| format!("cannot read the script {}", args.script.display()))?;
    let python = args
        .python
        .clone()
        .map_or(PythonSpec::Default, PythonSpec::Path);
    let siblings = sibling_modules(&script);
    let mut packages = args.packages.clone();
    if packages.is_empty() {
        let code = std::fs::read_to_string(&script)
            .with_context(|| format!("cannot read the script {}", script.display()))?;
        let local: Vec<&str> = siblings.iter().map(|(m, _)| m.as_str()).collect();
        let analysis = imports_to_packages(&python.command(), &code, &local).await?;
        if let Some(err) = analysis.syntax_error {
            anyhow::bail!("{} does not parse: {err}", script.display());
        }
        packages = analysis.distributions.into_iter().collect();
        tracing::info!(?packages, "packages inferred from the script's imports");
    }
    let spec = EnvSpec::new(&packages)?
        .with_python(python)
        .with_system_packages(&args.system_packages)?;
    let env = EnvCache::new(EnvCache::default_dir()).ensure(&spec).await?;
    let backend = Backend::from_name(&args.sandbox).unwrap_or_default();
    let run_dir = tempfile::tempdir().context("cannot create a temporary run directory")?;
    let mut run = RunSpec::new(env, &script, run_dir.path())?;
    run.extra_args = args.args;
    run.support_files = siblings
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| *p != script)
        .collect();
    run.network = args.network;
    run.limits = Limits {
        wall_timeout: Duration::from_secs(args.timeout),
        memory_bytes: args.memory_mb << 20,
        ..Limits::default()
    };
    let outcome = Sandbox::new(backend).run(&run).await?;
    output::write_stdout(&outcome.stdout)?;
    output::write_stderr(&outcome.stderr)?;
    if outcome.timed_out {
        tracing::error!("the script was killed after {} s (--timeout)", args.timeout);
        return Ok(124);
    }
    if outcome.memory_exceeded {
        tracing::error!(
            "the script ran out of memory ({} MiB, --memory-mb)",
            args.memory_mb
        );
    }
    Ok(outcome
        .exit_code
        .unwrap_or_else(|| 128 + outcome.signal.unwrap_or(9)))
}

/// The `.py` files beside the script, with their module names: imports of those are not
/// packages, and they are shared with the sandbox (read-only) so the script can import them.
fn sibling_modules(script: &std::path::Path) -> Vec<(String, PathBuf)> {
    let Some(dir) = script.parent() else {
        return Vec::new();
    };
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            if p.extension()? != "py" || !p.is_file() {
                return None;
            }
            let module = p.file_stem()?.to_str()?.to_owned();
            Some((module, p))
        })
        .collect()
}

async fn run_doctor(json: bool) -> anyhow::Result<i32> {
    let findings = doctor().await;
    let text = if json {
        serde_json::to_string_pretty(&findings)? + "\n"
    } else {
        let mut text = String::new();
        for f in &findings {
            let status = if f.ok { "ok" } else { "NO" };
            writeln!(text, "{:<7} {status:<4} {}", f.name, f.detail)?;
        }
        text
    };
    output::write_stdout(&text)?;
    let any_isolation = findings
        .iter()
        .any(|f| f.ok && (f.name == "bwrap" || f.name == "docker"));
    Ok(i32::from(!any_isolation))
}

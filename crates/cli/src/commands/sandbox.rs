//! `autocoder sandbox run|doctor`: try a script in the same sandbox the loop uses, and see which
//! sandbox backends work on this machine.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

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

/// `autocoder sandbox run SCRIPT [--package P]... [-- ARGS]`
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The script to run.
    pub(crate) script: PathBuf,
    /// A package to install (pip name, optional version spec); repeatable. Without any, the
    /// script's imports decide.
    #[arg(long = "package", short = 'p', value_name = "P")]
    pub(crate) packages: Vec<String>,
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

/// Runs the subcommand; returns the process exit code.
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
    let mut packages = args.packages.clone();
    if packages.is_empty() {
        let code = std::fs::read_to_string(&script)
            .with_context(|| format!("cannot read the script {}", script.display()))?;
        let local: Vec<String> = sibling_modules(&script);
        let local: Vec<&str> = local.iter().map(String::as_str).collect();
        let analysis = imports_to_packages(&python.command(), &code, &local).await?;
        if let Some(err) = analysis.syntax_error {
            anyhow::bail!("{} does not parse: {err}", script.display());
        }
        packages = analysis.distributions.into_iter().collect();
        tracing::info!(?packages, "packages inferred from the script's imports");
    }
    let spec = EnvSpec::new(&packages)?.with_python(python);
    let env = EnvCache::new(EnvCache::default_dir()).ensure(&spec).await?;
    let backend = Backend::from_name(&args.sandbox).unwrap_or_default();
    let run_dir = tempfile::tempdir().context("cannot create a temporary run directory")?;
    let mut run = RunSpec::new(env, &script, run_dir.path())?;
    run.extra_args = args.args;
    run.network = args.network;
    run.limits = Limits {
        wall_timeout: Duration::from_secs(args.timeout),
        memory_bytes: args.memory_mb << 20,
        ..Limits::default()
    };
    let outcome = Sandbox::new(backend).run(&run).await?;
    std::io::stdout().write_all(outcome.stdout.as_bytes())?;
    std::io::stderr().write_all(outcome.stderr.as_bytes())?;
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

/// Module names of the `.py` files beside the script (imports of those are not packages).
fn sibling_modules(script: &std::path::Path) -> Vec<String> {
    let Some(dir) = script.parent() else {
        return Vec::new();
    };
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "py").then(|| p.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect()
}

async fn run_doctor(json: bool) -> anyhow::Result<i32> {
    let findings = doctor().await;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &findings)?;
        writeln!(out)?;
    } else {
        for f in &findings {
            writeln!(
                out,
                "{:<7} {:<4} {}",
                f.name,
                if f.ok { "ok" } else { "NO" },
                f.detail
            )?;
        }
    }
    let any_isolation = findings
        .iter()
        .any(|f| f.ok && (f.name == "bwrap" || f.name == "docker"));
    Ok(i32::from(!any_isolation))
}

//! `autocoder sandbox run|doctor|clean`: try a script in the same sandbox the loop uses, see
//! which sandbox backends work on this machine, and remove what killed runs left behind.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::output;
use anyhow::Context;
use autocoder_sandbox::{
    Backend, EnvCache, EnvSpec, Limits, PythonSpec, RunSpec, Sandbox, doctor, escape_for_terminal,
    imports_to_packages,
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
    /// Report which sandbox backends work on this machine, and why not, whether runs get a
    /// cgroup, and what killed runs left behind.
    Doctor {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove what killed autocoder processes left behind: temporary directories, cgroups and
    /// Docker containers.
    Clean,
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
    /// A file or directory the script needs, mounted read-only beside it in `/var/task`;
    /// repeatable. Besides these, only the sibling modules the script imports are mounted.
    #[arg(long = "file", value_name = "PATH")]
    pub(crate) files: Vec<PathBuf>,
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
        SandboxCommand::Clean => run_clean().await,
    }
}

async fn run_script(args: RunArgs) -> anyhow::Result<i32> {
    let script = std::fs::canonicalize(&args.script)
        .with_context(|| format!("cannot read the script {}", args.script.display()))?;
    let python = args
        .python
        .clone()
        .map_or(PythonSpec::Default, PythonSpec::Path);
    let infer = args.packages.is_empty();
    let (modules, distributions) = local_imports(&python.command(), &script, infer).await?;
    let packages = if args.packages.is_empty() {
        tracing::info!(
            ?distributions,
            "packages inferred from the script's imports"
        );
        distributions
    } else {
        args.packages.clone()
    };
    let spec = EnvSpec::new(&packages)?
        .with_python(python)
        .with_system_packages(&args.system_packages)?;
    let env = EnvCache::new(EnvCache::default_dir()).ensure(&spec).await?;
    let backend = Backend::from_name(&args.sandbox).unwrap_or_default();
    let run_dir = autocoder_sandbox::temp_dir("run")?;
    let mut run = RunSpec::new(env, &script, run_dir.path())?;
    run.extra_args = args.args;
    run.support_files = modules;
    for file in &args.files {
        let file = std::fs::canonicalize(file)
            .with_context(|| format!("--file {}: no such file or directory", file.display()))?;
        run.support_files.push(file);
    }
    run.network = args.network;
    run.limits = Limits {
        wall_timeout: Duration::from_secs(args.timeout),
        memory_bytes: args.memory_mb << 20,
        ..Limits::default()
    };
    let outcome = Sandbox::new(backend).run(&run).await?;
    write_untrusted(&outcome.stdout, &outcome.stderr)?;
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

/// Writes a sandboxed script's stdout and stderr; on a terminal, control sequences are shown
/// escaped rather than obeyed.
pub(crate) fn write_untrusted(stdout: &str, stderr: &str) -> std::io::Result<()> {
    if std::io::stdout().is_terminal() {
        output::write_stdout(&escape_for_terminal(stdout))?;
    } else {
        output::write_stdout(stdout)?;
    }
    if std::io::stderr().is_terminal() {
        output::write_stderr(&escape_for_terminal(stderr))
    } else {
        output::write_stderr(stderr)
    }
}

/// The sibling modules (`name.py` beside the script) the script imports, directly or through
/// each other, and the distributions all of them import. Nothing else beside the script is
/// shared with the sandbox. A file that does not parse is an error when packages are inferred
/// (`strict`); otherwise the run shows Python's own error.
async fn local_imports(
    python: &Path,
    script: &Path,
    strict: bool,
) -> anyhow::Result<(Vec<PathBuf>, Vec<String>)> {
    let siblings = sibling_modules(script);
    let names: Vec<&str> = siblings.keys().map(String::as_str).collect();
    let mut distributions = BTreeSet::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut queue = vec![script.to_path_buf()];
    let mut modules = Vec::new();
    while let Some(file) = queue.pop() {
        let code = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let analysis = imports_to_packages(python, &code, &names).await?;
        if let Some(err) = analysis.syntax_error.filter(|_| strict) {
            anyhow::bail!("{} does not parse: {err}", file.display());
        }
        distributions.extend(analysis.distributions);
        for module in analysis.local {
            if let Some(path) = siblings.get(&module).filter(|p| **p != script)
                && seen.insert(module)
            {
                modules.push(path.clone());
                queue.push(path.clone());
            }
        }
    }
    Ok((modules, distributions.into_iter().collect()))
}

/// The `.py` files beside the script, by module name.
fn sibling_modules(script: &Path) -> BTreeMap<String, PathBuf> {
    let Some(dir) = script.parent() else {
        return BTreeMap::new();
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

async fn run_clean() -> anyhow::Result<i32> {
    let found = autocoder_sandbox::leftovers().await;
    let mut text = String::new();
    let mut failed = false;
    for (item, error) in autocoder_sandbox::clean(&found).await {
        match error {
            None => writeln!(
                text,
                "removed {} {} (pid {})",
                item.kind, item.name, item.pid
            )?,
            Some(e) => {
                failed = true;
                writeln!(
                    text,
                    "kept {} {} (pid {}): {e}",
                    item.kind, item.name, item.pid
                )?;
            }
        }
    }
    if found.is_empty() {
        text.push_str("nothing to clean\n");
    }
    output::write_stdout(&text)?;
    Ok(i32::from(failed))
}

async fn run_doctor(json: bool) -> anyhow::Result<i32> {
    let mut findings = doctor().await;
    findings.push(crate::commands::cache::doctor_finding());
    let text = if json {
        serde_json::to_string_pretty(&findings)? + "\n"
    } else {
        let mut text = String::new();
        for f in &findings {
            let status = if f.ok { "ok" } else { "NO" };
            writeln!(text, "{:<9} {status:<4} {}", f.name, f.detail)?;
        }
        text
    };
    output::write_stdout(&text)?;
    let any_isolation = findings
        .iter()
        .any(|f| f.ok && (f.name == "bwrap" || f.name == "docker"));
    Ok(i32::from(!any_isolation))
}

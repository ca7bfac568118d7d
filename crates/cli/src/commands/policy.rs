//! `autocoder policy check|show`: what the agent's command policy decides for a shell command,
//! and the shipped policy file to start a replacement from.

use std::path::PathBuf;

use anyhow::Context as _;
use autocoder_policy::{BUILTIN_POLICY, Decision, Policy};

use crate::output;

/// `autocoder policy ...`
#[derive(Debug, clap::Args)]
pub(crate) struct PolicyArgs {
    #[command(subcommand)]
    pub(crate) command: PolicyCommand,
}

/// The policy subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum PolicyCommand {
    /// Decide a shell command: allow (with the argv that would run), deny (with the reason the
    /// model sees) or intercept (with the tool it stands for).
    #[command(after_help = CHECK_EXIT_CODES)]
    Check(CheckArgs),
    /// Print the policy shipped with autocoder (a TOML file documented inline), to copy and
    /// edit for `--policy`.
    Show,
}

/// `autocoder policy check CMD [--policy FILE] [--workspace DIR] [--json]`
#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// The shell command, as the agent would send it (one argument: quote it).
    pub(crate) command: String,
    /// A policy file replacing the shipped one (see `autocoder policy show`).
    #[arg(long, value_name = "FILE")]
    pub(crate) policy: Option<PathBuf>,
    /// The workspace the command would run in (default: the current directory): relative paths
    /// start there, globs expand there, and paths must stay inside it.
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Print the decision as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `policy check`'s exit codes.
const CHECK_EXIT_CODES: &str = "\
Exit codes:
  0  allowed or intercepted
  1  denied
  2  error: a policy file that cannot be read or is invalid (the message names its line)";

/// Runs the subcommand; returns the exit code.
pub(crate) fn run(args: PolicyArgs) -> anyhow::Result<i32> {
    match args.command {
        PolicyCommand::Check(check) => run_check(&check),
        PolicyCommand::Show => {
            output::write_stdout(BUILTIN_POLICY)?;
            Ok(0)
        }
    }
}

fn run_check(args: &CheckArgs) -> anyhow::Result<i32> {
    let policy = match &args.policy {
        Some(path) => Policy::load(path)?,
        None => Policy::builtin().context("the shipped policy does not load")?,
    };
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let decision = policy.decide(&args.command, &workspace);
    let text = if args.json {
        serde_json::to_string_pretty(&decision)? + "\n"
    } else {
        format!("{decision}\n")
    };
    output::write_stdout(&text)?;
    Ok(match decision {
        Decision::Deny(_) => 1,
        Decision::Allow(_) | Decision::Intercept(_) => 0,
    })
}

//! `autocoder completions SHELL`: the shell completion script, from the command-line
//! definitions themselves (`clap_complete`), so it never falls behind the flags.

use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::cli::Cli;
use crate::output;

/// Arguments of `autocoder completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub(crate) shell: Shell,
}

/// Runs `autocoder completions`.
pub(crate) fn run(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "autocoder", &mut script);
    output::write_stdout(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::SUCCESS)
}

//! One module per subcommand; `run` dispatches to them.

use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub(crate) mod input;
pub(crate) mod profile;
pub(crate) mod sandbox;
pub(crate) mod schema;

/// Runs the parsed command line and returns the process exit code.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Profile(args) => profile::run(&args, &cli.global),
        Command::Schema(args) => schema::run(&args, &cli.global),
        Command::Sandbox(args) => sandbox::run(args),
    }
}

//! The `autocoder` binary: parses arguments, runs the command, maps the result to an exit code.

use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;
mod logging;
mod output;
mod signals;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    logging::init(args.global.verbose, args.global.quiet);
    match commands::run(args) {
        Ok(code) => code,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::debug!("{err:?}");
            output::report_error(&err);
            ExitCode::from(2)
        }
    }
}

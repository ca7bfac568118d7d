//! One module per subcommand; `run` dispatches to them.

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::signals::cancel_on_signal;

pub(crate) mod agent_mode;
pub(crate) mod cache;
pub(crate) mod completions;
pub(crate) mod constraint;
pub(crate) mod eval;
pub(crate) mod eval_diff;
pub(crate) mod export;
pub(crate) mod generate;
pub(crate) mod input;
pub(crate) mod policy;
pub(crate) mod profile;
pub(crate) mod prompting;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod sandbox;
pub(crate) mod schema;

/// Runs the parsed command line and returns the process exit code.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Profile(args) => profile::run(&args, &cli.global),
        Command::Schema(args) => schema::run(&args, &cli.global),
        Command::Generate(args) => {
            exit_code(runtime()?.block_on(cancel_on_signal(generate::run(*args, &cli.global))))
        }
        Command::Resume(args) => {
            exit_code(runtime()?.block_on(cancel_on_signal(resume::run(args, &cli.global))))
        }
        Command::Run(args) => exit_code(runtime()?.block_on(cancel_on_signal(run::run(args)))),
        Command::Sandbox(args) => {
            exit_code(runtime()?.block_on(cancel_on_signal(sandbox::run(args))))
        }
        Command::Export(args) => {
            exit_code(runtime()?.block_on(cancel_on_signal(export::run(args))))
        }
        Command::Cache(args) => exit_code(cache::run(&args)),
        Command::Policy(args) => exit_code(policy::run(args)),
        Command::Eval(args) => {
            exit_code(runtime()?.block_on(cancel_on_signal(eval::run(*args, &cli.global))))
        }
        Command::EvalDiff(args) => eval_diff::run(&args),
        Command::Completions(args) => completions::run(&args),
    }
}

/// The async runtime for the commands that talk to models and sandboxes.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn exit_code(code: anyhow::Result<i32>) -> anyhow::Result<ExitCode> {
    Ok(ExitCode::from(u8::try_from(code?).unwrap_or(1)))
}

//! Command-line definitions. Each subcommand's arguments live beside its implementation in
//! `commands/`; this module only assembles them.

use clap::{Args, Parser, Subcommand};

use crate::commands::{
    cache::CacheArgs, completions::CompletionsArgs, eval::EvalArgs, eval_diff::EvalDiffArgs,
    export::ExportArgs, generate::GenerateArgs, policy::PolicyArgs, profile::ProfileArgs,
    resume::ResumeArgs, run::RunArgs, sandbox::SandboxArgs, schema::SchemaArgs,
};

/// Turn a plain-language task plus sample data into a tested Python script.
#[derive(Debug, Parser)]
#[command(
    name = "autocoder",
    version,
    about,
    propagate_version = true,
    after_help = EXIT_CODES
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The exit codes, shown at the end of `--help`.
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0  success (also when stdout is closed early, as by `| head`)
  2  error: bad arguments, or an input that cannot be read or parsed (the message on stderr
     names the file, line and column)";

/// Options every subcommand takes.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// More log output on stderr (-v info, -vv debug, -vvv trace); `RUST_LOG` also works.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// No progress bars or status lines on stderr; errors are still printed.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Profile CSV files: types, nulls, statistics, patterns and sample rows per column.
    #[command(after_help = EXIT_CODES)]
    Profile(ProfileArgs),
    /// Print the Pandera schema (a runnable Python module) that the data follows.
    #[command(after_help = EXIT_CODES)]
    Schema(SchemaArgs),
    /// Generate a tested Python script from a task, sample data, inputs, outputs and rules.
    #[command(after_help = GENERATE_EXIT_CODES)]
    Generate(Box<GenerateArgs>),
    /// Continue a generation that was interrupted, from its run directory's journal: no model
    /// answer or test run it recorded is asked for or run again.
    #[command(after_help = GENERATE_EXIT_CODES)]
    Resume(ResumeArgs),
    /// Run a generated script (a run directory) on new data.
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),
    /// Take a generated script (a run directory) elsewhere: a self-contained folder, a Flyte
    /// task module, a container image.
    #[command(after_help = EXIT_CODES)]
    Export(ExportArgs),
    /// Score a model on a task suite: generate each task per seed, run the scripts on held-out
    /// data, compare with the reference outputs, print the table and write `eval.json`.
    #[command(after_help = EVAL_EXIT_CODES)]
    Eval(Box<EvalArgs>),
    /// Two evals of one suite side by side (a change's before and after, two models): runs
    /// paired by task and seed, totals over the pairs, verdicts that flipped, settings that
    /// differ.
    #[command(after_help = EXIT_CODES)]
    EvalDiff(EvalDiffArgs),
    /// Trim or empty the model-call cache (`generate --model-cache`).
    Cache(CacheArgs),
    /// Try scripts in the sandbox, and check which sandbox backends work here.
    Sandbox(SandboxArgs),
    /// Check shell commands against the agent's command policy.
    Policy(PolicyArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = COMPLETIONS_HELP)]
    Completions(CompletionsArgs),
}

/// How to install the completion scripts, shown at the end of `completions --help`.
pub(crate) const COMPLETIONS_HELP: &str = "\
Install:
  bash  autocoder completions bash > ~/.local/share/bash-completion/completions/autocoder
  zsh   autocoder completions zsh > ~/.zfunc/_autocoder   (with `fpath+=~/.zfunc` before compinit)
  fish  autocoder completions fish > ~/.config/fish/completions/autocoder.fish";

/// `generate`'s exit codes.
pub(crate) const GENERATE_EXIT_CODES: &str = "\
Exit codes:
  0  the tests pass (or were skipped on request)
  1  the loop ended without passing tests (the run directory says why)
  2  error: a bad request, a model that cannot be used, or a sandbox that cannot run";

pub(crate) const EVAL_EXIT_CODES: &str = "\
Exit codes:
  0  the eval ran (whatever the score; the table and eval.json say it)
  2  error: a suite that cannot be read, settings that differ from the runs kept in --out, a
     model or sandbox that cannot be used";

//! `autocoder eval-diff BEFORE AFTER`: two evals of one suite (a change's before and after, or
//! two models) side by side, paired by task and seed, with the totals over the pairs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use autocoder_eval::{EvalReport, pair, render_pairs};

use crate::output::write_stdout;

/// Arguments of `autocoder eval-diff`.
#[derive(Debug, clap::Args)]
pub(crate) struct EvalDiffArgs {
    /// The first eval: its `--out` directory, or its `eval.json`.
    before: PathBuf,
    /// The second eval, likewise.
    after: PathBuf,
    /// Print the pairs and totals as JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs `autocoder eval-diff`.
pub(crate) fn run(args: &EvalDiffArgs) -> anyhow::Result<ExitCode> {
    let before = read_report(&args.before)?;
    let after = read_report(&args.after)?;
    let paired = pair(&before, &after);
    if args.json {
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&paired)?))?;
    } else {
        write_stdout(&render_pairs(&paired))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn read_report(path: &Path) -> anyhow::Result<EvalReport> {
    let file = if path.is_dir() {
        path.join("eval.json")
    } else {
        path.to_owned()
    };
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!(
            "cannot read {}: give an `autocoder eval --out` directory (it holds eval.json once \
             a run has finished) or an eval.json file",
            file.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not an eval report (`autocoder eval` writes it as eval.json)",
            file.display()
        )
    })
}

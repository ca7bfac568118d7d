//! `autocoder export RUN_DIR --to DIR | --flyte DIR`: takes a generated script out of its run directory.

use std::fmt::Write as _;
use std::path::PathBuf;

use autocoder_export::Run;

use crate::output::write_stdout;

/// `autocoder export ...`
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("target").required(true).multiple(true))]
pub(crate) struct ExportArgs {
    /// The run directory `autocoder generate` wrote.
    run_dir: PathBuf,
    /// A self-contained folder (new or empty): the script, its tests with a harness for plain
    /// pytest, requirements.txt, requirements-test.txt, the samples and a README giving the
    /// exact command line and each input and output with its type.
    #[arg(long, value_name = "DIR", group = "target")]
    to: Option<PathBuf>,
    /// A Flyte task module (Flyte SDK 2.x) in a new or empty folder: a `TaskEnvironment` named
    /// after the run, its image built from the run's requirements and system packages, its
    /// resources the run's limits, one task typed as the script's inputs and outputs.
    #[arg(long, value_name = "DIR", group = "target")]
    flyte: Option<PathBuf>,
    /// Export even though the generation failed.
    #[arg(long)]
    force: bool,
}

pub(crate) fn run(args: &ExportArgs) -> anyhow::Result<i32> {
    let run = Run::open(&args.run_dir, args.force)?;
    let mut text = String::new();
    if let Some(dir) = &args.to {
        autocoder_export::to_folder(&run, dir)?;
        writeln!(text, "folder: {}", dir.display())?;
    }
    if let Some(dir) = &args.flyte {
        autocoder_export::to_flyte(&run, dir)?;
        writeln!(
            text,
            "flyte: {}",
            dir.join(autocoder_export::FLYTE_MODULE).display()
        )?;
    }
    write_stdout(&text)?;
    Ok(0)
}

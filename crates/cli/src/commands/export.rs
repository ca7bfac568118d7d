//! `autocoder export RUN_DIR --to DIR`: takes a generated script out of its run directory.

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
    write_stdout(&text)?;
    Ok(0)
}

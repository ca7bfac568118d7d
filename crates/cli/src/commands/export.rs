//! `autocoder export RUN_DIR --to DIR | --flyte DIR | --image TAG`: takes a generated script
//! out of its run directory.

use std::fmt::Write as _;
use std::path::PathBuf;

use autocoder_export::Run;
use autocoder_loop::SandboxOptions;

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
    /// A container image of the script and its environment, built by the local Docker engine
    /// from the Docker sandbox's layers and labelled with the run's name:
    /// `docker run -v "$PWD/out:/var/outputs" TAG --NAME VALUE ...` writes the outputs to out/.
    #[arg(long, value_name = "TAG", group = "target")]
    image: Option<String>,
    /// The interpreter of the image's environment (a version or a path; default: the run's).
    #[arg(long, value_name = "VERSION|PATH", requires = "image")]
    python: Option<String>,
    /// Export even though the generation failed.
    #[arg(long)]
    force: bool,
}

pub(crate) async fn run(args: ExportArgs) -> anyhow::Result<i32> {
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
    if let Some(tag) = &args.image {
        let options = SandboxOptions {
            python: args.python.clone(),
            ..SandboxOptions::default()
        };
        let image = autocoder_export::to_image(&run, tag, &options).await?;
        writeln!(text, "image: {} ({})", image.tag, image.id)?;
    }
    write_stdout(&text)?;
    Ok(0)
}

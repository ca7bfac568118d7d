//! `autocoder export RUN_DIR --flyte DIR`: a task module for the Flyte SDK 2.x: a
//! `TaskEnvironment` named after the run, whose image is Flyte's Debian base with the run's
//! Python version, system packages, resolved requirements and the script, whose resources are
//! the run's limits, and one task whose typed parameters are the contract's inputs and outputs.

use std::path::Path;

use autocoder_loop::rundir::requirement_files;
use autocoder_prompts::Prompts;
use serde::Serialize;

use crate::error::ExportError;
use crate::folder::Destination;
use crate::run::{Run, View};

/// The task module's file name in the export.
pub const FLYTE_MODULE: &str = "task.py";

/// What the Flyte templates see.
#[derive(Serialize)]
struct FlyteView {
    #[serde(flatten)]
    run: View,
    module: &'static str,
}

/// Writes the Flyte export of `run` into `dir` (created; refused when it holds files): the
/// module, `solution.py`, `requirements.txt`, the samples and a README.
pub fn to_flyte(run: &Run, dir: &Path) -> Result<(), ExportError> {
    run.require_outputs_dir()?;
    let prompts = Prompts::embedded()?;
    let view = FlyteView {
        run: run.view()?,
        module: FLYTE_MODULE,
    };
    let out = Destination::create(dir)?;
    out.script(run)?;
    out.write("requirements.txt", &requirement_files(&run.result).0)?;
    out.samples(run)?;
    out.write(
        FLYTE_MODULE,
        &prompts.render("export/flyte/task.py.j2", &view)?,
    )?;
    out.write(
        "README.md",
        &prompts.render("export/flyte/README.md.j2", &view)?,
    )?;
    Ok(())
}

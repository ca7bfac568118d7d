//! Takes a generated script out of its run directory to where data engineers run it: a
//! self-contained folder that runs and tests it with plain `python` and `pytest`
//! ([`to_folder`]), a task module for the Flyte SDK 2.x ([`to_flyte`]) and a container image
//! built by the local Docker engine ([`to_image`]). Every text it writes beyond the run's own
//! files (READMEs, the harness, the Flyte module) is a template under `templates/export/`.
//!
//! ```no_run
//! # fn demo() -> Result<(), autocoder_export::ExportError> {
//! use std::path::Path;
//! let run = autocoder_export::Run::open(Path::new("runs/sales"), false)?;
//! autocoder_export::to_folder(&run, Path::new("sales-export"))?;
//! autocoder_export::to_flyte(&run, Path::new("sales-flyte"))?;
//! # Ok(()) }
//! ```

mod error;
mod flyte;
mod folder;
mod image;
mod run;

pub use error::ExportError;
pub use flyte::{FLYTE_MODULE, to_flyte};
pub use folder::to_folder;
pub use image::to_image;
pub use run::Run;

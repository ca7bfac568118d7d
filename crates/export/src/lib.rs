//! Takes a generated script out of its run directory to where data engineers run it: a
//! self-contained folder that runs and tests it with plain `python` and `pytest`
//! ([`to_folder`]). Every text it writes beyond the run's own files (the README, the harness)
//! is a template under `templates/export/`.
//!
//! ```no_run
//! # fn demo() -> Result<(), autocoder_export::ExportError> {
//! use std::path::Path;
//! let run = autocoder_export::Run::open(Path::new("runs/sales"), false)?;
//! autocoder_export::to_folder(&run, Path::new("sales-export"))?;
//! # Ok(()) }
//! ```

mod error;
mod folder;
mod run;

pub use error::ExportError;
pub use folder::to_folder;
pub use run::Run;

//! The generation loop: a task, sample data, declared inputs and outputs and business rules go
//! in; a Python script whose tests pass comes out. This crate owns the pipeline (plan, code,
//! tests, run, diagnose, fix, reclassify) and the pieces of it that need no model and no sandbox:
//! validating a request before any call ([`request`]), applying a model's code edits exactly
//! ([`edit`]), replacing test functions in a test file ([`splice`]), and deciding which fixer a
//! failure goes to when a diagnosis keeps failing ([`reclassify`]).

pub mod answers;
pub mod data;
pub mod edit;
pub mod env_cache;
mod error;
mod fix_blocks;
mod generate;
mod hand_written;
pub mod harness;
mod installable;
pub mod journal;
mod merge;
mod missing_imports;
pub mod options;
pub mod outcome_cache;
mod output_rules;
pub mod prompt;
pub mod reclassify;
mod repairs;
pub mod request;
mod retry;
pub mod run;
pub mod rundir;
mod schema_keys;
pub mod session;
mod slips;
mod solution_imports;
pub mod splice;
mod steps;
mod test_rows;

pub use error::LoopError;
pub use generate::{Progress, generate, resume};
pub use options::{CacheMode, GenerateOptions, SandboxOptions};
pub use output_rules::RowKey;

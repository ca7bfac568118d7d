//! The generation loop: a task, sample data, declared inputs and outputs and business rules go
//! in; a Python script whose tests pass comes out. This crate owns the pipeline (plan, code,
//! tests, run, diagnose, fix, reclassify) and the pieces of it that need no model and no sandbox:
//! validating a request before any call ([`request`]), applying a model's code edits exactly
//! ([`edit`]), replacing test functions in a test file ([`splice`]), and deciding which fixer a
//! failure goes to when a diagnosis keeps failing ([`reclassify`]).

pub mod answers;
pub mod data;
mod driver;
pub mod edit;
pub mod env_cache;
mod error;
mod faults;
mod fix_blocks;
mod generate;
pub mod harness;
mod installable;
pub mod journal;
mod merge;
mod missing_imports;
pub mod model_profile;
pub mod options;
pub mod outcome_cache;
mod output_rules;
pub mod prompt;
pub mod protocol;
pub mod reclassify;
mod record;
mod repairs;
pub mod request;
mod retry;
pub mod run;
pub mod rundir;
mod schema_keys;
pub mod session;
mod slips;
pub mod splice;
mod steps;
mod test_rows;
mod vet;

pub use error::LoopError;
pub use generate::{Progress, generate, resume};
pub use model_profile::{ModelProfile, ProfileName};
pub use options::{CacheMode, GenerateOptions, SandboxOptions};
pub use output_rules::RowKey;

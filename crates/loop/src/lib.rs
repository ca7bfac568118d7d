//! The generation loop: a task, sample data, declared inputs and outputs and business rules go
//! in; a Python script whose tests pass comes out. This crate owns the pipeline (plan, code,
//! tests, run, diagnose, fix, reclassify) and the pieces of it that need no model and no sandbox:
//! validating a request before any call ([`request`]), putting a model's answer into Python
//! source exactly ([`pysrc`]: code edits, test functions spliced by name, fixes merged), and
//! deciding which fixer a failure goes to when a diagnosis keeps failing ([`reclassify`]).
//! Decisions are the [`session`]'s, over the messages of [`protocol`]; what is specific to weak
//! models is the [`model_profile`]'s.

pub mod agreement;
pub mod answers;
pub mod data;
mod driver;
pub mod env_cache;
mod error;
mod faults;
mod generate;
pub mod harness;
mod installable;
pub mod journal;
pub mod model_profile;
pub mod options;
pub mod outcome_cache;
mod output_columns;
mod output_order;
mod output_rules;
pub mod prompt;
mod prompting;
pub mod protocol;
pub mod pysrc;
pub mod reclassify;
mod record;
mod repairs;
pub mod request;
mod retry;
pub mod run;
pub mod rundir;
mod schema_keys;
pub mod session;
mod sql_name;
mod steps;
mod test_rows;
mod vet;

pub use error::LoopError;
pub use generate::{Progress, generate, resume};
pub use model_profile::{ModelProfile, ProfileName};
pub use options::{CacheMode, GenerateOptions, SandboxOptions};
pub use output_columns::OutputColumns;
pub use output_order::{OutputOrder, SortKey};
pub use output_rules::RowKey;
pub use prompting::Prompting;

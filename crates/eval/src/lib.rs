//! Measures what users get: runs a suite of generation tasks against a model, runs each
//! generated script on held-out data the loop never saw, compares its outputs with a reference
//! solution's, and reports the score per task and seed. Its one job is running a suite and
//! scoring it; `autocoder eval` is the thin command over it.
//!
//! - [`suite`]: the suite on disk (`suite.json`, one directory per task) and its validation.
//! - [`compare`]: output comparison with tolerances (numbers, CSV, JSON, text, date-times, dirs).
//! - [`score`]: running a script (generated or the reference) on a task's cases and judging it.
//! - [`runner`]: the eval itself, one run per task and seed, resumable.
//! - [`report`]: the records, the summaries and the table.
//! - [`verdicts`]: the loop's diagnoses checked against the reference solution.
//! - [`pairs`]: two evals (a change's before and after) paired by task and seed.

pub mod compare;
mod error;
pub mod harness_check;
pub mod pairs;
pub mod report;
pub mod runner;
pub mod score;
pub mod suite;
pub mod verdicts;

pub use error::EvalError;
pub use pairs::{PairedReport, pair, render_pairs};
pub use report::{EvalReport, RunRecord, render_table};
pub use runner::{AgentSettings, EvalEvent, EvalOptions, run_suite};
pub use suite::{Split, Suite, Task};

//! How a generation's prompts are shaped: the request's choices over what the model is shown
//! and asked for (`--tests-see-code`, `--code-in-fences`, `--trace-values`, `--units`,
//! `--queries`, `--no-plan`, `--model-profile`), carried as one value by the options, the journal's request
//! and an eval's settings.

use serde::{Deserialize, Serialize};

use crate::model_profile::ProfileName;

/// The prompt-shaping choices of a request. Serialized flat into the structs that carry it
/// (`#[serde(flatten)]`): the flags that came later are absent when off, so files written
/// before they existed read the same.
#[allow(clippy::struct_excessive_bools)] // independent flags of the request, each read by its name
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompting {
    /// Show the script to the test writer (by default the tests are written from the task, the
    /// data and the contract alone, which catches more bugs).
    pub tests_see_code: bool,
    /// Run the script under the harness's tracer in test runs and show a failing test's
    /// diagnosis and fix what the script's lines computed (each name bound or changed: type,
    /// shape, first values), not only the error (`--trace-values`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_values: bool,
    /// One function per declared output in the code step's skeleton (`--units`), whatever the
    /// profile says; only where the profile gives a skeleton.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub units: bool,
    /// The query skeleton (each table and scalar output one `DuckDB` SQL query over the samples'
    /// tables) on (`--queries`) or off (`--no-queries`) whatever the profile says; `None`
    /// leaves it to the profile. Only where the profile gives a skeleton and every file input
    /// has a CSV sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<bool>,
    /// Write the first script without asking for a plan first (`--no-plan`), whatever the
    /// profile says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_plan: bool,
    /// Ask for the script and the tests as Markdown code blocks instead of JSON strings,
    /// whatever the model profile says. Small local models write valid Python far more often
    /// that way (no escaping); the packages then come from the script's imports alone.
    pub code_in_fences: bool,
    /// The model profile to use (`--model-profile`); `None` chooses it by the model's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_profile: Option<ProfileName>,
}

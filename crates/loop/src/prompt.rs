//! The data every loop prompt is rendered from, and the rendering itself. The words live in
//! `templates/loop/*.j2`; these types are the contract between the two, serialised with the
//! field names the templates use. Every field is always present (null when unknown), because
//! rendering is strict.

use std::collections::BTreeMap;

use autocoder_prompts::{PromptError, Prompts};
use serde::{Deserialize, Serialize};

use crate::data::DataContext;
use crate::options::GenerateOptions;
use crate::request::{Contract, Input, Output};

/// What the model is told about one sample dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetView {
    /// The input name it arrives under.
    pub name: String,
    /// Where the script finds it in the sandbox.
    pub path: String,
    /// The profiler's compact context text (schema, statistics, patterns, sample rows).
    pub context: String,
    /// Rules turned into checks, each with the number of sample rows violating it.
    pub checks: Vec<CheckView>,
    /// The sample's file name (`sales.csv`), for a test's own small input of the same kind.
    pub file_name: String,
    /// The sample's first lines (the header and up to three records) when each is a whole
    /// record; empty otherwise. Tests copy them into small inputs whose results they can compute.
    pub first_lines: Vec<String>,
    /// The columns holding numbers (integers or floats), in file order: rows a test reads back
    /// with `csv.DictReader` hold them as text.
    pub numeric_columns: Vec<String>,
    /// The median of each numeric column: a test passes it for a numeric input named after
    /// the column (`min_total` and `total`), so a filter on it keeps some rows and drops others.
    #[serde(default)]
    pub medians: BTreeMap<String, f64>,
}

/// One applied rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckView {
    /// The rule and the check it became, in words.
    pub text: String,
    /// Sample rows that violate it (0 when the data satisfies it).
    pub violations: u64,
}

/// A rule that stays text: given without data, or not turned into a check (with the reason).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleView {
    /// The rule as the user wrote it.
    pub text: String,
    /// Why it is not a check, when a check was attempted.
    pub reason: Option<String>,
}

/// The task as every loop prompt shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskView {
    /// The user's task, verbatim.
    pub task: String,
    /// A system prompt replacing the default persona (the ground rules are always kept).
    pub system_override: Option<String>,
    /// Free-form schema text from the user.
    pub schema_text: Option<String>,
    /// The top-level keys of `schema_text`, when it is shaped like a JSON object.
    #[serde(default)]
    pub schema_keys: Vec<String>,
    /// The script's inputs.
    pub inputs: Vec<Input>,
    /// The script's outputs.
    pub outputs: Vec<Output>,
    /// Sample datasets with their profiles and checks.
    pub datasets: Vec<DatasetView>,
    /// Rules that stay text.
    pub rules: Vec<RuleView>,
    /// Rules saying a CSV output has one row per key (also among `rules`).
    #[serde(default)]
    pub row_keys: Vec<crate::RowKey>,
    /// Code and tests are answered as Markdown code blocks, not inside JSON.
    pub code_in_fences: bool,
    /// The code step shows a skeleton of the script to fill in (the model profile's choice).
    #[serde(default)]
    pub skeleton: bool,
    /// That skeleton has one function per declared output (`--units`).
    #[serde(default)]
    pub units: bool,
    /// The columns the task lists for its CSV outputs ("`by_region.csv` with the columns region
    /// and revenue"): the units skeleton writes that header for a table with no rows.
    #[serde(default)]
    pub output_columns: Vec<crate::OutputColumns>,
}

/// Renders `template` with the task view plus `extra` fields (which win on a name clash).
pub fn render(
    prompts: &Prompts,
    template: &str,
    task: &TaskView,
    extra: serde_json::Value,
) -> Result<String, PromptError> {
    let mut context = serde_json::to_value(task).unwrap_or_default();
    if let (Some(context), serde_json::Value::Object(extra)) = (context.as_object_mut(), extra) {
        context.extend(extra);
    }
    prompts.render(template, context)
}

/// What every prompt may show of the task.
pub(crate) fn task_view(
    options: &GenerateOptions,
    contract: &Contract,
    data: &DataContext,
) -> TaskView {
    let profile = options.profile();
    TaskView {
        task: options.prompt.clone(),
        system_override: options.system_prompt.clone(),
        schema_text: options.schema_text.clone(),
        schema_keys: options
            .schema_text
            .as_deref()
            .map(crate::schema_keys::top_level_keys)
            .unwrap_or_default(),
        inputs: contract.inputs.clone(),
        outputs: contract.outputs.clone(),
        datasets: data.datasets.clone(),
        rules: data.rules.clone(),
        row_keys: data.row_keys.clone(),
        code_in_fences: profile.code_in_fences,
        skeleton: profile.skeleton,
        units: profile.units,
        output_columns: crate::output_columns::declared_columns(&options.prompt, &contract.outputs),
    }
}

//! The data every loop prompt is rendered from, and the rendering itself. The words live in
//! `templates/loop/*.j2`; these types are the contract between the two, serialised with the
//! field names the templates use. Every field is always present (null when unknown), because
//! rendering is strict.

use std::collections::BTreeMap;

use autocoder_prompts::{PromptError, Prompts};
use serde::{Deserialize, Serialize};

use crate::data::DataContext;
use crate::options::GenerateOptions;
use crate::request::{Contract, Input, IoType, Output};

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
    /// Every column of a tabular sample with its type, in file order (empty when the sample is
    /// not a table): the query skeleton gives a file with no rows these types.
    #[serde(default)]
    pub columns: Vec<ColumnView>,
    /// The sample's field delimiter as its profile found it (a comma for anything but a CSV
    /// sample): code and tests that read it with `csv.DictReader` pass it on.
    #[serde(default = "comma")]
    pub delimiter: String,
    /// For a CSV sample, the arguments of `pd.read_csv` after the path that read it as it was
    /// profiled, types aside (`sep=";", skiprows=2`; empty for a plain comma-separated file
    /// with a header); null for any other sample.
    #[serde(default)]
    pub csv_read_args: Option<String>,
}

/// Views written before [`DatasetView::delimiter`] existed were of comma-separated samples.
fn comma() -> String {
    ",".to_owned()
}

/// One column of a tabular sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnView {
    /// The column's name, as in the header.
    pub name: String,
    /// The name as a `DuckDB` query writes it: in double quotes when it is a keyword or not a
    /// plain identifier (`"end"`, `"unit price"`).
    pub sql: String,
    /// The profiler's type (`integer`, `float`, `string`, `date`, ...).
    pub dtype: String,
    /// The pandas dtype that type reads as (`Int64`, `float64`, `str`, `boolean`), or null for
    /// dates and empty columns.
    pub pandas: Option<String>,
    /// For a date or datetime column: the format its values follow (`%d/%m/%Y`, or `ISO8601`
    /// when they mix ISO 8601 forms), for `pd.to_datetime`.
    #[serde(default)]
    pub format: Option<String>,
    /// For a datetime column whose values carry UTC offsets: read as UTC timestamps.
    #[serde(default)]
    pub utc: bool,
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
#[allow(clippy::struct_excessive_bools)] // independent choices of the prompts, each read by its name
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
    /// That skeleton is the query skeleton: the profile asks for it and every file input has a
    /// CSV sample, read into a `DuckDB` table of the input's name.
    #[serde(default)]
    pub queries: bool,
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

/// Whether the query skeleton can read every file input as a table: each has a CSV sample
/// (and there is at least one). A directory input, or a file without a sample or of another
/// format, leaves the script to the other skeletons.
fn tables_for_queries(contract: &Contract, data: &DataContext) -> bool {
    let mut files = contract
        .inputs
        .iter()
        .filter(|i| matches!(i.ty, IoType::File | IoType::Dir))
        .peekable();
    files.peek().is_some()
        && files.all(|input| {
            input.ty == IoType::File
                && data.datasets.iter().any(|d| {
                    d.name == input.name && d.csv_read_args.is_some() && !d.columns.is_empty()
                })
        })
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
        queries: profile.skeleton && profile.queries && tables_for_queries(contract, data),
        output_columns: crate::output_columns::declared_columns(&options.prompt, &contract.outputs),
    }
}

#[cfg(test)]
mod tests {
    use super::{ColumnView, DatasetView, tables_for_queries};
    use crate::data::DataContext;
    use crate::request::{Contract, Declaration, Sample};

    fn contract(inputs: &[&str], samples: &[&str]) -> Contract {
        let dir = tempfile::tempdir().unwrap();
        let inputs: Vec<Declaration> = inputs.iter().map(|d| d.parse().unwrap()).collect();
        let outputs: Vec<Declaration> = vec!["total:float".parse().unwrap()];
        let samples: Vec<Sample> = samples
            .iter()
            .map(|name| {
                let path = dir.path().join(format!("{name}.csv"));
                std::fs::write(&path, "a\n1\n").unwrap();
                Sample {
                    name: (*name).to_owned(),
                    path,
                }
            })
            .collect();
        Contract::new(&inputs, &outputs, &samples).unwrap()
    }

    fn dataset(name: &str, csv: bool) -> DatasetView {
        DatasetView {
            name: name.into(),
            path: format!("/var/inputs/{name}.csv"),
            context: String::new(),
            checks: Vec::new(),
            file_name: format!("{name}.csv"),
            first_lines: Vec::new(),
            numeric_columns: Vec::new(),
            medians: std::collections::BTreeMap::default(),
            columns: vec![ColumnView {
                name: "a".into(),
                sql: "a".into(),
                dtype: "integer".into(),
                pandas: Some("Int64".into()),
                format: None,
                utc: false,
            }],
            delimiter: ",".into(),
            csv_read_args: csv.then(String::new),
        }
    }

    fn data(datasets: Vec<DatasetView>) -> DataContext {
        DataContext {
            datasets,
            ..DataContext::default()
        }
    }

    #[test]
    fn queries_need_a_csv_table_for_every_file_input() {
        let both = contract(&["min:int"], &["orders", "items"]);
        let tables = data(vec![dataset("orders", true), dataset("items", true)]);
        assert!(tables_for_queries(&both, &tables));
        // A sample of another format (its profile is not CSV).
        let parquet = data(vec![dataset("orders", true), dataset("items", false)]);
        assert!(!tables_for_queries(&both, &parquet));
        // A file input with no sample, and a directory input.
        let unsampled = contract(&["log:file"], &["orders"]);
        assert!(!tables_for_queries(
            &unsampled,
            &data(vec![dataset("orders", true)])
        ));
        let directory = contract(&["archive:dir"], &["orders"]);
        assert!(!tables_for_queries(
            &directory,
            &data(vec![dataset("orders", true)])
        ));
        // No file at all: nothing to query.
        assert!(!tables_for_queries(
            &contract(&["n:int"], &[]),
            &data(Vec::new())
        ));
    }
}

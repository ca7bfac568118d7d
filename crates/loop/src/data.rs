//! The data context: what every prompt knows about the samples. Each sample is profiled (schema,
//! statistics, patterns, sample rows, with exact values), the user's rules become checks on the
//! dataset they are about (the parser first, then the model for the rest), the checks are
//! evaluated over the whole sample file, and the rules that stay text keep their reason. No rule
//! is dropped and none is repeated: a rule applied to one dataset is not also listed as text.
//! A rule about the script's output stays text without being read (`output_rules.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use autocoder_constraints::{Outcome, apply_outcomes, evaluate_path, parse_rules};
use autocoder_llm::LlmClient;
use autocoder_profile::{Profile, ProfileOptions, SchemaOptions, profile_path};
use autocoder_schema::{DataType, FileFormat, TableSchema, render_pandera};

use crate::LoopError;
use crate::output_rules::{RowKey, SampleColumns, about_an_output, one_row_per};
use crate::prompt::{CheckView, ColumnView, DatasetView, RuleView};
use crate::request::{Contract, Output};
use crate::test_rows::{ShownValues, test_rows};

/// Bytes of a non-tabular sample shown when it cannot be profiled as CSV.
const TEXT_PREVIEW_BYTES: usize = 4_000;

/// Everything learnt about the samples.
#[derive(Debug, Clone, Default)]
pub struct DataContext {
    /// What the prompts show per sample.
    pub datasets: Vec<DatasetView>,
    /// Rules that stay text.
    pub rules: Vec<RuleView>,
    /// Sample name -> its profile (tabular samples).
    pub profiles: BTreeMap<String, Profile>,
    /// Sample name -> Pandera module with the applied checks.
    pub schemas: BTreeMap<String, String>,
    /// Every rule's outcome, in the order given.
    pub outcomes: Vec<Outcome>,
    /// Rules saying a CSV output has one row per key, which the harness checks.
    pub row_keys: Vec<RowKey>,
}

impl DataContext {
    /// The whole context as one text, for the result document.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for dataset in &self.datasets {
            let _ = writeln!(
                text,
                "## {} ({})\n{}",
                dataset.name, dataset.path, dataset.context
            );
            for check in &dataset.checks {
                let _ = writeln!(text, "- {} ({} violations)", check.text, check.violations);
            }
        }
        for rule in &self.rules {
            let _ = match &rule.reason {
                Some(reason) => writeln!(text, "- {} (not checked: {reason})", rule.text),
                None => writeln!(text, "- {}", rule.text),
            };
        }
        text
    }
}

/// How samples are profiled and shown.
#[derive(Debug, Clone, Copy)]
pub struct DataOptions {
    /// Sample rows each profile keeps for the prompt.
    pub sample_rows: usize,
    /// The prompt's data context: `None` for the profile's own compact rendering (at most 3
    /// sample rows, about 300 bytes a column); `Some` for the rows and token budget given.
    pub shown: Option<Shown>,
}

/// How much of each sample the prompts show when the user says so (`--sample-rows`,
/// `--context-tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// Sample rows each dataset shows (at most the rows its profile kept).
    pub rows: usize,
    /// Tokens for the data context of all datasets together (shared equally).
    pub context_tokens: usize,
}

impl Default for DataOptions {
    fn default() -> Self {
        DataOptions {
            sample_rows: 20,
            shown: None,
        }
    }
}

struct Tabular {
    index: usize,
    path: std::path::PathBuf,
    schema: TableSchema,
    /// The sample's format: rules are counted on CSV samples only (the evaluator scans CSV).
    format: FileFormat,
}

/// The median of each numeric column of a profile.
fn numeric_medians(profile: &Profile) -> BTreeMap<String, f64> {
    profile
        .columns
        .iter()
        .filter_map(|c| {
            let median = c.quantiles.iter().find(|q| (q.q - 0.5).abs() < 1e-9)?;
            Some((c.name.clone(), median.value.as_f64()?))
        })
        .collect()
}

/// What a prompt shows of one of `samples` profiles: the compact default, or the rows asked
/// for within this sample's share of the token budget.
fn prompt_context(profile: &Profile, shown: Option<Shown>, samples: usize) -> String {
    match shown {
        None => autocoder_profile::render::context(profile),
        Some(shown) => autocoder_profile::render::context_fitted(
            profile,
            shown.rows,
            shown.context_tokens * autocoder_profile::render::CONTEXT_BYTES_PER_TOKEN
                / samples.max(1),
        ),
    }
}

/// Profiles one sample off the async threads: `Err` only if the profiling task itself died; a
/// file that is not a table is the inner `Err`.
async fn profile_sample(
    sample: &Path,
    sample_rows: usize,
) -> Result<Result<Profile, autocoder_profile::ProfileError>, LoopError> {
    let profile_options = ProfileOptions {
        sample_rows,
        ..ProfileOptions::default()
    };
    let path = sample.to_path_buf();
    tokio::task::spawn_blocking(move || profile_path(&path, &profile_options, &|_, _| {}))
        .await
        .map_err(|err| LoopError::Data(format!("profiling {}: {err}", sample.display())))
}

/// Profiles the contract's samples and applies `rules` to them.
pub async fn build(
    contract: &Contract,
    rules: &[String],
    options: DataOptions,
    client: Option<&LlmClient>,
) -> Result<DataContext, LoopError> {
    let mut context = DataContext::default();
    let mut tables: Vec<Tabular> = Vec::new();
    let samples = contract
        .inputs
        .iter()
        .filter(|i| i.sample.is_some())
        .count();
    for input in &contract.inputs {
        let (Some(sample), Some(mount)) = (&input.sample, &input.mount) else {
            continue;
        };
        let profiled = profile_sample(sample, options.sample_rows).await?;
        let mut facts = TableFacts::default();
        let view_context = match profiled {
            Ok(profile) => {
                let mut schema = profile.schema(&SchemaOptions::default());
                schema.name.clone_from(&input.name);
                facts = table_facts(&schema, &profile);
                let text = prompt_context(&profile, options.shown, samples);
                tables.push(Tabular {
                    index: context.datasets.len(),
                    path: sample.clone(),
                    schema,
                    format: profile.format,
                });
                context.profiles.insert(input.name.clone(), profile);
                text
            }
            Err(err) => {
                tracing::info!(sample = %sample.display(), %err, "not profiled as a CSV table; showing its first lines");
                text_preview(sample)?
            }
        };
        context.datasets.push(DatasetView {
            name: input.name.clone(),
            path: mount.clone(),
            context: view_context,
            checks: Vec::new(),
            file_name: mount.rsplit('/').next().unwrap_or(mount).to_owned(),
            first_lines: copyable_lines(sample, context.profiles.get(&input.name)),
            numeric_columns: facts.numeric_columns,
            medians: facts.medians,
            columns: facts.columns,
            delimiter: facts.delimiter.unwrap_or(',').to_string(),
            csv_read_args: facts.csv_read_args,
        });
    }
    let read = read_rules(rules, &tables, &contract.outputs, client).await;
    (context.rules, context.row_keys) =
        rules_left_as_text(&read, &tables, &context.datasets, &contract.outputs);
    let mut shown = ShownValues::new();
    for (table_index, table) in tables.iter_mut().enumerate() {
        let mut mine: Vec<Outcome> = read
            .iter()
            .filter(|(_, owner)| *owner == Some(table_index))
            .map(|(outcome, _)| outcome.clone())
            .collect();
        apply_outcomes(&mut mine, &mut table.schema);
        let constraints: Vec<_> = mine
            .iter()
            .filter_map(|o| o.constraint().cloned())
            .collect();
        if table.format != FileFormat::Csv {
            stated_not_counted(&mut context.datasets[table.index], &mine, table.format);
            let module = render_pandera(&table.schema);
            context.schemas.insert(table.schema.name.clone(), module);
            continue;
        }
        let results = evaluate_path(&table.path, &table.schema, &constraints)
            .map_err(|err| LoopError::Data(err.to_string()))?;
        let dataset = &mut context.datasets[table.index];
        let violating: Vec<u64> = results
            .iter()
            .filter_map(|r| r.examples.first().map(|v| v.row))
            .collect();
        let rows = test_rows(&table.path, &violating, &mut shown);
        if !rows.is_empty() {
            dataset.first_lines = rows;
        }
        for (outcome, result) in mine.iter().zip(&results) {
            dataset.checks.push(CheckView {
                text: format!("{} -> {}", outcome.rule(), result.description),
                violations: result.violations,
            });
        }
        context
            .schemas
            .insert(table.schema.name.clone(), render_pandera(&table.schema));
    }
    context.outcomes = read.into_iter().map(|(outcome, _)| outcome).collect();
    Ok(context)
}

/// What a dataset's view shows of a tabular sample, beyond its context text.
#[derive(Default)]
struct TableFacts {
    numeric_columns: Vec<String>,
    medians: BTreeMap<String, f64>,
    columns: Vec<ColumnView>,
    delimiter: Option<char>,
    csv_read_args: Option<String>,
}

fn table_facts(schema: &TableSchema, profile: &Profile) -> TableFacts {
    TableFacts {
        numeric_columns: schema
            .columns
            .iter()
            .filter(|c| matches!(c.dtype, DataType::Integer | DataType::Float))
            .map(|c| c.name.clone())
            .collect(),
        medians: numeric_medians(profile),
        columns: schema
            .columns
            .iter()
            .map(|c| ColumnView {
                name: c.name.clone(),
                sql: crate::sql_name::sql_identifier(&c.name),
                dtype: c.dtype.name().to_owned(),
                pandas: c.dtype.pandas_read_dtype().map(str::to_owned),
                format: c.dtype.is_temporal().then(|| {
                    c.datetime_format
                        .clone()
                        .unwrap_or_else(|| "ISO8601".to_owned())
                }),
                utc: c.utc,
            })
            .collect(),
        delimiter: (schema.read.format == FileFormat::Csv).then_some(schema.read.delimiter),
        csv_read_args: csv_read_args_of(schema),
    }
}

/// The arguments of `pd.read_csv` after the path for a CSV sample (`sep=","` left out, as
/// pandas' default), `None` for another format.
fn csv_read_args_of(schema: &TableSchema) -> Option<String> {
    if schema.read.format != FileFormat::Csv {
        return None;
    }
    let (layout, text) = autocoder_schema::csv_dialect_kwargs(schema);
    let args: Vec<String> = layout
        .into_iter()
        .chain(text)
        .filter(|arg| arg != "sep=\",\"")
        .collect();
    Some(args.join(", "))
}

/// The rules that stay text, each with its reason (none without a tabular sample: there was
/// nothing to check it against), and the "one row per key" rules among them.
fn rules_left_as_text(
    read: &[(Outcome, Option<usize>)],
    tables: &[Tabular],
    datasets: &[DatasetView],
    outputs: &[Output],
) -> (Vec<RuleView>, Vec<RowKey>) {
    // The harness reads the sample's keys with `csv.DictReader`: CSV samples only.
    let samples: Vec<SampleColumns<'_>> = tables
        .iter()
        .filter(|table| table.format == FileFormat::Csv)
        .map(|table| SampleColumns {
            name: &datasets[table.index].name,
            mount: &datasets[table.index].path,
            columns: table
                .schema
                .columns
                .iter()
                .map(|c| c.name.as_str())
                .collect(),
            delimiter: table.schema.read.delimiter,
        })
        .collect();
    let mut row_keys = Vec::new();
    let mut unapplied = Vec::new();
    for (outcome, _) in read {
        if let Outcome::Unapplied { rule, reason } = outcome {
            let key = one_row_per(rule, outputs, &samples);
            let reason = match &key {
                Some(key) => format!(
                    "it is about the output `{}`, and the harness checks it: run on the samples, \
                     the script must write each `{}` value of `{}` exactly once in `{}`, under a \
                     `{}` header",
                    key.output, key.column, key.sample, key.output, key.column
                ),
                None => reason.clone(),
            };
            row_keys.extend(key);
            unapplied.push(RuleView {
                text: rule.clone(),
                reason: (!tables.is_empty()).then_some(reason),
            });
        }
    }
    (unapplied, row_keys)
}

/// Reads every rule against the tabular samples: the parser on each table, then the model (once
/// per rule) for what no parser reading found, on the table the rule names a column of. Each
/// outcome comes with the index of the table it applies to.
async fn read_rules(
    rules: &[String],
    tables: &[Tabular],
    outputs: &[Output],
    client: Option<&LlmClient>,
) -> Vec<(Outcome, Option<usize>)> {
    let columns: Vec<&str> = tables
        .iter()
        .flat_map(|t| t.schema.columns.iter().map(|c| c.name.as_str()))
        .collect();
    let mut outcomes = Vec::with_capacity(rules.len());
    for rule in rules {
        let output_reason = about_an_output(rule, outputs, &columns);
        if tables.is_empty() || output_reason.is_some() {
            let reason = output_reason
                .unwrap_or_else(|| "there is no tabular sample to check it against".to_owned());
            outcomes.push((
                Outcome::Unapplied {
                    rule: rule.clone(),
                    reason,
                },
                None,
            ));
            continue;
        }
        let mut reasons = Vec::new();
        let mut applied = None;
        for (index, table) in tables.iter().enumerate() {
            match parse_rules(std::slice::from_ref(rule), &table.schema).pop() {
                Some(outcome @ Outcome::Applied { .. }) => {
                    applied = Some((index, outcome));
                    break;
                }
                Some(Outcome::Unapplied { reason, .. }) => reasons.push(reason),
                None => {}
            }
        }
        if applied.is_none()
            && let Some(client) = client
        {
            let index = most_relevant(rule, tables);
            let outcome = autocoder_constraints::llm::read_rules(
                std::slice::from_ref(rule),
                &tables[index].schema,
                client,
            )
            .await
            .pop();
            match outcome {
                Some(outcome @ Outcome::Applied { .. }) => applied = Some((index, outcome)),
                Some(Outcome::Unapplied { reason, .. }) => reasons.push(reason),
                None => {}
            }
        }
        if let Some((index, outcome)) = applied {
            outcomes.push((outcome, Some(index)));
        } else {
            reasons.dedup();
            let reason = reasons.join("; ");
            let rule = rule.clone();
            outcomes.push((Outcome::Unapplied { rule, reason }, None));
        }
    }
    outcomes
}

/// The table with the most column names mentioned in the rule (the first one on a tie).
fn most_relevant(rule: &str, tables: &[Tabular]) -> usize {
    let lower = rule.to_lowercase();
    let score = |t: &Tabular| {
        t.schema
            .columns
            .iter()
            .filter(|c| lower.contains(&c.name.to_lowercase()))
            .count()
    };
    let mut best = 0;
    for (index, table) in tables.iter().enumerate() {
        if score(table) > score(&tables[best]) {
            best = index;
        }
    }
    best
}

/// The sample's first lines for a test to copy: CSV only (lines of a Parquet, JSON or Excel
/// sample are no CSV a test could copy).
fn copyable_lines(sample: &Path, profile: Option<&Profile>) -> Vec<String> {
    if profile.is_none_or(|p| p.format == FileFormat::Csv) {
        first_lines(sample, FIRST_LINES)
    } else {
        Vec::new()
    }
}

/// The rules applied to a sample that is not CSV, stated without a count: the evaluator scans
/// CSV.
fn stated_not_counted(dataset: &mut DatasetView, applied: &[Outcome], format: FileFormat) {
    for outcome in applied {
        dataset.checks.push(CheckView {
            text: format!("{} (not counted on this {format} sample)", outcome.rule()),
            violations: 0,
        });
    }
}

/// How many lines of a sample (header included) tests are shown to copy.
const FIRST_LINES: usize = 4;

/// The first `count` lines of a text file, when each is short and a whole CSV record (an even
/// number of quotes); otherwise none, so a test never copies half a record.
fn first_lines(path: &Path, count: usize) -> Vec<String> {
    const MAX_LINE: usize = 300;
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut head = Vec::new();
    if std::io::Read::read_to_end(&mut std::io::Read::take(file, 64 * 1024), &mut head).is_err() {
        return Vec::new();
    }
    let cut = head.len() == 64 * 1024;
    let text = match std::str::from_utf8(&head) {
        Ok(text) => text,
        // The read limit may split a character; anything else is not text.
        Err(err) if cut && err.error_len().is_none() => {
            std::str::from_utf8(&head[..err.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return Vec::new(),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines: Vec<String> = Vec::new();
    for line in text.split_inclusive('\n').take(count) {
        let line = match line.strip_suffix('\n') {
            Some(line) => line,
            None if cut => break, // the read limit cut it: only whole lines
            None => line,
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.len() > MAX_LINE || line.matches('"').count() % 2 == 1 || line.trim().is_empty() {
            return Vec::new();
        }
        lines.push(line.to_owned());
    }
    if lines.len() < 2 { Vec::new() } else { lines }
}

fn text_preview(path: &Path) -> Result<String, LoopError> {
    let bytes = std::fs::read(path)
        .map_err(|err| LoopError::Data(format!("cannot read sample {}: {err}", path.display())))?;
    let mut end = bytes.len().min(TEXT_PREVIEW_BYTES);
    let text = loop {
        match std::str::from_utf8(&bytes[..end]) {
            Ok(text) => break text.to_owned(),
            Err(err) if err.valid_up_to() > 0 => end = err.valid_up_to(),
            Err(_) => {
                return Ok(format!("binary file, {} bytes (not shown)", bytes.len()));
            }
        }
    };
    let cut = if bytes.len() > end {
        format!("\n[... {} more bytes]", bytes.len() - end)
    } else {
        String::new()
    };
    Ok(format!(
        "text file, {} bytes; it begins:\n{text}{cut}",
        bytes.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::first_lines;

    fn lines_of(text: impl AsRef<[u8]>) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sample.csv");
        std::fs::write(&path, text).unwrap();
        first_lines(&path, 4)
    }

    #[test]
    fn first_lines_are_whole_records_or_nothing() {
        assert_eq!(
            lines_of("\u{feff}a,b\r\n1,2\r\n3,4\r\n5,6\r\n7,8\r\n"),
            ["a,b", "1,2", "3,4", "5,6"]
        );
        assert_eq!(lines_of("a,b\n1,2"), ["a,b", "1,2"]);
        // A quoted newline would cut a record in two: nothing is better than half a record.
        assert!(lines_of("a,b\n1,\"x\ny\"\n").is_empty());
        assert!(lines_of("only a header\n").is_empty());
        assert!(lines_of(b"a,b\n\xff\xfe\x00binary\n").is_empty());
        assert!(lines_of(format!("a\n{}\n", "x".repeat(400))).is_empty());
    }

    #[tokio::test]
    async fn each_numeric_column_has_its_median_and_later_samples_show_joining_rows() {
        use crate::request::{Contract, Declaration, Sample};
        use std::fmt::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let orders = dir.path().join("orders.csv");
        let mut text = "order_id,customer_id,total,day\n".to_owned();
        for i in 1..=9 {
            let _ = writeln!(text, "O{i},C{},{}.5,2024-05-0{i}", 10 + i, i * 10);
        }
        std::fs::write(&orders, text).unwrap();
        let customers = dir.path().join("customers.csv");
        let text: String = std::iter::once("customer_id,name\n".to_owned())
            .chain((1..=20).map(|i| format!("C{i},Customer {i}\n")))
            .collect();
        std::fs::write(&customers, text).unwrap();
        let samples = [
            Sample {
                name: "orders".into(),
                path: orders,
            },
            Sample {
                name: "customers".into(),
                path: customers,
            },
        ];
        let inputs: Vec<Declaration> = vec!["min_total:float".parse().unwrap()];
        let contract = Contract::new(&inputs, &[], &samples).unwrap();
        let context = super::build(&contract, &[], super::DataOptions::default(), None)
            .await
            .unwrap();
        let orders = &context.datasets[0];
        assert_eq!(
            orders.medians.get("total"),
            Some(&50.5),
            "{:?}",
            orders.medians
        );
        assert!(!orders.medians.contains_key("day") && !orders.medians.contains_key("order_id"));
        // The customers of the first orders shown (C11..C13) are among the customers shown.
        let shown = &context.datasets[1].first_lines;
        for id in ["C11,", "C12,", "C13,"] {
            assert!(shown.iter().any(|l| l.starts_with(id)), "{shown:?}");
        }
    }

    #[tokio::test]
    async fn a_json_lines_sample_gets_its_profile_mount_and_reader_but_no_csv_lines() {
        use crate::request::{Contract, Sample};
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events.jsonl");
        std::fs::write(
            &events,
            "{\"id\": 1, \"amount\": 2.5, \"user\": {\"name\": \"a\"}}\n\
             {\"id\": 2, \"amount\": -1.0, \"user\": {\"name\": \"b\"}}\n",
        )
        .unwrap();
        let samples = [Sample {
            name: "events".into(),
            path: events,
        }];
        let contract = Contract::new(&[], &[], &samples).unwrap();
        let rules = ["amount must be positive".to_owned()];
        let context = super::build(&contract, &rules, super::DataOptions::default(), None)
            .await
            .unwrap();
        let profile = &context.profiles["events"];
        assert_eq!(profile.format, autocoder_schema::FileFormat::Jsonl);
        let names: Vec<&str> = profile.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "amount", "user.name"]);
        let view = &context.datasets[0];
        assert!(view.path.ends_with("/events.jsonl"), "{}", view.path);
        assert!(view.context.contains("JSON Lines"), "{}", view.context);
        assert!(view.first_lines.is_empty(), "{:?}", view.first_lines);
        assert_eq!(view.checks.len(), 1);
        assert!(
            view.checks[0]
                .text
                .contains("not counted on this jsonl sample")
        );
        let module = &context.schemas["events"];
        assert!(module.contains("pd.json_normalize(records)"), "{module}");
    }
}

//! `autocoder schema FILE --constraint TEXT...`: the rules become checks in the schema, are
//! evaluated over the whole file, and the report says which were applied (as what), which were
//! not (why), and the violations found. The offline parser reads the rules; with `--model`, the
//! model reads the rest (validated answers only).

use std::path::PathBuf;

use anyhow::Context as _;
use autocoder_constraints::{Report, report_for_file, report_for_file_with_model};
use autocoder_llm::LlmClient;
use autocoder_schema::TableSchema;
use clap::ValueEnum;

use crate::commands::profile::join_modules;

/// The output formats of `autocoder schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchemaFormat {
    /// The Python module; with rules, followed by the rules and violations as comments.
    Text,
    /// One JSON document per file (an array for several): `schema`, `pandera` (the module),
    /// `rules` (each `applied` with its constraint or `unapplied` with the reason) and
    /// `violations` (per applied rule: rows, violating rows, the first few row numbers and values).
    Json,
}

/// Applies `rules` to each file's schema, evaluates them over the file and renders the reports.
pub(crate) fn render_reports(
    files: &[PathBuf],
    schemas: Vec<TableSchema>,
    rules: &[String],
    format: SchemaFormat,
    client: Option<&LlmClient>,
) -> anyhow::Result<String> {
    let mut reports: Vec<Report> = Vec::with_capacity(files.len());
    let runtime = match client {
        Some(_) => Some(
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
        ),
        None => None,
    };
    for (file, schema) in files.iter().zip(schemas) {
        let report = match (client, &runtime) {
            (Some(client), Some(runtime)) => {
                runtime.block_on(report_for_file_with_model(file, schema, rules, client))
            }
            _ => report_for_file(file, schema, rules),
        }
        .with_context(|| format!("evaluating the rules over {}", file.display()))?;
        reports.push(report);
    }
    Ok(match format {
        SchemaFormat::Json => {
            let mut text = if let [one] = reports.as_slice() {
                serde_json::to_string_pretty(one)?
            } else {
                serde_json::to_string_pretty(&reports)?
            };
            text.push('\n');
            text
        }
        SchemaFormat::Text => {
            let modules: Vec<(String, String)> = files
                .iter()
                .zip(&reports)
                .map(|(file, report)| (file.display().to_string(), report.to_text()))
                .collect();
            join_modules(&modules)
        }
    })
}

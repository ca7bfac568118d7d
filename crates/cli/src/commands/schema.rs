//! `autocoder schema FILE...`: the Pandera schema the data follows, as a runnable Python module,
//! or as a Frictionless Table Schema or a JSON Schema of one row.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use autocoder_llm::{LlmClient, LlmConfig, ModelSpec};
use autocoder_profile::SchemaOptions;
use autocoder_schema::{TableSchema, render_frictionless, render_json_schema, render_pandera};
use clap::{Args, ValueEnum};

use crate::cli::GlobalArgs;
use crate::commands::constraint::{SchemaFormat, render_reports};
use crate::commands::input::InputArgs;
use crate::commands::profile::join_modules;
use crate::output;

/// Arguments of `autocoder schema`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// Add `in_range(min, max)` checks from the observed minimum and maximum of numeric and date
    /// columns (off by default: the sample's range is rarely the rule).
    #[arg(long)]
    pub(crate) ranges: bool,
    /// Add `isin([...])` checks on text columns with few distinct values.
    #[arg(long)]
    pub(crate) categories: bool,
    /// The most distinct values a column may have to get an `isin` check.
    #[arg(long, value_name = "N", default_value_t = 20, requires = "categories")]
    pub(crate) max_categories: usize,
    /// The table's name in the module (`<NAME>_SCHEMA`, `read_<name>`); defaults to the file name.
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// A business rule in plain words, e.g. "quantity must be positive" (repeat the flag for
    /// several). Rules become checks in the schema; the output then lists the rules applied (as
    /// what), those not applied (why), and the violations found in the whole file.
    #[arg(long = "constraint", value_name = "TEXT")]
    pub(crate) constraints: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Print the JSON document (the same as `--format json`).
    #[arg(long, conflicts_with = "format")]
    pub(crate) json: bool,
    /// Write the document to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// A model (`provider/name`) that reads the rules the offline parser cannot; its answers are
    /// validated against the table and rejected when they don't fit. Without it, such rules stay
    /// unapplied with the reason.
    #[arg(long, requires = "constraints")]
    pub(crate) model: Option<String>,
    /// The model's API base URL (a local or proxy server).
    #[arg(long, requires = "model")]
    pub(crate) api_base: Option<String>,
    /// The environment variable holding the model's API key.
    #[arg(long, value_name = "VAR", requires = "model")]
    pub(crate) api_key_env: Option<String>,
    #[command(flatten)]
    pub(crate) input: InputArgs,
}

/// The output formats of `autocoder schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// The Python module (Pandera schema and `read_<name>`); with rules, followed by the rules
    /// and violations as comments.
    Text,
    /// One JSON document per file (an array for several): `schema`, `pandera` (the module),
    /// `rules` (each `applied` with its constraint or `unapplied` with the reason) and
    /// `violations` (per applied rule: rows, violating rows, the first few row numbers and values).
    Json,
    /// A Frictionless Table Schema: field types and constraints, missing values.
    Frictionless,
    /// A JSON Schema (2020-12) of one row as a JSON object.
    Jsonschema,
}

fn model_client(model: &str, args: &SchemaArgs) -> anyhow::Result<LlmClient> {
    let mut config = LlmConfig::new(ModelSpec::parse(model).context("--model")?);
    config.api_base.clone_from(&args.api_base);
    config.api_key_env.clone_from(&args.api_key_env);
    Ok(LlmClient::new(config)?)
}

/// Runs `autocoder schema`.
pub(crate) fn run(args: &SchemaArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let options = SchemaOptions {
        ranges: args.ranges,
        categories: args.categories,
        max_categories: args.max_categories,
    };
    if args.name.is_some() && args.input.files.len() > 1 {
        bail!("--name names one table: give one file, or leave --name out to use the file names");
    }
    let mut profile_options = args.input.options();
    if args.categories {
        // `isin` lists every value, so at least that many frequent values must be kept.
        profile_options.top_k = profile_options.top_k.max(args.max_categories);
    }
    let format = if args.json { Format::Json } else { args.format };
    let exported = matches!(format, Format::Frictionless | Format::Jsonschema);
    if exported && !args.constraints.is_empty() {
        bail!("--constraint reports come as text or JSON: use --format text or --format json");
    }
    let profiles = args
        .input
        .profile_all_with(&profile_options, global.quiet)?;
    if exported {
        let documents: Vec<serde_json::Value> = profiles
            .iter()
            .map(|profile| {
                let schema = named(profile.schema(&options), args.name.as_deref());
                export(&schema, format)
            })
            .collect();
        let mut text = if let [one] = documents.as_slice() {
            serde_json::to_string_pretty(one)?
        } else {
            serde_json::to_string_pretty(&documents)?
        };
        text.push('\n');
        output::write_document(&text, args.output.as_deref())?;
        return Ok(ExitCode::SUCCESS);
    }
    if !args.constraints.is_empty() || format == Format::Json {
        let report_format = if format == Format::Json {
            SchemaFormat::Json
        } else {
            SchemaFormat::Text
        };
        let schemas = profiles
            .iter()
            .map(|profile| named(profile.schema(&options), args.name.as_deref()))
            .collect();
        let client = args
            .model
            .as_deref()
            .map(|model| model_client(model, args))
            .transpose()?;
        let text = render_reports(
            &args.input.files,
            schemas,
            &args.constraints,
            report_format,
            client.as_ref(),
        )?;
        output::write_document(&text, args.output.as_deref())?;
        return Ok(ExitCode::SUCCESS);
    }
    let modules: Vec<(String, String)> = profiles
        .iter()
        .zip(&args.input.files)
        .map(|(profile, file)| {
            let schema = named(profile.schema(&options), args.name.as_deref());
            (file.display().to_string(), render_pandera(&schema))
        })
        .collect();
    output::write_document(&join_modules(&modules), args.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// `schema` renamed to `name` when given.
fn named(mut schema: TableSchema, name: Option<&str>) -> TableSchema {
    if let Some(name) = name {
        name.clone_into(&mut schema.name);
    }
    schema
}

/// `schema` as a Frictionless Table Schema or a JSON Schema.
fn export(schema: &TableSchema, format: Format) -> serde_json::Value {
    if format == Format::Frictionless {
        render_frictionless(schema)
    } else {
        render_json_schema(schema)
    }
}

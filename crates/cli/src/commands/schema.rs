//! `autocoder schema FILE...`: the Pandera schema the data follows, as a runnable Python module.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use autocoder_llm::{LlmClient, LlmConfig, ModelSpec};
use autocoder_profile::SchemaOptions;
use autocoder_schema::render_pandera;
use clap::Args;

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
    #[arg(long, value_enum, default_value_t = SchemaFormat::Text)]
    pub(crate) format: SchemaFormat,
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
    let profiles = args
        .input
        .profile_all_with(&profile_options, global.quiet)?;
    if !args.constraints.is_empty() || args.format == SchemaFormat::Json {
        let schemas = profiles
            .iter()
            .map(|profile| {
                let mut schema = profile.schema(&options);
                if let Some(name) = &args.name {
                    schema.name.clone_from(name);
                }
                schema
            })
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
            args.format,
            client.as_ref(),
        )?;
        output::write_stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let modules: Vec<(String, String)> = profiles
        .iter()
        .zip(&args.input.files)
        .map(|(profile, file)| {
            let mut schema = profile.schema(&options);
            if let Some(name) = &args.name {
                schema.name.clone_from(name);
            }
            (file.display().to_string(), render_pandera(&schema))
        })
        .collect();
    output::write_stdout(&join_modules(&modules))?;
    Ok(ExitCode::SUCCESS)
}

//! `autocoder profile FILE...`: what the data holds, as text, JSON, Pandera or prompt context.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use autocoder_profile::{Profile, SchemaOptions, render};
use autocoder_schema::render_pandera;
use clap::{Args, ValueEnum};

use crate::cli::GlobalArgs;
use crate::commands::input::InputArgs;
use crate::output;

/// Arguments of `autocoder profile`.
#[derive(Debug, Args)]
pub(crate) struct ProfileArgs {
    /// How to print the profile.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Print the profile as JSON (the same as `--format json`).
    #[arg(long, conflicts_with = "format")]
    pub(crate) json: bool,
    /// Write the document to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Also write the report as one self-contained HTML page (charts, alerts, sample rows) to
    /// FILE; several files share one page.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) input: InputArgs,
}

/// The output formats of `autocoder profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A readable summary and a table per column, for a terminal.
    Text,
    /// The full profile as JSON (its schema is `autocoder_profile::Profile`, with a
    /// `format_version`); one object per file, an array when several files are given.
    Json,
    /// A Python module with the Pandera schema and a `read_<name>` function (as `autocoder schema`).
    Pandera,
    /// The compact text a prompt carries.
    Context,
    /// One self-contained HTML page with charts (as `--html`).
    Html,
}

/// Runs `autocoder profile`.
pub(crate) fn run(args: &ProfileArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let profiles = args.input.profile_all(global.quiet)?;
    let format = if args.json { Format::Json } else { args.format };
    if let Some(path) = &args.html {
        output::write_document(&html(&profiles), Some(path))?;
    }
    let text = render_all(format, &profiles, &args.input)?;
    output::write_document(&text, args.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

fn render_all(format: Format, profiles: &[Profile], input: &InputArgs) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json => {
            let mut text = if let [one] = profiles {
                serde_json::to_string_pretty(one)
            } else {
                serde_json::to_string_pretty(profiles)
            }
            .context("cannot write the profile as JSON")?;
            text.push('\n');
            text
        }
        Format::Text => join(profiles, render::text),
        Format::Context => join(profiles, render::context),
        Format::Html => html(profiles),
        Format::Pandera => {
            let modules: Vec<(String, String)> = profiles
                .iter()
                .zip(&input.files)
                .map(|(profile, file)| {
                    let schema = profile.schema(&SchemaOptions::default());
                    (file.display().to_string(), render_pandera(&schema))
                })
                .collect();
            join_modules(&modules)
        }
    })
}

/// The HTML report: one profile's page, or one page for several files.
fn html(profiles: &[Profile]) -> String {
    if let [one] = profiles {
        return autocoder_report::html(one);
    }
    let names: Vec<String> = profiles.iter().map(render::format::source).collect();
    let datasets: Vec<(&str, &Profile)> = names.iter().map(String::as_str).zip(profiles).collect();
    autocoder_report::html_many(&format!("{} files", profiles.len()), &datasets)
}

/// The renderings of several profiles, separated by a blank line.
fn join(profiles: &[Profile], render: fn(&Profile) -> String) -> String {
    profiles.iter().map(render).collect::<Vec<_>>().join("\n")
}

/// One Python module per file. Several modules are separated by a `# ==== FILE ====` line each,
/// so they can be split; one file gives exactly one runnable module.
pub(crate) fn join_modules(modules: &[(String, String)]) -> String {
    if let [(_, one)] = modules {
        return one.clone();
    }
    modules
        .iter()
        .map(|(file, module)| format!("# ==== {file} ====\n{module}"))
        .collect::<Vec<_>>()
        .join("\n")
}

//! `autocoder run RUN_DIR [--NAME VALUE]...`: runs a generated script in the environment its
//! tests passed in, samples as defaults, and prints its typed outputs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, bail};
use autocoder_loop::run::{RunOptions, run as run_result};
use autocoder_sandbox::Value;

use crate::commands::generate::SandboxArgs;
use crate::output::write_stdout;

/// `autocoder run ...`
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The run directory `autocoder generate` wrote.
    run_dir: PathBuf,
    /// Print the outputs as one JSON object.
    #[arg(long)]
    json: bool,
    /// Copy file and directory outputs here (default: `RUN_DIR/outputs`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run even though the generation failed.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Input values, `--NAME VALUE` for the script's declared inputs.
    #[arg(last = true, allow_hyphen_values = true, value_name = "--NAME VALUE")]
    overrides: Vec<String>,
}

fn parse_overrides(items: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut overrides = BTreeMap::new();
    let mut iter = items.iter();
    while let Some(flag) = iter.next() {
        let Some(rest) = flag.strip_prefix("--") else {
            bail!("expected --NAME VALUE, got {flag:?}");
        };
        let (name, value) = if let Some((name, value)) = rest.split_once('=') {
            (name.to_owned(), value.to_owned())
        } else {
            let value = iter
                .next()
                .with_context(|| format!("{flag} needs a value"))?;
            (rest.to_owned(), value.clone())
        };
        overrides.insert(name, value);
    }
    Ok(overrides)
}

fn display(value: &Value) -> serde_json::Value {
    match value {
        Value::Str(s) | Value::Datetime(s) => serde_json::json!(s),
        Value::Int(i) => serde_json::json!(i),
        Value::Float(f) => serde_json::json!(f),
        Value::Bool(b) => serde_json::json!(b),
        Value::Timedelta(us) => serde_json::json!(*us as f64 / 1e6),
        Value::File(p) | Value::Dir(p) => serde_json::json!(p),
    }
}

pub(crate) async fn run(args: RunArgs) -> anyhow::Result<i32> {
    let options = RunOptions {
        overrides: parse_overrides(&args.overrides)?,
        force: args.force,
        sandbox: args.sandbox.options()?,
        out_dir: args.out.clone(),
    };
    let (_, outcome) = run_result(&args.run_dir, &options).await?;
    let code = outcome.exit_code.unwrap_or(-1);
    if !outcome.success() {
        let why = if outcome.timed_out {
            "hit the time limit".to_owned()
        } else if outcome.memory_exceeded {
            "hit the memory limit".to_owned()
        } else {
            format!("exited with {code}")
        };
        bail!("the script {why}\n{}", outcome.stderr.trim_end());
    }
    let outputs = outcome.outputs.context("reading the script's outputs")?;
    let document: serde_json::Map<String, serde_json::Value> = outputs
        .iter()
        .map(|(k, v)| (k.clone(), display(v)))
        .collect();
    if args.json {
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&document)?))?;
    } else {
        let mut text = outcome.stdout.clone();
        for (name, value) in &document {
            let _ = writeln!(text, "{name} = {value}");
        }
        write_stdout(&text)?;
    }
    Ok(0)
}

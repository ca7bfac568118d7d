//! `autocoder run RUN_DIR [--NAME VALUE]...`: runs a generated script in the environment its
//! tests passed in, samples as defaults, and prints its typed outputs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, bail};
use autocoder_loop::run::{RunOptions, run as run_result};
use autocoder_sandbox::{Value, escape_for_terminal};

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
    /// The largest scalar output (`str`, `int` ...) read back (`512K`, `1M`, `2G` or bytes).
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    max_scalar_output: u64,
    /// The most bytes of file and directory outputs copied out, all together.
    #[arg(long, value_name = "SIZE", default_value = "4G", value_parser = parse_size)]
    max_output_files: u64,
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

/// A pretty-printed JSON object with its keys in the given order (`serde_json::Map` sorts them).
fn json_object(fields: &[(&str, serde_json::Value)]) -> anyhow::Result<String> {
    if fields.is_empty() {
        return Ok("{}".to_owned());
    }
    let mut text = String::from("{\n");
    for (i, (name, value)) in fields.iter().enumerate() {
        let value = serde_json::to_string_pretty(value)?.replace('\n', "\n  ");
        let comma = if i + 1 < fields.len() { "," } else { "" };
        let _ = writeln!(text, "  {}: {value}{comma}", serde_json::to_string(name)?);
    }
    text.push('}');
    Ok(text)
}

/// A size: bytes, or a number with `K`, `M` or `G` (powers of 1024; `KiB` ... also read).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => {
            return Err(format!(
                "{text:?} is not a size: write bytes, or a number with K, M or G"
            ));
        }
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size: write bytes, or a number with K, M or G"))?;
    n.checked_shl(shift)
        .filter(|v| v >> shift == n)
        .ok_or_else(|| format!("{text:?} is too large"))
}

pub(crate) async fn run(args: RunArgs) -> anyhow::Result<i32> {
    let mut sandbox = args.sandbox.options()?;
    sandbox.limits.scalar_output_bytes = args.max_scalar_output;
    sandbox.limits.output_files_bytes = args.max_output_files;
    let options = RunOptions {
        overrides: parse_overrides(&args.overrides)?,
        force: args.force,
        sandbox,
        out_dir: args.out.clone(),
    };
    let (result, outcome) = run_result(&args.run_dir, &options).await?;
    if let Some(why) = outcome.failure() {
        let stderr = outcome.stderr.trim_end();
        let shown = if std::io::stderr().is_terminal() {
            escape_for_terminal(stderr)
        } else {
            stderr.into()
        };
        bail!("the script {why}\n{shown}");
    }
    let outputs = outcome.outputs.context("reading the script's outputs")?;
    // In the order the outputs were declared, not sorted by name.
    let document: Vec<(&str, serde_json::Value)> = result
        .outputs
        .iter()
        .filter_map(|o| Some((o.name.as_str(), display(outputs.get(&o.name)?))))
        .collect();
    if args.json {
        write_stdout(&format!("{}\n", json_object(&document)?))?;
    } else {
        let mut text = outcome.stdout.clone();
        for (name, value) in &document {
            let _ = writeln!(text, "{name} = {value}");
        }
        if std::io::stdout().is_terminal() {
            write_stdout(&escape_for_terminal(&text))?;
        } else {
            write_stdout(&text)?;
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size(" 4g "), Ok(4 << 30));
        assert!(parse_size("1.5M").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999G").is_err());
    }
}

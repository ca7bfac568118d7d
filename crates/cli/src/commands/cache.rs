//! `autocoder cache clean`: trims the model-call cache by age and size (or empties it), and the
//! `--model-cache` glue of `generate` and `resume`.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::Context;
use autocoder_llm::{
    Eviction, LlmClient, ModelCache, ModelCacheMode, cache_size, evict, install_model_cache,
};

use crate::commands::run::parse_size;
use crate::output::write_stdout;

/// `autocoder cache ...`
#[derive(Debug, clap::Args)]
pub(crate) struct CacheArgs {
    #[command(subcommand)]
    command: CacheCommand,
}

/// The cache subcommands.
#[derive(Debug, clap::Subcommand)]
enum CacheCommand {
    /// Remove cached model answers older than `--max-age-days`, then the oldest until the rest
    /// fit in `--max-size`.
    Clean {
        /// Remove every cached answer.
        #[arg(long)]
        all: bool,
        /// Answers older than this many days go.
        #[arg(long, default_value_t = 30)]
        max_age_days: u64,
        /// The most the cache may keep (`512M`, `1G` or bytes).
        #[arg(long, default_value = "1G", value_parser = parse_size)]
        max_size: u64,
    },
}

pub(crate) fn run(args: &CacheArgs) -> anyhow::Result<i32> {
    let CacheCommand::Clean {
        all,
        max_age_days,
        max_size,
    } = args.command;
    let dir = ModelCache::default_dir();
    let bounds = if all {
        Eviction {
            max_age: Duration::ZERO,
            max_bytes: 0,
        }
    } else {
        Eviction {
            max_age: Duration::from_secs(max_age_days.saturating_mul(24 * 3600)),
            max_bytes: max_size,
        }
    };
    let stats = evict(&dir, bounds).with_context(|| format!("cleaning {}", dir.display()))?;
    let mut text = String::new();
    writeln!(
        text,
        "model cache {}: removed {} answer(s), kept {} ({})",
        dir.display(),
        stats.removed,
        stats.entries,
        human_bytes(stats.bytes)
    )?;
    write_stdout(&text)?;
    Ok(0)
}

/// `12.3 MiB`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    let mut value = bytes as f64;
    for unit in ["B", "KiB", "MiB", "GiB"] {
        if value < 1024.0 || unit == "GiB" {
            return if unit == "B" {
                format!("{bytes} B")
            } else {
                format!("{value:.1} {unit}")
            };
        }
        value /= 1024.0;
    }
    format!("{bytes} B")
}

/// The doctor's line about the model cache.
pub(crate) fn doctor_finding() -> autocoder_sandbox::Finding {
    let dir = ModelCache::default_dir();
    let stats = cache_size(&dir);
    autocoder_sandbox::Finding {
        name: "models".to_owned(),
        ok: true,
        detail: format!(
            "model-call cache {}: {} answer(s), {} (`autocoder cache clean` trims it)",
            dir.display(),
            stats.entries,
            human_bytes(stats.bytes)
        ),
    }
}

/// Puts the model-call cache on `client` as `--model-cache` says
/// ([`autocoder_llm::install_model_cache`]).
pub(crate) fn install(client: &LlmClient, mode: &str) -> anyhow::Result<()> {
    let mode = ModelCacheMode::from_name(mode)
        .with_context(|| format!("--model-cache {mode}: auto, refresh or off"))?;
    install_model_cache(client, mode);
    Ok(())
}

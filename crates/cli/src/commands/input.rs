//! Reading the input files: the options `profile` and `schema` share, and the profiling of each
//! file (a path, `.gz`, or `-` for stdin) with a progress bar on stderr.

use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use autocoder_profile::{
    Dialect, Encoding, FileFormat, LongRows, NullSpec, Profile, ProfileOptions, profile_path,
};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Files smaller than this finish before a progress bar would be worth drawing.
const PROGRESS_MIN_BYTES: u64 = 32 << 20;

/// How to read the input files; shared by `profile` and `schema`.
#[derive(Debug, Args)]
pub(crate) struct InputArgs {
    /// Files to read: CSV (`.gz` decompressed, `-` reads standard input), Parquet, Arrow IPC
    /// (Feather), JSON Lines, JSON arrays of objects or Excel `.xlsx`, recognised by their
    /// first bytes, then their extension.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// Read the files as this format instead of recognising it: csv, parquet, arrow, jsonl,
    /// json or xlsx (`-f/--format` is the output's format).
    #[arg(long, value_name = "FORMAT", value_parser = parse_input_format)]
    pub(crate) input_format: Option<FileFormat>,
    /// The Excel sheet to read (the first when absent).
    #[arg(long, value_name = "NAME")]
    pub(crate) sheet: Option<String>,
    /// The field delimiter (one character, or `tab`); sniffed among `,` tab `;` `|` when absent.
    #[arg(short, long, value_name = "C", value_parser = parse_delimiter)]
    pub(crate) delimiter: Option<u8>,
    /// The first row is data, not a header; columns are then named `column_1`, `column_2`, ...
    #[arg(long)]
    pub(crate) no_header: bool,
    /// Another text that means "missing" (repeatable), besides pandas' defaults.
    #[arg(long = "na-value", value_name = "S")]
    pub(crate) na_values: Vec<String>,
    /// Don't treat pandas' default texts (`NA`, `N/A`, `NaN`, `null`, `None`, empty, ...) as missing.
    #[arg(long)]
    pub(crate) no_default_na: bool,
    /// Skip rows with more fields than the header (and the line of a quote that never closes)
    /// and count them, instead of stopping.
    #[arg(long)]
    pub(crate) skip_bad_rows: bool,
    /// Skip N lines at the start of the file, before the header (pandas' `skiprows`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) skip_rows: u64,
    /// Ignore from this character to the end of its line, outside quotes; lines that start with
    /// it are skipped (pandas' `comment`).
    #[arg(long, value_name = "C", value_parser = parse_comment)]
    pub(crate) comment: Option<u8>,
    /// The text encoding: `latin-1`, `cp1252`, `utf-16`, `shift_jis`, ... (pandas' `encoding`).
    /// UTF-8 by default; UTF-16 is found by its byte-order mark.
    #[arg(long, value_name = "E", value_parser = parse_encoding)]
    pub(crate) encoding: Option<Encoding>,
    /// The longest record accepted, in MiB; a longer one is an error.
    #[arg(long, value_name = "MB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) max_record_mb: u64,
    /// Rows kept as samples (reservoir sampling, deterministic for a given --seed).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub(crate) sample_rows: usize,
    /// Seed of every random choice: the same seed gives the same profile.
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// Worker threads; 0 uses every core.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) threads: usize,
}

/// Accepts the names of [`FileFormat`].
fn parse_input_format(text: &str) -> Result<FileFormat, String> {
    let lower = text.to_ascii_lowercase();
    let name = match lower.as_str() {
        "ndjson" => "jsonl",
        "feather" | "ipc" => "arrow",
        "excel" => "xlsx",
        other => other,
    };
    FileFormat::ALL
        .into_iter()
        .find(|f| f.name() == name)
        .ok_or_else(|| {
            format!(
                "`{text}` is not an input format: give csv, parquet, arrow, jsonl, json or xlsx"
            )
        })
}

/// Accepts one ASCII character, or the names `tab`, `\t`, `comma`, `semicolon`, `pipe`.
fn parse_delimiter(text: &str) -> Result<u8, String> {
    match text {
        "tab" | "\\t" | "\t" => Ok(b'\t'),
        "comma" => Ok(b','),
        "semicolon" => Ok(b';'),
        "pipe" => Ok(b'|'),
        _ => match text.as_bytes() {
            [b] if b.is_ascii() && !b.is_ascii_alphanumeric() && *b != b'"' && *b != b'\n' => {
                Ok(*b)
            }
            _ => Err(format!(
                "`{text}` is not a delimiter: give one ASCII character such as `,` `;` `|`, or `tab`"
            )),
        },
    }
}

/// Accepts one ASCII character that is not a letter, digit, quote or line end.
fn parse_comment(text: &str) -> Result<u8, String> {
    match text.as_bytes() {
        [b] if b.is_ascii_punctuation() && *b != b'"' => Ok(*b),
        _ => Err(format!(
            "`{text}` is not a comment character: give one ASCII punctuation character such as `#`"
        )),
    }
}

/// Accepts the encodings Python and the WHATWG Encoding Standard name.
fn parse_encoding(text: &str) -> Result<Encoding, String> {
    Encoding::for_label(text).ok_or_else(|| {
        format!(
            "`{text}` is not an encoding this build knows: try `latin-1`, `cp1252`, `utf-16`, `utf-8`"
        )
    })
}

impl InputArgs {
    /// The profiler options these arguments ask for.
    pub(crate) fn options(&self) -> ProfileOptions {
        let mut options = ProfileOptions {
            nulls: NullSpec::new(!self.no_default_na, self.na_values.clone()),
            sample_rows: self.sample_rows,
            threads: self.threads,
            long_rows: if self.skip_bad_rows {
                LongRows::Skip
            } else {
                LongRows::Error
            },
            skip_rows: self.skip_rows,
            comment: self.comment,
            encoding: self.encoding,
            max_record_bytes: usize::try_from(self.max_record_mb << 20).unwrap_or(usize::MAX),
            input_format: self.input_format,
            sheet: self.sheet.clone(),
            ..ProfileOptions::default()
        };
        if let Some(seed) = self.seed {
            options.seed = seed;
        }
        if self.no_header {
            options.has_header = Some(false);
        }
        if let Some(delimiter) = self.delimiter {
            options.dialect = Some(Dialect {
                delimiter,
                has_header: !self.no_header,
                ..Dialect::default()
            });
        }
        options
    }

    /// Profiles every file in order; the first failure stops with an error naming the file.
    pub(crate) fn profile_all(&self, quiet: bool) -> anyhow::Result<Vec<Profile>> {
        self.profile_all_with(&self.options(), quiet)
    }

    /// [`Self::profile_all`] with options adjusted by the caller.
    pub(crate) fn profile_all_with(
        &self,
        options: &ProfileOptions,
        quiet: bool,
    ) -> anyhow::Result<Vec<Profile>> {
        if self.files.iter().filter(|f| is_stdin(f)).count() > 1 {
            bail!("`-` (standard input) can be given only once");
        }
        self.files
            .iter()
            .map(|file| profile_one(file, options, quiet))
            .collect()
    }
}

fn is_stdin(file: &Path) -> bool {
    file.as_os_str() == "-"
}

fn profile_one(file: &Path, options: &ProfileOptions, quiet: bool) -> anyhow::Result<Profile> {
    let shown = if is_stdin(file) {
        "standard input".to_owned()
    } else {
        file.display().to_string()
    };
    tracing::info!("profiling {shown}");
    let bar = progress_bar(file, quiet);
    let progress = |done: u64, total: u64| {
        if let Some(bar) = &bar
            && total > 0
        {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    let profile =
        profile_path(file, options, &progress).with_context(|| format!("cannot profile {shown}"));
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    profile
}

/// A byte progress bar on stderr for a large file (its size on disk: compressed files count
/// compressed bytes); `None` when quiet, when stderr is not a terminal, for stdin, or when the
/// file is small.
fn progress_bar(file: &Path, quiet: bool) -> Option<ProgressBar> {
    if quiet || is_stdin(file) || !io::stderr().is_terminal() {
        return None;
    }
    let size = std::fs::metadata(file).ok()?.len();
    if size < PROGRESS_MIN_BYTES {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix} [{bar:30}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(file.display().to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_parse_by_character_or_name() {
        assert_eq!(parse_delimiter(";"), Ok(b';'));
        assert_eq!(parse_delimiter("tab"), Ok(b'\t'));
        assert_eq!(parse_delimiter("\\t"), Ok(b'\t'));
        assert_eq!(parse_delimiter("|"), Ok(b'|'));
        assert!(parse_delimiter("ab").is_err());
        assert!(parse_delimiter("a").is_err());
        assert!(parse_delimiter("\"").is_err());
    }

    #[test]
    fn options_follow_the_flags() {
        let args = InputArgs {
            files: vec![PathBuf::from("x.csv")],
            delimiter: Some(b';'),
            no_header: true,
            na_values: vec!["-".to_owned()],
            no_default_na: true,
            skip_bad_rows: true,
            sample_rows: 5,
            seed: Some(9),
            threads: 1,
            skip_rows: 2,
            comment: Some(b'#'),
            encoding: Encoding::for_label("cp1252"),
            max_record_mb: 1,
            input_format: Some(FileFormat::Xlsx),
            sheet: Some("orders".to_owned()),
        };
        let options = args.options();
        assert_eq!(options.input_format, Some(FileFormat::Xlsx));
        assert_eq!(options.sheet.as_deref(), Some("orders"));
        assert_eq!(parse_input_format("NDJSON"), Ok(FileFormat::Jsonl));
        assert!(
            parse_input_format("orc")
                .unwrap_err()
                .contains("csv, parquet, arrow")
        );
        assert_eq!(options.sample_rows, 5);
        assert_eq!(options.seed, 9);
        assert_eq!(options.threads, 1);
        assert_eq!(options.has_header, Some(false));
        assert_eq!(options.long_rows, LongRows::Skip);
        assert_eq!(options.skip_rows, 2);
        assert_eq!(options.comment, Some(b'#'));
        assert_eq!(options.encoding, Encoding::for_label("cp1252"));
        assert_eq!(options.max_record_bytes, 1 << 20);
        let dialect = options.dialect.unwrap();
        assert_eq!(dialect.delimiter, b';');
        assert!(!dialect.has_header);
        assert_eq!(options.nulls, NullSpec::new(false, vec!["-".to_owned()]));
    }
}

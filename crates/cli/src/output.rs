//! The only place that writes to stdout (data) and prints the final error (stderr).

use std::io::{self, Write};

/// Writes `text` to stdout. A closed pipe (`autocoder ... | head`) surfaces as an error that
/// [`is_broken_pipe`] recognises, so `main` can exit quietly.
pub(crate) fn write_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Writes a document to `path` when given, to stdout otherwise (`-o/--output`).
pub(crate) fn write_document(text: &str, path: Option<&std::path::Path>) -> anyhow::Result<()> {
    match path {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            anyhow::anyhow!(
                "cannot write {}: {e}; check that its directory exists and is writable",
                path.display()
            )
        }),
        None => Ok(write_stdout(text)?),
    }
}

/// Writes `text` to stderr as is (a sandboxed script's own stderr, passed through).
pub(crate) fn write_stderr(text: &str) -> io::Result<()> {
    let mut err = io::stderr().lock();
    err.write_all(text.as_bytes())?;
    err.flush()
}

/// True when the error chain holds a broken-pipe I/O error.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Prints the error and its causes on stderr, one per line.
#[allow(clippy::print_stderr)] // the final error is the one message that bypasses tracing
pub(crate) fn report_error(err: &anyhow::Error) {
    eprintln!("error: {err}");
    for cause in err.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
}

//! Logs go to stderr through `tracing`; quiet by default, raised by `-v` or `RUST_LOG`.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `RUST_LOG` wins over `-v` when it is set.
pub(crate) fn init(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        (false, _) => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

//! Runs the built `autocoder` binary on `testdata/`: every output format, the Pandera module we
//! emit validated by real pandera (`AUTOCODER_TEST_PYTHON`), errors naming file and line, stdin
//! and `.gz`; plus a seeded fuzz-style robustness test of the profiler on random bytes.
#![allow(clippy::disallowed_methods)] // tests run the binary and the real Python interpreter
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod agent;
mod caches;
mod constraints;
mod conventions;
mod errors;
mod eval;
mod examples;
mod export;
mod formats;
mod generate;
mod human;
mod pandera;
mod params;
mod policy;
mod resume;
mod robustness;
mod scripted;
mod snapshots;

mod sandbox;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository's `testdata/` directory, joined with `rel`.
fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// Runs `autocoder ARGS` with no stdin.
fn autocoder(args: &[&str]) -> Output {
    autocoder_with_stdin(args, None)
}

/// Runs `autocoder ARGS`, feeding `stdin` when given.
fn autocoder_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_autocoder"))
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the autocoder binary starts");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(bytes).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// Runs `autocoder ARGS` with extra environment variables and no stdin.
fn autocoder_with_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_autocoder"))
        .args(args)
        .envs(vars.iter().copied())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("the autocoder binary starts")
}

/// Runs `autocoder ARGS`, asserts success and returns stdout.
fn stdout_of(args: &[&str]) -> String {
    let out = autocoder(args);
    assert!(
        out.status.success(),
        "autocoder {args:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// The test Python (pandas, pandera), as set up by `scripts/test`.
fn python() -> PathBuf {
    let path = std::env::var_os("AUTOCODER_TEST_PYTHON").expect(
        "AUTOCODER_TEST_PYTHON must name a Python with pandas and pandera: run scripts/test",
    );
    PathBuf::from(path)
}

/// Runs the test Python with `args`; returns (success, stdout + stderr).
fn run_python(args: &[&std::ffi::OsStr]) -> (bool, String) {
    let out = Command::new(python())
        .args(args)
        .output()
        .expect("the test Python runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

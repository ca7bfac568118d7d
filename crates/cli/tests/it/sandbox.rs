//! `autocoder sandbox run|doctor` through the real binary, in a real bubblewrap sandbox.

use std::path::PathBuf;
use std::process::{Command, Output};

fn test_python() -> PathBuf {
    PathBuf::from(
        std::env::var_os("AUTOCODER_TEST_PYTHON").expect(
            "AUTOCODER_TEST_PYTHON must name the test interpreter (scripts/test sets it up)",
        ),
    )
}

/// Runs `autocoder sandbox ARGS` with the test interpreter, its uv and a private env cache.
fn sandbox(args: &[&str], cache: &std::path::Path) -> Output {
    let python = test_python();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_autocoder"));
    cmd.arg("sandbox")
        .args(args)
        .env_remove("RUST_LOG")
        .env("AUTOCODER_PYTHON", &python)
        .env("AUTOCODER_ENV_CACHE", cache);
    let uv = python.parent().unwrap().join("uv");
    if uv.is_file() {
        cmd.env("AUTOCODER_UV", uv);
    }
    cmd.output().unwrap()
}

#[test]
fn run_passes_arguments_and_the_scripts_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("main.py");
    std::fs::write(
        &script,
        "import sys, helper\nprint(helper.X, sys.argv[1:])\nsys.exit(3)\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("helper.py"), "X = 'helped'\n").unwrap();
    let out = sandbox(
        &["run", script.to_str().unwrap(), "--", "--rows", "a b"],
        &dir.path().join("envs"),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "helped ['--rows', 'a b']\n"
    );
}

#[test]
fn doctor_reports_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let out = sandbox(&["doctor", "--json"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["python", "uv", "bwrap", "docker", "none"]);
}

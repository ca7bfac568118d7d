//! Debian packages from the code step's answer reach the environment: the Docker backend builds
//! them into the image (and `run` uses the same image), the host backends check them, and a
//! package that cannot be had is replaced by the model's answer once (a name apt does not know,
//! or no valid name) or dropped with a note that names it and says why.

use std::path::{Path, PathBuf};

use autocoder_llm::{LlmClient, LlmConfig, ModelSpec};
use autocoder_loop::request::{Declaration, Sample};
use autocoder_loop::run::{RunOptions, run};
use autocoder_loop::rundir::GenerationResult;
use autocoder_loop::{GenerateOptions, SandboxOptions, generate};
use autocoder_sandbox::{Backend, Sandbox, Value};
use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use serde_json::json;

/// Counts the rows with `jq` when it is asked to (`USE_JQ`), so the test sees the package work.
const SCRIPT: &str = r#"import argparse
import csv
import json
import subprocess


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    args = parser.parse_args()
    with open(args.data, newline="") as handle:
        rows = list(csv.DictReader(handle))
    count = len(rows)
    if USE_JQ:
        out = subprocess.run(["jq", "length"], input=json.dumps(rows), capture_output=True, text=True, check=True)
        count = int(out.stdout)
    with open("/var/outputs/rows", "w") as handle:
        handle.write(str(count))


if __name__ == "__main__":
    main()
"#;

const TESTS: &str = r#"
def test_rows_are_counted(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["rows"] == 3
"#;

/// `replacements`: the model's answers when asked for a Debian package in place of one that
/// cannot be installed, in order.
async fn generate_with(
    backend: Backend,
    system_packages: &[&str],
    use_jq: bool,
    replacements: &[Option<&str>],
) -> (GenerationResult, tempfile::TempDir, ScriptedServer) {
    let source = SCRIPT.replace("USE_JQ", if use_jq { "True" } else { "False" });
    let asked = replacements.iter().map(|r| {
        Entry::step(
            "replace_system_package",
            Reply::Json(json!({"replacement": r, "reason": "the name apt knows"})),
        )
    });
    let server = ScriptedServer::start(Script::new(
        vec![
            Entry::step(
                "plan",
                Reply::Json(json!({"summary": "count rows", "approach": [], "edge_cases": []})),
            ),
            Entry::step(
                "code",
                Reply::Json(
                    json!({"code": source, "packages": [], "system_packages": system_packages}),
                ),
            ),
            Entry::step("tests", Reply::Json(json!({"tests": TESTS}))),
        ]
        .into_iter()
        .chain(asked),
    ))
    .await
    .unwrap();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sample = dir.path().join("data.csv");
    std::fs::write(&sample, "a,b\n1,2\n3,4\n5,6\n").unwrap();
    let mut config = LlmConfig::new(ModelSpec::parse("openai/scripted").unwrap());
    config.api_base = Some(server.base_url());
    let client = LlmClient::new_with_env(config, |_| Some("sk-scripted".to_owned())).unwrap();
    let options = GenerateOptions {
        prompt: "Count the rows of the data file, written as `rows`.".into(),
        samples: vec![Sample {
            name: "data".into(),
            path: sample,
        }],
        outputs: vec!["rows:int".parse::<Declaration>().unwrap()],
        sample_rows: 5,
        out_dir: dir.path().join("run"),
        sandbox: sandbox_options(backend),
        model: "openai/scripted".into(),
        ..GenerateOptions::default()
    };
    let result = generate(&options, &client, &|_| {}).await.unwrap();
    (result, dir, server)
}

/// Host backends cache environments in the target directory; Docker's cache is under the
/// system's temporary directory, as it is for a clone under `/tmp` (its image holds the
/// environment at a fixed path, wherever the cache is).
fn sandbox_options(backend: Backend) -> SandboxOptions {
    let cache_dir = if backend == Backend::Docker {
        std::env::temp_dir().join("autocoder-test-envs")
    } else {
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("autocoder-envs")
    };
    SandboxOptions {
        backend,
        cache_dir: Some(cache_dir),
        ..SandboxOptions::default()
    }
}

fn run_dir(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("run")
}

#[tokio::test]
async fn host_backends_use_installed_system_packages_and_drop_missing_ones_with_a_note() {
    let (result, dir, _server) = generate_with(Backend::Bwrap, &["coreutils"], false, &[]).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.system_packages, ["coreutils"]);
    let (_, outcome) = run(
        &run_dir(&dir),
        &RunOptions {
            sandbox: sandbox_options(Backend::Bwrap),
            ..RunOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.outputs.unwrap()["rows"], Value::Int(3));

    // A package the host lacks is dropped with a note saying why (a host backend cannot install
    // a replacement either); the tests decide whether the script needed it (this one does not).
    let (result, _dir, _server) = generate_with(
        Backend::Bwrap,
        &["coreutils", "no-such-package-xyz"],
        false,
        &[],
    )
    .await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.system_packages, ["coreutils"]);
    assert_eq!(result.notes.len(), 1, "{:?}", result.notes);
    assert!(
        result.notes[0].contains("no-such-package-xyz")
            && result.notes[0].contains("--sandbox docker"),
        "{}",
        result.notes[0]
    );
    // A name that is no Debian package name at all is asked about once; with no replacement it
    // is dropped too.
    let (result, _dir, server) =
        generate_with(Backend::Bwrap, &["coreutils", "Python 3!"], false, &[None]).await;
    assert!(result.success, "{result:#?}");
    assert!(
        server.remaining().is_empty(),
        "the model was asked for a replacement"
    );
    assert_eq!(result.system_packages, ["coreutils"]);
    assert!(
        result.notes[0].contains("not a valid Debian package name"),
        "{:?}",
        result.notes
    );
}

#[tokio::test]
async fn docker_builds_system_packages_into_the_image_that_run_uses_too() {
    if let Err(e) = Sandbox::new(Backend::Docker).check_ready().await {
        panic!(
            "this test needs a running Docker engine ({e}); start one, or skip it with `cargo test -- --skip docker`"
        );
    }
    let (result, dir, _server) = generate_with(Backend::Docker, &["jq"], true, &[]).await;
    assert!(result.success, "{result:#?}");
    let image = result.environment.image.clone().unwrap();
    assert!(image.contains("-sys"), "{image}");
    let (_, outcome) = run(
        &run_dir(&dir),
        &RunOptions {
            sandbox: sandbox_options(Backend::Docker),
            ..RunOptions::default()
        },
    )
    .await
    .unwrap();
    assert!(outcome.success(), "{outcome:?}");
    assert_eq!(outcome.docker_image.as_deref(), Some(image.as_str()));
    assert_eq!(outcome.outputs.unwrap()["rows"], Value::Int(3));

    // A name apt does not know is replaced by the model's answer, built into the image and used
    // by the script; a replacement apt does not know either is dropped.
    let (result, _dir, _server) =
        generate_with(Backend::Docker, &["jq-cli"], true, &[Some("jq")]).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.system_packages, ["jq"]);
    assert!(
        result.notes[0].contains("replaced the system package jq-cli with jq"),
        "{:?}",
        result.notes
    );
    let (result, _dir, server) = generate_with(
        Backend::Docker,
        &["no-such-package-xyz"],
        false,
        &[Some("no-such-package-abc")],
    )
    .await;
    assert!(result.success, "{result:#?}");
    assert!(server.remaining().is_empty(), "the model was asked once");
    assert!(result.system_packages.is_empty());
    assert_eq!(result.notes.len(), 2, "{:?}", result.notes);
    assert!(
        result.notes[1].contains("no-such-package-abc") && result.notes[1].contains("apt"),
        "{:?}",
        result.notes
    );
}

//! The loop's own cost per iteration (issue 22, part 4): everything but the model's thinking.
//! The scripted LLM server answers at once on 127.0.0.1; the profiler, the prompts, the
//! environment cache, bubblewrap, pytest and the run directory are real.
//!
//! - `loop/fail_diagnose_fix_pass`: plan, code, tests, a failing test run, a diagnosis, a code fix
//!   and a passing test run: one whole generation of two iterations.
//! - `loop/first_try_pass`: plan, code, tests and one passing run (the fixed cost of a generation).
//! - `test_run/*`: one test run of the same four files (solution, tests, conftest, contract test):
//!   `bare_pytest` is `python -m pytest -q -p no:cacheprovider` on the host; `sandbox_none` is
//!   the sandbox's pytest runner without isolation (its plugin and flags); `sandbox_bwrap` is the
//!   run the loop makes.
//! - `parts/*`: a cached environment's lookup and the harness's template rendering.
//!
//! Environments use the sandbox's default interpreter, as `autocoder generate` does. Numbers:
//! `benches/README.md`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use autocoder_llm::{LlmClient, LlmConfig, ModelSpec};
use autocoder_loop::request::{Declaration, Sample};
use autocoder_loop::session::Limits;
use autocoder_loop::{GenerateOptions, SandboxOptions, generate};
use autocoder_prompts::Prompts;
use autocoder_sandbox::{
    Backend, EnvCache, EnvSpec, Input, PytestSpec, Sandbox, SourceFile, Value,
};
use autocoder_testkit::{Entry, Script, ScriptedServer};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

#[allow(
    dead_code,
    reason = "each bench uses its own part of the shared fixtures"
)]
mod common;
use common::{BAD, GOOD, SALES, code_fix, diagnosis, plan_code_tests, script};

const TESTS: &str = r#"import pytest


def test_total_is_revenue(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(25.5)


def test_missing_file_fails(run_solution, tmp_path):
    result = run_solution({"sales": tmp_path / "missing.csv"})
    assert result.returncode != 0
"#;

/// Environments live in the target directory, reused across runs as users' are.
fn env_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-loop-envs")
}

fn answers(fail_first: bool) -> Vec<Entry> {
    let mut entries = plan_code_tests(&script(if fail_first { BAD } else { GOOD }), TESTS);
    if fail_first {
        entries.push(diagnosis());
        entries.push(code_fix());
    }
    entries
}

struct Fixture {
    dir: tempfile::TempDir,
    sample: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let sample = dir.path().join("sales.csv");
        std::fs::write(&sample, SALES).unwrap();
        Fixture { dir, sample }
    }

    fn options(&self, out: &Path, backend: Backend) -> GenerateOptions {
        GenerateOptions {
            prompt: "Total revenue (qty * price) of the sales file, written as `total`.".into(),
            samples: vec![Sample {
                name: "sales".into(),
                path: self.sample.clone(),
            }],
            outputs: vec!["total:float".parse::<Declaration>().unwrap()],
            sample_rows: 10,
            limits: Limits {
                max_iterations: 4,
                ..Limits::default()
            },
            out_dir: out.to_path_buf(),
            sandbox: SandboxOptions {
                backend,
                cache_dir: Some(env_dir()),
                ..SandboxOptions::default()
            },
            model: "openai/scripted".into(),
            ..GenerateOptions::default()
        }
    }

    /// One generation against a fresh scripted server; returns its wall time.
    async fn generate(&self, fail_first: bool, backend: Backend, out: &Path) -> Duration {
        let server = ScriptedServer::start(Script::new(answers(fail_first)))
            .await
            .unwrap();
        let mut config = LlmConfig::new(ModelSpec::parse("openai/scripted").unwrap());
        config.api_base = Some(server.base_url());
        config.conversation_log = Some(out.join("conversation.jsonl"));
        let client = LlmClient::new(config).unwrap();
        let options = self.options(out, backend);
        let start = Instant::now();
        let result = generate(&options, &client, &|_| {}).await.unwrap();
        let took = start.elapsed();
        assert!(result.success, "{result:#?}");
        assert_eq!(result.attempts, if fail_first { 2 } else { 1 });
        took
    }
}

fn bench_loop(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fixture = Fixture::new();
    // Warm the environment cache once, as a user's second generation finds it.
    rt.block_on(fixture.generate(false, Backend::Bwrap, &fixture.dir.path().join("warm")));
    let mut group = c.benchmark_group("loop");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    for (name, fail_first) in [("first_try_pass", false), ("fail_diagnose_fix_pass", true)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    let out = fixture.dir.path().join(format!("{name}-{i}"));
                    total += rt.block_on(fixture.generate(fail_first, Backend::Bwrap, &out));
                    std::fs::remove_dir_all(&out).unwrap();
                }
                total
            });
        });
    }
    group.finish();
}

/// The four files of a passing bubblewrap run, as the loop wrote them.
fn run_files(rt: &tokio::runtime::Runtime, fixture: &Fixture) -> Vec<SourceFile> {
    let out = fixture.dir.path().join("files");
    rt.block_on(fixture.generate(false, Backend::Bwrap, &out));
    [
        "solution.py",
        "test_solution.py",
        "conftest.py",
        "test_contract.py",
    ]
    .iter()
    .filter(|name| out.join(name).is_file())
    .map(|name| SourceFile::new(*name, std::fs::read_to_string(out.join(name)).unwrap()))
    .collect()
}

/// The same files with the sandbox's paths replaced by host ones, for runs without isolation.
fn on_host(files: &[SourceFile], outputs: &Path, sample: &Path) -> Vec<SourceFile> {
    files
        .iter()
        .map(|f| {
            let text = f
                .contents
                .replace("/var/outputs", &outputs.display().to_string())
                .replace("/var/inputs/sales.csv", &sample.display().to_string());
            SourceFile::new(f.name.clone(), text)
        })
        .collect()
}

fn bench_test_run(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fixture = Fixture::new();
    let cache = EnvCache::new(env_dir());
    let bwrap_files = run_files(&rt, &fixture);
    let env = rt
        .block_on(cache.ensure(&EnvSpec::new::<&str>(&[]).unwrap()))
        .unwrap();
    let inputs = vec![Input {
        name: "sales".into(),
        value: Value::File(fixture.sample.clone()),
    }];
    let mut group = c.benchmark_group("test_run");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(15));

    // Bare pytest on the host, in a directory holding the same files (host paths in them).
    let bare_dir = fixture.dir.path().join("bare");
    std::fs::create_dir_all(bare_dir.join("outputs")).unwrap();
    for f in on_host(&bwrap_files, &bare_dir.join("outputs"), &fixture.sample) {
        std::fs::write(bare_dir.join(&f.name), &f.contents).unwrap();
    }
    let env_python = env.python.clone();
    group.bench_function("bare_pytest", |b| {
        b.iter(|| {
            #[allow(clippy::disallowed_methods)]
            // the bare baseline is pytest with no sandbox at all
            let out = std::process::Command::new(&env_python)
                .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
                .env("AUTOCODER_OUTPUTS_DIR", bare_dir.join("outputs"))
                .current_dir(&bare_dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
        });
    });
    // The sandbox's runner without isolation writes outputs to RUN_DIR/outputs.
    let none_run = fixture.dir.path().join("none-run");
    let none_files = on_host(&bwrap_files, &none_run.join("outputs"), &fixture.sample);
    for (name, backend, files, run_dir) in [
        ("sandbox_none", Backend::None, &none_files, Some(none_run)),
        ("sandbox_bwrap", Backend::Bwrap, &bwrap_files, None),
    ] {
        let sandbox = Sandbox::new(backend);
        let mut spec = PytestSpec::new(env.clone(), files.clone());
        spec.inputs.clone_from(&inputs);
        group.bench_function(name, |b| {
            b.iter(|| {
                let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
                let dir = run_dir.clone().unwrap_or_else(|| work.path().to_path_buf());
                let report = rt.block_on(sandbox.run_pytest(&spec, &dir)).unwrap();
                assert!(report.all_passed(), "{}{}", report.stdout, report.stderr);
            });
        });
    }
    group.finish();
}

fn bench_parts(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let cache = EnvCache::new(env_dir());
    let spec = EnvSpec::new::<&str>(&[]).unwrap();
    rt.block_on(cache.ensure(&spec)).unwrap();
    let mut group = c.benchmark_group("parts");
    group.bench_function("environment_cached", |b| {
        b.iter(|| rt.block_on(cache.ensure(&spec)).unwrap());
    });
    let prompts = Prompts::embedded().unwrap();
    group.bench_function("prompts_embedded", |b| {
        b.iter(|| Prompts::embedded().unwrap());
    });
    group.bench_function("render_conftest", |b| {
        b.iter(|| {
            prompts
                .render(
                    "harness/conftest.py.j2",
                    json!({
                        "outputs_dir": "/var/outputs",
                        "timeout_seconds": 60,
                        "output_types": {"total": "float"},
                        "default_arguments": {"sales": "/var/inputs/sales.csv"},
                        "input_names": ["sales"],
                        "trace": false,
                    }),
                )
                .unwrap()
        });
    });
    group.finish();
}

criterion_group!(benches, bench_loop, bench_test_run, bench_parts);
criterion_main!(benches);

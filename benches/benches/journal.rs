//! The journal's cost (issue 19): what writing it adds to a generation, and how long
//! `autocoder resume` takes to replay a 10-iteration journal.
//!
//! - `journal/write_generation`: every line of a real two-iteration generation's journal
//!   (fail, diagnose, fix, pass) written to a fresh journal, each appended and fsynced, as the
//!   driver writes them. Compare with `loop/fail_diagnose_fix_pass` of `loop_iteration`, the
//!   same generation with the journal on: the ratio is the journaling overhead.
//! - `resume/10_iterations`: a generation that failed its tests ten times, its journal cut just
//!   before the finish line: reading the journal and replaying the run to its end (every model
//!   answer and test run served from the journal) until `result.json` is written. The scripted
//!   server is asserted to see no request.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
#![allow(
    clippy::print_stderr,
    clippy::too_many_lines,
    reason = "a bench that reports the journals it measures, set up in one function"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use autocoder_llm::{LlmClient, LlmConfig, ModelSpec};
use autocoder_loop::journal::{self, Journal, Line};
use autocoder_loop::request::{Declaration, Sample};
use autocoder_loop::session::Limits;
use autocoder_loop::{GenerateOptions, SandboxOptions, generate, resume};
use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

#[allow(
    dead_code,
    reason = "each bench uses its own part of the shared fixtures"
)]
mod common;
use common::{BAD, SALES, code_fix, diagnosis, plan_code_tests, script};

const TESTS: &str = r#"import pytest


def test_total_is_revenue(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(25.5)
"#;

fn env_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-loop-envs")
}

/// Fail, diagnose, fix, pass.
fn two_iterations() -> Vec<Entry> {
    let mut entries = plan_code_tests(&script(BAD), TESTS);
    entries.push(diagnosis());
    entries.push(code_fix());
    entries
}

/// Ten failing runs: every fix is a new wrong script; test fixes (after a reclassification)
/// keep the test.
fn ten_failing_iterations() -> Vec<Entry> {
    let mut entries = plan_code_tests(&script(BAD), TESTS);
    for i in 1..=12 {
        entries.push(diagnosis());
        let wrong = format!("float(row[\"qty\"]) + {i}");
        entries.push(Entry::step(
            "fix_code",
            Reply::Json(
                json!({"code": script(&wrong), "edits": [], "packages": [], "explanation": "try"}),
            ),
        ));
        let test = format!(
            "def test_total_is_revenue(run_solution):\n    result = run_solution()\n    assert result.outputs[\"total\"] == pytest.approx(25.5), {i}\n"
        );
        entries.push(Entry::step(
            "fix_tests",
            Reply::Json(json!({"functions": [{"name": "test_total_is_revenue", "source": test}], "imports": []})),
        ));
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

    fn options(&self, out: &Path, max_iterations: u32) -> GenerateOptions {
        GenerateOptions {
            prompt: "Total revenue (qty * price) of the sales file, written as `total`.".into(),
            samples: vec![Sample {
                name: "sales".into(),
                path: self.sample.clone(),
            }],
            outputs: vec!["total:float".parse::<Declaration>().unwrap()],
            sample_rows: 10,
            limits: Limits {
                max_iterations,
                ..Limits::default()
            },
            out_dir: out.to_path_buf(),
            sandbox: SandboxOptions {
                cache_dir: Some(env_dir()),
                ..SandboxOptions::default()
            },
            model: "openai/scripted".into(),
            ..GenerateOptions::default()
        }
    }

    fn client(server: &ScriptedServer, out: &Path) -> LlmClient {
        let mut config = LlmConfig::new(ModelSpec::parse("openai/scripted").unwrap());
        config.api_base = Some(server.base_url());
        config.conversation_log = Some(out.join("conversation.jsonl"));
        LlmClient::new(config).unwrap()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn bench_journal(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fixture = Fixture::new();

    // A real two-iteration generation's journal.
    let two = fixture.dir.path().join("two");
    let server = rt
        .block_on(ScriptedServer::start(Script::new(two_iterations())))
        .unwrap();
    let result = rt
        .block_on(generate(
            &fixture.options(&two, 4),
            &Fixture::client(&server, &two),
            &|_| {},
        ))
        .unwrap();
    assert!(result.success && result.attempts == 2, "{result:#?}");
    let written = journal::read(&two).unwrap();
    eprintln!(
        "two-iteration journal: {} lines, {} bytes",
        written.lines.len() + 1,
        std::fs::metadata(two.join(journal::JOURNAL_FILE))
            .unwrap()
            .len()
    );

    let mut group = c.benchmark_group("journal");
    group.sample_size(20);
    let scratch = fixture.dir.path().join("scratch");
    group.bench_function("write_generation", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let _ = std::fs::remove_dir_all(&scratch);
                let start = Instant::now();
                let journal = Journal::create(&scratch, &written.request).unwrap();
                for line in &written.lines {
                    journal.record(line).unwrap();
                }
                total += start.elapsed();
            }
            total
        });
    });
    group.finish();

    // A ten-iteration generation, its journal cut before the finish line.
    let ten = fixture.dir.path().join("ten");
    let server = rt
        .block_on(ScriptedServer::start(Script::new(ten_failing_iterations())))
        .unwrap();
    let result = rt
        .block_on(generate(
            &fixture.options(&ten, 10),
            &Fixture::client(&server, &ten),
            &|_| {},
        ))
        .unwrap();
    assert_eq!(result.attempts, 10, "{result:#?}");
    let asked = server.requests().len();
    let path = ten.join(journal::JOURNAL_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.last().unwrap().contains("\"kind\":\"finish\""));
    std::fs::write(&path, format!("{}\n", lines[..lines.len() - 1].join("\n"))).unwrap();
    let steps: Vec<String> = journal::read(&ten)
        .unwrap()
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::Model { step, .. } => Some(step.clone()),
            _ => None,
        })
        .collect();
    eprintln!(
        "ten-iteration journal: {} lines, {} bytes, {} model answers ({steps:?})",
        lines.len() - 1,
        text.len(),
        steps.len()
    );

    let mut group = c.benchmark_group("resume");
    group.sample_size(10);
    let resumed = fixture.dir.path().join("resumed");
    group.bench_function("10_iterations", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let _ = std::fs::remove_dir_all(&resumed);
                copy_dir(&ten, &resumed);
                let start = Instant::now();
                let file = journal::read(&resumed).unwrap();
                let mut options = fixture.options(&resumed, 10);
                options.out_dir.clone_from(&resumed);
                let client = Fixture::client(&server, &resumed);
                let result = rt
                    .block_on(resume(&options, &client, &file, &|_| {}))
                    .unwrap();
                total += start.elapsed();
                assert_eq!(result.attempts, 10);
            }
            total
        });
    });
    group.finish();
    assert_eq!(
        server.requests().len(),
        asked,
        "resume asked the model nothing"
    );
}

criterion_group!(benches, bench_journal);
criterion_main!(benches);

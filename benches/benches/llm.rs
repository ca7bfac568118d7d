//! autocoder-llm: the client's own cost per call, apart from the model: getting JSON out of a
//! fenced answer, building a strict schema, and a whole chat round trip against the scripted
//! server on 127.0.0.1.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use autocoder_llm::{
    CallParams, LlmClient, LlmConfig, Message, ModelSpec, extract_json, strict_schema_for,
};
use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Generated {
    plan: Vec<String>,
    code: String,
    tests: String,
    packages: Vec<String>,
    note: Option<String>,
}

/// A typical code answer: ~20 KB of Python inside a fenced JSON block, with backticks in it.
fn fenced_answer() -> String {
    let line = "    total += float(row['price']) * int(row['quantity'])  # see ```docs```\n";
    let code = line.repeat(260);
    let value = serde_json::json!({"plan": ["read", "sum"], "code": code, "tests": "def test(): pass",
                                   "packages": ["pandas"], "note": null});
    format!("Here is the script:\n```json\n{value}\n```\nLet me know if you need changes.")
}

fn bench(c: &mut Criterion) {
    let answer = fenced_answer();
    let mut group = c.benchmark_group("llm");
    group.throughput(Throughput::Bytes(answer.len() as u64));
    group.bench_function("extract_json_fenced_20kb", |b| {
        b.iter(|| extract_json(black_box(&answer)).unwrap());
    });
    group.finish();

    c.bench_function("llm/strict_schema_for", |b| {
        b.iter(strict_schema_for::<Generated>);
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(async {
        ScriptedServer::start(Script::new(Vec::<Entry>::new()))
            .await
            .unwrap()
    });
    let mut config = LlmConfig::new(ModelSpec::parse("openai/bench-model").unwrap());
    config.api_base = Some(server.base_url());
    let client = LlmClient::new_with_env(config, |_| None).unwrap();
    let messages = [
        Message::system("You write Python."),
        Message::user("Sum the sales."),
    ];
    c.bench_function("llm/chat_round_trip_scripted_server", |b| {
        b.iter(|| {
            server.push(Entry::any(Reply::Text("print(1)".into())));
            runtime
                .block_on(client.chat("bench", &messages, &CallParams::default()))
                .unwrap()
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! `autocoder generate --agent` as a user runs it, then `autocoder run` on its result: the
//! binary against the scripted LLM server, with the real sandbox.

use std::path::Path;

use autocoder_testkit::{Entry, Script, ScriptedServer};
use serde_json::{Value, json};

use crate::scripted::{SALES_SCRIPT, SALES_TESTS, autocoder_in};

/// The model's answer calling `tool` with `arguments` (native tool calls).
pub(crate) fn call(tool: &str, arguments: Value) -> Entry {
    Entry::tool_call("agent", tool, arguments)
}

fn autocoder(dir: &Path, args: &[&str]) -> std::process::Output {
    autocoder_in(dir, args, &[])
}

#[tokio::test(flavor = "multi_thread")]
async fn generate_with_the_agent_then_run_the_result() {
    let server = ScriptedServer::start(Script::new([
        call(
            "write_file",
            json!({"path": "solution.py", "text": SALES_SCRIPT}),
        ),
        call(
            "write_file",
            json!({"path": "test_solution.py", "text": SALES_TESTS}),
        ),
        call("shell", json!({"command": "ls samples | sort"})),
        call("run_tests", json!({})),
        call("finish", json!({"summary": "total revenue"})),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sales.csv"),
        "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("more.csv"),
        "region,qty,price\neast,10,1.5\nwest,1,100\n",
    )
    .unwrap();
    let base = server.base_url();
    let workdir = dir.path().to_owned();
    let generated = tokio::task::spawn_blocking(move || {
        autocoder(
            &workdir,
            &[
                "generate",
                "--agent",
                "--tool-protocol",
                "native",
                "--max-turns",
                "10",
                "--prompt",
                "Total revenue of the rows with qty >= min_qty.",
                "--sample",
                "sales=sales.csv",
                "--input",
                "min_qty:int",
                "--output",
                "total:float",
                "--model",
                "openai/scripted",
                "--api-base",
                &base,
                "--api-key-env",
                "SCRIPTED_KEY",
                "--out",
                "run",
                "--json",
            ],
        )
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&generated.stderr);
    assert!(generated.status.success(), "{stderr}");
    let result: Value =
        serde_json::from_slice(&generated.stdout).expect("--json prints only the result");
    assert_eq!(result["success"], true, "{result:#}");
    assert_eq!(result["tool_calls"]["protocol"], "native");
    assert_eq!(result["tool_calls"]["counts"]["write_file"], 2);
    assert_eq!(result["tool_calls"]["turns"], 5);
    assert!(dir.path().join("run/solution.py").exists());
    assert!(dir.path().join("run/work/samples/sales.csv").exists());

    let workdir = dir.path().to_owned();
    let ran = tokio::task::spawn_blocking(move || {
        autocoder(
            &workdir,
            &[
                "run",
                "run",
                "--json",
                "--",
                "--sales",
                "more.csv",
                "--min_qty",
                "5",
            ],
        )
    })
    .await
    .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let outputs: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(outputs, json!({"total": 15.0}));
}

#[test]
fn agent_flags_need_agent_mode() {
    let dir = tempfile::tempdir().unwrap();
    let out = autocoder(
        dir.path(),
        &[
            "generate",
            "--prompt",
            "x",
            "--model",
            "openai/x",
            "--max-turns",
            "3",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--agent"), "{stderr}");
}

#[test]
fn units_queries_no_plan_and_sample_fixes_are_the_pipelines_and_refused_with_agent_mode() {
    let dir = tempfile::tempdir().unwrap();
    for (command, flag) in [
        ("generate", "--units"),
        ("eval", "--units"),
        ("generate", "--queries"),
        ("eval", "--no-queries"),
        ("generate", "--no-plan"),
        ("eval", "--no-plan"),
        ("eval", "--skip-tests"),
        ("generate", "--sample-fixes"),
        ("eval", "--sample-fixes"),
    ] {
        let mut args = vec![command, "--agent", flag, "--model", "openai/x"];
        if flag == "--sample-fixes" {
            args.insert(3, "2");
        }
        if command == "generate" {
            args.extend(["--prompt", "x"]);
        } else {
            args.push(".");
        }
        let out = autocoder(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{command} {flag}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(flag) && stderr.contains("--agent"),
            "{command} {flag}: {stderr}"
        );
    }
}

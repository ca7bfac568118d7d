//! `autocoder schema FILE --constraint TEXT...`: rules applied as checks, unapplied ones with the
//! reason, violations over the whole file, as text and as JSON.

use crate::{autocoder_with_stdin, stdout_of};

const DATA: &str = "order_id,quantity,status,email\n1,5,pending,a@b.io\n2,0,shipped,x\n2,7,lost,\n";

fn write_data() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orders.csv");
    std::fs::write(&path, DATA).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
}

#[test]
fn text_report_lists_applied_unapplied_and_violations() {
    let (_dir, path) = write_data();
    let out = stdout_of(&[
        "schema",
        &path,
        "--constraint",
        "quantity must be positive",
        "--constraint",
        "Order IDs are unique",
        "--constraint",
        "quantity must be reasonable",
    ]);
    assert!(out.contains("pa.Check.gt(0)"), "{out}");
    assert!(out.contains("# Rules applied (2)"), "{out}");
    assert!(
        out.contains("\"quantity must be positive\" -> quantity > 0 (`gt`, by the parser)"),
        "{out}"
    );
    assert!(out.contains("# Rules not applied (1)"), "{out}");
    assert!(out.contains("none is invented"), "{out}");
    assert!(
        out.contains("quantity > 0: 1 of 3 rows (first: row 2 = \"0\")"),
        "{out}"
    );
    assert!(out.contains("order_id is unique: 2 of 3 rows"), "{out}");
}

#[test]
fn json_report_is_one_document() {
    let (_dir, path) = write_data();
    let out = stdout_of(&[
        "schema",
        &path,
        "--format",
        "json",
        "--constraint",
        "status is one of pending, shipped, delivered",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["rules"][0]["outcome"], "applied");
    assert_eq!(json["violations"][0]["violations"], 1);
    assert_eq!(json["violations"][0]["examples"][0]["row"], 3);
    assert_eq!(json["violations"][0]["examples"][0]["value"], "lost");
    assert!(json["pandera"].as_str().unwrap().contains("pa.Check.isin"));
}

#[test]
fn rules_over_stdin_are_refused_with_a_reason() {
    let out = autocoder_with_stdin(
        &["schema", "-", "--constraint", "quantity > 0"],
        Some(DATA.as_bytes()),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("standard input"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_model_the_rules_the_parser_cannot_read_go_to_it_and_are_validated() {
    use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
    // The model answers the first rule with a valid check and the second with a column that
    // doesn't exist twice (the retry quotes the reason): that rule stays unapplied.
    let server = ScriptedServer::start(Script::new([
        Entry::step(
            "constraint",
            Reply::Json(
                serde_json::json!({"applicable": true, "reason": null, "columns": ["status"],
                "check": "isin", "value": null, "min": null, "max": null, "include_min": null,
                "include_max": null, "values": ["pending", "shipped"], "pattern": null}),
            ),
        ),
        Entry::step(
            "constraint",
            Reply::Json(
                serde_json::json!({"applicable": true, "reason": null, "columns": ["weight"],
                "check": "gt", "value": "0", "min": null, "max": null, "include_min": null,
                "include_max": null, "values": null, "pattern": null}),
            ),
        ),
        Entry::any(Reply::Json(
            serde_json::json!({"applicable": true, "reason": null, "columns": ["weight"],
                "check": "gt", "value": "0", "min": null, "max": null, "include_min": null,
                "include_max": null, "values": null, "pattern": null}),
        )),
    ]))
    .await
    .unwrap();
    let (_dir, path) = write_data();
    let base = server.base_url();
    let out = tokio::task::spawn_blocking(move || {
        crate::autocoder_with_env(
            &[
                "schema",
                &path,
                "--format",
                "json",
                "--constraint",
                "only orders that are still moving through the warehouse count",
                "--constraint",
                "the parcel weight must be above nothing",
                "--model",
                "openai/scripted",
                "--api-base",
                &base,
                "--api-key-env",
                "SCRIPTED_KEY",
            ],
            &[("SCRIPTED_KEY", "sk-scripted")],
        )
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules = report["rules"].as_array().unwrap();
    assert_eq!(rules[0]["outcome"], "applied", "{report:#}");
    assert_eq!(rules[0]["source"], "llm");
    assert_eq!(rules[1]["outcome"], "unapplied", "{report:#}");
    assert!(
        rules[1]["reason"].as_str().unwrap().contains("weight"),
        "{report:#}"
    );
    // The status check was evaluated over the file: "lost" violates it.
    assert_eq!(report["violations"][0]["violations"], 1, "{report:#}");
}

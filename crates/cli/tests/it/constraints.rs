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

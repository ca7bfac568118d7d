//! The report `autocoder schema --constraint` prints, as text and as JSON.

use autocoder_constraints::{Outcome, Report, report_for_file};

use crate::pandera::{clean_rows, inject, orders_table, write_csv};

fn sample_report() -> Report {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("orders.csv");
    let mut rows = clean_rows(40);
    inject(&mut rows);
    write_csv(&data, &rows);
    let rules: Vec<String> = [
        "quantity must be between 1 and 100",
        "status is one of pending, shipped, delivered",
        "order IDs are unique",
        "customer_email must look like an email",
        "unit price must be reasonable",
        "quantity must be at least",
        "orders ship within two days of being placed",
    ]
    .iter()
    .map(|r| (*r).to_owned())
    .collect();
    report_for_file(&data, orders_table(), &rules).unwrap()
}

#[test]
fn text_report_shows_schema_rules_and_violations() {
    let report = sample_report();
    assert_eq!(report.rules.len(), 7, "no rule is dropped");
    assert_eq!(report.violations.len(), 4, "one result per applied rule");
    insta::assert_snapshot!(report.to_text());
}

#[test]
fn json_report_round_trips() {
    let report = sample_report();
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["rules"][0]["outcome"], "applied");
    assert_eq!(json["rules"][0]["constraint"]["check"]["check"], "in_range");
    assert_eq!(json["rules"][4]["outcome"], "unapplied");
    assert_eq!(json["violations"][0]["violations"], 2);
    let back: Report = serde_json::from_value(json).unwrap();
    assert_eq!(back, report);
    assert!(matches!(back.rules[6], Outcome::Unapplied { .. }));
}

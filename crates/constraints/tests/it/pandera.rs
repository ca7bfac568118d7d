//! The emitted Pandera module, run by real pandas and pandera, agrees with our evaluator: it
//! passes on clean data, and on data with injected violations it reports the same number of
//! failing rows per check as `evaluate_path`.
#![allow(clippy::disallowed_methods)] // the test runs the real Python interpreter

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use autocoder_constraints::{
    CheckResult, Constraint, Outcome, apply_outcomes, evaluate_path, parse_rules,
    schema_constraints,
};
use autocoder_schema::{Check, ColumnSchema, DataType, TableSchema, render_pandera};

pub(crate) fn python() -> PathBuf {
    PathBuf::from(std::env::var_os("AUTOCODER_TEST_PYTHON").expect(
        "AUTOCODER_TEST_PYTHON must name a Python with pandas and pandera: run scripts/test",
    ))
}

pub(crate) const RULES: &[&str] = &[
    "order_id must be positive",
    "order_id is unique",
    "the combination of order_id and line is unique",
    "customer_email must look like an email",
    "customer_email is required",
    "quantity must be between 1 and 100",
    "quantity must not equal 13",
    "unit price must not exceed 10000",
    "unit price must be greater than 0",
    "status is one of pending, shipped, delivered",
    "status must not be one of lost, stolen",
    "order_date must be on or after 2024-01-01",
    "zip must be exactly 5 characters",
    "zip must match /^[0-9]+$/",
    "sku must start with 'SKU-'",
    "sku must contain '-'",
    "website must end with '.com'",
    "notes must be at most 20 characters",
    "tracking_id must be a UUID",
    "is_gift must be false",
    "ship date must be on or after 2024-01-01",
    "paid_at must be before 2025-01-01T00:00:00",
];

pub(crate) fn orders_table() -> TableSchema {
    let mut table = TableSchema::new("orders");
    for (name, dtype) in [
        ("order_id", DataType::Integer),
        ("line", DataType::Integer),
        ("customer_email", DataType::String),
        ("quantity", DataType::Integer),
        ("unit_price", DataType::Float),
        ("status", DataType::String),
        ("order_date", DataType::Date),
        ("zip", DataType::String),
        ("sku", DataType::String),
        ("website", DataType::String),
        ("notes", DataType::String),
        ("tracking_id", DataType::String),
        ("is_gift", DataType::Boolean),
        ("ship_date", DataType::Date),
        ("paid_at", DataType::Datetime),
    ] {
        let mut column = ColumnSchema::new(name, dtype);
        column.nullable = true;
        match name {
            "order_date" => column.datetime_format = Some("%Y-%m-%d".to_owned()),
            "ship_date" => column.datetime_format = Some("%d/%m/%Y".to_owned()),
            "paid_at" => {
                column.datetime_format = Some("ISO8601".to_owned());
                column.utc = true;
            }
            _ => {}
        }
        table.columns.push(column);
    }
    table
}

/// The table with every rule applied; panics if any rule stays unapplied.
pub(crate) fn constrained() -> (TableSchema, Vec<Outcome>) {
    let mut table = orders_table();
    let rules: Vec<String> = RULES.iter().map(|r| (*r).to_owned()).collect();
    let mut outcomes = parse_rules(&rules, &table);
    apply_outcomes(&mut outcomes, &mut table);
    for outcome in &outcomes {
        assert!(matches!(outcome, Outcome::Applied { .. }), "{outcome}");
    }
    (table, outcomes)
}

const HEADER: &str = "order_id,line,customer_email,quantity,unit_price,status,order_date,zip,sku,website,notes,tracking_id,is_gift,ship_date,paid_at";

/// `rows` clean rows; row `i` (1-based) has `order_id` `i`.
pub(crate) fn clean_rows(rows: usize) -> Vec<Vec<String>> {
    let statuses = ["pending", "shipped", "delivered"];
    (1..=rows)
        .map(|i| {
            vec![
                i.to_string(),
                (i % 3 + 1).to_string(),
                format!("user{i}@example.com"),
                (i % 90 + 1).to_string().replace("13", "14"),
                format!("{}.5", i % 900 + 1),
                statuses[i % 3].to_owned(),
                format!("2024-{:02}-{:02}", i % 12 + 1, i % 28 + 1),
                format!("{:05}", i * 7 % 100_000),
                format!("SKU-{i:04}"),
                format!("https://shop{i}.com"),
                if i % 4 == 0 {
                    String::new()
                } else {
                    format!("note {i}")
                },
                format!("123e4567-e89b-12d3-a456-{i:012}"),
                "false".to_owned(),
                format!("{}/{}/2024", i % 28 + 1, i % 12 + 1),
                format!(
                    "2024-{:02}-{:02}T{:02}:30:00+02:00",
                    i % 12 + 1,
                    i % 28 + 1,
                    i % 24
                ),
            ]
        })
        .collect()
}

pub(crate) fn write_csv(path: &Path, rows: &[Vec<String>]) {
    let mut text = format!("{HEADER}\n");
    for row in rows {
        let _ = writeln!(text, "{}", row.join(","));
    }
    std::fs::write(path, text).unwrap();
}

/// Violations injected into clean rows: (row, column index, new text).
pub(crate) fn inject(rows: &mut [Vec<String>]) {
    let edits: &[(usize, usize, &str)] = &[
        (2, 0, "-2"),             // order_id positive
        (5, 0, "4"),              // order_id unique (rows 4 and 5), and with line maybe
        (5, 1, "2"),              // ... same line as row 4 -> pair duplicated
        (3, 2, "not-an-email"),   // email pattern
        (7, 2, ""),               // email required
        (9, 3, "0"),              // quantity range
        (10, 3, "101"),           // quantity range
        (11, 3, "13"),            // quantity != 13
        (12, 4, "10000.5"),       // price <= 10000
        (13, 4, "0"),             // price > 0
        (14, 5, "lost"),          // isin and notin
        (15, 5, "cancelled"),     // isin
        (16, 6, "2023-12-31"),    // date >= 2024-01-01
        (17, 7, "1234"),          // zip length
        (18, 7, "12a45"),         // zip digits
        (19, 8, "XKU-0019"),      // sku prefix
        (20, 8, "SKU0020"),       // sku prefix and contains '-'
        (21, 9, "https://x.org"), // website suffix
        (22, 10, "a note that is far too long for the limit"),
        (23, 11, "not-a-uuid"),
        (24, 12, "true"),
        (25, 5, ""),                           // missing status: no check fails
        (26, 13, "31/12/2023"),                // ship date before 2024 (day-first format)
        (27, 14, "2024-12-31T23:30:00-02:00"), // 2025-01-01 01:30 in UTC
        (28, 14, "2025-01-01T01:00:00+02:00"), // 2024-12-31 23:00 in UTC: passes
    ];
    for (row, column, text) in edits {
        (*text).clone_into(&mut rows[row - 1][*column]);
    }
}

/// Failing rows per check as pandera reports them: keys are `column#check_number`,
/// `column#not_null`, `column#unique` and `#together`.
fn pandera_counts(table: &TableSchema, data: &Path, dir: &Path) -> BTreeMap<String, u64> {
    let module = dir.join("orders_schema.py");
    std::fs::write(&module, render_pandera(table)).unwrap();
    let script = r##"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("orders_schema", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
import pandera.pandas as pa
frame = mod.read_orders(sys.argv[2])
counts = {}
try:
    mod.ORDERS_SCHEMA.validate(frame, lazy=True)
except pa.errors.SchemaErrors as err:
    rows = {}
    for case in err.failure_cases.to_dict("records"):
        check, column, number = case["check"], case["column"], case["check_number"]
        if check == "multiple_fields_uniqueness":
            key = "#together"
        elif check == "not_nullable":
            key = f"{column}#not_null"
        elif check == "field_uniqueness":
            key = f"{column}#unique"
        elif number is not None and number == number:
            key = f"{column}#{int(number)}"
        else:
            key = f"{column}#{check}"
        rows.setdefault(key, set()).add(case["index"])
    counts = {k: len(v) for k, v in rows.items()}
print(json.dumps(counts))
"##;
    let out = Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(&module)
        .arg(data)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pandera run failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

/// Our results keyed like [`pandera_counts`], zero counts left out.
fn our_counts(table: &TableSchema, results: &[CheckResult]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for result in results.iter().filter(|r| r.violations > 0) {
        let key = match &result.constraint {
            Constraint::UniqueTogether { .. } => "#together".to_owned(),
            Constraint::Column {
                column,
                check: Check::NotNull,
            } => format!("{column}#not_null"),
            Constraint::Column {
                column,
                check: Check::Unique,
            } => format!("{column}#unique"),
            Constraint::Column { column, check } => {
                let position = table
                    .column(column)
                    .and_then(|c| c.checks.iter().position(|k| k == check))
                    .unwrap();
                format!("{column}#{position}")
            }
        };
        counts.insert(key, result.violations);
    }
    counts
}

#[test]
fn clean_data_passes_pandera_and_our_evaluator() {
    let (table, _) = constrained();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("orders.csv");
    write_csv(&data, &clean_rows(60));
    let results = evaluate_path(&data, &table, &schema_constraints(&table)).unwrap();
    for result in &results {
        assert_eq!(result.violations, 0, "{result:?}");
        assert_eq!(result.unreadable, 0, "{result:?}");
        assert_eq!(result.rows, 60);
    }
    assert_eq!(pandera_counts(&table, &data, dir.path()), BTreeMap::new());
}

#[test]
fn injected_violations_are_counted_alike_by_pandera_and_our_evaluator() {
    let (table, _) = constrained();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("orders.csv");
    let mut rows = clean_rows(60);
    inject(&mut rows);
    write_csv(&data, &rows);
    let results = evaluate_path(&data, &table, &schema_constraints(&table)).unwrap();
    let ours = our_counts(&table, &results);
    let theirs = pandera_counts(&table, &data, dir.path());
    assert_eq!(ours, theirs);
    // Every injected kind of violation was seen (the comparison is not vacuous).
    assert!(ours.len() >= 20, "{ours:?}");
    let status = results
        .iter()
        .find(|r| r.description.starts_with("status in"))
        .unwrap();
    assert_eq!(status.violations, 2);
    assert_eq!(
        status
            .examples
            .iter()
            .map(|v| (v.row, v.value.as_str()))
            .collect::<Vec<_>>(),
        [(14, "lost"), (15, "cancelled")]
    );
}

#[test]
fn chunked_parallel_evaluation_equals_one_sequential_pass() {
    let (table, _) = constrained();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("orders.csv");
    let mut rows = clean_rows(3000);
    inject(&mut rows);
    // Violations and duplicates spread over many chunks.
    for i in (100..3000).step_by(97) {
        rows[i][0] = rows[i - 50][0].clone(); // duplicate order_id, far apart
        rows[i][3] = "0".to_owned();
    }
    write_csv(&data, &rows);
    let constraints = schema_constraints(&table);
    let chunked = autocoder_constraints::evaluate_path_with(
        &data,
        &table,
        &constraints,
        autocoder_constraints::EvalOptions {
            threads: 2,
            chunk_bytes: 4096,
        },
    )
    .unwrap();
    let header: Vec<String> = HEADER.split(',').map(str::to_owned).collect();
    let mut sequential =
        autocoder_constraints::Evaluator::new(&table, &constraints, &header).unwrap();
    for (i, row) in rows.iter().enumerate() {
        sequential.push(i as u64 + 1, row);
    }
    let sequential = sequential.finish();
    assert_eq!(chunked, sequential);
    let unique = chunked
        .iter()
        .find(|r| r.description == "order_id is unique")
        .unwrap();
    assert_eq!(unique.violations, 2 + 2 * 30, "{unique:?}");
    assert_eq!(unique.examples[0].row, 4);
}

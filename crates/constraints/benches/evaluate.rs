//! Evaluating constraints over a whole file, next to profiling the same file: the two should be
//! in the same speed class (one streaming parallel pass each).
//!
//! `cargo bench -p autocoder-constraints` (set `AUTOCODER_BENCH_ROWS`, default 500 000 rows,
//! about 60 MB); under `cargo test` it runs once on a small file.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::fmt::Write as _;
use std::hint::black_box;

use autocoder_constraints::{evaluate_path, parse_rules, schema_constraints};
use autocoder_profile::{ProfileOptions, profile_path};
use autocoder_schema::{ColumnSchema, DataType, TableSchema};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const RULES: &[&str] = &[
    "order_id is unique",
    "quantity must be between 1 and 100",
    "unit price must be greater than 0",
    "status is one of pending, shipped, delivered",
    "customer_email must look like an email",
    "zip must be exactly 5 characters",
    "sku must match /^SKU-[0-9]+$/",
    "order_date must be on or after 2024-01-01",
];

fn table() -> TableSchema {
    let mut table = TableSchema::new("orders");
    for (name, dtype) in [
        ("order_id", DataType::Integer),
        ("customer_email", DataType::String),
        ("quantity", DataType::Integer),
        ("unit_price", DataType::Float),
        ("status", DataType::String),
        ("order_date", DataType::Date),
        ("zip", DataType::String),
        ("sku", DataType::String),
    ] {
        let mut column = ColumnSchema::new(name, dtype);
        column.nullable = true;
        table.columns.push(column);
    }
    table
}

fn data(rows: usize) -> String {
    let mut text =
        String::from("order_id,customer_email,quantity,unit_price,status,order_date,zip,sku\n");
    let statuses = ["pending", "shipped", "delivered", "lost"];
    for i in 0..rows {
        let _ = writeln!(
            text,
            "{i},user{}@example.com,{},{}.{:02},{},2024-{:02}-{:02},{:05},SKU-{}",
            i % 5000,
            i % 120,
            i % 700,
            i % 100,
            statuses[i % 4],
            i % 12 + 1,
            i % 28 + 1,
            i % 100_000,
            i % 9999
        );
    }
    text
}

fn bench(c: &mut Criterion) {
    let benching = std::env::args().any(|a| a == "--bench");
    let rows = if benching {
        std::env::var("AUTOCODER_BENCH_ROWS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(500_000)
    } else {
        2_000
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orders.csv");
    let text = data(rows);
    std::fs::write(&path, &text).unwrap();
    let mut table = table();
    let rules: Vec<String> = RULES.iter().map(|r| (*r).to_owned()).collect();
    let mut outcomes = parse_rules(&rules, &table);
    autocoder_constraints::apply_outcomes(&mut outcomes, &mut table);
    let constraints = schema_constraints(&table);
    assert_eq!(constraints.len(), RULES.len());

    let mut group = c.benchmark_group("whole_file");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("evaluate_8_checks", |b| {
        b.iter(|| black_box(evaluate_path(&path, &table, &constraints).unwrap()));
    });
    group.bench_function("profile", |b| {
        b.iter(|| black_box(profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap()));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

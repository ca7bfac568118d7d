//! Runs the Python we emit with real pandas and pandera (the interpreter named by
//! `AUTOCODER_TEST_PYTHON`, which `scripts/test` sets up).
#![allow(clippy::disallowed_methods)] // tests run the real Python interpreter
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use std::path::PathBuf;
use std::process::Command;

use autocoder_schema::{
    Check, ColumnSchema, DataType, Pattern, Scalar, TableSchema, python_str, render_pandera,
};

fn python() -> PathBuf {
    let path = std::env::var_os("AUTOCODER_TEST_PYTHON").expect(
        "AUTOCODER_TEST_PYTHON must name a Python with pandas and pandera: run scripts/test",
    );
    PathBuf::from(path)
}

/// Runs `code` with the test Python and returns (success, stdout + stderr).
fn run_python(code: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(python())
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .expect("the test Python runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn orders() -> TableSchema {
    let mut t = TableSchema::new("orders");
    let mut id = ColumnSchema::new("order_id", DataType::Integer);
    id.unique = true;
    id.checks.push(Check::Gt {
        value: Scalar::Int(0),
    });
    let mut qty = ColumnSchema::new("qty", DataType::Integer);
    qty.nullable = true;
    let mut zip = ColumnSchema::new("zip", DataType::String);
    zip.checks.push(Check::StrMatches {
        pattern: r"^[0-9]{5}$".into(),
    });
    let mut email = ColumnSchema::new("email", DataType::String);
    email.nullable = true;
    email.checks.push(Check::Pattern {
        pattern: Pattern::Email,
    });
    let mut day = ColumnSchema::new("day", DataType::Date);
    day.datetime_format = Some("%Y-%m-%d".into());
    day.checks.push(Check::Ge {
        value: Scalar::Str("2024-01-01".into()),
    });
    let mut at = ColumnSchema::new("at", DataType::Datetime);
    at.utc = true;
    let mut paid = ColumnSchema::new("paid", DataType::Boolean);
    paid.nullable = true;
    let mut status = ColumnSchema::new("status", DataType::String);
    status.checks.push(Check::Isin {
        values: vec![Scalar::Str("new".into()), Scalar::Str("done".into())],
    });
    let mut meta = ColumnSchema::new("meta", DataType::String);
    meta.nullable = true;
    meta.checks.push(Check::Pattern {
        pattern: Pattern::Json,
    });
    let mut price = ColumnSchema::new("price", DataType::Float);
    price.nullable = true;
    price.checks.push(Check::InRange {
        min: Scalar::Int(0),
        max: Scalar::Int(100),
        include_min: true,
        include_max: true,
    });
    let mut empty = ColumnSchema::new("notes", DataType::Empty);
    empty.nullable = true;
    t.columns = vec![
        id, qty, zip, email, day, at, paid, status, meta, price, empty,
    ];
    t.unique_together = vec![vec!["zip".into(), "day".into()]];
    t
}

const GOOD: &str = "\
order_id,qty,zip,email,day,at,paid,status,meta,price,notes
1,5,02134,a@b.io,2024-01-02,2024-01-02T10:00:00Z,True,new,\"{\"\"k\"\": 1}\",1.5,
2,NA,10001,,2024-01-03,2024-01-03T10:00:00+02:00,,done,,NaN,
3,7,90210,c@d.org,2024-02-01,2024-02-01 09:00:00Z,false,new,[1],100,
";

fn validate(table: &TableSchema, csv: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("schema.py");
    let data = dir.path().join("orders.csv");
    std::fs::write(&module, render_pandera(table)).unwrap();
    std::fs::write(&data, csv).unwrap();
    let out = Command::new(python())
        .arg(&module)
        .arg(&data)
        .output()
        .expect("the test Python runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn emitted_module_validates_a_clean_file() {
    let (ok, out) = validate(&orders(), GOOD);
    assert!(ok, "{out}");
    assert!(out.contains("valid: 3 rows"), "{out}");
}

#[test]
fn emitted_module_rejects_each_kind_of_violation() {
    let cases = [
        ("order_id", GOOD.replace("\n2,NA", "\n-2,NA")),
        ("order_id", GOOD.replace("\n3,7", "\n1,7")),
        ("zip", GOOD.replace("02134", "2134")),
        ("email", GOOD.replace("a@b.io", "not-an-email")),
        ("day", GOOD.replace("2024-01-02,", "2023-12-31,")),
        ("status", GOOD.replace(",done,", ",lost,")),
        ("meta", GOOD.replace("[1]", "[1")),
        ("price", GOOD.replace(",100,", ",100.5,")),
        (
            "zip",
            GOOD.replace("90210,c@d.org,2024-02-01", "02134,c@d.org,2024-01-02"),
        ),
    ];
    for (column, csv) in cases {
        let (ok, out) = validate(&orders(), &csv);
        assert!(!ok, "a violation in `{column}` passed:\n{csv}");
        assert!(out.contains("SchemaError"), "{out}");
        assert!(out.contains(column), "expected `{column}` in:\n{out}");
    }
}

#[test]
fn python_regexes_agree_with_rust_on_a_corpus() {
    let corpus = [
        "a.b+c@example.co.uk",
        "a@b",
        "https://x.org/a?b=1",
        "x.org",
        "ftp://h/f",
        "123e4567-e89b-12d3-a456-426614174000",
        "192.168.0.1",
        "256.1.1.1",
        "2001:db8::1",
        "::1",
        "2001:db8:::1",
        "+1 (555) 123-4567",
        "02134",
        "5551234567",
        "2024-02-29",
        "2024-13-01",
        "2024-01-31T12:30:00.123Z",
        "2024-01-31 12:30",
        "$1,234.56",
        "12.50 €",
        "($3.00)",
        "$1,23",
        "12.5%",
        "-42",
        "3.14",
        "-0.5e3",
        "1e9",
        "yes",
        "No",
        "off",
        "maybe",
        "0x1F",
        "deadbeef00",
        "abc",
        "12\n",
        "",
        " ",
        "ÄÖÜ@x.de",
        "١٢٣",
    ];
    let patterns: Vec<&Pattern> = Pattern::ALL
        .iter()
        .filter(|p| p.python_regex().is_some())
        .collect();
    let mut code = String::from("import re, sys\nrows = []\n");
    code.push_str("pats = [");
    for p in &patterns {
        code.push_str(&python_str(&p.python_regex().unwrap()));
        code.push(',');
    }
    code.push_str("]\nvals = [");
    for v in corpus {
        code.push_str(&python_str(v));
        code.push(',');
    }
    code.push_str(
        "]\nfor p in pats:\n    print(''.join('1' if re.match(p, v) else '0' for v in vals))\n",
    );
    let (ok, out) = run_python(&code, &[]);
    assert!(ok, "{out}");
    for (line, p) in out.lines().zip(&patterns) {
        let rust: String = corpus
            .iter()
            .map(|v| if p.matches(v) { '1' } else { '0' })
            .collect();
        assert_eq!(line, rust, "Python and Rust disagree on {p:?}");
    }
    assert_eq!(out.lines().count(), patterns.len());
}

//! Parquet, Arrow IPC, JSON Lines, JSON arrays and Excel files written by real writers (pyarrow,
//! pandas `to_json`, openpyxl through pandas) with nulls, nested columns and odd types
//! (timestamps with a zone, decimals, booleans, dates): the profile's types and null counts,
//! statistics equal to pandas' on the frame the Pandera module reads (and validates), and clear
//! errors for truncated or corrupt files.
#![allow(clippy::disallowed_methods)] // the test runs the real Python interpreter

use std::path::{Path, PathBuf};
use std::process::Command;

use autocoder_profile::{FileFormat, Profile, ProfileOptions, profile_path};
use autocoder_schema::{DataType, Scalar};

use crate::pandas::{close, pandas_facts, python, quantile};

/// Writes the test files with pyarrow, pandas and openpyxl into `sys.argv[1]`.
const WRITE: &str = r#"
import datetime as dt, decimal, sys, os
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.feather as feather
import pandas as pd
out = sys.argv[1]
n = 500
utc = dt.timezone.utc
def pick(i, values):
    return values[(i * 7919) % len(values)]
ids = list(range(1, n + 1))
qty = [None if i % 9 == 0 else (i * 37) % 200 - 50 for i in ids]
price = [float("nan") if i % 13 == 0 else None if i % 17 == 0 else ((i * 7) % 1000) / 8 for i in ids]
ok = [None if i % 10 == 0 else i % 3 == 0 for i in ids]
zip_ = [None if i % 25 == 0 else pick(i, ["02134", "NA", "10001", "n/a", "99999"]) for i in ids]
day = [dt.date(2020, 1, 1) + dt.timedelta(days=(i * 11) % 900) for i in ids]
at = [None if i % 20 == 0 else dt.datetime(2024, 3, 1, tzinfo=utc) + dt.timedelta(seconds=i * 3607) for i in ids]
amount = [None if i % 15 == 0 else decimal.Decimal(i * 31 % 10000) / 100 for i in ids]
user = [None if i % 50 == 0 else {"name": pick(i, ["ann", "bo", "cy"]), "age": None if i % 7 == 0 else 20 + i % 40} for i in ids]
tags = [None if i % 40 == 0 else list(range(i % 4)) for i in ids]
table = pa.table({
    "id": pa.array(ids, pa.int64()),
    "qty": pa.array(qty, pa.int32()),
    "price": pa.array(price, pa.float64()),
    "ok": pa.array(ok, pa.bool_()),
    "zip": pa.array(zip_, pa.string()),
    "day": pa.array(day, pa.date32()),
    "at": pa.array(at, pa.timestamp("us", tz="UTC")),
    "amount": pa.array(amount, pa.decimal128(9, 2)),
    "user": pa.array(user, pa.struct([("name", pa.string()), ("age", pa.int64())])),
    "tags": pa.array(tags, pa.list_(pa.int64())),
})
for codec in ["snappy", "zstd", "gzip", "lz4"]:
    pq.write_table(table, os.path.join(out, f"data_{codec}.parquet"), compression=codec, row_group_size=64)
feather.write_feather(table, os.path.join(out, "data.feather"))
with pa.OSFile(os.path.join(out, "data.arrows"), "wb") as sink:
    with pa.ipc.new_stream(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=100):
            writer.write_batch(batch)
flat = table.drop_columns(["user", "tags", "amount"]).to_pandas()
flat["user"] = [u for u in user]
flat["tags"] = tags
flat.to_json(os.path.join(out, "data.jsonl"), orient="records", lines=True, date_format="iso")
flat.to_json(os.path.join(out, "data.json"), orient="records", date_format="iso", indent=1)
excel = table.drop_columns(["user", "tags", "amount"]).to_pandas()
excel["at"] = excel["at"].dt.tz_localize(None)
with pd.ExcelWriter(os.path.join(out, "data.xlsx"), engine="openpyxl") as w:
    excel.to_excel(w, sheet_name="orders", index=False)
    pd.DataFrame({"a": [1, 2], "b": ["x", None]}).to_excel(w, sheet_name="second", index=False)
"#;

fn write_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(python())
        .arg("-c")
        .arg(WRITE)
        .arg(dir.path())
        .output()
        .expect("the test Python runs");
    assert!(
        out.status.success(),
        "writing the test files failed (pyarrow and openpyxl are in scripts/requirements-test.txt):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

fn profile(path: &Path) -> Profile {
    let options = ProfileOptions {
        threads: 2,
        ..ProfileOptions::default()
    };
    profile_path(path, &options, &|_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn column<'a>(p: &'a Profile, name: &str) -> &'a autocoder_profile::ColumnProfile {
    p.columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", names(p)))
}

fn names(p: &Profile) -> Vec<&str> {
    p.columns.iter().map(|c| c.name.as_str()).collect()
}

/// Null counts, means, standard deviations, quartiles and extremes agree with pandas on the
/// frame the profile's own Pandera module reads (which must validate).
fn agrees_with_pandas(path: &Path, p: &Profile, dir: &tempfile::TempDir) {
    let facts = pandas_facts(path, p, dir);
    for (i, c) in p.columns.iter().enumerate() {
        if c.note.is_some() {
            continue; // a list, profiled by its length: pandas holds the lists themselves
        }
        let f = &facts[c.name.as_str()];
        assert_eq!(f["rows"].as_u64(), Some(p.rows), "{}", c.name);
        assert_eq!(f["nulls"].as_u64(), Some(c.nulls), "{}: nulls", c.name);
        let Some(n) = &c.numeric else { continue };
        for (stat, ours) in [
            ("mean", n.mean),
            ("std", n.std.unwrap()),
            ("25%", quantile(p, i, 0.25)),
            ("50%", quantile(p, i, 0.5)),
            ("75%", quantile(p, i, 0.75)),
        ] {
            let theirs = f[stat].as_f64().unwrap();
            assert!(
                close(ours, theirs),
                "{} {}.{stat}: ours {ours}, pandas {theirs}",
                path.display(),
                c.name
            );
        }
        let as_f64 = |s: &Option<Scalar>| s.as_ref().and_then(Scalar::as_f64).unwrap();
        assert!(
            close(as_f64(&c.min), f["min"].as_f64().unwrap()),
            "{}",
            c.name
        );
        assert!(
            close(as_f64(&c.max), f["max"].as_f64().unwrap()),
            "{}",
            c.name
        );
    }
}

#[test]
fn parquet_and_arrow_files_profile_like_pandas_reads_them() {
    use DataType::{Boolean, Date, Datetime, Float, Integer, String};
    let dir = write_files();
    let base = profile(&dir.path().join("data_snappy.parquet"));
    assert_eq!(base.format, FileFormat::Parquet);
    assert_eq!(base.rows, 500);
    assert_eq!(
        names(&base),
        [
            "id",
            "qty",
            "price",
            "ok",
            "zip",
            "day",
            "at",
            "amount",
            "user.name",
            "user.age",
            "tags"
        ]
    );
    let dtypes: Vec<DataType> = base.columns.iter().map(|c| c.dtype).collect();
    assert_eq!(
        dtypes,
        [
            Integer, Integer, Float, Boolean, String, Date, Datetime, Float, String, Integer,
            Integer
        ]
    );
    // Typed strings stay text and only real nulls are missing: "NA" and "n/a" are values.
    let zip = column(&base, "zip");
    assert_eq!(zip.nulls, 20);
    assert!(zip.top_values.iter().any(|v| v.value == "NA"));
    // NaN is missing, as pandas counts it.
    assert_eq!(column(&base, "price").nulls, 38 + 29 - 2);
    assert!(column(&base, "at").utc);
    // A struct's leaf is missing where the struct is.
    assert_eq!(column(&base, "user.name").nulls, 10);
    assert_eq!(column(&base, "user.age").nulls, 10 + 71 - 1);
    let tags = column(&base, "tags");
    assert_eq!(tags.nulls, 12);
    assert_eq!(tags.max, Some(Scalar::Int(3)));
    assert!(
        tags.note.as_deref().unwrap().contains("list of Int64"),
        "{tags:?}"
    );
    assert_eq!(
        column(&base, "amount").source_type.as_deref(),
        Some("Decimal128(9, 2)")
    );
    agrees_with_pandas(&dir.path().join("data_snappy.parquet"), &base, &dir);

    // Every codec and the Arrow files give the same profile; only the source and size differ.
    let same = |other: &Path| {
        let mut p = profile(other);
        p.source.clone_from(&base.source);
        p.bytes = base.bytes;
        p
    };
    for codec in ["zstd", "gzip", "lz4"] {
        let p = same(&dir.path().join(format!("data_{codec}.parquet")));
        assert_eq!(p, base, "{codec}");
    }
    for file in ["data.feather", "data.arrows"] {
        let p = same(&dir.path().join(file));
        assert_eq!(p.format, FileFormat::Arrow, "{file}");
        assert_eq!(p.rows, base.rows, "{file}");
        for (a, b) in p.columns.iter().zip(&base.columns) {
            // Batches cut elsewhere sum in another order: the last digits of moments differ.
            let mean = |c: &autocoder_profile::ColumnProfile| c.numeric.as_ref().map(|n| n.mean);
            assert!(
                (a.name == b.name && a.dtype == b.dtype && a.nulls == b.nulls)
                    && (a.distinct, &a.min, &a.max, &a.top_values)
                        == (b.distinct, &b.min, &b.max, &b.top_values)
                    && mean(a).zip(mean(b)).is_none_or(|(x, y)| close(x, y)),
                "{file}: {a:?}\n{b:?}"
            );
        }
        agrees_with_pandas(&dir.path().join(file), &p, &dir);
    }

    // The same batches handed over in memory (a data frame's) profile as their file does.
    let feather = dir.path().join("data.feather");
    let reader =
        arrow_ipc::reader::FileReader::try_new(std::fs::File::open(&feather).unwrap(), None)
            .unwrap();
    let schema = reader.schema();
    let mut in_memory =
        autocoder_profile::profile_batches(&schema, reader, "frame", &ProfileOptions::default())
            .unwrap();
    assert_eq!((in_memory.source.as_str(), in_memory.bytes), ("frame", 0));
    let from_file = profile(&feather);
    in_memory.source.clone_from(&from_file.source);
    in_memory.bytes = from_file.bytes;
    assert_eq!(in_memory, from_file);
}

#[test]
fn json_lines_and_json_arrays_from_pandas_profile_like_pandas_reads_them() {
    let dir = write_files();
    for (file, format) in [
        ("data.jsonl", FileFormat::Jsonl),
        ("data.json", FileFormat::Json),
    ] {
        let path = dir.path().join(file);
        let p = profile(&path);
        assert_eq!(p.format, format, "{file}");
        assert_eq!(p.rows, 500);
        assert_eq!(
            names(&p),
            [
                "id",
                "qty",
                "price",
                "ok",
                "zip",
                "day",
                "at",
                "user.name",
                "user.age",
                "tags",
                "user"
            ],
            "{file}: keys in file order, nested objects flattened (and `user` where it is null, \
             as json_normalize has it)"
        );
        assert_eq!(column(&p, "id").dtype, DataType::Integer);
        assert_eq!(column(&p, "ok").dtype, DataType::Boolean);
        assert_eq!(
            column(&p, "zip").nulls,
            20,
            "{file}: the text NA is a value"
        );
        assert_eq!(column(&p, "at").dtype, DataType::Datetime);
        assert_eq!(column(&p, "tags").nulls, 12);
        agrees_with_pandas(&path, &p, &dir);
    }
}

#[test]
fn excel_sheets_profile_like_pandas_reads_them() {
    let dir = write_files();
    let path = dir.path().join("data.xlsx");
    let p = profile(&path);
    assert_eq!(p.format, FileFormat::Xlsx);
    assert_eq!(p.rows, 500);
    assert_eq!(names(&p), ["id", "qty", "price", "ok", "zip", "day", "at"]);
    assert_eq!(
        column(&p, "day").dtype,
        DataType::Date,
        "cell dates are dates"
    );
    assert_eq!(column(&p, "at").dtype, DataType::Datetime);
    assert_eq!(column(&p, "qty").dtype, DataType::Integer);
    // read_excel reads "NA" and "n/a" as missing, as read_csv does.
    assert_eq!(column(&p, "zip").nulls, 20 + 200);
    agrees_with_pandas(&path, &p, &dir);

    let options = ProfileOptions {
        sheet: Some("second".into()),
        ..ProfileOptions::default()
    };
    let second = profile_path(&path, &options, &|_, _| {}).unwrap();
    assert_eq!(names(&second), ["a", "b"]);
    assert_eq!(second.rows, 2);
    assert_eq!(second.sheet.as_deref(), Some("second"));
    agrees_with_pandas(&path, &second, &dir);

    let options = ProfileOptions {
        sheet: Some("missing".into()),
        ..ProfileOptions::default()
    };
    let err = profile_path(&path, &options, &|_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no sheet named `missing`") && err.contains("`orders`, `second`"),
        "{err}"
    );
}

fn copy_cut(from: &Path, to: PathBuf, keep: impl Fn(&[u8]) -> Vec<u8>) -> PathBuf {
    let bytes = std::fs::read(from).unwrap();
    std::fs::write(&to, keep(&bytes)).unwrap();
    to
}

#[test]
fn truncated_or_corrupt_files_get_a_clear_error() {
    let dir = write_files();
    let d = dir.path();
    let fails = |path: &Path, expect: &[&str]| {
        let err = profile_path(path, &ProfileOptions::default(), &|_, _| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        for e in expect {
            assert!(err.contains(e), "{err} should say {e}");
        }
    };
    let half = |b: &[u8]| b[..b.len() / 2].to_vec();
    let parquet = copy_cut(&d.join("data_zstd.parquet"), d.join("half.parquet"), half);
    fails(
        &parquet,
        &[
            "not a readable parquet file",
            "truncated or corrupt",
            "--input-format",
        ],
    );
    // The footer is intact, a page in the middle is not.
    let damaged = copy_cut(
        &d.join("data_zstd.parquet"),
        d.join("damaged.parquet"),
        |b| {
            let mut b = b.to_vec();
            let mid = b.len() / 3;
            for x in &mut b[mid..mid + 64] {
                *x ^= 0x5A;
            }
            b
        },
    );
    fails(&damaged, &["parquet"]);
    let arrow = copy_cut(&d.join("data.feather"), d.join("half.feather"), half);
    fails(&arrow, &["arrow"]);
    let jsonl = copy_cut(&d.join("data.jsonl"), d.join("half.jsonl"), half);
    fails(
        &jsonl,
        &[
            "line 251: EOF while parsing an object at column",
            "JSON Lines",
        ],
    );
    let json = copy_cut(&d.join("data.json"), d.join("half.json"), half);
    fails(&json, &["line", "is it truncated"]);
    let xlsx = copy_cut(&d.join("data.xlsx"), d.join("half.xlsx"), half);
    fails(&xlsx, &["not a readable xlsx file"]);
    let not_objects = d.join("numbers.jsonl");
    std::fs::write(&not_objects, "{\"a\": 1}\n[1, 2]\n").unwrap();
    fails(
        &not_objects,
        &["line 2", "expected a JSON object, found an array"],
    );
}

#[test]
fn the_format_comes_from_the_content_then_the_extension_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    // Compact JSON Lines named .csv: read as JSON, not as one-column CSV.
    let path = dir.path().join("events.csv");
    std::fs::write(&path, "{\"a\":1,\"b\":\"x\"}\n{\"a\":2,\"b\":null}\n").unwrap();
    let p = profile(&path);
    assert_eq!(p.format, FileFormat::Jsonl);
    assert_eq!(names(&p), ["a", "b"]);
    assert_eq!(column(&p, "b").nulls, 1);
    // A `[` first: a JSON array, whatever the extension says.
    let array = dir.path().join("array.jsonl");
    std::fs::write(&array, "  [{\"a\": 1}, {\"a\": 2.5}]").unwrap();
    assert_eq!(profile(&array).format, FileFormat::Json);
    // Text that is not JSON named .json is read as JSON by its extension (and fails, naming
    // the way out); forced to CSV it is CSV.
    let text = dir.path().join("table.json");
    std::fs::write(&text, "a,b\n1,2\n").unwrap();
    let err = profile_path(&text, &ProfileOptions::default(), &|_, _| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("--input-format"), "{err}");
    let forced = ProfileOptions {
        input_format: Some(FileFormat::Csv),
        ..ProfileOptions::default()
    };
    let csv = profile_path(&text, &forced, &|_, _| {}).unwrap();
    assert_eq!(csv.format, FileFormat::Csv);
    assert_eq!(names(&csv), ["a", "b"]);
    // An empty JSON Lines file has no rows and no columns.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "\n\n").unwrap();
    let p = profile(&empty);
    assert_eq!((p.rows, p.columns.len()), (0, 0));
}

/// An Excel sheet with a cell reference past Excel's last column (`ZZZZZZ1`, column 321,272,406)
/// or row is a corrupt sheet: before, every row was made that wide (gigabytes for one cell),
/// and a reference whose column overflows calamine's `u32` did the same with a wrapped number in
/// release builds (found by the `profile_formats` fuzz target).
#[test]
fn an_excel_cell_past_the_last_column_or_row_is_an_error() {
    const WRITE_BAD_REF: &str = r#"
import sys, zipfile, openpyxl
wb = openpyxl.Workbook()
ws = wb.active
ws["A1"] = "id"
ws["B1"] = "name"
ws["A2"] = 1
ws["B2"] = "x"
wb.save(sys.argv[1] + ".tmp")
with zipfile.ZipFile(sys.argv[1] + ".tmp") as src, zipfile.ZipFile(sys.argv[1], "w") as dst:
    for item in src.infolist():
        data = src.read(item.filename)
        if item.filename == "xl/worksheets/sheet1.xml":
            data = data.replace(b'r="B2"', ('r="%s"' % sys.argv[2]).encode())
        dst.writestr(item, data)
"#;
    let dir = tempfile::tempdir().unwrap();
    for (reference, expected) in [("ZZZZZZ2", "column 321272406"), ("B2000000", "row 2000000")] {
        let path = dir.path().join(format!("{reference}.xlsx"));
        let status = Command::new(python())
            .args(["-c", WRITE_BAD_REF])
            .arg(&path)
            .arg(reference)
            .status()
            .unwrap();
        assert!(status.success());
        let err = profile_path(&path, &ProfileOptions::default(), &|_, _| {})
            .expect_err("a cell past Excel's last one profiled")
            .to_string();
        assert!(err.contains(expected), "{err}");
        assert!(err.contains("past Excel's last cell"), "{err}");
    }
}

//! Agreement with real pandas and pandera: the schema's read recipe gives the inferred dtypes,
//! the emitted Pandera schema validates the file, null counts agree exactly and `describe()`
//! statistics to 1e-9 relative.
#![allow(clippy::disallowed_methods)] // the test runs the real Python interpreter

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use autocoder_profile::{Profile, ProfileOptions, SchemaOptions, profile_path};
use autocoder_schema::{Scalar, render_pandera};

use crate::basics::write_file;

pub(crate) fn python() -> PathBuf {
    PathBuf::from(std::env::var_os("AUTOCODER_TEST_PYTHON").expect(
        "AUTOCODER_TEST_PYTHON must name a Python with pandas and pandera: run scripts/test",
    ))
}

const DESCRIBE: &str = r#"
import importlib.util, json, sys
import pandas as pd
spec = importlib.util.spec_from_file_location("schema_module", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
frame = getattr(module, sys.argv[3])(sys.argv[2])
getattr(module, sys.argv[4]).validate(frame, lazy=True)
out = {}
for name in frame.columns:
    s = frame[name]
    d = {"dtype": str(s.dtype), "nulls": int(s.isna().sum()), "rows": len(s)}
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) and s.notna().any():
        desc = s.astype("float64").describe()
        d.update({k: float(desc[k]) for k in ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]})
    out[name] = d
print(json.dumps(out))
"#;

/// Profiles `path`, writes the Pandera module, runs it with pandas, returns pandas' facts.
pub(crate) fn pandas_facts(
    path: &Path,
    profile: &Profile,
    dir: &tempfile::TempDir,
) -> serde_json::Value {
    let schema = profile.schema(&SchemaOptions {
        ranges: true,
        categories: true,
        max_categories: 10,
    });
    let module = write_file(dir, "schema_module.py", render_pandera(&schema).as_bytes());
    let ident = autocoder_schema::python_identifier(&schema.name);
    let out = Command::new(python())
        .arg("-c")
        .arg(DESCRIBE)
        .arg(&module)
        .arg(path)
        .arg(format!("read_{ident}"))
        .arg(format!("{}_SCHEMA", ident.to_ascii_uppercase()))
        .output()
        .expect("the test Python runs");
    assert!(
        out.status.success(),
        "pandas/pandera failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        render_pandera(&schema)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn mixed(rows: u64) -> String {
    let mut s = String::from("id,qty,price,big,day,at,ok,zip,note,status\n");
    let mut x: u64 = 99;
    for id in 1..=rows {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = x >> 33;
        let qty = match r % 9 {
            0 => "NA".to_string(),
            1 => String::new(),
            _ => ((r % 500).cast_signed() - 100).to_string(),
        };
        let price = match r % 11 {
            0 => "null".to_string(),
            _ => format!("{}.{:03}", r % 1000, r % 997),
        };
        let big = format!("{}.{}", 1_000_000 + r % 100_000, r % 7);
        let day = format!("20{:02}-{:02}-{:02}", 10 + r % 15, 1 + r % 12, 1 + r % 28);
        let at = format!("{day}T{:02}:{:02}:{:02}Z", r % 24, r % 60, r % 59);
        let ok = ["True", "False", "", "NA"][(r % 4) as usize];
        let zip = format!("{:05}", r % 30_000);
        let note = match r % 4 {
            0 => format!("\"said \"\"hi\"\"\nthen {}\"", r % 9),
            1 => "\"a, b\"".to_string(),
            _ => format!("n{}", r % 50),
        };
        let status = ["new", "paid", "sent"][(r % 3) as usize];
        writeln!(
            s,
            "{id},{qty},{price},{big},{day},{at},{ok},{zip},{note},{status}"
        )
        .unwrap();
    }
    s
}

pub(crate) fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

pub(crate) fn quantile(profile: &Profile, column: usize, q: f64) -> f64 {
    let found = profile.columns[column]
        .quantiles
        .iter()
        .find(|x| x.q == q)
        .unwrap();
    match found.value {
        Scalar::Float(f) => f,
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn pandas_reads_the_schema_and_agrees_on_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(&dir, "mixed.csv", mixed(5000).as_bytes());
    let options = ProfileOptions {
        chunk_bytes: 16 << 10,
        threads: 2,
        ..ProfileOptions::default()
    };
    let profile = profile_path(&path, &options, &|_, _| {}).unwrap();
    let facts = pandas_facts(&path, &profile, &dir);
    let expected_dtypes = [
        ("id", "int64"),
        ("qty", "Int64"),
        ("price", "float64"),
        ("big", "float64"),
        ("ok", "boolean"),
        ("zip", "str"),
        ("note", "str"),
        ("status", "str"),
    ];
    for (name, dtype) in expected_dtypes {
        let got = facts[name]["dtype"].as_str().unwrap();
        assert!(
            got == dtype || (name == "id" && got == "Int64"),
            "{name}: pandas has {got}, expected {dtype}"
        );
    }
    for (i, c) in profile.columns.iter().enumerate() {
        let f = &facts[c.name.as_str()];
        assert_eq!(f["nulls"].as_u64().unwrap(), c.nulls, "{}", c.name);
        assert_eq!(f["rows"].as_u64().unwrap(), profile.rows);
        let Some(n) = &c.numeric else { continue };
        assert_eq!(f["count"].as_f64().unwrap(), c.count as f64);
        let checks = [
            ("mean", n.mean),
            ("std", n.std.unwrap()),
            ("25%", quantile(&profile, i, 0.25)),
            ("50%", quantile(&profile, i, 0.5)),
            ("75%", quantile(&profile, i, 0.75)),
        ];
        for (stat, ours) in checks {
            let theirs = f[stat].as_f64().unwrap();
            assert!(
                close(ours, theirs),
                "{}.{stat}: ours {ours}, pandas {theirs}",
                c.name
            );
        }
        let as_f64 = |s: &Option<Scalar>| s.as_ref().and_then(Scalar::as_f64).unwrap();
        assert!(close(as_f64(&c.min), f["min"].as_f64().unwrap()));
        assert!(close(as_f64(&c.max), f["max"].as_f64().unwrap()));
    }
}

#[test]
fn pandas_reads_other_dialects_and_formats() {
    let dir = tempfile::tempdir().unwrap();
    let text = "\u{FEFF}when;amount;code\n31/12/2023;1,5;007\n13/01/2024;NA;010\n;2;\n";
    let path = write_file(&dir, "eu.csv", text.as_bytes());
    let profile = profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(
        profile.columns[0].datetime_format.as_deref(),
        Some("%d/%m/%Y")
    );
    let facts = pandas_facts(&path, &profile, &dir);
    assert_eq!(facts["when"]["nulls"], 1);
    assert_eq!(facts["code"]["dtype"], "str");
    assert_eq!(facts["amount"]["dtype"], "str");
}

#[test]
fn pandas_reads_datetimes_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let text = "naive,frac,mixed,zoned,us_day\n\
        2024-01-01 10:00:00,2024-01-01T10:00:00.5,2024-01-01,2024-01-01T10:00:00Z,1/31/2024\n\
        2024-01-02 11:30:00,2024-01-01T10:00:00.123456,2024-01-02T08:30:00,2024-01-01T12:00:00+02:00,12/1/2024\n\
        NA,,2024-01-03 09:00,,\n";
    let path = write_file(&dir, "times.csv", text.as_bytes());
    let profile = profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap();
    let formats: Vec<Option<&str>> = profile
        .columns
        .iter()
        .map(|c| c.datetime_format.as_deref())
        .collect();
    assert_eq!(
        formats,
        [
            Some("%Y-%m-%d %H:%M:%S"),
            Some("%Y-%m-%dT%H:%M:%S.%f"),
            Some("ISO8601"),
            Some("ISO8601"),
            Some("%m/%d/%Y"),
        ]
    );
    assert!(profile.columns[3].utc);
    let mixed = &profile.columns[2];
    assert_eq!(mixed.min, Some(Scalar::Str("2024-01-01T00:00:00".into())));
    assert_eq!(mixed.max, Some(Scalar::Str("2024-01-03T09:00:00".into())));
    assert_eq!(mixed.count, 3);
    assert_eq!(
        profile.columns[3].min, profile.columns[3].max,
        "both values are 10:00 UTC"
    );
    let facts = pandas_facts(&path, &profile, &dir);
    assert_eq!(facts["naive"]["nulls"], 1);
    assert!(facts["zoned"]["dtype"].as_str().unwrap().contains("UTC"));
}

const PLAIN_READ: &str = r#"
import importlib.util, sys
import pandas as pd
spec = importlib.util.spec_from_file_location("schema_module", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
schema = getattr(module, sys.argv[4])
schema.validate(pd.read_csv(sys.argv[2]), lazy=True)
schema.validate(getattr(module, sys.argv[3])(sys.argv[2]), lazy=True)
print("both valid")
"#;

/// Runs the emitted module's schema on `pd.read_csv(path)` and on `read_<name>(path)`.
fn validates_plain_read(path: &Path) -> Result<(), String> {
    let profile = profile_path(path, &ProfileOptions::default(), &|_, _| {}).unwrap();
    let schema = profile.schema(&SchemaOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let module = write_file(&dir, "schema_module.py", render_pandera(&schema).as_bytes());
    let ident = autocoder_schema::python_identifier(&schema.name);
    let out = Command::new(python())
        .arg("-c")
        .arg(PLAIN_READ)
        .arg(&module)
        .arg(path)
        .arg(format!("read_{ident}"))
        .arg(format!("{}_SCHEMA", ident.to_ascii_uppercase()))
        .output()
        .expect("the test Python runs");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}:\n{}\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr),
            render_pandera(&schema)
        ))
    }
}

#[test]
fn the_schema_validates_a_plain_read_csv_too() {
    let dir = tempfile::tempdir().unwrap();
    let dates = write_file(
        &dir,
        "dates.csv",
        b"day,us,eu,stamp,zoned,month\n\
          2024-01-31,1/31/2024,31.01.2024,2024-01-31 10:00:00,2024-01-31T10:00:00Z,Jan 1 2000\n\
          2024-02-01,2/1/2024,01.02.2024,2024-02-01 11:00:00,2024-02-01T12:00:00+02:00,Feb 1 2000\n\
          ,,,,,\n",
    );
    let flags = write_file(
        &dir,
        "flags.csv",
        b"id,ok,maybe,count,zip\n1,True,True,3,02134\n2,False,,NA,10001\n3,True,False,5,00501\n",
    );
    let mixed = write_file(&dir, "mixed.csv", mixed(2000).as_bytes());
    let mut files = vec![dates, flags, mixed];
    for rel in [
        "real/flights_sample.csv",
        "real/penguins.csv",
        "real/penguins_raw.csv",
        "real/iris.csv",
        "real/stocks.csv",
    ] {
        files.push(crate::expectations::testdata(rel));
    }
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| validates_plain_read(f).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn pandas_reads_the_new_date_forms_and_encodings() {
    let dir = tempfile::tempdir().unwrap();
    let text = "a,b,c,e\n\
         Jan 1 2000,01-Jan-2020,2010/01/01 00:00,1 March 2021\n\
         Feb 15 2001,15-Mar-2021,2010/12/31 23:59,31 December 2021\n\
         Dec 31 2009,,2011/06/15 12:30,\n";
    let path = write_file(&dir, "forms.csv", text.as_bytes());
    let profile = profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap();
    let facts = pandas_facts(&path, &profile, &dir);
    for (name, nulls) in [("a", 0), ("b", 1), ("c", 0), ("e", 1)] {
        assert_eq!(facts[name]["nulls"], nulls, "{name}: {facts}");
        assert!(
            facts[name]["dtype"]
                .as_str()
                .unwrap()
                .starts_with("datetime64"),
            "{name}: {facts}"
        );
    }

    let latin1 = write_file(
        &dir,
        "latin.csv",
        b"# note\nname,n\ncaf\xe9,1\nna\xefve,2\n",
    );
    let options = ProfileOptions {
        encoding: autocoder_profile::Encoding::for_label("latin-1"),
        comment: Some(b'#'),
        ..ProfileOptions::default()
    };
    let profile = profile_path(&latin1, &options, &|_, _| {}).unwrap();
    let facts = pandas_facts(&latin1, &profile, &dir);
    assert_eq!(facts["n"]["dtype"], "Int64");
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "junk\nid,name\n1,Zoë\n2,Ana\n".encode_utf16() {
        utf16.extend(unit.to_le_bytes());
    }
    let path = write_file(&dir, "wide.csv", &utf16);
    let options = ProfileOptions {
        skip_rows: 1,
        ..ProfileOptions::default()
    };
    let profile = profile_path(&path, &options, &|_, _| {}).unwrap();
    let facts = pandas_facts(&path, &profile, &dir);
    assert_eq!(facts["id"]["rows"], 2);
    assert_eq!(facts["id"]["dtype"], "Int64");
}

//! Types, nulls and statistics of small tricky files.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use autocoder_profile::{
    Monotonic, NullSpec, PANDAS_NA_VALUES, Profile, ProfileOptions, SchemaOptions, profile_path,
    profile_reader,
};
use autocoder_schema::{Check, DataType, Scalar};

pub(crate) fn write_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(bytes).unwrap();
    path
}

pub(crate) fn profile_bytes(bytes: &[u8], options: &ProfileOptions) -> Profile {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(&dir, "t.csv", bytes);
    profile_path(&path, options, &|_, _| {}).unwrap()
}

pub(crate) fn profile_text(text: &str) -> Profile {
    profile_bytes(text.as_bytes(), &ProfileOptions::default())
}

fn types(p: &Profile) -> Vec<DataType> {
    p.columns.iter().map(|c| c.dtype).collect()
}

#[test]
fn infers_types_like_pandas() {
    let p = profile_text(
        "id,zip,qty,price,day,at,flag,email,note\n\
         1,02134,3,1.5,2024-01-01,2024-01-01T10:00:00Z,True,a@b.io,\"hello, world\"\n\
         2,10001,NA,2.25,2024-01-02,2024-01-02T11:30:00Z,False,c@d.io,\"multi\nline\"\n\
         3,94105,7,,2024-01-03,2024-01-03T12:00:00+01:00,,NA,plain\n",
    );
    assert_eq!(
        types(&p),
        [
            DataType::Integer,
            DataType::String,
            DataType::Integer,
            DataType::Float,
            DataType::Date,
            DataType::Datetime,
            DataType::Boolean,
            DataType::String,
            DataType::String,
        ]
    );
    assert_eq!(p.rows, 3);
    let nulls: Vec<u64> = p.columns.iter().map(|c| c.nulls).collect();
    assert_eq!(nulls, [0, 0, 1, 1, 0, 0, 1, 1, 0]);
    let id = &p.columns[0];
    assert!(id.unique && id.distinct_exact);
    assert_eq!(id.monotonic, Monotonic::StrictlyIncreasing);
    assert_eq!(id.min, Some(Scalar::Int(1)));
    assert_eq!(id.max, Some(Scalar::Int(3)));
    assert!(p.columns[5].utc);
    assert_eq!(p.columns[5].datetime_format.as_deref(), Some("ISO8601"));
    assert_eq!(p.columns[4].datetime_format.as_deref(), Some("%Y-%m-%d"));
    assert_eq!(p.columns[4].min, Some(Scalar::Str("2024-01-01".into())));
    assert_eq!(p.samples.len(), 3);
    assert_eq!(p.samples[1].line, 3);
    assert_eq!(p.samples[2].line, 5);
    assert_eq!(p.samples[1].values[2], "NA");
    assert_eq!(p.columns[7].patterns[0].rate, 1.0);
}

#[test]
fn every_pandas_null_marker_is_missing_and_keeps_the_column_integer() {
    let mut text = String::from("n,s\n");
    for (i, na) in PANDAS_NA_VALUES.iter().enumerate() {
        writeln!(text, "{na},x{i}").unwrap();
        writeln!(text, "{i},y").unwrap();
    }
    let p = profile_text(&text);
    let n = &p.columns[0];
    assert_eq!(n.dtype, DataType::Integer);
    assert_eq!(n.nulls, PANDAS_NA_VALUES.len() as u64);
    assert!(n.nullable);
    assert_eq!(
        p.schema(&SchemaOptions::default()).columns[0].dtype,
        DataType::Integer
    );

    // Without pandas' defaults, `NA` is a value and the column is text.
    let options = ProfileOptions {
        nulls: NullSpec::only(vec![String::new()]),
        ..ProfileOptions::default()
    };
    let p = profile_bytes(text.as_bytes(), &options);
    assert_eq!(p.columns[0].dtype, DataType::String);
    assert!(!p.read_options().keep_default_na);
}

#[test]
fn zero_padded_ids_stay_strings_and_floats_with_nulls_are_floats() {
    let p = profile_text("zip,id,x\n02134,7,1.5\n10001,8,NA\n00501,9,2\n");
    assert_eq!(
        types(&p),
        [DataType::String, DataType::Integer, DataType::Float]
    );
    let zip = &p.columns[0];
    assert_eq!(zip.lengths.as_ref().unwrap().max, 5);
    assert_eq!(zip.shapes[0].shape, "99999");
    assert_eq!(zip.shapes[0].count, 3);
}

#[test]
fn statistics_of_a_numeric_column() {
    let p = profile_text("x\n1\n2\n3\n4\nNA\n0\n-5\n");
    let x = &p.columns[0];
    let n = x.numeric.as_ref().unwrap();
    assert_eq!(x.count, 6);
    assert_eq!(n.sum, 5.0);
    assert_eq!(n.zeros, 1);
    assert_eq!(n.negatives, 1);
    assert!((n.mean - 5.0 / 6.0).abs() < 1e-15);
    assert!(x.quantiles_exact);
    let median = x.quantiles.iter().find(|q| q.q == 0.5).unwrap();
    assert_eq!(median.value, Scalar::Float(1.5));
    let h = x.histogram.as_ref().unwrap();
    assert_eq!(h.bins.iter().map(|b| b.count).sum::<u64>(), 6);
    assert_eq!(x.top_values.len(), 6);
}

#[test]
fn dialects_are_sniffed() {
    for (text, delimiter) in [
        ("a;b\n1,5;x\n2,5;y\n", ';'),
        ("a\tb\n1\tx\n", '\t'),
        ("a|b\n1|x\n2|y\n", '|'),
    ] {
        let p = profile_text(text);
        assert_eq!(p.read_options().delimiter, delimiter);
        assert_eq!(p.columns.len(), 2);
        assert_eq!(p.columns[1].dtype, DataType::String);
    }
    let p = profile_text("a;b\n1,5;x\n2,5;y\n");
    assert_eq!(
        p.columns[0].dtype,
        DataType::String,
        "decimal commas are text"
    );
}

#[test]
fn bom_header_names_and_stdin_like_readers() {
    let p = profile_bytes(b"\xEF\xBB\xBFid,,id\n1,2,3\n", &ProfileOptions::default());
    assert!(p.dialect.bom && p.read_options().bom);
    let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "Unnamed: 1", "id.1"]);

    let p = profile_reader(
        &b"a,b\n1,x\n"[..],
        "-",
        &ProfileOptions::default(),
        &|_, _| {},
    )
    .unwrap();
    assert_eq!(p.rows, 1);
    assert_eq!(p.table_name(), "stdin");
}

#[test]
fn gzip_input_is_read() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"a,b\n1,x\n2,y\n").unwrap();
    let bytes = gz.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(&dir, "orders.csv.gz", &bytes);
    let p = profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(p.rows, 2);
    assert_eq!(p.columns[0].dtype, DataType::Integer);
    assert_eq!(p.table_name(), "orders");
}

#[test]
fn duplicates_categories_and_schema_checks() {
    let p = profile_text("s,n\na,1\nb,2\na,1\na,3\n");
    assert_eq!(p.duplicate_rows, 1);
    assert!(p.duplicate_rows_exact);
    let schema = p.schema(&SchemaOptions {
        ranges: true,
        categories: true,
        max_categories: 5,
    });
    assert_eq!(
        schema.columns[0].checks,
        [Check::Isin {
            values: vec![Scalar::Str("a".into()), Scalar::Str("b".into())]
        }]
    );
    assert_eq!(
        schema.columns[1].checks,
        [Check::InRange {
            min: Scalar::Int(1),
            max: Scalar::Int(3),
            include_min: true,
            include_max: true
        }]
    );
    let plain = p.schema(&SchemaOptions::default());
    assert!(plain.columns.iter().all(|c| c.checks.is_empty()));
}

#[test]
fn json_round_trips() {
    let p = profile_text("a,b,c\n1,x,2024-01-01\n2,,2024-02-01\n");
    let json = serde_json::to_string(&p).unwrap();
    let back: Profile = serde_json::from_str(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    assert!(json.starts_with("{\"format_version\":1,"));
}

#[test]
fn several_files_and_progress() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_file(&dir, "a.csv", b"x\n1\n2\n");
    let b = write_file(&dir, "b.csv", b"y,z\nq,1\n");
    let missing = dir.path().join("missing.csv");
    let seen = std::sync::Mutex::new(Vec::new());
    let results = autocoder_profile::profile_paths(
        &[a, b, missing],
        &ProfileOptions::default(),
        &|path, done, total| {
            seen.lock()
                .unwrap()
                .push((path.file_name().unwrap().to_owned(), done, total));
        },
    );
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].as_ref().unwrap().rows, 2);
    assert_eq!(results[1].as_ref().unwrap().columns.len(), 2);
    let err = results[2].as_ref().unwrap_err();
    assert!(err.to_string().contains("missing.csv"), "{err}");
    let seen = seen.into_inner().unwrap();
    assert!(
        seen.iter()
            .any(|(name, done, total)| name == "a.csv" && done == total && *total == 6)
    );
}

#[test]
fn pattern_rates_count_every_non_null_value() {
    // Values that read as numbers are values of a string column too: `12345` (an integer) and
    // `02134` (text) both look like integers, and every rate is out of all non-null values.
    let p = profile_text(
        "zip,price,share\n\
         02134,$1.00,5%\n\
         12345,3,7.5%\n\
         00501,\"$1,234.56\",NA\n\
         NA,4.5,0.5\n\
         abc,$2,12\n",
    );
    let rates = |i: usize| -> Vec<(&str, u64, f64)> {
        let c = &p.columns[i];
        assert_eq!(c.dtype, DataType::String, "{}", c.name);
        c.patterns
            .iter()
            .map(|r| (r.pattern.name(), r.matches, r.rate))
            .collect()
    };
    assert_eq!(rates(0), [("integer_text", 3, 0.75)]);
    assert_eq!(
        rates(1),
        [
            ("currency", 3, 0.6),
            ("integer_text", 1, 0.2),
            ("decimal_text", 1, 0.2)
        ]
    );
    assert_eq!(
        rates(2),
        [
            ("percent", 2, 0.5),
            ("integer_text", 1, 0.25),
            ("decimal_text", 1, 0.25)
        ]
    );
}

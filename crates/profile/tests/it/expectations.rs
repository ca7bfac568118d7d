//! What pandas users expect of public tables no one here wrote: headers and delimiters as
//! pandas, `DuckDB` and `csv.Sniffer` see them, the reading options pandas has (`skiprows`,
//! `comment`, `encoding`), distinct counts that make sense, dates in the forms pandas reads,
//! and quantiles from exact counts when a column has few distinct values.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use autocoder_profile::{Encoding, ProfileError, ProfileOptions, profile_path};
use autocoder_schema::{DataType, Scalar};

use crate::basics::{profile_bytes, profile_text};

pub(crate) fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn names(p: &autocoder_profile::Profile) -> Vec<&str> {
    p.columns.iter().map(|c| c.name.as_str()).collect()
}

fn types(p: &autocoder_profile::Profile) -> Vec<DataType> {
    p.columns.iter().map(|c| c.dtype).collect()
}

#[test]
fn a_first_line_whose_types_differ_from_the_body_is_a_header() {
    // scikit-learn's iris.csv: `150,4,setosa,versicolor,virginica`, then numeric rows.
    let p = profile_path(
        &testdata("real/iris.csv"),
        &ProfileOptions::default(),
        &|_, _| {},
    )
    .unwrap();
    assert!(p.dialect.has_header);
    assert_eq!(names(&p), ["150", "4", "setosa", "versicolor", "virginica"]);
    assert_eq!(p.rows, 150);
    assert_eq!(
        types(&p),
        [
            DataType::Float,
            DataType::Float,
            DataType::Float,
            DataType::Float,
            DataType::Integer
        ]
    );
    // Data in the first line, of the body's types: no header (as before).
    let p = profile_text("1,alice\n2,bob\n3,carol\n");
    assert!(!p.dialect.has_header);
    assert_eq!(p.rows, 3);
    // Whole numbers over floats fit the floats (as DuckDB casts them): data, not a header.
    let p = profile_text("10,20\n1.5,2.5\n3.5,4.5\n");
    assert!(!p.dialect.has_header);
    // A date over numbers is a header.
    let p = profile_text("2024-01-01,2024-01-02\n1.5,2.5\n3.5,4.5\n");
    assert!(p.dialect.has_header);
    // Text over text stays a header, as pandas assumes.
    let p = profile_text("name,city\nann,rome\nbob,oslo\n");
    assert!(p.dialect.has_header);
}

#[test]
fn space_delimited_files_are_sniffed() {
    for (file, columns) in [
        ("real/linnerud_exercise.csv", ["Chins", "Situps", "Jumps"]),
        (
            "real/linnerud_physiological.csv",
            ["Weight", "Waist", "Pulse"],
        ),
    ] {
        let p = profile_path(&testdata(file), &ProfileOptions::default(), &|_, _| {}).unwrap();
        assert_eq!(p.dialect.delimiter, b' ', "{file}");
        assert_eq!(names(&p), columns, "{file}");
        assert_eq!(p.rows, 20, "{file}");
        assert!(
            p.columns.iter().all(|c| c.dtype == DataType::Integer),
            "{file}"
        );
    }
    // Spaces inside the fields of a comma file do not make it space-delimited.
    let p = profile_text("name,place\nAnn Lee,New York\nBo Wu,Los Angeles\n");
    assert_eq!(p.dialect.delimiter, b',');
}

#[test]
fn skip_rows_drops_lines_before_the_header_and_lines_keep_their_numbers() {
    let text = b"exported by tool v1\ngenerated 2024-01-01\nid,x\n1,a\n2,b\n";
    let options = ProfileOptions {
        skip_rows: 2,
        ..ProfileOptions::default()
    };
    let p = profile_bytes(text, &options);
    assert_eq!(names(&p), ["id", "x"]);
    assert_eq!(p.rows, 2);
    assert_eq!(p.dialect.skip_rows, 2);
    assert_eq!(
        p.samples[0].line, 4,
        "physical lines count the skipped ones"
    );
    assert_eq!(p.read_options().skip_rows, 2);

    let dir = tempfile::tempdir().unwrap();
    let path = crate::basics::write_file(&dir, "s.csv", b"junk line\nid,x\n1,2\n3,4,5\n");
    let options = ProfileOptions {
        skip_rows: 1,
        ..ProfileOptions::default()
    };
    let err = profile_path(&path, &options, &|_, _| {}).unwrap_err();
    assert!(
        matches!(err, ProfileError::TooManyFields { line: 4, .. }),
        "{err:?}"
    );
}

#[test]
fn comments_are_cut_like_pandas_comment() {
    let text = b"# exported\nid,x# note\n1,a#c\n# whole line\n2,\"b#c\"\n";
    let options = ProfileOptions {
        comment: Some(b'#'),
        ..ProfileOptions::default()
    };
    let p = profile_bytes(text, &options);
    assert_eq!(names(&p), ["id", "x"]);
    assert_eq!(p.rows, 2);
    let mut values: Vec<&str> = p.columns[1]
        .top_values
        .iter()
        .map(|v| v.value.as_str())
        .collect();
    values.sort_unstable();
    assert_eq!(values, ["a", "b#c"], "a quoted # is text");
    assert_eq!(p.dialect.comment, Some(b'#'));
    assert_eq!(p.read_options().comment, Some('#'));
    assert_eq!(p.samples[1].line, 5);
}

#[test]
fn encodings_pandas_reads_are_decoded() {
    let latin1 = Encoding::for_label("latin-1").unwrap();
    let options = ProfileOptions {
        encoding: Some(latin1),
        ..ProfileOptions::default()
    };
    let p = profile_bytes(b"name,n\ncaf\xe9,1\nna\xefve,2\n", &options);
    assert_eq!(p.columns[0].min, Some(Scalar::Str("café".into())));
    assert_eq!(p.read_options().encoding.as_deref(), Some("latin-1"));

    let cp1252 = Encoding::for_label("cp1252").unwrap();
    let options = ProfileOptions {
        encoding: Some(cp1252),
        ..ProfileOptions::default()
    };
    let p = profile_bytes(b"price\n\x8010\n", &options);
    assert_eq!(p.columns[0].min, Some(Scalar::Str("\u{20ac}10".into())));
    assert_eq!(p.read_options().encoding.as_deref(), Some("cp1252"));

    // UTF-16 with a byte-order mark: found without being asked, and when asked.
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "id,name\n1,Zoë\n2,Ana\n".encode_utf16() {
        utf16.extend(unit.to_le_bytes());
    }
    for encoding in [None, Encoding::for_label("utf-16")] {
        let options = ProfileOptions {
            encoding,
            ..ProfileOptions::default()
        };
        let p = profile_bytes(&utf16, &options);
        assert_eq!(names(&p), ["id", "name"]);
        assert_eq!(p.rows, 2);
        assert_eq!(p.columns[1].max, Some(Scalar::Str("Zoë".into())));
        assert_eq!(p.read_options().encoding.as_deref(), Some("utf-16"));
    }
    assert!(Encoding::for_label("no-such-encoding").is_none());

    // Without an encoding, Latin-1 text is an error that says how to read it.
    let dir = tempfile::tempdir().unwrap();
    let path = crate::basics::write_file(&dir, "l.csv", b"name\ncaf\xe9\n");
    let err = profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap_err();
    assert!(err.to_string().contains("--encoding"), "{err}");
}

#[test]
fn distinct_counts_never_exceed_the_values() {
    for rows in [20_000u64, 150_000] {
        let mut text = String::from("id,group\n");
        for i in 0..rows {
            writeln!(text, "{},{}", i * 7 + 3, i % 5).unwrap();
        }
        let options = ProfileOptions {
            distinct_exact_bound: 1_000,
            ..ProfileOptions::default()
        };
        let p = profile_bytes(text.as_bytes(), &options);
        let id = &p.columns[0];
        assert!(!id.distinct_exact);
        assert!(id.distinct <= rows, "{rows}: {} distinct", id.distinct);
        let error = (rows - id.distinct) as f64 / rows as f64;
        assert!(
            error <= 3.0 * id.distinct_relative_error,
            "{rows}: {}",
            id.distinct
        );
    }
    // Exact well past ten thousand distinct values in a narrow file.
    let mut text = String::from("id,group\n");
    for i in 0..40_000u64 {
        writeln!(text, "{},{}", (i * 7_919) % 40_000, i % 5).unwrap();
    }
    let p = profile_text(&text);
    assert!(p.columns[0].distinct_exact);
    assert_eq!(p.columns[0].distinct, 40_000);
    assert!(p.columns[0].unique);
}

#[test]
fn floats_are_distinct_by_value() {
    let p = profile_text("x\n1.0\n1.00\n2.5\n1\n");
    assert_eq!(p.columns[0].dtype, DataType::Float);
    assert_eq!(p.columns[0].distinct, 2);
    assert!(!p.columns[0].unique);
    assert_eq!(p.columns[0].top_values[0].count, 3);
    let p = profile_text("x\n1.5\n2.5\n0.25\n");
    assert_eq!(p.columns[0].distinct, 3);
    assert!(p.columns[0].unique, "distinct floats are unique");
    let p = profile_text("n\n+3\n3\n4\n");
    assert_eq!(p.columns[0].dtype, DataType::Integer);
    assert_eq!(p.columns[0].distinct, 2);
}

#[test]
fn dates_in_the_forms_pandas_and_duckdb_read() {
    let p = profile_text(
        "a,b,c,d,e\n\
         Jan 1 2000,01-Jan-2020,2010/01/01 00:00,2020-01-01 10:00:00+02:00,1 March 2021\n\
         Feb 15 2001,15-Mar-2021,2010/12/31 23:59,2020-06-01 08:30:00-05:00,31 December 2021\n\
         Dec 31 2009,,2011/06/15 12:30,,\n",
    );
    assert_eq!(
        types(&p),
        [
            DataType::Date,
            DataType::Date,
            DataType::Datetime,
            DataType::Datetime,
            DataType::Date
        ]
    );
    let formats: Vec<Option<&str>> = p
        .columns
        .iter()
        .map(|c| c.datetime_format.as_deref())
        .collect();
    assert_eq!(
        formats,
        [
            Some("%b %d %Y"),
            Some("%d-%b-%Y"),
            Some("%Y/%m/%d %H:%M"),
            Some("ISO8601"),
            Some("%d %B %Y")
        ]
    );
    assert_eq!(p.columns[0].min, Some(Scalar::Str("2000-01-01".into())));
    assert_eq!(p.columns[0].max, Some(Scalar::Str("2009-12-31".into())));
    assert_eq!(
        p.columns[2].max,
        Some(Scalar::Str("2011-06-15T12:30:00".into()))
    );
    assert!(p.columns[3].utc);
    // vega_datasets' stocks.csv writes `Jan 1 2000`.
    let p = profile_path(
        &testdata("real/stocks.csv"),
        &ProfileOptions::default(),
        &|_, _| {},
    )
    .unwrap();
    assert_eq!(p.columns[1].dtype, DataType::Date);
    assert_eq!(p.columns[1].datetime_format.as_deref(), Some("%b %d %Y"));
    assert_eq!(p.columns[1].min, Some(Scalar::Str("2000-01-01".into())));
}

/// numpy's linear quantile of sorted values.
fn numpy_quantile(sorted: &[f64], q: f64) -> f64 {
    let position = (sorted.len() - 1) as f64 * q;
    let below = position.floor();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // within 0..len
    let i = below as usize;
    let (lo, hi) = (sorted[i], sorted[(i + 1).min(sorted.len() - 1)]);
    lo + (hi - lo) * (position - below)
}

#[test]
fn quantiles_of_few_distinct_values_come_from_exact_counts() {
    // Like flights' `distance`: 100,000 values, 214 distinct, skewed.
    let distances: Vec<u64> = (0..214).map(|i| 80 + i * i * 3 + i * 17).collect();
    let mut x: u64 = 5;
    let mut values = Vec::new();
    let mut text = String::from("distance\n");
    for _ in 0..100_000 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = (x >> 33) % 1000;
        // Squaring skews the choice toward the short distances.
        let d = distances[((r * r) / 4_673) as usize % 214];
        values.push(d as f64);
        writeln!(text, "{d}").unwrap();
    }
    values.sort_by(f64::total_cmp);
    let p = profile_text(&text);
    let c = &p.columns[0];
    assert!(c.quantiles_exact);
    for q in &c.quantiles {
        assert_eq!(
            q.value.as_f64().unwrap(),
            numpy_quantile(&values, q.q),
            "p{}",
            q.q
        );
    }
    let histogram = c.histogram.as_ref().unwrap();
    assert!(histogram.exact);
    assert_eq!(histogram.bins.iter().map(|b| b.count).sum::<u64>(), 100_000);
}

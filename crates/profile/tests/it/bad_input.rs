//! Ragged rows, invalid UTF-8, empty and binary files, huge fields: typed errors naming file,
//! line and column, or lenient handling counted in the profile. Never a panic.

use autocoder_profile::{LongRows, ProfileError, ProfileOptions, profile_path};
use autocoder_schema::DataType;

use crate::basics::{profile_bytes, profile_text, write_file};

fn profile_error(bytes: &[u8], options: &ProfileOptions) -> ProfileError {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(&dir, "bad.csv", bytes);
    profile_path(&path, options, &|_, _| {}).unwrap_err()
}

#[test]
fn short_rows_are_counted_and_long_rows_named() {
    let p = profile_text("a,b,c\n1,2,3\n4,5\n6,7,8\n");
    assert_eq!(p.rows, 3);
    assert_eq!(p.bad_rows.short_rows, 1);
    assert_eq!(p.bad_rows.first_bad_lines, [3]);
    assert_eq!(p.columns[2].nulls, 1);

    let text = b"a,b\n1,2\n3,4,5\n6,7\n";
    let err = profile_error(text, &ProfileOptions::default());
    assert!(
        matches!(
            err,
            ProfileError::TooManyFields {
                line: 3,
                expected: 2,
                found: 3,
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("bad.csv, line 3"), "{message}");

    let skip = ProfileOptions {
        long_rows: LongRows::Skip,
        ..ProfileOptions::default()
    };
    let p = profile_bytes(text, &skip);
    assert_eq!(p.rows, 2);
    assert_eq!(p.bad_rows.long_rows, 1);
    assert_eq!(p.bad_rows.first_bad_lines, [3]);
}

#[test]
fn invalid_utf8_names_line_and_column() {
    let err = profile_error(b"id,name\n1,ok\n2,caf\xE9\n", &ProfileOptions::default());
    match &err {
        ProfileError::InvalidUtf8 { line, column, .. } => {
            assert_eq!(*line, 3);
            assert_eq!(column, "name");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("UTF-8"));
}

#[test]
fn empty_header_only_and_binary_files() {
    let err = profile_error(b"", &ProfileOptions::default());
    assert!(matches!(err, ProfileError::Empty { .. }), "{err:?}");
    let err = profile_error(b"\xEF\xBB\xBF", &ProfileOptions::default());
    assert!(matches!(err, ProfileError::Empty { .. }), "{err:?}");

    let p = profile_text("a,b\n");
    assert_eq!(p.rows, 0);
    assert_eq!(p.columns.len(), 2);
    assert!(p.columns.iter().all(|c| c.dtype == DataType::Empty));
    let p = profile_text("a,b");
    assert_eq!((p.rows, p.columns.len()), (0, 2));

    let mut binary = b"\x7fELF".to_vec();
    binary.extend((0..=255u8).cycle().take(10_000));
    let err = profile_error(&binary, &ProfileOptions::default());
    assert!(matches!(err, ProfileError::Binary { .. }), "{err:?}");
    // A zip archive is taken for an Excel workbook, and a broken one says so.
    let mut zip = b"PK\x03\x04".to_vec();
    zip.extend((0..=255u8).cycle().take(10_000));
    let err = profile_error(&zip, &ProfileOptions::default());
    assert!(
        matches!(
            err,
            ProfileError::Corrupt {
                format: autocoder_profile::FileFormat::Xlsx,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn huge_fields_and_unclosed_quotes_are_bounded() {
    let options = ProfileOptions {
        max_record_bytes: 4096,
        chunk_bytes: 1024,
        ..ProfileOptions::default()
    };
    let mut text = b"a,b\n1,\"".to_vec();
    text.extend(std::iter::repeat_n(b'x', 20_000));
    text.extend(b"\"\n2,y\n");
    let err = profile_error(&text, &options);
    assert!(
        matches!(err, ProfileError::RecordTooLarge { .. }),
        "{err:?}"
    );
}

#[test]
fn an_unclosed_quote_is_an_error_naming_its_line() {
    // Small file: the quote at line 3 would swallow the rest into one field.
    let text = b"a,b\n0,ok\n1,\"open\n2,x\n3,y\n";
    for threads in [1, 2] {
        let options = ProfileOptions {
            threads,
            ..ProfileOptions::default()
        };
        let err = profile_error(text, &options);
        assert!(
            matches!(err, ProfileError::UnclosedQuote { line: 3, .. }),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains("line 3"), "{message}");
        assert!(message.contains("--skip-bad-rows"), "{message}");
    }
    // With bad rows skipped, the quote's line is one bad row and reading goes on after it.
    let skip = ProfileOptions {
        long_rows: LongRows::Skip,
        ..ProfileOptions::default()
    };
    let p = profile_bytes(text, &skip);
    assert_eq!(p.rows, 3);
    assert_eq!(p.bad_rows.unclosed_quotes, 1);
    assert_eq!(p.bad_rows.first_bad_lines, [3]);
    assert_eq!(p.columns[0].max, Some(autocoder_schema::Scalar::Int(3)));

    // Large file: chunks cannot be cut after the quote; the error still names its line.
    let mut big = b"a,b\n".to_vec();
    for i in 0..200 {
        big.extend(format!("{i},row\n").as_bytes());
    }
    big.extend(b"7,\"never closed\n");
    for i in 0..5_000 {
        big.extend(format!("{i},after\n").as_bytes());
    }
    let options = ProfileOptions {
        max_record_bytes: 4096,
        chunk_bytes: 1024,
        ..ProfileOptions::default()
    };
    let err = profile_error(&big, &options);
    assert!(
        matches!(err, ProfileError::UnclosedQuote { line: 202, .. }),
        "{err:?}"
    );
}

#[test]
fn a_truncated_gzip_says_where_the_stream_ended() {
    use std::io::Write as _;
    let mut text = String::from("id,word\n");
    for i in 0..20_000 {
        std::fmt::Write::write_fmt(&mut text, format_args!("{i},w{}\n", i * 31 % 977)).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let mut bytes = gz.finish().unwrap();
    bytes.truncate(bytes.len() / 2);
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(&dir, "cut.csv.gz", &bytes);
    let err = profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap_err();
    let message = err.to_string();
    assert!(!message.contains("exists"), "{message}");
    assert!(message.contains("cut.csv.gz"), "{message}");
    assert!(
        message.contains("truncated") || message.contains("corrupt"),
        "{message}"
    );
    assert!(message.contains("line "), "{message}");
}

#[test]
fn advice_names_the_options_to_use() {
    let options = ProfileOptions {
        max_record_bytes: 4096,
        chunk_bytes: 1024,
        ..ProfileOptions::default()
    };
    let mut text = b"a,b\n1,\"".to_vec();
    text.extend(std::iter::repeat_n(b'x', 20_000));
    text.extend(b"\"\n2,y\n");
    let message = profile_error(&text, &options).to_string();
    assert!(message.contains("--max-record-mb"), "{message}");

    let message = profile_error(b"a,b\n1,2\n3,4,5\n", &ProfileOptions::default()).to_string();
    assert!(message.contains("--skip-bad-rows"), "{message}");
    assert!(message.contains("--skip-rows"), "{message}");
    assert!(message.contains("as in the header"), "{message}");
    let no_header = ProfileOptions {
        has_header: Some(false),
        ..ProfileOptions::default()
    };
    let message = profile_error(b"1,2\n3,4,5\n", &no_header).to_string();
    assert!(!message.contains("header"), "{message}");
    assert!(message.contains("first row"), "{message}");
}

#[test]
fn no_input_panics() {
    let cases: [&[u8]; 9] = [
        b"\n\n\n",
        b",,,\n,,,\n",
        b"\"",
        b"a\n\"\"\"",
        b"a,b\r\n1,2\r\n3,4",
        b"a\n\r\r\r",
        b"\xEF\xBB\xBF\n",
        b"a;b|c\td\n",
        b"x\n1e309\n-1e309\nnan\ninf\n",
    ];
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "c.csv", case);
        for threads in [1, 2] {
            let options = ProfileOptions {
                threads,
                chunk_bytes: 2,
                ..ProfileOptions::default()
            };
            let _ = profile_path(&path, &options, &|_, _| {});
        }
    }
    let p = profile_text("a,b\r\n1,2\r\n3,4");
    assert_eq!(p.rows, 2);
    assert_eq!(p.columns[1].dtype, DataType::Integer);
}

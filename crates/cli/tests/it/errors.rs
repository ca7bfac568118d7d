//! Bad input: a clear error naming the file, line and column, exit code 2, never a panic; or the
//! documented lenient handling with its counts in the profile.

use autocoder_profile::Profile;

use crate::{autocoder, stdout_of, testdata};

/// Runs `autocoder profile FILE`, asserts exit code 2 without a panic, returns stderr.
fn error_of(rel: &str) -> String {
    let file = testdata(rel).display().to_string();
    let out = autocoder(&["profile", &file]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{rel}: {stderr}");
    assert!(!stderr.contains("panicked"), "{rel}: {stderr}");
    assert!(out.stdout.is_empty(), "stdout is data only");
    assert!(stderr.contains(rel), "the error names the file: {stderr}");
    stderr
}

#[test]
fn a_row_with_too_many_fields_names_its_line() {
    let stderr = error_of("tricky/ragged.csv");
    assert!(stderr.contains("line 4"), "{stderr}");
}

#[test]
fn rows_with_too_many_fields_can_be_skipped_and_counted() {
    let file = testdata("tricky/ragged.csv").display().to_string();
    let json = stdout_of(&["profile", "--format", "json", "--skip-bad-rows", &file]);
    let profile: Profile = serde_json::from_str(&json).unwrap();
    assert_eq!(profile.bad_rows.long_rows, 1);
    assert_eq!(profile.bad_rows.short_rows, 1);
    assert_eq!(profile.rows, 3);
}

#[test]
fn invalid_utf8_names_line_and_column() {
    let stderr = error_of("tricky/invalid_utf8.csv");
    assert!(stderr.contains("line 2"), "{stderr}");
    assert!(stderr.contains("name"), "{stderr}");
}

#[test]
fn an_empty_file_is_a_clear_error() {
    let stderr = error_of("tricky/empty.csv");
    assert!(stderr.contains("empty"), "{stderr}");
}

#[test]
fn a_binary_file_is_a_clear_error() {
    let stderr = error_of("tricky/binary.csv");
    assert!(stderr.contains("binary"), "{stderr}");
}

#[test]
fn a_missing_file_is_named() {
    let stderr = error_of("tricky/no_such_file.csv");
    assert!(stderr.contains("cannot"), "{stderr}");
}

#[test]
fn a_header_without_rows_is_a_profile_with_zero_rows() {
    let file = testdata("tricky/header_only.csv").display().to_string();
    let profile: Profile =
        serde_json::from_str(&stdout_of(&["profile", "--format", "json", &file])).unwrap();
    assert_eq!(profile.rows, 0);
    assert_eq!(profile.columns.len(), 3);
}

#[test]
fn bad_arguments_exit_with_2() {
    let out = autocoder(&["profile", "--format", "yaml", "x.csv"]);
    assert_eq!(out.status.code(), Some(2));
    let out = autocoder(&["profile", "--delimiter", "ab", "x.csv"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a delimiter"), "{stderr}");
}

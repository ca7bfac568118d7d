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

#[test]
fn ragged_rows_point_to_the_flags_that_help() {
    let stderr = error_of("tricky/ragged.csv");
    assert!(stderr.contains("--skip-bad-rows"), "{stderr}");
    assert!(stderr.contains("--skip-rows"), "{stderr}");
    let file = testdata("tricky/no_header.csv").display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let ragged = dir.path().join("r.csv");
    std::fs::write(&ragged, "1,2\n3,4,5\n").unwrap();
    let out = autocoder(&["profile", "--no-header", &ragged.display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(!stderr.contains("header"), "{stderr}");
    drop(file);
}

#[test]
fn an_unclosed_quote_is_an_error_and_skipping_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.csv");
    std::fs::write(&path, "a,b\n1,\"open\n2,x\n3,y\n").unwrap();
    let file = path.display().to_string();
    let out = autocoder(&["profile", &file]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("line 2") && stderr.contains("quote"),
        "{stderr}"
    );
    let json = stdout_of(&["profile", "--json", "--skip-bad-rows", &file]);
    let profile: Profile = serde_json::from_str(&json).unwrap();
    assert_eq!(profile.rows, 2);
    assert_eq!(profile.bad_rows.unclosed_quotes, 1);
}

#[test]
fn reading_options_as_in_pandas() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    std::fs::write(
        &path,
        b"title line\n# comment\nname,n\ncaf\xe9,1 # trailing\n",
    )
    .unwrap();
    let file = path.display().to_string();
    let json = stdout_of(&[
        "profile",
        "--json",
        "--skip-rows",
        "1",
        "--comment",
        "#",
        "--encoding",
        "latin-1",
        &file,
    ]);
    let profile: Profile = serde_json::from_str(&json).unwrap();
    assert_eq!(profile.rows, 1);
    assert_eq!(profile.columns[0].top_values[0].value, "café");
    let out = autocoder(&["profile", "--encoding", "klingon", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("klingon"));
    let out = autocoder(&["profile", "--max-record-mb", "0", &file]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn more_threads_than_the_process_limit_allows_is_no_panic() {
    // RLIMIT_NPROC binds only unprivileged users: run as `nobody` with room for 2 or 3 tasks.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "a,b\n1,2\n3,4\n").unwrap();
    let mut perms = std::fs::metadata(dir.path()).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(dir.path(), perms).unwrap();
    let bin = env!("CARGO_BIN_EXE_autocoder");
    for nproc in ["2", "3"] {
        let out = std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "prlimit",
            ])
            .arg(format!("--nproc={nproc}"))
            .args([bin, "profile", "--threads", "1000", "--json"])
            .arg(&path)
            .output()
            .expect("setpriv and prlimit (util-linux) run; the tests run as root");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "nproc {nproc}: {stderr}");
        match out.status.code() {
            Some(0) => {
                let profile: Profile = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(profile.rows, 2);
            }
            Some(2) => assert!(stderr.contains("thread"), "nproc {nproc}: {stderr}"),
            other => panic!("nproc {nproc}: exit {other:?}: {stderr}"),
        }
    }
}

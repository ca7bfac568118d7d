//! What users see, snapshotted with insta: the prompt context and the Pandera module of the
//! real penguins table (run from the repository root, so paths are the same everywhere).

use std::process::Command;

use crate::testdata;

fn run_in_repo(args: &[&str]) -> String {
    let root = testdata("..");
    let out = Command::new(env!("CARGO_BIN_EXE_autocoder"))
        .args(args)
        .current_dir(root)
        .output()
        .expect("the autocoder binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

#[test]
fn context_of_penguins() {
    insta::assert_snapshot!(run_in_repo(&[
        "profile",
        "--format",
        "context",
        "testdata/real/penguins.csv"
    ]));
}

#[test]
fn schema_of_penguins_with_categories() {
    insta::assert_snapshot!(run_in_repo(&[
        "schema",
        "--categories",
        "testdata/real/penguins.csv"
    ]));
}

//! What people read: statistics rounded to significant digits (JSON stays exact), long values
//! cut, control characters in names escaped.

use std::io::Write as _;

use crate::{stdout_of, testdata};

#[test]
fn text_rounds_statistics_and_json_keeps_them_exact() {
    let file = testdata("real/penguins.csv").display().to_string();
    let text = stdout_of(&["profile", &file]);
    assert!(text.contains("43.92"), "{text}");
    assert!(!text.contains("43.9219"), "{text}");
    assert!(!text.contains("5.459583713926547"), "{text}");
    let json = stdout_of(&["profile", "--json", &file]);
    assert!(json.contains("43.92192982456"), "JSON stays exact");
}

#[test]
fn long_values_are_cut_and_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd\u{1b}[31mname.csv");
    let mut f = std::fs::File::create(&path).unwrap();
    let long = "x".repeat(200_000);
    write!(f, "id,\"bell\u{7}\u{1b}[2J\",note\n1,a,{long}\n2,b,short\n").unwrap();
    drop(f);
    let text = stdout_of(&["profile", &path.display().to_string()]);
    assert!(text.len() < 20_000, "{} bytes printed", text.len());
    assert!(text.contains('…'), "cut values end with an ellipsis");
    assert!(
        !text.contains('\u{1b}'),
        "no raw escape characters: {text:?}"
    );
    assert!(!text.contains('\u{7}'), "{text:?}");
    assert!(
        text.contains("\\u{1b}") || text.contains("\\x1b") || text.contains("\\e"),
        "{text}"
    );
    let context = stdout_of(&[
        "profile",
        "--format",
        "context",
        &path.display().to_string(),
    ]);
    assert!(!context.contains('\u{1b}'), "{context:?}");
    assert!(context.len() < 20_000);
}

//! The page stays small: under 1 MB for 100 columns.

use std::fmt::Write as _;

use crate::csv;

/// 100 columns of every kind (numbers, long texts, dates, ids, mostly missing), 2,000 rows,
/// with long column names.
fn wide_table() -> String {
    let mut text = String::new();
    let names: Vec<String> = (0..100)
        .map(|j| format!("a_rather_long_column_name_number_{j:03}_with_more_words"))
        .collect();
    text.push_str(&names.join(","));
    text.push('\n');
    for i in 0..2_000u64 {
        let mut row = Vec::new();
        for j in 0..100u64 {
            let x = (i * 7919 + j * 104_729) % 10_007;
            row.push(match j % 5 {
                0 => format!("{}.{}", x, i % 100),
                1 => format!("long text value {x} {}", "lorem ipsum ".repeat(4)),
                2 => format!("2024-{:02}-{:02}", x % 12 + 1, x % 28 + 1),
                3 if x % 3 == 0 => String::new(),
                3 => format!("{x}"),
                _ => format!("ID-{i}-{j}"),
            });
        }
        writeln!(text, "{}", row.join(",")).unwrap();
    }
    text
}

#[test]
fn a_hundred_columns_stay_under_one_megabyte() {
    let profile = csv(&wide_table(), "wide.csv");
    assert_eq!(profile.columns.len(), 100);
    let html = autocoder_report::html(&profile);
    println!("100 columns, 2,000 rows: {} bytes", html.len());
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    assert_eq!(html.matches("<svg").count(), 101);
}

//! The public record scan.

use autocoder_profile::{ScanOptions, scan};

use crate::basics::write_file;
use crate::chunking::tricky_csv;

#[test]
fn scan_sees_every_record_with_rows_and_lines() {
    let text = tricky_csv(500);
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(&dir, "t.csv", text.as_bytes());
    let options = ScanOptions {
        chunk_bytes: 300,
        threads: 3,
        ..ScanOptions::default()
    };
    let result = scan(
        &path,
        &options,
        |_| Vec::new(),
        |acc: &mut Vec<(u64, u64, String)>, r| {
            acc.push((r.row_in_chunk(), r.line(), r.field(0).unwrap().to_owned()));
        },
    )
    .unwrap();
    assert_eq!(result.header[0], "id");
    assert_eq!(result.rows, 500);
    let mut expected_line = 2;
    let lines: Vec<&str> = text.split('\n').collect();
    let mut row = 0;
    for chunk in &result.chunks {
        for (in_chunk, line, id) in &chunk.value {
            row += 1;
            assert_eq!(chunk.first_row + in_chunk - 1, row);
            assert_eq!(id, &row.to_string(), "the id column holds the row number");
            assert!(*line >= expected_line);
            assert!(lines[usize::try_from(*line - 1).unwrap()].starts_with(&format!("{id},")));
            expected_line = *line + 1;
        }
    }
    assert_eq!(row, 500);
}

//! Which format a file is in: by its first bytes (Parquet's `PAR1`, Arrow's `ARROW1` or an IPC
//! stream's continuation marker, a zip archive's `PK` for Excel, JSON by its first non-blank
//! byte), then by its extension; CSV otherwise.

use std::io::Read;
use std::path::Path;

use crate::ProfileError;
use autocoder_schema::FileFormat;

/// Bytes read to detect the format.
const PROBE: usize = 4096;

/// The format of the file at `path` (`-`, standard input, is CSV: its bytes cannot be read
/// twice).
pub(crate) fn detect(path: &Path) -> Result<FileFormat, ProfileError> {
    if path.as_os_str() == "-" || path.is_dir() {
        return Ok(FileFormat::Csv);
    }
    let mut file = std::fs::File::open(path).map_err(|e| ProfileError::io(path, e))?;
    let mut head = Vec::with_capacity(PROBE);
    (&mut file)
        .take(PROBE as u64)
        .read_to_end(&mut head)
        .map_err(|e| ProfileError::io(path, e))?;
    Ok(from_content(&head).unwrap_or_else(|| from_extension(path)))
}

/// The format the first bytes of a file prove, if any.
pub fn from_content(head: &[u8]) -> Option<FileFormat> {
    if head.starts_with(b"PAR1") {
        return Some(FileFormat::Parquet);
    }
    if head.starts_with(b"ARROW1") {
        return Some(FileFormat::Arrow);
    }
    // An IPC stream: a continuation marker, then the length of the schema message.
    if head.len() >= 8 && head.starts_with(&[0xFF; 4]) && head[4..8] != [0; 4] {
        return Some(FileFormat::Arrow);
    }
    if head.starts_with(b"PK\x03\x04") {
        return Some(FileFormat::Xlsx);
    }
    let text = head.strip_prefix(crate::UTF8_BOM).unwrap_or(head);
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => Some(FileFormat::Json),
        Some(b'{') => Some(FileFormat::Jsonl),
        _ => None,
    }
}

/// The format a file's extension names (`.gz` and other compressions are CSV's business).
pub(crate) fn from_extension(path: &Path) -> FileFormat {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "parquet" | "pq" | "parq" => FileFormat::Parquet,
        "arrow" | "arrows" | "feather" | "ipc" => FileFormat::Arrow,
        "jsonl" | "ndjson" => FileFormat::Jsonl,
        "json" => FileFormat::Json,
        "xlsx" | "xlsm" => FileFormat::Xlsx,
        _ => FileFormat::Csv,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_decides_before_the_extension() {
        assert_eq!(from_content(b"PAR1\x15\x04"), Some(FileFormat::Parquet));
        assert_eq!(from_content(b"ARROW1\0\0"), Some(FileFormat::Arrow));
        assert_eq!(
            from_content(&[0xFF, 0xFF, 0xFF, 0xFF, 0x10, 0, 0, 0]),
            Some(FileFormat::Arrow)
        );
        assert_eq!(from_content(b"PK\x03\x04rest"), Some(FileFormat::Xlsx));
        assert_eq!(
            from_content(b"\xEF\xBB\xBF \n [{\"a\": 1}]"),
            Some(FileFormat::Json)
        );
        assert_eq!(from_content(b"{\"a\": 1}\n"), Some(FileFormat::Jsonl));
        assert_eq!(from_content(b"a,b\n1,2\n"), None);
        assert_eq!(from_content(b""), None);
        assert_eq!(
            from_extension(Path::new("x/y.PARQUET")),
            FileFormat::Parquet
        );
        assert_eq!(from_extension(Path::new("y.feather")), FileFormat::Arrow);
        assert_eq!(from_extension(Path::new("y.ndjson")), FileFormat::Jsonl);
        assert_eq!(from_extension(Path::new("y.csv.gz")), FileFormat::Csv);
    }
}

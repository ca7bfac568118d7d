//! Types, nulls and statistics of small tricky files.

use std::io::Write as _;
use std::path::PathBuf;

use autocoder_profile::{Profile, ProfileOptions, profile_path};
use autocoder_schema::DataType;

pub(crate) fn write_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(bytes).unwrap();
    path
}

pub(crate) fn profile_text(text: &str) -> Profile {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(&dir, "t.csv", text.as_bytes());
    profile_path(&path, &ProfileOptions::default(), &|_, _| {}).unwrap()
}

#[test]
fn infers_types_like_pandas() {
    let p = profile_text(
        "id,zip,qty,price,day,at,flag,email,note\n\
         1,02134,3,1.5,2024-01-01,2024-01-01T10:00:00Z,True,a@b.io,\"hello, world\"\n\
         2,10001,NA,2.25,2024-01-02,2024-01-02T11:30:00Z,False,c@d.io,\"multi\nline\"\n\
         3,94105,7,,2024-01-03,2024-01-03T12:00:00+01:00,,NA,plain\n",
    );
    let types: Vec<DataType> = p.columns.iter().map(|c| c.dtype).collect();
    assert_eq!(
        types,
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
    assert!(p.columns[0].unique);
    assert!(p.columns[5].utc);
    assert_eq!(p.samples.len(), 3);
    assert_eq!(p.samples[1].line, 3);
}

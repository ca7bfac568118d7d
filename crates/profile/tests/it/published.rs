//! The JSON Schema of the profile document is published in the repository
//! (`crates/profile/profile.schema.json`) and kept current by this test; the CLI tests check
//! real documents against the published file.

use std::path::Path;

#[test]
fn the_published_json_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("profile.schema.json");
    let current = autocoder_profile::profile_json_schema();
    if std::env::var_os("UPDATE_PROFILE_SCHEMA").is_some() {
        std::fs::write(&path, &current).unwrap();
    }
    let published = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        published == current,
        "crates/profile/profile.schema.json is out of date: run \
         `UPDATE_PROFILE_SCHEMA=1 cargo test -p autocoder-profile --test it published`"
    );
    let schema: serde_json::Value = serde_json::from_str(&published).unwrap();
    assert_eq!(schema["title"], "Profile");
    assert!(schema["properties"]["columns"].is_object());
    assert!(schema["$defs"]["ColumnProfile"]["properties"]["dtype"].is_object());
}

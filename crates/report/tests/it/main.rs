//! Integration tests of `autocoder-report`: the page in a real headless Chromium (loads with
//! no console messages, draws its charts, looks like the reference screenshot), its size, and
//! that nothing from the data escapes into markup.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod browser;
mod page;
mod screenshot;
mod size;

use std::path::{Path, PathBuf};

use autocoder_profile::{Profile, ProfileOptions, profile_path, profile_reader};

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The profile of a file under `testdata/real/`, named as the command line would name it.
pub(crate) fn real(name: &str) -> Profile {
    let path = root().join("testdata/real").join(name);
    let mut profile = profile_path(&path, &options(), &|_, _| {}).unwrap();
    profile.source = format!("testdata/real/{name}");
    profile
}

/// The profile of CSV text.
pub(crate) fn csv(text: &str, name: &str) -> Profile {
    profile_reader(text.as_bytes(), name, &options(), &|_, _| {}).unwrap()
}

fn options() -> ProfileOptions {
    ProfileOptions {
        threads: 1,
        ..ProfileOptions::default()
    }
}

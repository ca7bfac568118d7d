//! How a bubblewrap sandbox started as root becomes the run's unprivileged uid: `drop-uid`
//! (`native/drop_uid.c`, built by `build.rs` and embedded here), handed to bubblewrap through a
//! pipe and written into the sandbox's read-only root, or `setpriv` (util-linux) on targets the
//! program does not support. Both leave the script with the uid and gid it was leased, no
//! supplementary groups and no capability in any set; `drop-uid` costs about a third of
//! `setpriv`'s start (no dynamic loader, no libc start-up).

use std::ffi::OsString;

/// Where `drop-uid` is inside the sandbox.
pub(crate) const SANDBOX_PATH: &str = "/.autocoder/drop-uid";

/// The program's bytes, when this target has it.
#[cfg(drop_uid_helper)]
pub(crate) const PROGRAM: Option<&[u8]> =
    Some(include_bytes!(concat!(env!("OUT_DIR"), "/drop-uid")));
/// The program's bytes, when this target has it.
#[cfg(not(drop_uid_helper))]
pub(crate) const PROGRAM: Option<&[u8]> = None;

/// The first line a failing switch prints before the script starts (bubblewrap's own errors
/// start with `bwrap: `).
pub(crate) const FAILURE_PREFIX: &str = if PROGRAM.is_some() {
    "drop-uid: "
} else {
    "setpriv: "
};

/// The words before the script's command line that run it as `uid`.
pub(crate) fn wrapper(uid: u32) -> Vec<OsString> {
    if PROGRAM.is_some() {
        return vec![SANDBOX_PATH.into(), uid.to_string().into()];
    }
    [
        "setpriv".into(),
        format!("--reuid={uid}"),
        format!("--regid={uid}"),
        "--clear-groups".into(),
        "--inh-caps=-all".into(),
        "--bounding-set=-all".into(),
        "--".into(),
    ]
    .into_iter()
    .map(OsString::from)
    .collect()
}

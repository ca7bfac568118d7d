//! What a sandboxed run mounts: the invocation's files (script, named files, inputs), the files
//! placed in the work directory (read-only, inside the sandbox's own scratch `/var/work`), the
//! outputs directory, and the environment. Private files the sandbox's uid could not read are
//! copied into a private staging directory, each copy owned by that uid and readable by it
//! alone, never by everyone.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::bwrap::Mount;
use crate::cleanup;
use crate::error::SandboxError;
use crate::io::OUTPUTS_DIR;
use crate::sandbox::{Invocation, WORK_DIR};
use crate::spec::RunSpec;

/// The mounts of a sandboxed run, and the staging directory of private files (kept alive by
/// the returned guard). `run_as`: the uid the script runs as, when it is not ours.
pub(crate) fn sandbox_mounts(
    spec: &RunSpec,
    inv: &Invocation,
    run_as: Option<u32>,
    docker: bool,
) -> Result<(Vec<Mount>, Option<tempfile::TempDir>), SandboxError> {
    let mut mounts = inv.mounts.clone();
    if inv.work_writable {
        mounts.push(Mount {
            host: spec.work_dir.clone(),
            dest: WORK_DIR.into(),
            writable: true,
        });
        return finish_mounts(spec, mounts, run_as, docker);
    }
    let mut entries: Vec<_> = std::fs::read_dir(&spec.work_dir)
        .map_err(SandboxError::io("listing", &spec.work_dir))?
        .collect::<Result<_, _>>()
        .map_err(SandboxError::io("listing", &spec.work_dir))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        mounts.push(Mount {
            host: entry.path(),
            dest: Path::new(WORK_DIR).join(entry.file_name()),
            writable: false,
        });
    }
    finish_mounts(spec, mounts, run_as, docker)
}

/// The mounts every sandboxed run has after its own: private files staged, the outputs
/// directory, the environment.
fn finish_mounts(
    spec: &RunSpec,
    mut mounts: Vec<Mount>,
    run_as: Option<u32>,
    docker: bool,
) -> Result<(Vec<Mount>, Option<tempfile::TempDir>), SandboxError> {
    // The unprivileged uid must be able to read what is mounted read-only.
    let staging = match run_as {
        Some(uid) => stage_private_files(&mut mounts, uid)?,
        None => None,
    };
    mounts.push(Mount {
        host: spec.outputs_dir.clone(),
        dest: OUTPUTS_DIR.into(),
        writable: true,
    });
    // Docker runs find the environment in its image (`docker_image_for`), not in a mount.
    for p in [&spec.env.root, &spec.env.base_prefix] {
        if !docker && !p.starts_with("/usr") && !mounts.iter().any(|m| p.starts_with(&m.dest)) {
            mounts.push(Mount {
                host: p.clone(),
                dest: p.clone(),
                writable: false,
            });
        }
    }
    Ok((mounts, staging))
}

/// Copies read-only mounted files that `uid` may not read into a staging directory only root
/// can enter, each copy owned by `uid` with mode 0400, and points their mounts there.
fn stage_private_files(
    mounts: &mut [Mount],
    uid: u32,
) -> Result<Option<tempfile::TempDir>, SandboxError> {
    let mut staging: Option<tempfile::TempDir> = None;
    for (i, m) in mounts.iter_mut().enumerate() {
        let meta = std::fs::metadata(&m.host).map_err(SandboxError::io("reading", &m.host))?;
        let readable = if meta.is_dir() { 0o005 } else { 0o004 };
        if m.writable || meta.permissions().mode() & readable == readable {
            continue;
        }
        if meta.is_dir() {
            return Err(SandboxError::BadInput {
                name: m.dest.display().to_string(),
                reason: format!(
                    "the directory {} is private (not world-readable); the sandbox runs as an unprivileged user, so `chmod -R o+rX` it",
                    m.host.display()
                ),
            });
        }
        if staging.is_none() {
            // Made 0700 by tempfile: bubblewrap (root) mounts from it, nobody else enters.
            staging = Some(cleanup::temp_dir("stage")?);
        }
        let Some(dir) = staging.as_ref() else {
            continue;
        };
        let copy = dir.path().join(i.to_string());
        std::fs::copy(&m.host, &copy).map_err(SandboxError::io("staging", &m.host))?;
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o400))
            .map_err(SandboxError::io("protecting", &copy))?;
        std::os::unix::fs::chown(&copy, Some(uid), Some(uid))
            .map_err(SandboxError::io("handing over", &copy))?;
        m.host = copy;
    }
    Ok(staging)
}

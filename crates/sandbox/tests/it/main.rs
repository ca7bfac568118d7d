//! Integration tests: real environments built with uv, real bubblewrap sandboxes, real pytest.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attacks;
mod command;
mod docker;
mod env;
mod io;
mod isolation;
mod params;
mod pytest;
mod system;

use std::path::{Path, PathBuf};
use std::time::Duration;

use autocoder_sandbox::{Env, EnvCache, EnvSpec, Limits, PythonSpec, RunOutcome, RunSpec, Sandbox};

/// The test interpreter (a venv that also holds uv); tests fail, not skip, without it.
pub(crate) fn test_python() -> PathBuf {
    PathBuf::from(
        std::env::var_os("AUTOCODER_TEST_PYTHON").expect(
            "AUTOCODER_TEST_PYTHON must name the test interpreter (scripts/test sets it up)",
        ),
    )
}

/// uv from the test interpreter's bin directory, else whatever the cache finds.
pub(crate) fn cache_in(dir: &Path) -> EnvCache {
    let cache =
        EnvCache::new(dir).with_uv_cache(Path::new(env!("CARGO_TARGET_TMPDIR")).join("uv-cache"));
    let uv = test_python().parent().unwrap().join("uv");
    if uv.is_file() {
        cache.with_uv(uv)
    } else {
        cache
    }
}

/// The environment most tests share: pytest only, built once per target directory.
pub(crate) async fn shared_env() -> Env {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("envs");
    let spec = EnvSpec::new::<&str>(&[])
        .unwrap()
        .with_python(PythonSpec::Path(test_python()));
    cache_in(&dir).ensure(&spec).await.unwrap()
}

/// Writes `code` to a script in a fresh directory and runs it with `limits` in bubblewrap.
pub(crate) async fn run_code(code: &str, limits: Limits) -> (RunOutcome, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.py");
    std::fs::write(&script, code).unwrap();
    let mut spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run")).unwrap();
    spec.limits = limits;
    let outcome = Sandbox::default().run(&spec).await.unwrap();
    (outcome, dir)
}

/// Short limits for tests that are meant to hit them.
pub(crate) fn tight() -> Limits {
    Limits {
        wall_timeout: Duration::from_secs(20),
        ..Limits::default()
    }
}

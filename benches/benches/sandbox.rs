//! The sandbox's speed targets (issue 5): start-up over a bare `python -c pass` (at most +10 ms),
//! reuse of a built environment (under 50 ms), and a new environment with pandas and pytest from
//! uv's cache (under 2 s).
//!
//! `AUTOCODER_TEST_PYTHON` picks the interpreter (uv is taken from beside it when present);
//! `AUTOCODER_BENCH_DOCKER=1` adds the Docker backend. Measure on an idle machine: `chrt -f`
//! no longer helps, since sandboxed scripts drop a real-time policy.
//!
//! Measured 2026-11-26 on an AMD EPYC (release, model server paused, round-robin with the build
//! before the change, two rounds): bare 8.31 / 8.04 ms, bubblewrap run 15.86 / 16.39 ms (+7.55 /
//! +8.35 ms) with the uid switched by `drop-uid`; +9.49 / +10.55 ms with `setpriv` in the same run.
//!
//! Measured 2026-11-26 on an Intel Xeon (release, model server paused, two rounds): bare 10.4 /
//! 10.3 ms, bubblewrap run 20.8 / 21.8 ms (+10.4 / +11.5 ms; +21.5 / +19.3 before the cgroup
//! join through `tasks` and the rlimits set before `exec`, in the same run), `--sandbox none`
//! 11.3 / 12.3 ms (`docs/notes/sandbox-hardening.md`).
//!
//! Measured 2026-11-26 (an AMD EPYC), other jobs paused: bare 8.0-8.3 ms, bubblewrap run 20.6-20.9 ms (+12.6
//! ms; 13.8-14.3 ms before the hardening of issue 17, in the same run), `--sandbox none` 10.2 ms.
//! The difference is the v1 cgroup migration (`docs/notes/sandbox-hardening.md`).
//!
//! Measured 2026-11-23 (2 cores, `chrt -f 50`): bare `python -c pass` 10.3 ms, bubblewrap run
//! 19.7 ms (+9.4 ms), `--sandbox none` 11.8 ms; environment reuse 11 µs in-process (one ~10 ms
//! interpreter probe per process); new pandas + pytest environment from uv's cache 527 ms.
//! Docker run (no `chrt`, load ~10): 308 ms with the environment bind-mounted; 397 ms (load ~6.5,
//! fuse-overlayfs) from the environment's own image. Docker env image (`AUTOCODER_BENCH_DOCKER=1`):
//! reuse 3.2 ms; a new pandas+pytest environment's image 11.8 s (interpreter image reused); the
//! interpreter's image itself, once per interpreter, about 7 s.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use autocoder_sandbox::{Backend, Env, EnvCache, EnvSpec, PythonSpec, RunSpec, Sandbox};
use criterion::{Criterion, criterion_group, criterion_main};

fn python() -> PathBuf {
    std::env::var_os("AUTOCODER_TEST_PYTHON")
        .map_or_else(|| PathBuf::from("python3"), PathBuf::from)
}

fn cache(dir: &Path) -> EnvCache {
    let uv_cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-uv-cache");
    let cache = EnvCache::new(dir).with_uv_cache(uv_cache);
    let uv = python().parent().map(|d| d.join("uv"));
    match uv {
        Some(uv) if uv.is_file() => cache.with_uv(uv),
        _ => cache,
    }
}

/// Environments live in the target directory: the Docker backend refuses ones under `/tmp`.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn docker_enabled() -> bool {
    std::env::var_os("AUTOCODER_BENCH_DOCKER").is_some()
}

fn spec(packages: &[&str]) -> EnvSpec {
    EnvSpec::new(packages)
        .unwrap()
        .with_python(PythonSpec::Path(python()))
}

fn start_up(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let envs = scratch();
    let env: Env = rt.block_on(cache(envs.path()).ensure(&spec(&[]))).unwrap();
    let mut group = c.benchmark_group("start");
    group.sample_size(30);
    let bare = env.python.clone();
    group.bench_function("bare python -c pass", |b| {
        b.iter(|| {
            #[allow(
                clippy::disallowed_methods,
                reason = "the baseline is a bare process start"
            )]
            let status = std::process::Command::new(&bare)
                .args(["-c", "pass"])
                .status()
                .unwrap();
            assert!(status.success());
        });
    });
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("pass.py");
    std::fs::write(&script, "pass\n").unwrap();
    let mut backends = vec![Backend::Bwrap, Backend::None];
    if docker_enabled() {
        backends.push(Backend::Docker);
    }
    for backend in backends {
        let sandbox = Sandbox::new(backend);
        let run = RunSpec::new(env.clone(), &script, &dir.path().join(backend.name())).unwrap();
        group.bench_function(format!("sandbox {} run of pass.py", backend.name()), |b| {
            b.iter(|| {
                let out = rt.block_on(sandbox.run(&run)).unwrap();
                assert!(out.success(), "{out:?}");
            });
        });
    }
    group.finish();
}

fn environments(c: &mut Criterion) {
    // `cargo test --all-targets` runs benches once without `--bench`: skip the pandas downloads.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let envs = scratch();
    let pandas = spec(&["pandas"]);
    // Warm uv's cache (downloads once) and build the environment reused below.
    rt.block_on(cache(envs.path()).ensure(&pandas)).unwrap();
    let mut group = c.benchmark_group("env");
    group.sample_size(10);
    group.bench_function("reuse of a built pandas+pytest environment", |b| {
        b.iter(|| {
            let env = rt.block_on(cache(envs.path()).ensure(&pandas)).unwrap();
            assert!(!env.freshly_built);
        });
    });
    group.measurement_time(Duration::from_secs(30));
    group.bench_function("new pandas+pytest environment from uv's cache", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let fresh = scratch();
                let start = Instant::now();
                let env = rt.block_on(cache(fresh.path()).ensure(&pandas)).unwrap();
                total += start.elapsed();
                assert!(env.freshly_built);
            }
            total
        });
    });
    group.finish();
}

fn docker_images(c: &mut Criterion) {
    if !std::env::args().any(|a| a == "--bench") || !docker_enabled() {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let sandbox = Sandbox::new(Backend::Docker);
    let envs = scratch();
    let pandas = spec(&["pandas"]);
    let env = rt.block_on(cache(envs.path()).ensure(&pandas)).unwrap();
    // Builds the base and interpreter images if needed, and this environment's image.
    rt.block_on(sandbox.prepare_docker_image(&env)).unwrap();
    let mut group = c.benchmark_group("docker image");
    group.sample_size(10);
    group.bench_function("reuse of a pandas+pytest environment's image", |b| {
        b.iter(|| {
            let image = rt.block_on(sandbox.prepare_docker_image(&env)).unwrap();
            assert!(!image.built);
        });
    });
    group.measurement_time(Duration::from_secs(60));
    group.bench_function("new pandas+pytest environment's image", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // The same environment id at a new path: its image is rebuilt.
                let fresh = scratch();
                let env = rt.block_on(cache(fresh.path()).ensure(&pandas)).unwrap();
                let start = Instant::now();
                let image = rt.block_on(sandbox.prepare_docker_image(&env)).unwrap();
                total += start.elapsed();
                assert!(image.built);
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, start_up, environments, docker_images);
criterion_main!(benches);

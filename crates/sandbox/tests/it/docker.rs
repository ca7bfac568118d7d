//! The Docker backend: the same contract and limits as bubblewrap. These tests need a running
//! engine and fail without one (skip them with `cargo test -- --skip docker`).

use std::time::Duration;

use autocoder_sandbox::Outcome::{Failed, Passed, XFailed};
use autocoder_sandbox::{Backend, IoType, Limits, PytestSpec, RunSpec, Sandbox, SourceFile, Value};

use crate::shared_env;

/// The Docker sandbox; fails the test when no engine answers.
pub(crate) async fn docker() -> Sandbox {
    let sandbox = Sandbox::new(Backend::Docker);
    if let Err(e) = sandbox.check_ready().await {
        panic!(
            "the Docker tests need a running engine ({e}); start one, or skip them with `cargo test -- --skip docker`"
        );
    }
    sandbox
}

async fn run(
    sandbox: &Sandbox,
    code: &str,
    limits: Limits,
) -> (autocoder_sandbox::RunOutcome, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.py");
    std::fs::write(&script, code).unwrap();
    let mut spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run")).unwrap();
    spec.limits = limits;
    (sandbox.run(&spec).await.unwrap(), dir)
}

fn tight() -> Limits {
    Limits {
        wall_timeout: Duration::from_secs(30),
        ..Limits::default()
    }
}

#[tokio::test]
async fn docker_isolates_network_files_and_secrets() {
    let sandbox = docker().await;
    let code = r#"
import os, socket
try:
    socket.create_connection(("1.1.1.1", 80), timeout=3)
    print("CONNECTED")
except OSError as e:
    print("blocked", e)
for path in ["/etc/x", "/usr/x", "/var/task/x", "/x"]:
    try:
        open(path, "w").write("x")
        print("WROTE", path)
    except OSError:
        print("denied", path)
open("/var/work/ok", "w").write("ok")
open("/tmp/ok", "w").write("ok")
print("uid", os.getuid())
print("keys", [k for k in os.environ if k.endswith("_API_KEY")])
"#;
    let (out, d) = run(&sandbox, code, tight()).await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("blocked"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("CONNECTED") && !out.stdout.contains("WROTE"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("denied").count(), 4, "{}", out.stdout);
    assert!(!out.stdout.contains("uid 0"), "{}", out.stdout);
    assert!(out.stdout.contains("keys []"), "{}", out.stdout);
    // The work directory is the container's own scratch space; only outputs reach the host.
    assert!(!d.path().join("run/work/ok").exists());
}

#[tokio::test]
async fn docker_limits_memory_time_processes_and_output() {
    let sandbox = docker().await;
    let (out, _d) = run(
        &sandbox,
        "x = bytearray(2 << 30)\nx[::4096] = b'1' * len(x[::4096])\n",
        Limits {
            memory_bytes: 256 << 20,
            ..tight()
        },
    )
    .await;
    assert!(out.memory_exceeded, "{out:?}");

    let (out, _d) = run(
        &sandbox,
        "while True:\n    pass\n",
        Limits {
            wall_timeout: Duration::from_secs(3),
            ..Limits::default()
        },
    )
    .await;
    assert!(out.timed_out, "{out:?}");

    let fork = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        print('fork refused', flush=True)\n        os._exit(0)\n";
    let (out, _d) = run(
        &sandbox,
        fork,
        Limits {
            processes: 32,
            ..tight()
        },
    )
    .await;
    assert!(
        !out.timed_out && out.stdout.contains("fork refused"),
        "{out:?}"
    );

    let flood = "for _ in range(2000):\n    print('x' * 5000)\n";
    let (out, _d) = run(
        &sandbox,
        flood,
        Limits {
            output_cap_bytes: 64 << 10,
            ..tight()
        },
    )
    .await;
    assert!(
        out.stdout.contains("[... truncated "),
        "{}",
        out.stdout.len()
    );
}

#[tokio::test]
async fn docker_typed_io_and_pytest() {
    let sandbox = docker().await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.py");
    std::fs::write(&script, "import argparse\np = argparse.ArgumentParser()\np.add_argument('--n')\np.add_argument('--data')\na = p.parse_args()\nopen('/var/outputs/total', 'w').write(str(int(a.n) * 2))\nopen('/var/outputs/seen', 'w').write(open(a.data).read())\n").unwrap();
    let data = dir.path().join("in.csv");
    std::fs::write(&data, "a\n1\n").unwrap();
    let spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run"))
        .unwrap()
        .input("n", Value::Int(21))
        .input("data", Value::File(data))
        .output("total", IoType::Int)
        .output("seen", IoType::Str);
    let out = sandbox.run(&spec).await.unwrap();
    assert!(out.success(), "{out:?}");
    let o = out.outputs.unwrap();
    assert_eq!(o["total"], Value::Int(42));
    assert_eq!(o["seen"], Value::Str("a\n1".into()));

    let files = vec![
        SourceFile::new("solution.py", "def f():\n    return 1\n"),
        SourceFile::new(
            "test_s.py",
            "import pytest\nfrom solution import f\ndef test_ok():\n    assert f() == 1\ndef test_bad():\n    assert f() == 2\n@pytest.mark.xfail\ndef test_x():\n    assert 0\n",
        ),
    ];
    let r = sandbox
        .run_pytest(
            &PytestSpec::new(shared_env().await, files),
            &dir.path().join("pt"),
        )
        .await
        .unwrap();
    let outcomes: Vec<_> = r.tests.iter().map(|t| (t.id.as_str(), t.outcome)).collect();
    assert_eq!(
        outcomes,
        [
            ("test_s.py::test_ok", Passed),
            ("test_s.py::test_bad", Failed),
            ("test_s.py::test_x", XFailed)
        ]
    );
}

#[tokio::test]
async fn docker_reaps_containers_orphaned_by_dead_processes() {
    use bollard::models::ContainerCreateBody;
    use bollard::query_parameters::{CreateContainerOptions, InspectContainerOptions};
    let sandbox = docker().await;
    // Make sure the base image exists before faking an orphan on it.
    let _ = run(&sandbox, "pass", tight()).await;
    let client = bollard::Docker::connect_with_local_defaults().unwrap();
    let name = format!("autocoder-orphan-test-{}", std::process::id());
    let labels = std::collections::HashMap::from([
        ("autocoder.sandbox".to_owned(), "1".to_owned()),
        // Above the kernel's pid limit: certainly not a live process.
        ("autocoder.pid".to_owned(), "4194305".to_owned()),
    ]);
    let body = ContainerCreateBody {
        image: Some(autocoder_sandbox::DockerConfig::default().base_image),
        cmd: Some(vec!["true".into()]),
        labels: Some(labels),
        ..Default::default()
    };
    let options = CreateContainerOptions {
        name: Some(name.clone()),
        ..Default::default()
    };
    client.create_container(Some(options), body).await.unwrap();
    let (out, _d) = run(&sandbox, "pass", tight()).await;
    assert!(out.success(), "{out:?}");
    let left = client
        .inspect_container(&name, None::<InspectContainerOptions>)
        .await;
    assert!(left.is_err(), "the orphan {name} was not removed");
}

#[tokio::test]
async fn docker_env_image_is_built_once_then_reused_without_mounts() {
    let sandbox = docker().await;
    let env = shared_env().await;
    let tag = autocoder_sandbox::docker_image_for(&env);
    assert_eq!(tag, format!("autocoder/env:{}", env.id));
    // The first call may build (or find the image another test built); the second must reuse.
    let first = sandbox.prepare_docker_image(&env).await.unwrap();
    assert_eq!(first.tag, tag);
    let again = sandbox.prepare_docker_image(&env).await.unwrap();
    assert!(!again.built, "the second call rebuilt {tag}");
    assert_eq!(again.id, first.id);

    // The run finds the environment in the image: nothing of it is mounted from the host.
    let code = format!(
        "import sys, pytest\nroots = [{:?}, {:?}]\nmounted = [l.split()[4] for l in open('/proc/self/mountinfo') if any(l.split()[4].startswith(r) for r in roots)]\nprint('prefix', sys.prefix)\nprint('mounted', mounted)\n",
        env.root.display().to_string(),
        env.base_prefix.display().to_string()
    );
    let (out, _d) = run(&sandbox, &code, tight()).await;
    assert!(out.success(), "{out:?}");
    assert!(
        out.stdout.contains("prefix /opt/autocoder/venv"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("mounted []"), "{}", out.stdout);
    assert_eq!(out.docker_image.as_deref(), Some(tag.as_str()));
    let after = sandbox.prepare_docker_image(&env).await.unwrap();
    assert!(!after.built);
    assert_eq!(after.id, first.id, "a run must not rebuild the image");
}

#[tokio::test]
async fn docker_env_image_follows_the_environment_path_wherever_it_is() {
    use autocoder_sandbox::{EnvSpec, PythonSpec};
    let sandbox = docker().await;
    let spec = EnvSpec::bare::<&str>(&[])
        .unwrap()
        .with_python(PythonSpec::Path(crate::test_python()));
    // Caches under /tmp (the container's own /tmp covers that path), the target directory, and
    // a path with a colon (which a `host:dest:mode` bind string cannot carry).
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (one, two) = (
        tempfile::tempdir_in("/tmp").unwrap(),
        tempfile::Builder::new()
            .prefix("with:colon-")
            .tempdir_in(target)
            .unwrap(),
    );
    let a = crate::cache_in(one.path()).ensure(&spec).await.unwrap();
    let b = crate::cache_in(two.path()).ensure(&spec).await.unwrap();
    assert_eq!(a.id, b.id);
    let image_a = sandbox.prepare_docker_image(&a).await.unwrap();
    // Same id elsewhere on disk: the image of `a` was built from another directory, so it is
    // rebuilt.
    let image_b = sandbox.prepare_docker_image(&b).await.unwrap();
    assert!(image_b.built, "{image_b:?}");
    assert_ne!(image_b.id, image_a.id);
    assert_eq!(image_b.tag, image_a.tag);
    let client = bollard::Docker::connect_with_local_defaults().unwrap();
    assert!(
        client.inspect_image(&image_a.id).await.is_err(),
        "the stale image {} was kept",
        image_a.id
    );
    for env in [&b, &a] {
        let dir = tempfile::Builder::new()
            .prefix("run:dir-")
            .tempdir()
            .unwrap();
        let script = dir.path().join("s.py");
        std::fs::write(
            &script,
            "import sys\nprint(sys.prefix, open(sys.argv[2]).read())\n",
        )
        .unwrap();
        let data = dir.path().join("in:put.csv");
        std::fs::write(&data, "a\n").unwrap();
        let spec = RunSpec::new(env.clone(), &script, &dir.path().join("run"))
            .unwrap()
            .input("data", Value::File(data));
        let out = sandbox.run(&spec).await.unwrap();
        assert!(out.success(), "{out:?}");
        assert_eq!(out.stdout.trim(), "/opt/autocoder/venv a");
    }
}

#[cfg(target_arch = "x86_64")]
#[tokio::test]
async fn docker_seccomp_profile_denies_io_uring_namespaces_and_keyrings() {
    let sandbox = docker().await;
    let code = r#"
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def call(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno()))
params = ctypes.create_string_buffer(120)
call("io_uring_setup", 425, 4, params)
call("unshare_user", 272, 0x10000000)
call("add_key", 248, b"user", b"k", b"v", 1, -3)
call("clone3", 435, 0, 0)
call("socket_inet", 41, 2, 1, 0)
call("socket_unix", 41, 1, 1, 0)
"#;
    let (out, _d) = run(&sandbox, code, tight()).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(
        out.stdout,
        "io_uring_setup EPERM\nunshare_user EPERM\nadd_key EPERM\nclone3 ENOSYS\nsocket_inet EPERM\nsocket_unix ok\n"
    );
}

#[tokio::test]
async fn docker_tmp_and_work_fill_up_at_their_size_and_fifos_are_refused() {
    let sandbox = docker().await;
    for dir in ["/tmp", "/var/work"] {
        let code = format!(
            "import errno\nn = 0\ntry:\n    with open('{dir}/fill', 'wb') as f:\n        while n < 200:\n            f.write(b'x' * (1 << 20)); f.flush(); n += 1\n    print('wrote', n)\nexcept OSError as e:\n    print('full', n, errno.errorcode[e.errno])\n"
        );
        let limits = Limits {
            scratch_bytes: 32 << 20,
            ..tight()
        };
        let (out, _d) = run(&sandbox, &code, limits).await;
        assert!(out.success(), "{out:?}");
        assert!(
            out.stdout.starts_with("full ") && out.stdout.contains("ENOSPC"),
            "{dir}: {}",
            out.stdout
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.py");
    std::fs::write(&script, "import os\nos.mkfifo('/var/outputs/s')\n").unwrap();
    let spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run"))
        .unwrap()
        .output("s", IoType::Str);
    let out = tokio::time::timeout(Duration::from_secs(120), sandbox.run(&spec))
        .await
        .expect("the host hung reading a FIFO output")
        .unwrap();
    let err = out.outputs.unwrap_err();
    assert!(err.to_string().contains("FIFO"), "{err}");
}

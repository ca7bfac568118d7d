//! What untrusted code must not be able to do, and the limits that stop it.

use std::time::Duration;

use autocoder_sandbox::Limits;

use crate::{run_code, tight};

#[tokio::test]
async fn network_connect_fails() {
    let (out, _d) = run_code(
        r#"
import socket
for host in [("1.1.1.1", 80), ("127.0.0.1", 22)]:
    try:
        socket.create_connection(host, timeout=3)
        print("CONNECTED", host)
    except OSError as e:
        print("blocked", host, e)
"#,
        tight(),
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(!out.stdout.contains("CONNECTED"), "{}", out.stdout);
    assert_eq!(out.stdout.matches("blocked").count(), 2, "{}", out.stdout);
}

#[tokio::test]
async fn only_work_dir_outputs_and_tmp_are_writable() {
    let (out, d) = run_code(
        r#"
import os
for path in ["/etc/x", "/usr/x", "/var/task/x", "/x", "/root/x", "/home/x"]:
    try:
        open(path, "w").write("x")
        print("WROTE", path)
    except OSError as e:
        print("denied", path, type(e).__name__)
for path in ["/var/work/ok", "/tmp/ok", "/var/outputs/ok"]:
    open(path, "w").write("ok")
    print("wrote", path)
"#,
        tight(),
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(!out.stdout.contains("WROTE"), "{}", out.stdout);
    assert_eq!(out.stdout.matches("denied").count(), 6, "{}", out.stdout);
    // The work directory is the sandbox's own scratch space; only outputs reach the host.
    assert!(!d.path().join("run/work/ok").exists());
    assert!(d.path().join("run/outputs/ok").is_file());
}

#[tokio::test]
async fn host_secrets_and_home_are_not_visible() {
    let home = std::env::var("HOME").unwrap();
    let secret = std::path::Path::new(&home)
        .join(format!(".autocoder-sandbox-secret-{}", std::process::id()));
    std::fs::write(&secret, "hunter2").unwrap();
    // SAFETY: no other thread of this test binary reads or writes this variable.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("FAKE_API_KEY", "sk-should-not-leak");
    }
    let code = format!(
        r#"
import os
print("ENV", sorted(os.environ))
print("KEY", os.environ.get("FAKE_API_KEY"))
try:
    print("SECRET", open({secret:?}).read())
except OSError as e:
    print("hidden", type(e).__name__)
"#,
        secret = secret.display().to_string()
    );
    let (out, _d) = run_code(&code, tight()).await;
    std::fs::remove_file(&secret).unwrap();
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("KEY None"), "{}", out.stdout);
    assert!(
        out.stdout.contains("hidden FileNotFoundError"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("hunter2"));
    assert!(!out.stdout.contains("API_KEY"), "{}", out.stdout);
}

#[tokio::test]
async fn memory_bomb_is_reported_as_memory_limit() {
    let limits = Limits {
        memory_bytes: 512 << 20,
        ..tight()
    };
    let (out, _d) = run_code("x = bytearray(4 << 30)\nprint('allocated')\n", limits).await;
    assert!(!out.success());
    assert!(out.memory_exceeded, "{out:?}");
    assert!(!out.stdout.contains("allocated"));
}

#[tokio::test]
async fn fork_bomb_is_contained() {
    let limits = Limits {
        processes: 32,
        ..tight()
    };
    let (out, _d) = run_code(
        r#"
import os
while True:
    try:
        os.fork()
    except OSError:
        print("fork refused", flush=True)
        os._exit(0)
"#,
        limits,
    )
    .await;
    assert!(!out.timed_out, "{out:?}");
    assert!(out.stdout.contains("fork refused"), "{out:?}");
}

#[tokio::test]
async fn endless_loop_is_a_timeout_and_the_tree_is_killed() {
    let limits = Limits {
        wall_timeout: Duration::from_secs(2),
        ..Limits::default()
    };
    let (out, d) = run_code(
        r#"
import subprocess, time
subprocess.Popen(["sh", "-c", "sleep 5; echo alive > /var/work/child"])
while True:
    pass
"#,
        limits,
    )
    .await;
    assert!(out.timed_out, "{out:?}");
    assert!(!out.success());
    assert!(out.duration < Duration::from_secs(10), "{:?}", out.duration);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(
        !d.path().join("run/work/child").exists(),
        "a child survived the timeout"
    );
}

#[tokio::test]
async fn output_flood_is_cut_with_a_marker() {
    let limits = Limits {
        output_cap_bytes: 64 << 10,
        ..tight()
    };
    let (out, _d) = run_code(
        "import sys\nfor _ in range(2000):\n    print('x' * 5000)\n    sys.stderr.write('y' * 5000)\n",
        limits,
    )
    .await;
    assert!(out.success(), "{:?}", out.exit_code);
    assert!(out.stdout.len() < (64 << 10) + 100, "{}", out.stdout.len());
    assert!(out.stdout.contains("[... truncated "), "stdout not marked");
    assert!(out.stderr.contains("[... truncated "), "stderr not marked");
}

#[tokio::test]
async fn cpu_limit_stops_busy_code() {
    let limits = Limits {
        cpu_seconds: 1,
        ..tight()
    };
    let (out, _d) = run_code("while True:\n    pass\n", limits).await;
    assert!(!out.timed_out, "{out:?}");
    assert!(out.cpu_exceeded, "{out:?}");
}

/// The script sees the run's rlimits (set before the sandbox starts and inherited), in
/// bubblewrap and without a sandbox alike.
#[tokio::test]
async fn the_runs_rlimits_hold_inside() {
    use autocoder_sandbox::{Backend, RunSpec, Sandbox};
    let limits = Limits {
        memory_bytes: 3 << 30,
        cpu_seconds: 17,
        processes: 99,
        file_size_bytes: 5 << 20,
        open_files: 333,
        ..tight()
    };
    let code = r#"
import resource
for name in ["AS", "CPU", "NPROC", "FSIZE", "NOFILE", "CORE"]:
    soft, hard = resource.getrlimit(getattr(resource, "RLIMIT_" + name))
    print(name, soft, hard)
"#;
    for backend in [Backend::Bwrap, Backend::None] {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("limits.py");
        std::fs::write(&script, code).unwrap();
        let mut spec =
            RunSpec::new(crate::shared_env().await, &script, &dir.path().join("run")).unwrap();
        spec.limits = limits;
        let out = Sandbox::new(backend).run(&spec).await.unwrap();
        assert!(out.success(), "{backend:?}: {out:?}");
        let expected = format!(
            "AS {as_} {as_}\nCPU 17 18\nNPROC 99 99\nFSIZE {fsize} {fsize}\nNOFILE 333 333\nCORE 0 0\n",
            as_ = 3u64 << 30,
            fsize = 5u64 << 20
        );
        assert_eq!(out.stdout, expected, "{backend:?}");
    }
}

//! `autocoder sandbox run|doctor` through the real binary, in a real bubblewrap sandbox.

use std::path::PathBuf;
use std::process::{Command, Output};

fn test_python() -> PathBuf {
    PathBuf::from(
        std::env::var_os("AUTOCODER_TEST_PYTHON").expect(
            "AUTOCODER_TEST_PYTHON must name the test interpreter (scripts/test sets it up)",
        ),
    )
}

/// Runs `autocoder sandbox ARGS` with the test interpreter, its uv and a private env cache.
fn sandbox(args: &[&str], cache: &std::path::Path) -> Output {
    let python = test_python();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_autocoder"));
    cmd.arg("sandbox")
        .args(args)
        .env_remove("RUST_LOG")
        .env("AUTOCODER_PYTHON", &python)
        .env("AUTOCODER_ENV_CACHE", cache);
    let uv = python.parent().unwrap().join("uv");
    if uv.is_file() {
        cmd.env("AUTOCODER_UV", uv);
    }
    cmd.output().unwrap()
}

#[test]
fn run_passes_arguments_and_the_scripts_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("main.py");
    std::fs::write(
        &script,
        "import sys, helper\nprint(helper.X, sys.argv[1:])\nsys.exit(3)\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("helper.py"), "X = 'helped'\n").unwrap();
    let out = sandbox(
        &["run", script.to_str().unwrap(), "--", "--rows", "a b"],
        &dir.path().join("envs"),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "helped ['--rows', 'a b']\n"
    );
}

#[test]
fn doctor_reports_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let out = sandbox(&["doctor", "--json"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "python",
            "uv",
            "bwrap",
            "docker",
            "none",
            "cgroup",
            "leftovers",
            "models"
        ]
    );
}

/// `autocoder sandbox ARGS` started through the test Python, which first runs `prepare` (to
/// hold descriptors or keys the way a caller's shell would) and then execs the binary.
fn sandbox_after(prepare: &str, args: &[&str], cache: &std::path::Path) -> Output {
    let python = test_python();
    let mut exec_args = vec!["autocoder".to_owned(), "sandbox".to_owned()];
    exec_args.extend(args.iter().map(|a| (*a).to_owned()));
    let code = format!(
        "import os, sys\n{prepare}\nos.execv({bin:?}, {exec_args:?})\n",
        bin = env!("CARGO_BIN_EXE_autocoder"),
    );
    let mut cmd = Command::new(&python);
    cmd.args(["-c", &code])
        .env_remove("RUST_LOG")
        .env("AUTOCODER_PYTHON", &python)
        .env("AUTOCODER_ENV_CACHE", cache);
    let uv = python.parent().unwrap().join("uv");
    if uv.is_file() {
        cmd.env("AUTOCODER_UV", uv);
    }
    cmd.output().unwrap()
}

#[test]
fn the_callers_open_descriptors_do_not_reach_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("root-only");
    std::fs::write(&secret, "top secret\n").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let script = dir.path().join("fds.py");
    std::fs::write(
        &script,
        "import os\nfor fd in (7, 8):\n    try:\n        os.fstat(fd)\n        print('open', fd)\n    except OSError:\n        print('closed', fd)\n",
    )
    .unwrap();
    // `exec 7</etc/passwd 8>>root-only; autocoder sandbox run fds.py`, as a shell would.
    let prepare = format!(
        "r = os.open('/etc/passwd', os.O_RDONLY); os.dup2(r, 7)\nw = os.open({secret:?}, os.O_WRONLY | os.O_APPEND); os.dup2(w, 8)",
        secret = secret.display().to_string()
    );
    let out = sandbox_after(
        &prepare,
        &["run", script.to_str().unwrap()],
        &dir.path().join("envs"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "closed 7\nclosed 8\n");
}

/// A caller under a real-time policy (`chrt -f`, as benchmarks run) must neither fail to start
/// the sandbox (a v1 `cpu` cgroup without a real-time budget refuses real-time tasks) nor hand
/// the script a priority that can starve the machine.
#[test]
fn a_real_time_caller_starts_the_script_under_the_normal_policy() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("policy.py");
    std::fs::write(
        &script,
        "import os\nprint(os.sched_getscheduler(0) == os.SCHED_OTHER)\n",
    )
    .unwrap();
    let out = sandbox_after(
        "os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))",
        &["run", script.to_str().unwrap()],
        &dir.path().join("envs"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "True\n");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_key_in_the_callers_session_keyring_is_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("keys.py");
    std::fs::write(
        &script,
        r#"import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
key = libc.syscall(250, 10, -3, b"user", b"autocoder-test-key", 0)  # KEYCTL_SEARCH @s
if key < 0:
    print("search", errno.errorcode[ctypes.get_errno()])
else:
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(250, 11, key, buf, 64)  # KEYCTL_READ
    print("read", buf.raw[:n].decode() if n >= 0 else errno.errorcode[ctypes.get_errno()])
"#,
    )
    .unwrap();
    // A new session keyring holding a user key, as `keyctl new_session; keyctl add ...` makes.
    let prepare = r#"import ctypes
libc = ctypes.CDLL(None, use_errno=True)
assert libc.syscall(250, 1, None) >= 0  # KEYCTL_JOIN_SESSION_KEYRING
assert libc.syscall(248, b"user", b"autocoder-test-key", b"hunter2", 7, -3) >= 0  # add_key @s"#;
    let out = sandbox_after(
        prepare,
        &["run", script.to_str().unwrap()],
        &dir.path().join("envs"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("hunter2"), "{stdout}");
    assert_eq!(stdout, "search EPERM\n");
}

#[test]
fn only_the_script_and_what_it_imports_or_names_are_mounted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("main.py");
    std::fs::write(
        &script,
        "import os, helper\nprint(sorted(os.listdir('/var/task')))\nprint(helper.deep())\nprint(open('/var/task/notes.txt').read())\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("helper.py"),
        "import inner\ndef deep():\n    return inner.X\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("inner.py"), "X = 'inner'\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "named").unwrap();
    let settings = dir.path().join("local_settings.py");
    std::fs::write(&settings, "PASSWORD = 'hunter2'\n").unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(dir.path().join("other.py"), "pass\n").unwrap();
    let notes = dir.path().join("notes.txt");
    let out = sandbox(
        &[
            "run",
            script.to_str().unwrap(),
            "--file",
            notes.to_str().unwrap(),
        ],
        &dir.path().join("envs"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "['helper.py', 'inner.py', 'main.py', 'notes.txt']\ninner\nnamed\n"
    );
}

/// Starts `autocoder sandbox run` on a script that sleeps, with its own `TMPDIR`, sends it
/// `signal` once the sandbox runs, and returns its exit status and the `TMPDIR`.
fn interrupted(signal: &str, backend: &str) -> (std::process::ExitStatus, tempfile::TempDir, u32) {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let script = dir.path().join("sleep.py");
    std::fs::write(&script, "import time\ntime.sleep(120)\n").unwrap();
    let python = test_python();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_autocoder"));
    cmd.args([
        "sandbox",
        "run",
        script.to_str().unwrap(),
        "--sandbox",
        backend,
    ])
    .env_remove("RUST_LOG")
    .env("TMPDIR", tmp.path())
    .env("AUTOCODER_PYTHON", &python)
    // Shared between runs (and kept): the Docker run reuses the environment's image.
    .env(
        "AUTOCODER_ENV_CACHE",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("interrupted-envs"),
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    let uv = python.parent().unwrap().join("uv");
    if uv.is_file() {
        cmd.env("AUTOCODER_UV", uv);
    }
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    // Running once the script's interpreter is a descendant of ours.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    let started = || {
        descendants(pid).iter().any(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.contains("sleep.py"))
        }) || (backend == "docker" && container_of(pid).is_some())
    };
    while !started() {
        assert!(
            std::time::Instant::now() < deadline,
            "the sandbox never started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "autocoder exited early"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "autocoder ignored SIG{signal}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    (status, tmp, pid)
}

/// Every descendant of `pid`, from `/proc`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let parent_pid = after.split_whitespace().nth(1).unwrap().parse().unwrap();
        parents.push((p, parent_pid));
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// The id of a container `autocoder` process `pid` created, if one exists.
fn container_of(pid: u32) -> Option<String> {
    let out = Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=autocoder.pid={pid}"),
        ])
        .output()
        .unwrap();
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (!id.is_empty()).then_some(id)
}

/// Cgroups named after `pid` left in any hierarchy.
fn cgroups_of(pid: u32) -> Vec<String> {
    let out = Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "4", "-type", "d", "-name"])
        .arg(format!("autocoder-{pid}-*"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn sigint_and_sigterm_leave_no_temporary_directory_or_cgroup() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let (status, tmp, pid) = interrupted(signal, "bwrap");
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "SIG{signal} left {left:?}");
        assert!(
            cgroups_of(pid).is_empty(),
            "SIG{signal} left {:?}",
            cgroups_of(pid)
        );
        assert_eq!(status.code(), Some(code), "SIG{signal}: {status:?}");
    }
}

#[test]
fn docker_sigint_stops_and_removes_the_container() {
    let (status, tmp, pid) = interrupted("INT", "docker");
    assert_eq!(container_of(pid), None, "the container outlived autocoder");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left {left:?}");
    assert_eq!(status.code(), Some(130), "{status:?}");
}

/// `AUTOCODER_ENV_CACHE` set to nothing counts as unset (the default directory under
/// `XDG_CACHE_HOME`), and a relative one is taken from the current directory: before, an empty
/// value built the environment in the current directory under a relative path, and the
/// sandboxed interpreter could not be executed.
#[test]
fn an_empty_or_relative_env_cache_variable_still_works() {
    let cwd = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let script = cwd.path().join("hello.py");
    std::fs::write(&script, "print('hello')\n").unwrap();
    let python = test_python();
    for (value, envs) in [
        ("", xdg.path().join("autocoder/envs")),
        ("rel-envs", cwd.path().join("rel-envs")),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_autocoder"));
        cmd.args(["sandbox", "run", "hello.py"])
            .current_dir(cwd.path())
            .env_remove("RUST_LOG")
            .env("AUTOCODER_PYTHON", &python)
            .env("AUTOCODER_ENV_CACHE", value)
            .env("XDG_CACHE_HOME", xdg.path());
        let uv = python.parent().unwrap().join("uv");
        if uv.is_file() {
            cmd.env("AUTOCODER_UV", uv);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "AUTOCODER_ENV_CACHE={value:?}: {stderr}"
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
        let built: Vec<_> = std::fs::read_dir(&envs)
            .unwrap_or_else(|e| panic!("{}: {e}", envs.display()))
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("py"))
            .collect();
        assert!(!built.is_empty(), "no environment in {}", envs.display());
    }
    let mut left: Vec<String> = std::fs::read_dir(cwd.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["hello.py", "rel-envs"],
        "nothing else lands in the current directory"
    );
}

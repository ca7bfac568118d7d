//! A hostile script against the bubblewrap backend (issue 17's attack table): each test is one
//! row, and failed before the hardening it checks.

use std::time::Duration;

use autocoder_sandbox::{IoType, Limits, RunOutcome, RunSpec, Sandbox, SandboxError, Value};

use crate::{run_code, shared_env, tight};

/// Runs `code` with `limits` and reads `outputs`; a run that takes more than 60 s is a hang.
async fn run_with_outputs(
    code: &str,
    limits: Limits,
    outputs: &[(&str, IoType)],
) -> (RunOutcome, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.py");
    std::fs::write(&script, code).unwrap();
    let mut spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run")).unwrap();
    spec.limits = limits;
    for (name, kind) in outputs {
        spec = spec.output(name, *kind);
    }
    let outcome = tokio::time::timeout(Duration::from_secs(60), Sandbox::default().run(&spec))
        .await
        .expect("the host hung reading the run's outputs")
        .unwrap();
    (outcome, dir)
}

/// Calls raw system calls (x86-64 numbers) through ctypes and prints `name result` per call.
const SYSCALLS: &str = r#"
import ctypes, errno, os, subprocess, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, nr, *args):
    r = libc.syscall(nr, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    e = ctypes.get_errno()
    print(name, "ok" if r >= 0 else errno.errorcode.get(e, e), flush=True)
    return r
print("seccomp", [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")][0])
call("unshare_user", 272, 0x10000000)
call("unshare_net", 272, 0x40000000)
params = ctypes.create_string_buffer(120)
fd = call("io_uring_setup", 425, 4, params)
call("add_key", 248, b"user", b"autocoder-probe", b"hunter2", 7, -3)
call("keyctl_session", 250, 0, -3, 0)
call("bpf", 321, 0, 0, 0)
attr = ctypes.create_string_buffer(128)
ctypes.memmove(attr, (ctypes.c_uint32 * 2)(1, 128), 8)  # PERF_TYPE_SOFTWARE, size
call("perf_event_open", 298, attr, 0, -1, -1, 0)
call("mount", 165, b"none", b"/tmp", b"tmpfs", 0, 0)
call("personality_no_aslr", 135, 0x0040000)
call("clone3", 435, 0, 0)
call("setns", 308, -1, 0)
call("socket_inet", 41, 2, 1, 0)
call("socket_unix", 41, 1, 1, 0)
child = subprocess.Popen(["sleep", "5"])
time.sleep(0.2)
call("ptrace_attach", 101, 16, child.pid, 0, 0)
child.kill()
u = subprocess.run(["unshare", "-Urmn", "id", "-u"], capture_output=True, text=True)
print("unshare_cli", u.returncode, u.stdout.strip() or u.stderr.strip())
"#;

#[cfg(target_arch = "x86_64")]
#[tokio::test]
async fn seccomp_denies_namespaces_keyrings_io_uring_ptrace_and_mounts() {
    let (out, _d) = run_code(SYSCALLS, tight()).await;
    assert!(out.success(), "{out:?}");
    let result = |name: &str| {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{}", out.stdout))
            .to_owned()
    };
    assert_eq!(result("seccomp"), "2", "no seccomp filter:\n{}", out.stdout);
    for name in [
        "unshare_user",
        "unshare_net",
        "io_uring_setup",
        "add_key",
        "keyctl_session",
        "bpf",
        "perf_event_open",
        "mount",
        "personality_no_aslr",
        "setns",
        "socket_inet",
        "ptrace_attach",
    ] {
        assert_eq!(result(name), "EPERM", "{name}:\n{}", out.stdout);
    }
    // glibc falls back from clone3 to clone, whose flags the filter can read.
    assert_eq!(result("clone3"), "ENOSYS", "{}", out.stdout);
    assert_eq!(result("socket_unix"), "ok", "{}", out.stdout);
    let cli = result("unshare_cli");
    assert!(
        cli.starts_with('1') && cli.contains("Operation not permitted"),
        "unshare -Urmn: {cli}"
    );
}

#[tokio::test]
async fn only_the_standard_descriptors_are_open_inside() {
    let (out, _d) = run_code(
        "import os\nprint(sorted(int(f) for f in os.listdir('/proc/self/fd') if os.path.exists('/proc/self/fd/' + f)))\n",
        tight(),
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "[0, 1, 2]\n");
}

#[tokio::test]
async fn a_huge_scalar_output_is_refused_and_the_host_stays_small() {
    let peak = || -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace()
            .nth(1)
            .unwrap()
            .parse::<u64>()
            .unwrap()
            << 10
    };
    let before = peak();
    // A sparse 256 MiB file of NULs: valid UTF-8, cheap to write, costly to read.
    let (out, _d) = run_with_outputs(
        "with open('/var/outputs/s', 'wb') as f:\n    f.truncate(256 << 20)\n",
        tight(),
        &[("s", IoType::Str)],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let err = out.outputs.unwrap_err();
    assert!(
        matches!(&err, SandboxError::OutputTooLarge { name, .. } if name == "s"),
        "{err}"
    );
    assert!(err.to_string().contains("256.0 MiB"), "{err}");
    let grown = peak().saturating_sub(before);
    assert!(
        grown < 128 << 20,
        "the host's peak RSS grew by {grown} bytes"
    );
}

#[tokio::test]
async fn fifo_outputs_fail_fast_as_a_scalar_and_inside_a_directory() {
    let (out, _d) = run_with_outputs(
        "import os\nos.mkfifo('/var/outputs/s')\n",
        tight(),
        &[("s", IoType::Str)],
    )
    .await;
    let err = out.outputs.unwrap_err();
    assert!(
        matches!(&err, SandboxError::BadOutput { name, .. } if name == "s"),
        "{err}"
    );
    assert!(err.to_string().contains("FIFO"), "{err}");

    let (out, _d) = run_with_outputs(
        "import os\nos.mkdir('/var/outputs/d')\nopen('/var/outputs/d/ok.txt', 'w').write('ok')\nos.mkfifo('/var/outputs/d/pipe')\n",
        tight(),
        &[("d", IoType::Dir)],
    )
    .await;
    let err = out.outputs.unwrap_err();
    assert!(
        matches!(&err, SandboxError::BadOutput { name, .. } if name == "d"),
        "{err}"
    );
    assert!(err.to_string().contains("pipe"), "{err}");
}

#[tokio::test]
async fn file_outputs_are_bounded_in_total() {
    let limits = Limits {
        output_files_bytes: 4 << 20,
        ..tight()
    };
    let (out, _d) = run_with_outputs(
        "import os\nos.mkdir('/var/outputs/d')\nfor i in range(3):\n    open(f'/var/outputs/d/{i}', 'wb').write(b'x' * (2 << 20))\n",
        limits,
        &[("d", IoType::Dir)],
    )
    .await;
    assert!(out.success(), "{out:?}");
    let err = out.outputs.unwrap_err();
    assert!(matches!(&err, SandboxError::OutputTooLarge { .. }), "{err}");
}

#[tokio::test]
async fn memory_limit_covers_all_processes_together() {
    let limits = Limits {
        memory_bytes: 512 << 20,
        ..tight()
    };
    // Two processes of 320 MiB each: each fits the per-process limit, together they do not.
    let (out, _d) = run_code(
        r#"
import subprocess, sys
hold = "x = bytearray(320 << 20)\nx[::4096] = b'1' * len(x[::4096])\nimport time; time.sleep(3)\nprint('held', flush=True)\n"
procs = [subprocess.Popen([sys.executable, "-c", hold]) for _ in range(2)]
codes = [p.wait() for p in procs]
print("codes", codes, flush=True)
"#,
        limits,
    )
    .await;
    assert!(
        out.stdout.matches("held").count() < 2,
        "both processes held 320 MiB under a 512 MiB limit: {out:?}"
    );
    assert!(out.memory_exceeded, "{out:?}");
}

/// Writes 1 MiB chunks to `dir` until an error or 200 MiB; prints the MiB written and the error.
fn fill(dir: &str) -> String {
    format!(
        "import errno\nn = 0\ntry:\n    with open('{dir}/fill', 'wb') as f:\n        while n < 200:\n            f.write(b'x' * (1 << 20)); f.flush(); n += 1\n    print('wrote', n)\nexcept OSError as e:\n    print('full', n, errno.errorcode[e.errno])\n"
    )
}

#[tokio::test]
async fn tmp_and_the_work_directory_fill_up_at_their_size() {
    for dir in ["/tmp", "/var/work"] {
        let limits = Limits {
            scratch_bytes: 32 << 20,
            ..tight()
        };
        let (out, _d) = run_code(&fill(dir), limits).await;
        assert!(out.success(), "{out:?}");
        let words: Vec<&str> = out.stdout.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"full"), "{dir}: {}", out.stdout);
        assert_eq!(words.get(2), Some(&"ENOSPC"), "{dir}: {}", out.stdout);
        assert!(
            words[1].parse::<u32>().unwrap() <= 32,
            "{dir}: {}",
            out.stdout
        );
    }
}

#[tokio::test]
async fn private_inputs_are_staged_readable_by_the_sandbox_uid_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.py");
    std::fs::write(
        &script,
        "import os, sys\nst = os.stat(sys.argv[2])\nprint(oct(st.st_mode & 0o777), st.st_uid == os.getuid(), open(sys.argv[2]).read())\n",
    )
    .unwrap();
    let data = dir.path().join("private.csv");
    std::fs::write(&data, "secret").unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o600)).unwrap();
    let spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run"))
        .unwrap()
        .input("data", Value::File(data));
    let out = Sandbox::default().run(&spec).await.unwrap();
    assert!(out.success(), "{out:?}");
    // As root the sandbox runs as another uid, which gets a copy only it can read; otherwise the
    // file is mounted as it is.
    let mode = if is_root() { "0o400" } else { "0o600" };
    assert_eq!(out.stdout, format!("{mode} True secret\n"));
}

fn is_root() -> bool {
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0
}

/// What held before the hardening, and must keep holding: no abstract unix socket of the host,
/// a read-only environment, no host processes, no terminal injection, no device nodes, no
/// setuid, and no daemon outliving the run.
#[tokio::test]
async fn what_held_keeps_holding() {
    let code = r#"
import ctypes, errno, fcntl, os, socket, sys, termios, time
def attempt(name, f):
    try:
        f()
        print(name, "ALLOWED")
    except OSError as e:
        print(name, "denied", errno.errorcode.get(e.errno, e.errno))
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
attempt("abstract_socket", lambda: s.connect("\0autocoder-held-test"))
attempt("env_write", lambda: open(os.path.join(sys.prefix, "poison.pth"), "w"))
print("pids", len([p for p in os.listdir("/proc") if p.isdigit()]))
attempt("tiocsti", lambda: fcntl.ioctl(0, termios.TIOCSTI, b"x"))
attempt("mknod", lambda: os.mknod("/tmp/dev", 0o600 | 0o060000, os.makedev(8, 0)))
attempt("setuid", lambda: os.setuid(0))
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(2)
        open("/var/outputs/daemon", "w").write("alive")
    os._exit(0)
print("done")
"#;
    // The host listens on the abstract name the script tries.
    let name =
        <std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
            b"autocoder-held-test",
        )
        .unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&name).unwrap();
    let (out, d) = run_code(code, tight()).await;
    drop(listener);
    assert!(out.success(), "{out:?}");
    for line in out.stdout.lines() {
        assert!(!line.contains("ALLOWED"), "{}", out.stdout);
    }
    assert!(
        out.stdout.contains("abstract_socket denied ECONNREFUSED"),
        "{}",
        out.stdout
    );
    let pids: usize = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("pids "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(pids < 10, "the sandbox sees {pids} processes");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !d.path().join("run/outputs/daemon").exists(),
        "a double-forked daemon outlived the run"
    );
}

/// As root, the script runs as the leased uid with nothing of root's left: real, effective and
/// saved uid and gid the leased id, no supplementary groups, an empty set of capabilities of
/// every kind (a file with inheritable capabilities, or a setuid binary, gives it nothing), no
/// new privileges, and the seccomp filter on. Whatever does the switch (`drop-uid`, or `setpriv`
/// where it is not built) must leave exactly this. Not as root, the sandbox runs as the caller
/// in a user namespace: the capabilities, no new privileges and seccomp are checked all the same.
#[tokio::test]
async fn the_script_keeps_nothing_of_root() {
    let code = r#"
import os
status = dict(l.rstrip("\n").split(":\t", 1) for l in open("/proc/self/status") if ":\t" in l)
for key in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"):
    print(key, status[key].strip())
print("groups", os.getgroups())
"#;
    let (out, _d) = run_code(code, tight()).await;
    assert!(out.success(), "{out:?}");
    let line = |key: &str| -> String {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no {key} in {}", out.stdout))
            .to_owned()
    };
    for key in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert_eq!(line(key), "0000000000000000", "{key}: {}", out.stdout);
    }
    assert_eq!(line("NoNewPrivs"), "1", "{}", out.stdout);
    assert_eq!(line("Seccomp"), "2", "{}", out.stdout);
    if !is_root() {
        return;
    }
    for key in ["Uid", "Gid"] {
        let ids: Vec<u32> = line(key)
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(ids.len(), 4, "{}", out.stdout);
        assert!(
            ids.iter().all(|&id| id == ids[0] && id != 0),
            "{}",
            out.stdout
        );
    }
    assert_eq!(line("Uid"), line("Gid"), "{}", out.stdout);
    assert_eq!(line("Groups"), "", "{}", out.stdout);
    assert_eq!(line("groups"), "[]", "{}", out.stdout);
}

//! Running on this machine's kernel (bubblewrap, or no sandbox): the run's cgroup, the seccomp
//! program handed to bubblewrap, the rlimits and the unprivileged uid, and what came of the run.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;

use crate::bwrap::{self, Plan};
use crate::cgroup::RunCgroup;
use crate::child::{ChildSetup, Rlimit};
use crate::drop_uid;
use crate::error::SandboxError;
use crate::exec;
use crate::sandbox::Invocation;
use crate::seccomp;
use crate::spec::{Limits, RunOutcome, RunSpec};

/// Runs the invocation in bubblewrap under `plan`, in a cgroup of its own where the machine
/// allows one, with the seccomp filter.
pub(crate) async fn run_bwrap(
    spec: &RunSpec,
    inv: &Invocation,
    mut plan: Plan,
) -> Result<RunOutcome, SandboxError> {
    let limits = &spec.limits;
    let cgroup = whole_run_cgroup(limits);
    let reader = pipe_holding(&seccomp::bpf_program(spec.network)?, "the seccomp filter")?;
    plan.seccomp_fd = Some(reader.as_raw_fd());
    let mut keep = vec![reader.as_raw_fd()];
    let mut argv = Vec::new();
    // The uid switch program, when we are root: through a second pipe (a few KB: the pipe holds
    // it whole), which bubblewrap copies into the sandbox's root before making it read-only.
    let mut program_reader = None;
    if let Some(uid) = plan.run_as {
        argv = drop_uid::wrapper(uid);
        if let Some(program) = drop_uid::PROGRAM {
            let r = pipe_holding(program, "the uid switch program")?;
            plan.drop_uid_fd = Some(r.as_raw_fd());
            keep.push(r.as_raw_fd());
            program_reader = Some(r);
        }
    }
    argv.extend(inv.argv.iter().cloned());
    let mut cmd = exec::sandboxed(
        "bwrap",
        ChildSetup {
            join: cgroup.as_ref().map(RunCgroup::join_fds).unwrap_or_default(),
            keep,
            rlimits: rlimits(limits),
        },
    );
    cmd.args(bwrap::args(&plan)).args(&argv);
    tracing::debug!(cmd = ?cmd.as_std(), "starting sandboxed process");
    let done = exec::run(
        cmd,
        limits.output_cap_bytes,
        Some(limits.wall_timeout),
        false,
    )
    .await;
    drop(reader);
    drop(program_reader);
    let oom = cgroup.as_ref().is_some_and(RunCgroup::oom_killed);
    if let Some(cgroup) = cgroup {
        cgroup.remove().await;
    }
    let done = done?;
    if let Some(message) = bwrap_failure(&done) {
        return Err(SandboxError::BackendFailed {
            backend: "bwrap",
            message,
        });
    }
    Ok(outcome_of(done, true, oom))
}

/// A pipe already holding `bytes` (a few KB at most: the pipe's buffer takes them whole), for
/// bubblewrap to read to its end and close (`--seccomp FD`, `--file FD`); `what` names them in
/// errors.
pub(crate) fn pipe_holding(
    bytes: &[u8],
    what: &'static str,
) -> Result<std::io::PipeReader, SandboxError> {
    let (reader, mut writer) =
        std::io::pipe().map_err(SandboxError::io("creating a pipe for", what))?;
    writer
        .write_all(bytes)
        .map_err(SandboxError::io("writing", what))?;
    Ok(reader)
}

/// bubblewrap's own error, when it exited before starting the program: status 1 and a last
/// stderr line of its own (`bwrap: Creating new namespace failed: ...`); the switch to the
/// leased uid failing to start the interpreter likewise.
fn bwrap_failure(done: &exec::Finished) -> Option<String> {
    if done.timed_out || done.status.and_then(|s| s.code()) != Some(1) {
        return None;
    }
    let last = done.stderr.trim_end().lines().last()?;
    ["bwrap: ", drop_uid::FAILURE_PREFIX]
        .iter()
        .any(|p| last.starts_with(p) && done.stderr.trim_end().lines().count() == 1)
        .then(|| last.to_owned())
}

/// Runs the invocation without isolation (`--sandbox none`): rlimits, the run's cgroup, a
/// cleared environment, the timeout.
pub(crate) async fn run_unsandboxed(
    spec: &RunSpec,
    inv: &Invocation,
    env: Vec<(String, String)>,
) -> Result<exec::Finished, SandboxError> {
    let limits = &spec.limits;
    let cgroup = whole_run_cgroup(limits);
    let argv = &inv.argv;
    let mut cmd = exec::sandboxed(
        &argv[0],
        ChildSetup {
            join: cgroup.as_ref().map(RunCgroup::join_fds).unwrap_or_default(),
            keep: Vec::new(),
            rlimits: rlimits(limits),
        },
    );
    cmd.args(&argv[1..])
        .env_clear()
        .envs(env)
        .current_dir(&spec.work_dir);
    let done = exec::run(
        cmd,
        limits.output_cap_bytes,
        Some(limits.wall_timeout),
        true,
    )
    .await;
    if let Some(cgroup) = cgroup {
        cgroup.remove().await;
    }
    done
}

/// The run's cgroup, or `None` (logged once per process) where none can be made.
fn whole_run_cgroup(limits: &Limits) -> Option<RunCgroup> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static WARNED: AtomicBool = AtomicBool::new(false);
    match RunCgroup::create(limits) {
        Ok(cgroup) => Some(cgroup),
        Err(reason) => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "no cgroup for whole-run limits ({reason}): memory and processes are limited per process only, and the CPU quota is not enforced"
                );
            }
            None
        }
    }
}

/// The run's rlimits, set in the child before `exec` and inherited by everything it starts
/// (bubblewrap, the uid switch, the interpreter and its children). A limit on processes does not
/// hold bubblewrap back as root (root is exempt), and after the switch it counts the leased uid's
/// processes; the CPU limit's hard value is one second above the soft one, so the script gets
/// `SIGXCPU` first. (This replaced a `prlimit` wrapper: one `exec` fewer per start.)
fn rlimits(l: &Limits) -> Vec<Rlimit> {
    let limit = |resource, soft, hard| Rlimit {
        resource,
        soft,
        hard,
    };
    vec![
        limit(libc::RLIMIT_AS, l.memory_bytes, l.memory_bytes),
        limit(libc::RLIMIT_CPU, l.cpu_seconds, l.cpu_seconds + 1),
        limit(libc::RLIMIT_NPROC, l.processes, l.processes),
        limit(libc::RLIMIT_FSIZE, l.file_size_bytes, l.file_size_bytes),
        limit(libc::RLIMIT_NOFILE, l.open_files, l.open_files),
        limit(libc::RLIMIT_CORE, 0, 0),
    ]
}

const SIGKILL: i32 = 9;
const SIGXCPU: i32 = 24;

/// The outcome of a finished process; `oom_killed`: the cgroup or container saw an OOM kill.
pub(crate) fn outcome_of(done: exec::Finished, in_sandbox: bool, oom_killed: bool) -> RunOutcome {
    let mut exit_code = done.status.and_then(|s| s.code());
    let mut signal = done.status.and_then(|s| s.signal());
    // bubblewrap and Docker report a child killed by signal N as exit code 128 + N.
    if in_sandbox && let Some(code) = exit_code.filter(|c| (129..160).contains(c)) {
        signal = Some(code - 128);
        exit_code = None;
    }
    let memory_exceeded = oom_killed
        || !done.timed_out
            && ([
                "MemoryError",
                "Cannot allocate memory",
                "std::bad_alloc",
                "Unable to allocate",
                "out of memory",
            ]
            .iter()
            .any(|m| done.stderr.contains(m))
                || signal == Some(SIGKILL));
    let cpu_exceeded = signal == Some(SIGXCPU);
    RunOutcome {
        exit_code,
        signal,
        stdout: done.stdout,
        stderr: done.stderr,
        timed_out: done.timed_out,
        memory_exceeded,
        cpu_exceeded,
        duration: done.duration,
        outputs: Ok(BTreeMap::new()),
        docker_image: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(code: i32, stderr: &str) -> exec::Finished {
        exec::Finished {
            status: Some(std::process::ExitStatus::from_raw(code << 8)),
            stdout: String::new(),
            stderr: stderr.to_owned(),
            timed_out: false,
            duration: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn only_bubblewraps_own_start_failures_are_backend_failures() {
        let failed = finished(
            1,
            "bwrap: Creating new namespace failed: No space left on device\n",
        );
        assert_eq!(
            bwrap_failure(&failed).as_deref(),
            Some("bwrap: Creating new namespace failed: No space left on device")
        );
        // A script failing, even one that prints such a line among others, is the script's.
        for (code, stderr) in [
            (1, "Traceback (most recent call last):\nValueError: x\n"),
            (2, "bwrap: x\n"),
            (1, "loading\nbwrap: x\n"),
            (0, ""),
        ] {
            assert_eq!(bwrap_failure(&finished(code, stderr)), None, "{stderr}");
        }
    }
}

//! What a child process does between `fork` and `exec`: leave a real-time scheduling policy, set
//! the run's rlimits, join the run's cgroup, and make sure no descriptor above 2 survives the
//! `exec` except the ones it is meant to hand over (programs bubblewrap reads and closes).
//!
//! This is the crate's only `unsafe` code. It is small on purpose: after `fork` in a
//! multi-threaded process only async-signal-safe calls are allowed, so [`harden`] makes raw
//! system calls on descriptor numbers it was given by value, allocates nothing, takes no lock,
//! and reports failure as `io::Error::last_os_error()` (which does not allocate either).

use std::io;
use std::os::fd::RawFd;

/// What the child must do before `exec`, captured by value into the `pre_exec` closure.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChildSetup {
    /// Open `tasks` (v1) or `cgroup.procs` (v2) files of the run's cgroup(s); the child writes
    /// `0` (itself) to each.
    pub(crate) join: Vec<RawFd>,
    /// Descriptors that stay open across `exec` (the seccomp program for `bwrap --seccomp`, the
    /// uid switch program for `bwrap --file`).
    pub(crate) keep: Vec<RawFd>,
    /// Resource limits set on the child (never above the caller's hard limits), inherited by
    /// everything it starts.
    pub(crate) rlimits: Vec<Rlimit>,
}

/// One resource limit (`setrlimit(2)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rlimit {
    /// The resource (`libc::RLIMIT_AS`, ...).
    pub(crate) resource: Resource,
    /// The soft limit.
    pub(crate) soft: u64,
    /// The hard limit.
    pub(crate) hard: u64,
}

/// The type `setrlimit` takes its resource as.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) type Resource = libc::__rlimit_resource_t;
/// The type `setrlimit` takes its resource as.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) type Resource = libc::c_int;

/// Installs `setup` on `cmd`: it runs in the child after the standard descriptors are set up and
/// right before `exec`.
pub(crate) fn install(cmd: &mut tokio::process::Command, setup: ChildSetup) {
    // SAFETY: `pre_exec` requires the closure to be safe to run in the forked child of a
    // multi-threaded process. `harden` only calls `sched_getscheduler`, `sched_setscheduler`,
    // `setrlimit`, `write`, `close_range`, `fcntl` and `getrlimit`, which are async-signal-safe
    // (`setrlimit` is a plain system call), on integers
    // captured by value or a struct on its stack; it allocates nothing (the `Vec` was built before
    // the fork and is only read) and takes no lock.
    #[allow(unsafe_code, reason = "audited: see the module's documentation")]
    unsafe {
        cmd.pre_exec(move || harden(&setup));
    }
}

/// Runs in the child between `fork` and `exec`. Async-signal-safe only (see the module docs).
fn harden(setup: &ChildSetup) -> io::Result<()> {
    normal_scheduling()?;
    for limit in &setup.rlimits {
        let mut now = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes into the `rlimit` on our stack, which outlives the call.
        #[allow(unsafe_code, reason = "audited: see the module's documentation")]
        if unsafe { libc::getrlimit(limit.resource, &raw mut now) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // Only ever lowered: a caller's lower hard limit stays (raising it would fail unprivileged).
        let hard = limit.hard.min(now.rlim_max);
        let value = libc::rlimit {
            rlim_cur: limit.soft.min(hard),
            rlim_max: hard,
        };
        // SAFETY: `setrlimit` reads the `rlimit` on our stack, which outlives the call.
        #[allow(unsafe_code, reason = "audited: see the module's documentation")]
        if unsafe { libc::setrlimit(limit.resource, &raw const value) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    for &fd in &setup.join {
        // SAFETY: `write` on a caller-owned descriptor number from a valid 1-byte buffer.
        #[allow(unsafe_code, reason = "audited: see the module's documentation")]
        let written = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
        if written != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    cloexec_from(3)?;
    for &fd in &setup.keep {
        // SAFETY: `fcntl(F_SETFD, 0)` clears close-on-exec on a descriptor number; no memory
        // is passed.
        #[allow(unsafe_code, reason = "audited: see the module's documentation")]
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Drops a real-time scheduling policy inherited from the caller (`chrt -f`): a script must not
/// run at a priority that can starve the host, and a v1 `cpu` cgroup with no real-time budget
/// refuses to take a real-time task (`EINVAL` on joining). Normal policies are left alone.
fn normal_scheduling() -> io::Result<()> {
    // SAFETY: `sched_getscheduler` takes a pid and touches no memory.
    #[allow(unsafe_code, reason = "audited: see the module's documentation")]
    let policy = unsafe { libc::sched_getscheduler(0) };
    if policy != libc::SCHED_FIFO && policy != libc::SCHED_RR {
        return Ok(());
    }
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` reads the `sched_param` on our stack, which outlives the call.
    #[allow(unsafe_code, reason = "audited: see the module's documentation")]
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &raw const param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Marks every descriptor from `first` on close-on-exec (`close_range(2)`, Linux 5.11; older
/// kernels: `fcntl` on each number below the descriptor limit). Closing them outright would
/// also close the pipe through which the standard library reports a failed `exec`.
fn cloexec_from(first: u32) -> io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: `close_range` takes three integers and touches no memory of ours.
    #[allow(unsafe_code, reason = "audited: see the module's documentation")]
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            libc::c_uint::from(first),
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if done == 0 {
        return Ok(());
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes into the `rlimit` on our stack, which outlives the call.
    #[allow(unsafe_code, reason = "audited: see the module's documentation")]
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let end = RawFd::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1 << 20);
    for fd in RawFd::try_from(first).unwrap_or(3)..end {
        // SAFETY: `fcntl(F_SETFD)` on a descriptor number; a closed one fails with EBADF,
        // which is ignored.
        #[allow(unsafe_code, reason = "audited: see the module's documentation")]
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok(())
}

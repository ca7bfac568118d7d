//! The system calls a sandboxed script may not make, as one list with the reason for each, built
//! into a seccomp BPF program for bubblewrap (`--seccomp FD`, with `seccompiler`) and into a
//! seccomp profile for Docker (the engine's JSON format; it replaces the engine's default).
//!
//! Denied calls fail with `EPERM`, so a library that probes for a feature sees "not permitted"
//! and carries on. `clone3` fails with `ENOSYS` instead: seccomp cannot read its flags (they are
//! behind a pointer), and glibc answers `ENOSYS` by falling back to `clone`, whose flags the
//! filter checks. The list follows the calls codex-rs, Flatpak and Docker's default profile deny
//! to untrusted code, minus those a process without capabilities cannot make anyway.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use serde_json::{Value as Json, json};

use crate::error::SandboxError;

/// One denied call: its name (as Docker's profile spells it), its number here, when it is
/// denied, and why.
struct Denial {
    name: &'static str,
    nr: i64,
    when: When,
    why: &'static str,
}

/// Which invocations of a call are denied.
#[derive(Clone, Copy)]
enum When {
    /// Every one.
    Always,
    /// Those whose argument `arg` has any of these bits set (one rule per bit).
    AnyBit { arg: u8, bits: &'static [u64] },
    /// Those whose 32-bit argument `arg` equals one of these values.
    Equals { arg: u8, values: &'static [u64] },
    /// `personality(2)` calls that set `ADDR_NO_RANDOMIZE` (not the `0xffffffff` query).
    PersonalityNoAslr,
    /// `socket(2)` for any family but `AF_UNIX` (only when the network is off).
    SocketNotUnix,
}

/// The namespace flags of `unshare(2)`: a new user namespace gives the script every capability
/// inside it, and with them the kernel's whole namespaced attack surface.
const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
    0x80, // CLONE_NEWTIME (unshare only: in clone's flags the low byte is the exit signal)
];
/// The namespace flags `clone(2)` can take.
const CLONE_NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];
/// `ADDR_NO_RANDOMIZE` in `personality(2)`.
const ADDR_NO_RANDOMIZE: u64 = 0x0004_0000;
/// Terminal ioctls that push input into, or rewrite, the controlling terminal.
#[allow(
    clippy::unnecessary_cast,
    reason = "the ioctl request type differs between targets"
)]
const TTY_INJECTION: &[u64] = &[libc::TIOCSTI as u64, libc::TIOCLINUX as u64];

/// The denied calls, each with its reason (SECURITY.md repeats this list).
#[allow(clippy::too_many_lines, reason = "one entry per denied call")]
fn denials(network: bool) -> Vec<Denial> {
    use When::{Always, AnyBit, Equals, PersonalityNoAslr, SocketNotUnix};
    let d = |name, nr, when, why| Denial {
        name,
        nr,
        when,
        why,
    };
    let mut list = vec![
        d(
            "unshare",
            libc::SYS_unshare,
            AnyBit {
                arg: 0,
                bits: NAMESPACE_FLAGS,
            },
            "new namespaces: a user namespace hands out capabilities",
        ),
        d(
            "clone",
            libc::SYS_clone,
            AnyBit {
                arg: 0,
                bits: CLONE_NAMESPACE_FLAGS,
            },
            "new namespaces, as unshare",
        ),
        d(
            "setns",
            libc::SYS_setns,
            Always,
            "joining another namespace",
        ),
        d(
            "keyctl",
            libc::SYS_keyctl,
            Always,
            "the kernel keyrings: the caller's session keyring is inherited",
        ),
        d("add_key", libc::SYS_add_key, Always, "the kernel keyrings"),
        d(
            "request_key",
            libc::SYS_request_key,
            Always,
            "the kernel keyrings",
        ),
        d(
            "ptrace",
            libc::SYS_ptrace,
            Always,
            "reading and steering other processes",
        ),
        d(
            "process_vm_readv",
            libc::SYS_process_vm_readv,
            Always,
            "reading another process's memory",
        ),
        d(
            "process_vm_writev",
            libc::SYS_process_vm_writev,
            Always,
            "writing another process's memory",
        ),
        d(
            "pidfd_getfd",
            libc::SYS_pidfd_getfd,
            Always,
            "taking another process's descriptors",
        ),
        d(
            "io_uring_setup",
            libc::SYS_io_uring_setup,
            Always,
            "io_uring: a large, often exploited kernel surface that also bypasses seccomp for the calls it makes",
        ),
        d(
            "io_uring_enter",
            libc::SYS_io_uring_enter,
            Always,
            "io_uring",
        ),
        d(
            "io_uring_register",
            libc::SYS_io_uring_register,
            Always,
            "io_uring",
        ),
        d(
            "bpf",
            libc::SYS_bpf,
            Always,
            "loading BPF programs into the kernel",
        ),
        d(
            "perf_event_open",
            libc::SYS_perf_event_open,
            Always,
            "performance counters: side channels and kernel bugs",
        ),
        d(
            "userfaultfd",
            libc::SYS_userfaultfd,
            Always,
            "stalling the kernel on page faults, a staple of kernel exploits",
        ),
        d(
            "mount",
            libc::SYS_mount,
            Always,
            "changing the file system view",
        ),
        d(
            "umount2",
            libc::SYS_umount2,
            Always,
            "uncovering what the sandbox's mounts hide",
        ),
        d(
            "pivot_root",
            libc::SYS_pivot_root,
            Always,
            "changing the root",
        ),
        d("chroot", libc::SYS_chroot, Always, "changing the root"),
        d(
            "open_tree",
            libc::SYS_open_tree,
            Always,
            "the new mount API",
        ),
        d(
            "move_mount",
            libc::SYS_move_mount,
            Always,
            "the new mount API",
        ),
        d("fsopen", libc::SYS_fsopen, Always, "the new mount API"),
        d("fsconfig", libc::SYS_fsconfig, Always, "the new mount API"),
        d("fsmount", libc::SYS_fsmount, Always, "the new mount API"),
        d("fspick", libc::SYS_fspick, Always, "the new mount API"),
        d(
            "mount_setattr",
            libc::SYS_mount_setattr,
            Always,
            "the new mount API",
        ),
        d(
            "open_by_handle_at",
            libc::SYS_open_by_handle_at,
            Always,
            "opening files by handle, around the mounts",
        ),
        d(
            "kexec_load",
            libc::SYS_kexec_load,
            Always,
            "replacing the kernel",
        ),
        d(
            "kexec_file_load",
            libc::SYS_kexec_file_load,
            Always,
            "replacing the kernel",
        ),
        d(
            "init_module",
            libc::SYS_init_module,
            Always,
            "loading kernel modules",
        ),
        d(
            "finit_module",
            libc::SYS_finit_module,
            Always,
            "loading kernel modules",
        ),
        d(
            "delete_module",
            libc::SYS_delete_module,
            Always,
            "unloading kernel modules",
        ),
        d(
            "personality",
            libc::SYS_personality,
            PersonalityNoAslr,
            "turning off address space randomization",
        ),
        d(
            "ioctl",
            libc::SYS_ioctl,
            Equals {
                arg: 1,
                values: TTY_INJECTION,
            },
            "typing into, or rewriting, the caller's terminal (TIOCSTI, TIOCLINUX)",
        ),
    ];
    if !network {
        list.push(d(
            "socket",
            libc::SYS_socket,
            SocketNotUnix,
            "network sockets when the network is off (unix sockets stay)",
        ));
    }
    list
}

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, len, op, value).map_err(bpf_error)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conditions).map_err(bpf_error)
}

fn bpf_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::BackendUnavailable {
        backend: "bwrap",
        reason: format!("building the seccomp filter failed: {e}"),
    }
}

/// The rules of one denial, for seccompiler (an empty list: every call).
fn rules_of(when: When) -> Result<Vec<SeccompRule>, SandboxError> {
    use SeccompCmpArgLen::Dword;
    Ok(match when {
        When::Always => Vec::new(),
        When::AnyBit { arg, bits } => bits
            .iter()
            .map(|&bit| rule(vec![cond(arg, Dword, SeccompCmpOp::MaskedEq(bit), bit)?]))
            .collect::<Result<_, _>>()?,
        When::Equals { arg, values } => values
            .iter()
            .map(|&v| rule(vec![cond(arg, Dword, SeccompCmpOp::Eq, v)?]))
            .collect::<Result<_, _>>()?,
        When::PersonalityNoAslr => vec![rule(vec![
            cond(
                0,
                Dword,
                SeccompCmpOp::MaskedEq(ADDR_NO_RANDOMIZE),
                ADDR_NO_RANDOMIZE,
            )?,
            cond(0, Dword, SeccompCmpOp::Ne, 0xffff_ffff)?,
        ])?],
        When::SocketNotUnix => vec![rule(vec![cond(
            0,
            Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?],
    })
}

// Classic BPF, as in <linux/filter.h> and <linux/seccomp.h>, for the hand-written prefix.
const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10;
const BPF_JMP_JGE_K: u16 = 0x05 | 0x30;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
/// The x32 ABI's system calls are the x86-64 numbers with this bit set, under the same audit
/// arch: without a check they would slip past every rule keyed on a number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn insn(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The filter for this machine's architecture, as bytes for `bwrap --seccomp FD`: a short
/// hand-written prefix (`clone3` and, on x86-64, the x32 ABI fail with `ENOSYS`), then
/// seccompiler's program for [`denials`] (which kills a process calling through another
/// architecture's ABI).
pub(crate) fn bpf_program(network: bool) -> Result<Vec<u8>, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(bpf_error)?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = denials(network)
        .into_iter()
        .map(|d| Ok((d.nr, rules_of(d.when)?)))
        .collect::<Result<_, SandboxError>>()?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(bpf_error)?;
    let main: BpfProgram = filter.try_into().map_err(bpf_error)?;
    let enosys = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    let audit_arch = audit_arch().ok_or_else(|| bpf_error("unsupported architecture"))?;
    let clone3 = u32::try_from(libc::SYS_clone3).map_err(bpf_error)?;
    // Each jump counts instructions to skip; `main` starts right after the prefix.
    let mut prefix = vec![insn(BPF_LD_W_ABS, 0, 0, DATA_ARCH)];
    if cfg!(target_arch = "x86_64") {
        prefix.extend([
            insn(BPF_JMP_JEQ_K, 0, 4, audit_arch), // another ABI: on to `main`, which kills
            insn(BPF_LD_W_ABS, 0, 0, DATA_NR),
            insn(BPF_JMP_JGE_K, 1, 0, X32_SYSCALL_BIT), // x32: ENOSYS
            insn(BPF_JMP_JEQ_K, 0, 1, clone3),
            insn(BPF_RET_K, 0, 0, enosys),
        ]);
    } else {
        prefix.extend([
            insn(BPF_JMP_JEQ_K, 0, 3, audit_arch),
            insn(BPF_LD_W_ABS, 0, 0, DATA_NR),
            insn(BPF_JMP_JEQ_K, 0, 1, clone3),
            insn(BPF_RET_K, 0, 0, enosys),
        ]);
    }
    let mut bytes = Vec::with_capacity((prefix.len() + main.len()) * 8);
    for i in prefix.iter().chain(&main) {
        bytes.extend_from_slice(&i.code.to_ne_bytes());
        bytes.push(i.jt);
        bytes.push(i.jf);
        bytes.extend_from_slice(&i.k.to_ne_bytes());
    }
    Ok(bytes)
}

/// This architecture's `AUDIT_ARCH_*` value.
fn audit_arch() -> Option<u32> {
    const LE64: u32 = 0x8000_0000 | 0x4000_0000;
    match std::env::consts::ARCH {
        "x86_64" => Some(0x3e | LE64),
        "aarch64" => Some(0xb7 | LE64),
        "riscv64" => Some(0xf3 | LE64),
        _ => None,
    }
}

/// The same list as a Docker seccomp profile (JSON): everything else allowed, as in the bwrap
/// filter (the container also drops every capability and sets `no-new-privileges`).
pub(crate) fn docker_profile(network: bool) -> String {
    let architectures: &[&str] = match std::env::consts::ARCH {
        "x86_64" => &["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        "aarch64" => &["SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"],
        _ => &[],
    };
    let errno = |names: Json, errno: i32, args: Json| json!({"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": errno, "args": args});
    let arg = |index: u8, value: u64, value_two: u64, op: &str| json!({"index": index, "value": value, "valueTwo": value_two, "op": op});
    let mut syscalls = vec![errno(json!(["clone3"]), libc::ENOSYS, json!([]))];
    for d in denials(network) {
        let eperm = |args: Json| errno(json!([d.name]), libc::EPERM, args);
        match d.when {
            When::Always => syscalls.push(eperm(json!([]))),
            When::AnyBit { arg: i, bits } => {
                syscalls.extend(
                    bits.iter()
                        .map(|&b| eperm(json!([arg(i, b, b, "SCMP_CMP_MASKED_EQ")]))),
                );
            }
            When::Equals { arg: i, values } => {
                syscalls.extend(
                    values
                        .iter()
                        .map(|&v| eperm(json!([arg(i, v, 0, "SCMP_CMP_EQ")]))),
                );
            }
            When::PersonalityNoAslr => syscalls.push(eperm(json!([
                arg(
                    0,
                    ADDR_NO_RANDOMIZE,
                    ADDR_NO_RANDOMIZE,
                    "SCMP_CMP_MASKED_EQ"
                ),
                arg(0, 0xffff_ffff, 0, "SCMP_CMP_NE"),
            ]))),
            When::SocketNotUnix => {
                syscalls.push(eperm(json!([arg(
                    0,
                    libc::AF_UNIX as u64,
                    0,
                    "SCMP_CMP_NE"
                )])));
            }
        }
    }
    json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": architectures,
        "syscalls": syscalls,
    })
    .to_string()
}

/// The denied calls and why, one line each (for `sandbox doctor` and SECURITY.md).
pub(crate) fn denied_calls() -> Vec<(&'static str, &'static str)> {
    let mut list: Vec<_> = denials(false)
        .into_iter()
        .map(|d| (d.name, d.why))
        .collect();
    list.push((
        "clone3",
        "answered ENOSYS, so glibc falls back to clone, whose flags are checked",
    ));
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_whole_instructions_and_the_profile_is_json() {
        let with = bpf_program(true).unwrap();
        let without = bpf_program(false).unwrap();
        assert_eq!(with.len() % 8, 0);
        assert!(without.len() > with.len(), "the socket rule is missing");
        assert!(
            without.len() / 8 < 4096,
            "over the kernel's filter size limit"
        );
        let profile: Json = serde_json::from_str(&docker_profile(false)).unwrap();
        let names: Vec<&str> = profile["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| {
                s["names"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap())
            })
            .collect();
        for call in [
            "clone3",
            "io_uring_setup",
            "keyctl",
            "unshare",
            "socket",
            "ptrace",
        ] {
            assert!(names.contains(&call), "{call} missing from {names:?}");
        }
        assert!(!docker_profile(true).contains("\"socket\""));
    }
}

//! Builds `native/drop_uid.c`, the freestanding program that switches a bubblewrap sandbox
//! started as root to the run's unprivileged uid (see `src/drop_uid.rs`), and embeds it. On
//! targets it does not support (other than Linux on `x86_64` or `aarch64`) nothing is built and the
//! sandbox uses `setpriv` instead.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(drop_uid_helper)");
    println!("cargo::rerun-if-changed=native/drop_uid.c");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os != "linux" || !matches!(arch.as_str(), "x86_64" | "aarch64") {
        return;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("drop-uid");
    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    #[allow(
        clippy::disallowed_methods,
        reason = "the build script runs the C compiler, not a sandboxed process"
    )]
    let mut cmd = Command::new(compiler.path());
    // Only the compiler, not cc's usual object-file flags: this is a whole static program.
    cmd.args([
        "-O2",
        "-static",
        "-nostdlib",
        "-ffreestanding",
        "-fno-stack-protector",
        "-fno-pie",
        "-no-pie",
        "-fno-asynchronous-unwind-tables",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-s",
        "-Wl,--build-id=none",
        "-Wl,-z,noexecstack",
        "-o",
    ])
    .arg(&out)
    .arg("native/drop_uid.c");
    match cmd.status() {
        Ok(status) if status.success() => {
            println!("cargo::rustc-cfg=drop_uid_helper");
        }
        Ok(status) => panic!(
            "building crates/sandbox/native/drop_uid.c with {} failed ({status}); a C compiler and the Linux kernel headers (Debian: gcc, linux-libc-dev) are needed",
            compiler.path().display()
        ),
        Err(err) => panic!(
            "cannot run the C compiler {} for crates/sandbox/native/drop_uid.c: {err}; install gcc",
            compiler.path().display()
        ),
    }
}

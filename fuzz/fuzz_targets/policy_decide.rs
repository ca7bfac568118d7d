//! Arbitrary text through the command policy (the shipped rules, a small real workspace).
//! Any decision is fine except: a panic; an allowed or intercepted command that tree-sitter-bash
//! itself cannot parse (anything unparseable must be denied); an allowed script that runs a
//! program the policy does not list, or holds a NUL; a decision that changes when asked twice;
//! and an allowed script that, written back as shell text, is decided differently.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use autocoder_policy::{Decision, DenyKind, Policy};
use libfuzzer_sys::fuzz_target;

fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| Policy::builtin().expect("the shipped policy loads"))
}

/// A workspace with a few files, so globs and links have something to match.
fn workspace() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("autocoder-fuzz-ws-{}", std::process::id()));
        let _ = std::fs::create_dir_all(dir.join("samples"));
        for file in ["data.csv", "a b.txt", "samples/x.csv", ".hidden", "*star"] {
            let _ = std::fs::write(dir.join(file), "x\n");
        }
        let _ = std::os::unix::fs::symlink("/etc", dir.join("etc-link"));
        dir
    })
}

fn bash_parses(text: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .expect("the grammar loads");
    parser
        .parse(text, None)
        .is_some_and(|tree| !tree.root_node().has_error())
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let policy = policy();
    let decision = policy.decide(text, workspace());
    assert_eq!(decision, policy.decide(text, workspace()), "not deterministic");
    if !matches!(decision, Decision::Deny(_)) {
        assert!(bash_parses(text), "{text:?} does not parse but got {decision}");
    }
    if let Decision::Deny(denial) = &decision {
        if !bash_parses(text) && !text.trim().is_empty() && text.len() <= autocoder_policy::MAX_COMMAND_BYTES && !text.contains('\0') {
            assert_eq!(denial.kind, DenyKind::Parse, "{text:?}: {denial}");
        }
    }
    let Decision::Allow(script) = &decision else {
        return;
    };
    let programs = policy.programs();
    for argv in script.argvs() {
        assert!(programs.contains(&argv[0].as_str()), "{text:?} runs {argv:?}");
        assert!(argv.iter().all(|w| !w.contains('\0')), "{argv:?}");
    }
    // Written back as shell text (quoted), the script must mean the same.
    let again = policy.decide(&script.to_string(), workspace());
    assert_eq!(
        again.allowed(),
        Some(script),
        "{text:?} allowed as `{script}`, which is decided as {again}"
    );
});

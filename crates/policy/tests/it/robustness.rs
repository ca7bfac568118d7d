//! The stable stand-in for the `policy_decide` fuzz target: seeded random commands built from
//! shell fragments (operators, quotes, expansions, redirections, globs, paths, programs) go
//! through the policy, which must never panic, must deny whatever tree-sitter-bash cannot parse
//! (as a parse denial), may only allow listed programs, and must decide an allowed script the
//! same once it is written back as shell text.

use autocoder_policy::{Decision, DenyKind, Policy};

use crate::workspace;

const FRAGMENTS: &[&str] = &[
    "ls",
    "cat",
    "grep",
    "sed",
    "awk",
    "find",
    "echo",
    "rm",
    "pytest",
    "pip",
    "install",
    "sh",
    "curl",
    "xargs",
    "-la",
    "-n",
    "5",
    "-i",
    "-e",
    "-exec",
    "-rf",
    "data.csv",
    "samples/*.csv",
    "*",
    "?",
    "[ab]",
    "..",
    "/",
    "/etc/passwd",
    "~",
    "./x",
    "'s/a/b/'",
    "'s/a/b/e'",
    "'{print $1}'",
    "'BEGIN{system(\"x\")}'",
    "\"a b\"",
    "\"$X\"",
    "'q'",
    "\\ ",
    "\\",
    "&&",
    "||",
    ";",
    "|",
    "|&",
    "&",
    ">",
    ">>",
    "<",
    "2>&1",
    ">&2",
    "2>",
    "&>",
    "<<",
    "<<<",
    "$(",
    ")",
    "(",
    "`",
    "$",
    "{",
    "}",
    ",",
    "=",
    "#",
    "\n",
    "!",
    "'",
    "\"",
    "\\;",
    "{}",
    "+",
];

fn bash_parses(text: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .unwrap();
    parser
        .parse(text, None)
        .is_some_and(|tree| !tree.root_node().has_error())
}

#[test]
fn random_commands_hold_the_fuzz_properties() {
    let dir = workspace();
    std::os::unix::fs::symlink("/etc", dir.path().join("etc-link")).unwrap();
    let policy = Policy::builtin().unwrap();
    let programs = policy.programs();
    let mut rng = fastrand::Rng::with_seed(20);
    let (mut allowed, mut denied_parse) = (0, 0);
    for _ in 0..3000 {
        let len = rng.usize(1..12);
        let mut text = String::new();
        for _ in 0..len {
            text.push_str(FRAGMENTS[rng.usize(..FRAGMENTS.len())]);
            if rng.u8(..4) != 0 {
                text.push(' ');
            }
        }
        let decision = policy.decide(&text, dir.path());
        let parses = bash_parses(&text);
        match &decision {
            Decision::Deny(denial) if !parses && !text.trim().is_empty() => {
                assert_eq!(denial.kind, DenyKind::Parse, "{text:?}: {denial}");
                denied_parse += 1;
            }
            Decision::Deny(_) => {}
            Decision::Intercept(_) => assert!(parses, "{text:?}: {decision}"),
            Decision::Allow(script) => {
                assert!(parses, "{text:?}: {decision}");
                allowed += 1;
                for argv in script.argvs() {
                    assert!(programs.contains(&argv[0].as_str()), "{text:?}: {argv:?}");
                }
                let again = policy.decide(&script.to_string(), dir.path());
                assert_eq!(
                    again.allowed(),
                    Some(script),
                    "{text:?} as `{script}`: {again}"
                );
            }
        }
    }
    // The generator must reach both ends, or the properties above test nothing.
    assert!(allowed > 50, "only {allowed} allowed");
    assert!(denied_parse > 50, "only {denied_parse} parse denials");
}

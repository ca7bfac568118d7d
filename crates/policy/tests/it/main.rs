//! The shipped policy on a real workspace directory: a table of commands (every bypass of the
//! reference system's classifier among them) with their decisions, path and link rules, and
//! policy files that fail to load with the file and line named.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod load;
mod robustness;
mod table;
mod workspace;

use std::fmt::Write as _;
use std::path::Path;

use autocoder_policy::{Decision, Input, Interception, Output, Policy, When};

/// A workspace like an agent's: samples, a script, tests, a log.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("samples")).unwrap();
    for (file, text) in [
        ("data.csv", "a,b,c\n1,2,3\n"),
        ("app.log", "INFO start\nERROR boom\n"),
        ("solution.py", "print('hi')\n"),
        ("test_solution.py", "def test_x():\n    assert True\n"),
        (".hidden", "secret-ish\n"),
        ("samples/a.csv", "x\n1\n"),
        ("samples/b.csv", "x\n2\n"),
    ] {
        std::fs::write(root.join(file), text).unwrap();
    }
    dir
}

fn word(w: &str) -> String {
    if w.is_empty() || w.contains([' ', '\'', '"', '|', '&', ';', '<', '>']) {
        format!("'{w}'")
    } else {
        w.to_owned()
    }
}

/// A decision as one line: the script in shell notation, `intercept ...`, or `deny: message`.
fn render(decision: &Decision) -> String {
    match decision {
        Decision::Allow(script) => {
            let mut out = String::new();
            for (i, step) in script.steps.iter().enumerate() {
                match (i, step.when) {
                    (0, _) => {}
                    (_, When::Always) => out.push_str(" ; "),
                    (_, When::Succeeded) => out.push_str(" && "),
                    (_, When::Failed) => out.push_str(" || "),
                }
                let commands: Vec<String> = step
                    .pipeline
                    .iter()
                    .map(|c| {
                        let mut text: Vec<String> = c.argv.iter().map(|w| word(w)).collect();
                        if let Input::File(path) = &c.stdin {
                            text.push(format!("< {}", path.display()));
                        }
                        match &c.stdout {
                            Output::Stdout => {}
                            Output::Stderr => text.push(">&2".to_owned()),
                            Output::File { path, append } => text.push(format!(
                                "{} {}",
                                if *append { ">>" } else { ">" },
                                path.display()
                            )),
                        }
                        match &c.stderr {
                            Output::Stderr => {}
                            Output::Stdout => text.push("2>&1".to_owned()),
                            Output::File { path, append } => text.push(format!(
                                "{} {}",
                                if *append { "2>>" } else { "2>" },
                                path.display()
                            )),
                        }
                        text.join(" ")
                    })
                    .collect();
                out.push_str(&commands.join(" | "));
            }
            out
        }
        Decision::Intercept(Interception::RunTests { args }) => {
            let mut out = "run_tests".to_owned();
            for a in args {
                write!(out, " {}", word(a)).unwrap();
            }
            out
        }
        Decision::Intercept(Interception::SetPackages { manager, packages }) => {
            format!("set_packages {manager:?} {}", packages.join(" "))
        }
        Decision::Deny(denial) => format!("deny: {denial}"),
    }
}

fn decide(command: &str, workspace: &Path) -> Decision {
    Policy::builtin().unwrap().decide(command, workspace)
}

//! Paths through a real directory: symbolic links out of the workspace, the workspace's own
//! absolute path, globs that would walk through a link, and the script's structure.

use std::os::unix::fs::symlink;

use autocoder_policy::{Decision, DenyKind, Input, Output, When};

use crate::{decide, render, workspace};

#[test]
fn a_link_out_of_the_workspace_is_refused_for_reads_and_writes() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    symlink(outside.path(), dir.path().join("out")).unwrap();
    symlink(outside.path().join("secret"), dir.path().join("s.txt")).unwrap();
    for command in [
        "cat s.txt",
        "cat out/secret",
        "echo x > out/new.txt",
        "rm out/secret",
        "cat out/../../etc/passwd",
        "sed -i s/a/b/ s.txt",
    ] {
        let decision = decide(command, dir.path());
        let denial = decision
            .denied()
            .unwrap_or_else(|| panic!("{command}: {}", render(&decision)));
        assert_eq!(denial.kind, DenyKind::Path, "{command}: {denial}");
        assert!(
            denial.reason.contains("outside the workspace"),
            "{command}: {denial}"
        );
    }
}

#[test]
fn a_link_to_a_readable_system_path_may_be_read_but_not_written() {
    let dir = workspace();
    symlink("/usr/share/zoneinfo", dir.path().join("zones")).unwrap();
    if std::fs::canonicalize("/usr/share/zoneinfo").is_err() {
        // Without the directory the link resolves to nothing: the lexical rules apply.
        return;
    }
    assert!(decide("ls zones", dir.path()).allowed().is_some());
    assert!(decide("touch zones/x", dir.path()).denied().is_some());
}

#[test]
fn globs_do_not_walk_through_links_out_of_the_workspace() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("a.txt"), "a").unwrap();
    symlink(outside.path(), dir.path().join("out")).unwrap();
    let decision = decide("echo out/*", dir.path());
    assert!(
        render(&decision).contains("reaches outside the workspace through a symbolic link"),
        "{}",
        render(&decision)
    );
}

#[test]
fn the_workspace_by_its_absolute_path_is_the_workspace() {
    let dir = workspace();
    let data = dir.path().join("data.csv");
    let command = format!("cat {}", data.display());
    assert!(decide(&command, dir.path()).allowed().is_some());
    let command = format!("rm -rf {}", dir.path().display());
    let decision = decide(&command, dir.path());
    assert!(
        render(&decision).contains("the workspace itself"),
        "{}",
        render(&decision)
    );
}

#[test]
fn an_allowed_command_is_argv_operators_and_streams() {
    let dir = workspace();
    let decision = decide(
        "grep -c x data.csv > n.txt && sort < data.csv | uniq -c 2>&1 || echo 'no luck'",
        dir.path(),
    );
    let Decision::Allow(script) = decision else {
        panic!("{decision:?}");
    };
    let whens: Vec<When> = script.steps.iter().map(|s| s.when).collect();
    assert_eq!(whens, vec![When::Always, When::Succeeded, When::Failed]);
    let grep = &script.steps[0].pipeline[0];
    assert_eq!(grep.argv, ["grep", "-c", "x", "data.csv"]);
    assert_eq!(
        grep.stdout,
        Output::File {
            path: "n.txt".into(),
            append: false
        }
    );
    let sort = &script.steps[1].pipeline[0];
    assert_eq!(sort.stdin, Input::File("data.csv".into()));
    let uniq = &script.steps[1].pipeline[1];
    assert_eq!(
        (uniq.stdin.clone(), uniq.stderr.clone()),
        (Input::Pipe, Output::Stdout)
    );
    assert_eq!(script.steps[2].pipeline[0].argv, ["echo", "no luck"]);
    assert_eq!(script.argvs().count(), 4);
}

#[test]
fn anything_too_long_or_too_many_is_denied_not_run() {
    let dir = workspace();
    let long = format!("echo {}", "a".repeat(autocoder_policy::MAX_COMMAND_BYTES));
    assert_eq!(
        decide(&long, dir.path()).denied().unwrap().kind,
        DenyKind::Parse
    );
    let many = vec!["true"; autocoder_policy::MAX_COMMANDS + 1].join(" && ");
    assert_eq!(
        decide(&many, dir.path()).denied().unwrap().kind,
        DenyKind::Parse
    );
    assert_eq!(
        decide("echo a\0b", dir.path()).denied().unwrap().kind,
        DenyKind::Parse
    );
}

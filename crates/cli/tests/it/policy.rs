//! `autocoder policy check|show` through the real binary.

use crate::autocoder;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn check_prints_the_argv_that_would_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.csv"), "x\n").unwrap();
    std::fs::write(dir.path().join("b.csv"), "y\n").unwrap();
    let ws = dir.path().to_str().unwrap();
    let out = autocoder(&["policy", "check", "wc -l *.csv > n.txt", "--workspace", ws]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout(&out), "allow: wc -l a.csv b.csv > n.txt\n");

    let out = autocoder(&[
        "policy",
        "check",
        "grep -c x a.csv || echo 'none found'",
        "--workspace",
        ws,
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "allow");
    assert_eq!(json["steps"][1]["when"], "failed");
    assert_eq!(
        json["steps"][1]["pipeline"][0]["argv"],
        serde_json::json!(["echo", "none found"])
    );
}

#[test]
fn check_denies_with_the_reason_and_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_str().unwrap();
    let out = autocoder(&["policy", "check", "ls && pip install x", "--workspace", ws]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.starts_with("deny: `pip install x` is denied: "),
        "{text}"
    );
    assert!(text.contains("must be the whole command"), "{text}");

    let out = autocoder(&[
        "policy",
        "check",
        "cat /proc/self/environ",
        "--workspace",
        ws,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "deny");
    assert_eq!(json["kind"], "path");
    assert_eq!(json["segment"], "cat /proc/self/environ");
}

#[test]
fn check_intercepts_tool_commands() {
    let out = autocoder(&[
        "policy",
        "check",
        "python -m pip install 'pandas>=2'",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "intercept");
    assert_eq!(json["tool"], "set_packages");
    assert_eq!(json["manager"], "pip");
    assert_eq!(json["packages"], serde_json::json!(["pandas>=2"]));
    let out = autocoder(&["policy", "check", "pytest -x"]);
    assert_eq!(stdout(&out), "intercept: run_tests -x\n");
}

#[test]
fn the_shipped_policy_round_trips_and_a_bad_one_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let shown = autocoder(&["policy", "show"]);
    assert_eq!(shown.status.code(), Some(0));
    let file = dir.path().join("mine.toml");
    let edited = stdout(&shown).replace("[program.tree]", "[program.tree]\nbogus = 1");
    std::fs::write(&file, &edited).unwrap();
    let out = autocoder(&["policy", "check", "ls", "--policy", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = edited.lines().position(|l| l == "bogus = 1").unwrap() + 1;
    assert!(
        stderr.contains(&format!("mine.toml:{line}:")) && stderr.contains("unknown field `bogus`"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());

    std::fs::write(&file, stdout(&shown)).unwrap();
    let out = autocoder(&[
        "policy",
        "check",
        "ls -la",
        "--policy",
        file.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

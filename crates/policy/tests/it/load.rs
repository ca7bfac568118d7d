//! Policy files: a replacement takes over the shipped rules, and each kind of mistake is
//! reported with the file, line and what is wrong.

use autocoder_policy::{Policy, PolicyError};

use crate::workspace;

/// Writes `text` as `policy.toml` in a temporary directory and loads it.
fn load(text: &str) -> Result<Policy, PolicyError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.toml");
    std::fs::write(&path, text).unwrap();
    Policy::load(&path)
}

/// Loads `text`, which must fail at `line` with a message containing `part`.
fn fails_at(text: &str, line: usize, part: &str) {
    let err = load(text).unwrap_err();
    let message = err.to_string();
    match err {
        PolicyError::Invalid {
            file, line: got, ..
        } => {
            assert!(file.ends_with("policy.toml"), "{message}");
            assert_eq!(got, line, "{message}");
        }
        PolicyError::Read { .. } => panic!("{message}"),
    }
    assert!(message.contains(part), "{message}");
    assert!(
        message.contains(&format!("policy.toml:{line}:")),
        "{message}"
    );
}

#[test]
fn a_replacement_policy_is_the_only_rule_set() {
    let policy = load("[program.ls]\nflags = [\"-l\"]\nargs = [\"read_path*\"]\n").unwrap();
    let dir = workspace();
    assert!(policy.decide("ls -l", dir.path()).allowed().is_some());
    let denial = policy.decide("cat data.csv", dir.path());
    let reason = &denial.denied().unwrap().reason;
    assert!(
        reason.contains("not an allowed program; allowed: ls"),
        "{reason}"
    );
    assert!(policy.decide("pytest", dir.path()).denied().is_some());
}

#[test]
fn mistakes_name_the_line() {
    fails_at("[program.ls]\nflags = [\"-l\"\n", 2, "");
    fails_at(
        "[program.ls]\nflags = [\"-l\"]\nflagz = [\"-a\"]\n",
        3,
        "unknown field `flagz`",
    );
    fails_at(
        "# a comment\n[program.cat]\nargs = [\"read_paht*\"]\n",
        3,
        "`read_paht*` is not an argument type",
    );
    fails_at(
        "[program.cat]\noptions = { \"-n\" = \"number\" }\n",
        2,
        "unknown variant `number`",
    );
    fails_at(
        "[paths]\nread = [\"/usr/share\", \"relative/dir\"]\n",
        2,
        "`relative/dir` is not an absolute path",
    );
}

#[test]
fn inconsistent_rules_name_their_table() {
    fails_at(
        "[program.ls]\nflags = [\"-a\"]\n\n[program.find]\nflags = [\"-print\"]\n",
        4,
        "set `bundle = false`",
    );
    fails_at(
        "[program.ls]\nflags = [\"-a\"]\noptions = { \"-a\" = \"value\" }\n",
        1,
        "`-a` is listed twice",
    );
    fails_at(
        "[[deny]]\nprograms = [\"ls\"]\nreason = \"no\"\n\n[program.ls]\n",
        5,
        "both in a [[deny]] entry and allowed",
    );
    fails_at(
        "[program.cat]\nargs = [\"read_path*\", \"value+\"]\n",
        1,
        "one repeating entry",
    );
    fails_at(
        "[intercept.pytest]\ncommands = [\"pytest\"]\n",
        1,
        "needs `tool = \"run_tests\"`",
    );
}

#[test]
fn an_example_the_rule_contradicts_is_an_error() {
    fails_at(
        "[program.ls]\nflags = [\"-l\"]\nexamples = [\"ls -l\", \"ls -la\"]\n",
        3,
        "the example `ls -la` should be allowed but is denied",
    );
    fails_at(
        "[program.cat]\nargs = [\"read_path*\"]\ncounterexamples = [\"cat x\"]\n",
        3,
        "the example `cat x` should be denied but is allowed",
    );
}

#[test]
fn a_missing_file_is_named() {
    let err = Policy::load(std::path::Path::new("/nonexistent/policy.toml")).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/policy.toml"),
        "{err}"
    );
}

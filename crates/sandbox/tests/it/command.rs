//! The general command runner: parsed argv over a writable workspace, in real bubblewrap.

use std::path::PathBuf;
use std::time::Duration;

use autocoder_sandbox::{CommandSpec, CommandStep, Program, RunIf, Sandbox, Stream};

use crate::shared_env;

fn step(when: RunIf, pipeline: Vec<Program>) -> CommandStep {
    CommandStep { when, pipeline }
}

async fn run(
    workspace: &std::path::Path,
    steps: Vec<CommandStep>,
) -> autocoder_sandbox::RunOutcome {
    let mut spec = CommandSpec::argv(shared_env().await, workspace, ["true"]);
    spec.steps = steps;
    spec.limits.wall_timeout = Duration::from_secs(60);
    Sandbox::default().run_command(&spec).await.unwrap()
}

#[tokio::test]
async fn a_command_writes_into_the_workspace_and_reads_it_back() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("data.csv"), "a\n1\n2\n3\n").unwrap();
    let mut tee = Program::new(["wc", "-l"]);
    tee.stdin = Some(PathBuf::from("data.csv"));
    tee.stdout = Stream::File {
        path: "count.txt".into(),
        append: false,
    };
    let outcome = run(
        ws.path(),
        vec![
            step(
                RunIf::Always,
                vec![Program::new(["mkdir", "-p", "out/deep"])],
            ),
            step(
                RunIf::Succeeded,
                vec![Program::new(["touch", "out/deep/made"])],
            ),
            step(RunIf::Succeeded, vec![tee]),
            step(
                RunIf::Always,
                vec![
                    Program::new(["cat", "data.csv"]),
                    Program::new(["grep", "-c", "[0-9]"]),
                ],
            ),
        ],
    )
    .await;
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    assert_eq!(outcome.stdout.trim(), "3", "{outcome:?}");
    assert!(ws.path().join("out/deep/made").is_file());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("count.txt"))
            .unwrap()
            .trim(),
        "4"
    );
}

#[tokio::test]
async fn and_or_lists_and_missing_programs_behave_like_bash() {
    let ws = tempfile::tempdir().unwrap();
    let outcome = run(
        ws.path(),
        vec![
            step(RunIf::Always, vec![Program::new(["false"])]),
            step(RunIf::Succeeded, vec![Program::new(["touch", "not-made"])]),
            step(RunIf::Failed, vec![Program::new(["echo", "recovered"])]),
            step(RunIf::Always, vec![Program::new(["no-such-program-xyz"])]),
        ],
    )
    .await;
    assert!(!ws.path().join("not-made").exists());
    assert_eq!(outcome.stdout.trim(), "recovered", "{outcome:?}");
    assert_eq!(outcome.exit_code, Some(127), "{outcome:?}");
    assert!(
        outcome
            .stderr
            .contains("no-such-program-xyz: command not found"),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_command_cannot_write_outside_the_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let outcome = run(
        ws.path(),
        vec![
            step(
                RunIf::Always,
                vec![Program::new([
                    "touch".to_owned(),
                    target.display().to_string(),
                ])],
            ),
            step(RunIf::Always, vec![Program::new(["touch", "/etc/escaped"])]),
            step(RunIf::Always, vec![Program::new(["touch", "../escaped"])]),
            // A link made inside, to a place outside: writing through it fails too.
            step(
                RunIf::Always,
                vec![Program::new([
                    "ln".to_owned(),
                    "-s".to_owned(),
                    outside.path().display().to_string(),
                    "link".to_owned(),
                ])],
            ),
            step(
                RunIf::Always,
                vec![Program::new(["touch", "link/through-link"])],
            ),
        ],
    )
    .await;
    assert_ne!(outcome.exit_code, Some(0), "{outcome:?}");
    assert!(!target.exists());
    assert!(!outside.path().join("through-link").exists());
    assert!(!std::path::Path::new("/etc/escaped").exists());
    assert!(!ws.path().parent().unwrap().join("escaped").exists());
    // The link itself was made in the workspace.
    assert!(ws.path().join("link").symlink_metadata().is_ok());
}

#[tokio::test]
async fn a_command_has_no_network() {
    let ws = tempfile::tempdir().unwrap();
    let probe = "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\n    print('connected')\nexcept OSError as e:\n    print('blocked', e)\n";
    std::fs::write(ws.path().join("probe.py"), probe).unwrap();
    let outcome = run(
        ws.path(),
        vec![step(
            RunIf::Always,
            vec![Program::new(["python", "probe.py"])],
        )],
    )
    .await;
    assert!(outcome.stdout.starts_with("blocked"), "{outcome:?}");
}

#[tokio::test]
async fn output_is_capped_and_a_slow_command_is_killed() {
    let ws = tempfile::tempdir().unwrap();
    let mut spec = CommandSpec::argv(shared_env().await, ws.path(), ["seq", "1", "100000"]);
    spec.limits.output_cap_bytes = 1000;
    let outcome = Sandbox::default().run_command(&spec).await.unwrap();
    assert!(outcome.stdout.len() < 1100, "{}", outcome.stdout.len());
    assert!(outcome.stdout.contains("[... truncated"), "{outcome:?}");

    let mut spec = CommandSpec::argv(shared_env().await, ws.path(), ["sleep", "30"]);
    spec.limits.wall_timeout = Duration::from_secs(2);
    let outcome = Sandbox::default().run_command(&spec).await.unwrap();
    assert!(outcome.timed_out, "{outcome:?}");
}

#[tokio::test]
async fn docker_runs_a_command_over_the_writable_workspace() {
    let sandbox = crate::docker::docker().await;
    let ws = tempfile::tempdir().unwrap();
    let mut spec = CommandSpec::argv(shared_env().await, ws.path(), ["true"]);
    let mut echo = Program::new(["echo", "hello"]);
    echo.stdout = Stream::File {
        path: "hello.txt".into(),
        append: false,
    };
    spec.steps = vec![
        step(RunIf::Always, vec![echo]),
        step(RunIf::Succeeded, vec![Program::new(["cat", "hello.txt"])]),
        step(RunIf::Always, vec![Program::new(["touch", "/etc/escaped"])]),
    ];
    spec.limits.wall_timeout = Duration::from_secs(60);
    let outcome = sandbox.run_command(&spec).await.unwrap();
    assert_eq!(outcome.stdout.trim(), "hello", "{outcome:?}");
    assert_ne!(outcome.exit_code, Some(0), "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("hello.txt")).unwrap(),
        "hello\n"
    );
}

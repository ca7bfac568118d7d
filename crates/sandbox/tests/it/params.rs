//! Run parameters: secrets masked in what a run captures, the CPU quota of the run's cgroup.

use autocoder_sandbox::{MASK, PytestSpec, RunSpec, Sandbox, Secret, SourceFile};

use crate::{shared_env, tight};

const VALUE: &str = "s3cret-Value-42";

#[tokio::test]
async fn secrets_reach_the_script_and_are_masked_in_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.py");
    std::fs::write(
        &script,
        "import os, sys\nv = os.environ['TOKEN']\nprint('out', v, len(v))\nprint('err', v, file=sys.stderr)\n",
    )
    .unwrap();
    let mut spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run")).unwrap();
    spec.limits = tight();
    spec.secrets = vec![Secret::new("TOKEN", VALUE)];
    let out = Sandbox::default().run(&spec).await.unwrap();
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, format!("out {MASK} {}\n", VALUE.len()));
    assert_eq!(out.stderr, format!("err {MASK}\n"));
    assert!(
        !format!("{spec:?}").contains(VALUE),
        "Debug never shows a value"
    );
}

#[tokio::test]
async fn secrets_are_masked_in_pytest_reports_and_output() {
    let tests = "import os\n\ndef test_shows():\n    print('printed', os.environ['TOKEN'])\n    assert os.environ['TOKEN'] == 'other'\n";
    let mut spec = PytestSpec::new(
        shared_env().await,
        vec![SourceFile::new("test_x.py", tests)],
    );
    spec.limits = tight();
    spec.secrets = vec![Secret::new("TOKEN", VALUE)];
    let dir = tempfile::tempdir().unwrap();
    let report = Sandbox::default()
        .run_pytest(&spec, dir.path())
        .await
        .unwrap();
    assert_eq!(report.tests.len(), 1);
    let message = &report.tests[0].message;
    assert!(
        message.contains(&format!("'{MASK}' == 'other'")),
        "{message}"
    );
    assert!(
        report.stdout.contains(&format!("printed {MASK}")),
        "{}",
        report.stdout
    );
    for text in [message, &report.stdout, &report.stderr] {
        assert!(!text.contains(VALUE), "{text}");
    }
    // Nothing left in the run directory holds it either (the pytest report is masked).
    let mut stack = vec![dir.path().to_owned()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(VALUE),
                "{} holds the secret",
                path.display()
            );
        }
    }
}

/// Two processes spinning for two seconds of wall-clock time; prints the CPU seconds they got
/// per wall-clock second, measured from inside.
const TWO_BUSY_PROCESSES: &str = r#"
import os, time
start = time.monotonic()
children = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        while time.monotonic() - start < 2.0:
            pass
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
wall = time.monotonic() - start
t = os.times()
print(f"ratio {(t.children_user + t.children_system) / wall:.3f}")
"#;

fn cpu_ratio(out: &autocoder_sandbox::RunOutcome) -> f64 {
    assert!(out.success(), "{out:?}");
    out.stdout
        .trim()
        .strip_prefix("ratio ")
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no ratio in {:?}", out.stdout))
}

/// Whether runs get a cgroup here; the quota tests fail with the reason when not.
async fn require_cgroup() {
    let finding = autocoder_sandbox::doctor()
        .await
        .into_iter()
        .find(|f| f.name == "cgroup")
        .unwrap();
    assert!(
        finding.ok,
        "the CPU quota needs a cgroup for the run ({}); run as root or delegate a cgroup, or skip with `cargo test -- --skip cpu_quota`",
        finding.detail
    );
}

#[tokio::test]
async fn cpu_quota_throttles_two_busy_processes_under_bwrap() {
    require_cgroup().await;
    let limits = autocoder_sandbox::Limits {
        cpu_millis: 50,
        ..tight()
    };
    let (out, _dir) = crate::run_code(TWO_BUSY_PROCESSES, limits).await;
    let ratio = cpu_ratio(&out);
    // A twentieth of a core for both together; unthrottled they take up to two (and still
    // far more than this on a machine loaded with six times as many busy processes as cores).
    assert!(ratio < 0.09, "a 0.05-core quota gave {ratio} cores");
    assert!(ratio > 0.01, "the processes hardly ran: {ratio}");
}

#[tokio::test]
async fn docker_cpu_quota_throttles_two_busy_processes() {
    let sandbox = crate::docker::docker().await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.py");
    std::fs::write(&script, TWO_BUSY_PROCESSES).unwrap();
    let mut spec = RunSpec::new(shared_env().await, &script, &dir.path().join("run")).unwrap();
    spec.limits = autocoder_sandbox::Limits {
        cpu_millis: 50,
        ..tight()
    };
    let ratio = cpu_ratio(&sandbox.run(&spec).await.unwrap());
    assert!(ratio < 0.09, "a 0.05-core quota gave {ratio} cores");
    assert!(ratio > 0.01, "the processes hardly ran: {ratio}");
}

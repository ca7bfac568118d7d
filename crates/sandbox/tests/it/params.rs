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

//! The suite in `evals/` itself: every task loads, and every reference solution, run in the real
//! sandbox with real Python and pandas, reproduces the expected outputs of every case (the
//! samples and the held-out data). `AUTOCODER_EVAL_WRITE_EXPECTED=1` writes them instead, for a
//! new or changed task.

use std::path::{Path, PathBuf};

use autocoder_eval::score::{judge, run_reference, write_expected};
use autocoder_eval::{Split, Suite};
use autocoder_loop::SandboxOptions;

pub(crate) fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals")
}

pub(crate) fn sandbox() -> SandboxOptions {
    SandboxOptions {
        cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("autocoder-envs")),
        ..SandboxOptions::default()
    }
}

#[test]
fn the_suite_has_both_halves_and_every_task_has_heldout_cases() {
    let suite = Suite::load(&suite_dir()).unwrap();
    let dev = suite.tasks.iter().filter(|t| t.split == Split::Dev).count();
    let test = suite.tasks.len() - dev;
    assert!(suite.tasks.len() >= 12, "{} tasks", suite.tasks.len());
    assert!(dev.abs_diff(test) <= 1, "dev {dev}, test {test}");
    for task in &suite.tasks {
        assert!(!task.spec.cases.is_empty(), "{}", task.name);
    }
}

#[tokio::test]
async fn every_reference_reproduces_its_expected_outputs_on_every_case() {
    let suite = Suite::load(&suite_dir()).unwrap();
    let write = std::env::var_os("AUTOCODER_EVAL_WRITE_EXPECTED").is_some();
    let sandbox = sandbox();
    let mut failures = Vec::new();
    let mut checked = 0;
    for task in &suite.tasks {
        for case in task.all_cases() {
            let (outcome, work) = run_reference(task, &case, &sandbox).await.unwrap();
            if write {
                assert!(
                    outcome.success(),
                    "{} {}: {}",
                    task.name,
                    case.name,
                    outcome.stderr
                );
                write_expected(task, &case.name, &work.path().join("outputs")).unwrap();
                continue;
            }
            let result = judge(task, &case, &outcome).unwrap();
            checked += 1;
            if !result.correct {
                failures.push(format!(
                    "{} / {}: {:?}",
                    task.name, case.name, result.detail
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(write || checked >= 2 * suite.tasks.len(), "{checked} cases");
}

/// The harness reads rules from each task's words (the columns, the order, one row per key) and
/// from its samples (the keys a lookup must follow): run with the reference in the script's
/// place, none of its tests may fail, or it would fail every right script of that task.
#[tokio::test]
async fn every_reference_passes_the_harness_s_own_tests() {
    use autocoder_eval::harness_check::check_harness;
    use autocoder_sandbox::Outcome;

    let suite = Suite::load(&suite_dir()).unwrap();
    let sandbox = sandbox();
    let scratch = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut passed: Vec<String> = Vec::new();
    for task in &suite.tasks {
        let work = scratch.path().join(&task.name);
        let Some(report) = check_harness(task, None, &sandbox, &work).await.unwrap() else {
            continue;
        };
        for error in &report.collection_errors {
            failures.push(format!("{}: {} {}", task.name, error.path, error.message));
        }
        for test in &report.tests {
            match test.outcome {
                Outcome::Passed => passed.push(format!("{}: {}", task.name, test.id)),
                Outcome::Failed | Outcome::Error | Outcome::XPassed => {
                    failures.push(format!("{}: {}\n{}", task.name, test.id, test.message));
                }
                Outcome::Skipped | Outcome::XFailed => {}
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // Not vacuous: the checks ran, and passed, where the tasks call for them.
    let count = |what: &str| passed.iter().filter(|id| id.contains(what)).count();
    assert!(
        count("_is_in_the_order_the_task_gives") >= 10,
        "{passed:#?}"
    );
    assert!(
        count("_has_the_columns_the_task_lists") >= 10,
        "{passed:#?}"
    );
    assert!(
        passed
            .iter()
            .any(|id| id.starts_with("flights-carrier-delays:")
                && id.ends_with(
                    "test_carrier_delays_csv_takes_each_looked_up_value_from_its_keys_row"
                )),
        "{passed:#?}"
    );
}

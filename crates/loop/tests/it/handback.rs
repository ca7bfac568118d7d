//! A generation that never passes hands back the best script its tests saw: here the first
//! script is right, the model's test expects a wrong total, no code fix applies, and the new
//! script the loop escalates to crashes on the samples. The right script is the one written.

use autocoder_loop::session::Limits;
use autocoder_testkit::{Entry, Reply};
use serde_json::json;

use crate::generate::{GOOD, code, diagnosis, fixture, plan, script, test_file, tests};

fn no_edits() -> Entry {
    Entry::step(
        "fix_code",
        Reply::Json(json!({"edits": [], "packages": [], "explanation": "nothing to change"})),
    )
}

#[tokio::test]
async fn a_failed_run_writes_its_best_script_not_its_last() {
    let crashing = script("1 / 0");
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        test_file(&tests("26.0")),
        diagnosis("logic", &[]),
        no_edits(),
        no_edits(),
        test_file(&tests("26.0")),
        code(&crashing),
        diagnosis("logic", &[]),
    ])
    .await;
    let options = autocoder_loop::GenerateOptions {
        limits: Limits {
            max_iterations: 2,
            ..Limits::default()
        },
        ..f.options()
    };
    let result = f.generate(&options).await;
    assert!(!result.success, "{result:#?}");
    assert_eq!(result.attempts, 2, "{result:#?}");
    assert_eq!(result.solution, script(GOOD), "{result:#?}");
    let written = std::fs::read_to_string(f.dir.path().join("run/solution.py")).unwrap();
    assert_eq!(written, script(GOOD));
    let second =
        std::fs::read_to_string(f.dir.path().join("run/iterations/2/solution.py")).unwrap();
    assert_eq!(second, crashing, "each test run's script is kept");
    assert!(
        result
            .notes
            .iter()
            .any(|n| n.starts_with("code: handed back the script of test run 1")),
        "{:?}",
        result.notes
    );
    // The result's test output is the handed-back script's run, not the crash.
    assert!(
        result.test_output.contains("26.0"),
        "{}",
        result.test_output
    );
    assert!(
        !result.test_output.contains("ZeroDivisionError"),
        "{}",
        result.test_output
    );
    let error = result.error.unwrap_or_default();
    assert!(!error.contains("ZeroDivisionError"), "{error}");
}

//! pytest in the sandbox, with every outcome kept apart.

use autocoder_sandbox::{Backend, Outcome, PytestSpec, Sandbox, SourceFile};

use crate::shared_env;

const SOLUTION: &str = "def add(a, b):\n    return a + b\n";

const TESTS: &str = r#"
import pytest
from solution import add

@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")

def test_passes():
    assert add(1, 2) == 3

def test_fails():
    assert add(1, 2) == 4

def test_fails_on_a_report():
    report = {"levels": {"ERROR": 2, "INFO": 1}, "components": {"db": 2, "api": 1}, "error_rate": 0.6666666666666666}
    assert report == {"ERROR": 2, "INFO": 1}

def test_errors(broken):
    pass

def test_skipped():
    pytest.skip("not today")

@pytest.mark.xfail(reason="known bug")
def test_xfails():
    assert add(1, 1) == 3

@pytest.mark.xfail(reason="fixed already")
def test_xpasses():
    assert add(1, 1) == 2

@pytest.mark.parametrize("a", [1, 2])
def test_param(a):
    assert add(a, 0) == a

def test_traced(request):
    request.node.user_properties.append(("autocoder_trace", "first run"))
    request.node.user_properties.append(("other", "not a trace"))
    request.node.user_properties.append(("autocoder_input", "a file without `price`"))
    request.node.user_properties.append(("autocoder_trace", "second run"))
    assert add(1, 2) == 4
"#;

async fn report(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let spec = PytestSpec::new(
        shared_env().await,
        vec![
            SourceFile::new("solution.py", SOLUTION),
            SourceFile::new("test_solution.py", TESTS),
            SourceFile::new("test_broken.py", "import no_such_module_zz\n"),
            SourceFile::new("conftest.py", "import os\n"),
        ],
    );
    let r = Sandbox::new(backend)
        .run_pytest(&spec, dir.path())
        .await
        .unwrap();
    let case = |id: &str| {
        r.tests
            .iter()
            .find(|t| t.id == format!("test_solution.py::{id}"))
            .unwrap_or_else(|| panic!("{id} missing from {:#?}", r.tests))
    };
    let outcome = |id: &str| case(id).outcome;
    assert_eq!(outcome("test_passes"), Outcome::Passed);
    assert_eq!(outcome("test_fails"), Outcome::Failed);
    assert_eq!(outcome("test_fails_on_a_report"), Outcome::Failed);
    assert_eq!(outcome("test_errors"), Outcome::Error);
    assert_eq!(outcome("test_skipped"), Outcome::Skipped);
    assert_eq!(outcome("test_xfails"), Outcome::XFailed);
    assert_eq!(outcome("test_xpasses"), Outcome::XPassed);
    assert_eq!(outcome("test_param[2]"), Outcome::Passed);
    assert_eq!(r.tests.len(), 10);
    // The traces the harness attaches to a test come back once each, in order, although every
    // phase's report carries the test's properties so far.
    assert_eq!(case("test_traced").traces, ["first run", "second run"]);
    assert!(case("test_fails").traces.is_empty());
    // So do the harness's notes on the test's input files, apart from the traces.
    assert_eq!(case("test_traced").input_notes, ["a file without `price`"]);
    assert!(case("test_fails").input_notes.is_empty());
    let message = |id: &str| {
        r.tests
            .iter()
            .find(|t| t.id == format!("test_solution.py::{id}"))
            .map(|t| t.message.clone())
            .unwrap_or_default()
    };
    assert!(
        message("test_fails").contains("assert 3 == 4"),
        "{}",
        message("test_fails")
    );
    // A failed comparison shows both values whole, not cut to `{'levels': {'...666}`: the
    // diagnosis needs to see what the script wrote.
    assert!(
        message("test_fails_on_a_report").contains(
            "assert {'levels': {'ERROR': 2, 'INFO': 1}, 'components': {'db': 2, 'api': 1}, 'error_rate': 0.6666666666666666} == {'ERROR': 2, 'INFO': 1}"
        ),
        "{}",
        message("test_fails_on_a_report")
    );
    let errored = r
        .tests
        .iter()
        .find(|t| t.outcome == Outcome::Error)
        .unwrap();
    assert!(
        errored.message.contains("fixture exploded"),
        "{}",
        errored.message
    );
    assert_eq!(r.collection_errors.len(), 1, "{:?}", r.collection_errors);
    assert_eq!(r.collection_errors[0].path, "test_broken.py");
    assert!(r.collection_errors[0].message.contains("no_such_module_zz"));
    assert!(!r.all_passed());
    assert_eq!(r.exit_code, Some(1), "pytest exits 1 when tests fail");
}

#[tokio::test]
async fn outcomes_are_kept_apart_in_bubblewrap() {
    report(Backend::Bwrap).await;
}

#[tokio::test]
async fn outcomes_are_kept_apart_without_sandbox() {
    report(Backend::None).await;
}

#[tokio::test]
async fn a_green_suite_passes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = PytestSpec::new(
        shared_env().await,
        vec![
            SourceFile::new("solution.py", SOLUTION),
            SourceFile::new(
                "test_solution.py",
                "from solution import add\n\ndef test_add():\n    assert add(2, 2) == 4\n",
            ),
        ],
    );
    let r = Sandbox::default()
        .run_pytest(&spec, dir.path())
        .await
        .unwrap();
    assert!(r.all_passed(), "{r:#?}");
    assert_eq!(r.count(Outcome::Passed), 1);
    assert_eq!(r.exit_code, Some(0));
}

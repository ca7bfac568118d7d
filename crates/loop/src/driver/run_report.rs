//! What the diagnosis and the fixes are shown of a test run (`run` in `loop/_report.j2`): the
//! tests, the script, the packages, each failure with its output and trace, and the passing
//! tests. Built one way for all three steps, so their prompts begin with the same text and a
//! provider's prompt cache serves it once. A failure's output leaves out the lines of the test
//! file that pytest's traceback repeats ([`without_echoed_tests`]): the prompt shows the file.
//! Nor does it number the harness's lines ([`without_harness_line_numbers`]), nor list the
//! frames of a traceback inside libraries or show a source line twice ([`own_frames`], and in
//! pytest's own traceback [`pytest_entries`]), and
//! what pytest says twice it says once ([`shown_once`]).

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::{own_frames, pytest_entries, shown_once};
use crate::protocol::{FailedTest, TestOutcome};
use crate::session::{CONFTEST_FILE, CONTRACT_TEST_FILE, Session};
use crate::steps::{FAILURE_OUTPUT_LIMIT, tail};

/// Failures shown with the values the script computed, at most this many per prompt (each
/// trace is hundreds of tokens; a small model's context holds a few).
const TRACED_FAILURES: usize = 2;

/// Characters of a trace a prompt shows (its end: the values right before the failure).
const TRACE_PROMPT_LIMIT: usize = 2_500;

/// The `run` context of `failures` with `passing`, over the session's current script, tests and
/// packages; with `plain`, the outputs without caret lines ([`without_carets`]).
pub(super) fn run_report(
    session: &Session,
    failures: &[FailedTest],
    passing: &[String],
    plain: bool,
) -> Value {
    let tests = session.tests().unwrap_or_default();
    let echoed = test_lines(tests);
    let traces = shown_traces(failures.iter().map(|f| f.trace.as_deref()));
    let outputs = shown_outputs(failures, &echoed, plain);
    let failures: Vec<Value> = failures
        .iter()
        .zip(traces)
        .zip(outputs)
        .map(|((f, trace), output)| {
            json!({
                "test_id": f.test_id,
                "outcome": outcome_name(f.outcome),
                "output": tail(&output, FAILURE_OUTPUT_LIMIT),
                "trace": trace,
                "input_notes": f.input_notes,
            })
        })
        .collect();
    json!({
        "code": session.code().unwrap_or_default(),
        "tests": tests,
        "packages": session.packages(),
        "failures": failures,
        "passing": passing,
    })
}

/// The failures' outputs as the prompt shows them, each said once ([`shown_once`]): without
/// library frames and source lines shown twice ([`own_frames::shown`], and in pytest's own
/// traceback [`pytest_entries::without_repeated_lines`]), the echoed test lines,
/// the harness's line numbers and the test's arguments, a script's standard error in a
/// `SolutionRun(...)` left out where the report shows it (and pytest's line that only carried
/// it with the exit code), and a run of lines shown under an earlier failure named instead of
/// repeated.
fn shown_outputs(failures: &[FailedTest], echoed: &HashSet<&str>, plain: bool) -> Vec<String> {
    let cleaned: Vec<String> = failures
        .iter()
        .map(|f| {
            let output = shown_output(&f.output, plain);
            let output = without_harness_line_numbers(&without_echoed_tests(
                &pytest_entries::without_repeated_lines(&own_frames::shown(&output)),
                echoed,
            ))
            .into_owned();
            shown_once::without_funcargs(&output).to_owned()
        })
        .collect();
    // The lines of this output and those before it, grown one output at a time.
    let mut shown = HashSet::new();
    let elided: Vec<(&str, String)> = failures
        .iter()
        .zip(&cleaned)
        .map(|(f, output)| {
            shown.extend(shown_once::shown_lines([output.as_str()]));
            (
                f.test_id.as_str(),
                shown_once::without_crash_wheres(shown_once::with_shown_stderr_elided(
                    output, &shown,
                )),
            )
        })
        .collect();
    shown_once::without_runs_shown_before(&elided)
}

/// A failure's output as the prompt shows it: without caret lines when `plain`.
fn shown_output(output: &str, plain: bool) -> std::borrow::Cow<'_, str> {
    if plain {
        without_carets(output).into()
    } else {
        output.into()
    }
}

/// `output` without its caret lines: the lines made only of `^` and `~` (and a pytest `E`
/// prefix) that Python and `DuckDB` print under the expression at fault. They say nothing the
/// line above them does not, and a small model copies them into the script it fixes.
pub(super) fn without_carets(output: &str) -> String {
    output
        .split_inclusive('\n')
        .filter(|line| {
            let marks = line.trim_start().strip_prefix('E').unwrap_or(line).trim();
            !shown_once::is_marks(marks)
        })
        .collect()
}

/// The non-blank lines of the test file, which [`without_echoed_tests`] looks up: built once
/// per report, not once per failure.
pub(super) fn test_lines(tests: &str) -> HashSet<&str> {
    tests.lines().filter(|l| !l.trim().is_empty()).collect()
}

/// `output` without the source lines pytest's long traceback echoes from the test file: a
/// line indented four spaces whose rest is one of its non-blank `lines` ([`test_lines`]). The failing line
/// (`>`), the `E` lines, the locations (`test_solution.py:19: AssertionError`) and every line
/// from elsewhere (the fixtures, the script) stay. The prompt shows the test file above the
/// failures, so the echo only made each failure a thousand characters longer, all of them new
/// to the provider's prompt cache (`docs/notes/prompt-cache.md`).
pub(super) fn without_echoed_tests(output: &str, lines: &HashSet<&str>) -> String {
    output
        .split_inclusive('\n')
        .filter(|line| {
            let text = line.strip_suffix('\n').unwrap_or(line);
            let text = text.strip_suffix('\r').unwrap_or(text);
            !text
                .strip_prefix("    ")
                .is_some_and(|rest| lines.contains(rest))
        })
        .collect()
}

/// A location line of pytest's traceback in one of the harness's files (`conftest.py:152: in
/// run`, `test_contract.py:88: AssertionError`), with or without a directory before the name.
static HARNESS_LOCATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let files = [CONFTEST_FILE, CONTRACT_TEST_FILE]
        .map(regex::escape)
        .join("|");
    Regex::new(&format!(r"(?m)^((?:\S*/)?(?:{files})):\d+:")).ok()
});

/// `output` with the harness's locations unnumbered (`conftest.py:152: in run` reads
/// `conftest.py: in run`). The model never sees the harness's files, so the numbers tell it
/// nothing, and they tie every prompt a failure through the harness reaches to the harness's
/// layout: a check added above a function renumbers it, and a paired eval run parts there with
/// nothing else changed (`docs/notes/loop-structure.md`). The script's and the tests' own
/// locations keep their numbers.
pub(super) fn without_harness_line_numbers(output: &str) -> std::borrow::Cow<'_, str> {
    match HARNESS_LOCATION.as_ref() {
        Some(location) => location.replace_all(output, "$1:"),
        None => output.into(),
    }
}

/// The trace each failure's prompt entry shows: the first [`TRACED_FAILURES`] traces, cut.
fn shown_traces<'t>(
    traces: impl Iterator<Item = Option<&'t str>>,
) -> impl Iterator<Item = Option<String>> {
    let mut shown = 0;
    traces.map(move |trace| {
        let trace = trace.filter(|_| shown < TRACED_FAILURES)?;
        shown += 1;
        Some(tail(trace, TRACE_PROMPT_LIMIT))
    })
}

fn outcome_name(outcome: TestOutcome) -> &'static str {
    match outcome {
        TestOutcome::Passed => "passed",
        TestOutcome::Failed => "failed",
        TestOutcome::Error => "error in a fixture",
        TestOutcome::Skipped => "skipped",
        TestOutcome::XFailed => "xfailed",
        TestOutcome::XPassed => "unexpectedly passed",
        TestOutcome::CollectionError => "could not be collected",
    }
}

#[cfg(test)]
mod tests {
    use super::{
        shown_outputs, test_lines, without_carets, without_echoed_tests,
        without_harness_line_numbers,
    };
    use crate::protocol::{FailedTest, TestOutcome};

    fn failed(test_id: &str, output: &str) -> FailedTest {
        FailedTest {
            test_id: test_id.into(),
            outcome: TestOutcome::Failed,
            output: output.into(),
            trace: None,
            input_notes: Vec::new(),
        }
    }

    #[test]
    fn a_crash_on_the_samples_reaches_the_prompt_once() {
        let tests = "def test_b(run_solution, tmp_path):\n    result = run_solution()\n    assert result.returncode == 0, result.stderr\n";
        // pytest 9's report of the harness's first test and of the model's test above, on a
        // script that raises KeyError on the samples.
        let failures = [
            failed(
                "test_contract.py::test_runs",
                "solution.py exited with 1 on the sample data:\nTraceback (most recent call last):\n  File \"/var/task/solution.py\", line 5, in <module>\n    main()\n  File \"/var/task/solution.py\", line 4, in main\n    return x[\"it's\"]\n           ~^^^^^^^^\nKeyError: \"it's\"\n",
            ),
            failed(
                "test_solution.py::test_b",
                "run_solution = <function run_solution.<locals>.run at 0x…>\ntmp_path = PosixPath('/tmp/pytest-of-root/pytest-0/test_b0')\n\n    def test_b(run_solution, tmp_path):\n        result = run_solution()\n>       assert result.returncode == 0, result.stderr\nE       AssertionError: Traceback (most recent call last):\nE           File \"/var/task/solution.py\", line 5, in <module>\nE             main()\nE           File \"/var/task/solution.py\", line 4, in main\nE             return x[\"it's\"]\nE                    ~^^^^^^^^\nE         KeyError: \"it's\"\nE         \nE       assert 1 == 0\nE        +  where 1 = SolutionRun(returncode=1, outputs={'total': None}, stderr='Traceback (most recent call last):\\n  File \"/var/task/solution.py\", line 5, in <module>\\n    main()\\n  File \"/var/task/solution.py\", line 4, in main\\n    return x[\"it\\'s\"]\\n           ~^^^^^^^^\\nKeyError: \"it\\'s\"\\n').returncode\n\ntest_solution.py:3: AssertionError\n",
            ),
        ];
        let outputs = shown_outputs(&failures, &test_lines(tests), true);
        assert_eq!(outputs[0], without_carets(&failures[0].output));
        assert_eq!(
            outputs[1],
            ">       assert result.returncode == 0, result.stderr\nE       AssertionError: Traceback (most recent call last):\nE           (the 5 lines shown under `test_contract.py::test_runs` above)\nE         \nE       assert 1 == 0\n\ntest_solution.py:3: AssertionError\n"
        );
    }

    #[test]
    fn a_crash_inside_a_library_shows_its_frames_as_one_line_and_its_stderr_once() {
        let frame =
            "/root/.cache/autocoder/envs/9c/lib/python3.11/site-packages/pandas/core/ops/common.py";
        let stderr = format!(
            "Traceback (most recent call last):\n  File \"/var/task/solution.py\", line 9, in main\n    m = g[\"end\"] - g[\"start\"]\n  File \"{frame}\", line 76, in new_method\n    return method(self, other)\nTypeError: unsupported operand\n"
        );
        let failures = [
            failed(
                "test_contract.py::test_runs",
                &format!("solution.py exited with 1 on the sample data:\n{stderr}"),
            ),
            failed(
                "test_solution.py::test_b",
                &format!(
                    ">       assert result.returncode == 0\nE       assert 1 == 0\nE        +  where 1 = SolutionRun(returncode=1, outputs={{}}, stderr='{}').returncode\n",
                    // The `repr` pytest prints of the standard error.
                    stderr.replace('\\', "\\\\").replace('\n', "\\n")
                ),
            ),
        ];
        let outputs = shown_outputs(&failures, &test_lines(""), true);
        assert_eq!(
            outputs[0],
            "solution.py exited with 1 on the sample data:\nTraceback (most recent call last):\n  File \"/var/task/solution.py\", line 9, in main\n    m = g[\"end\"] - g[\"start\"]\n  (1 frame inside pandas)\nTypeError: unsupported operand\n"
        );
        assert_eq!(
            outputs[1], ">       assert result.returncode == 0\nE       assert 1 == 0\n",
            "the standard error is shown above, and the `where` line said only the exit code with it"
        );
    }

    #[test]
    fn a_generator_s_line_is_shown_once_with_its_own_frame() {
        let stderr = "Traceback (most recent call last):\n  File \"/var/task/solution.py\", line 9, in main\n    total = sum(float(r[\"kwh\"]) for r in rows if r[\"kwh\"] > 3)\n            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/var/task/solution.py\", line 9, in <genexpr>\n    total = sum(float(r[\"kwh\"]) for r in rows if r[\"kwh\"] > 3)\n                                                  ^^^^^^^^^^^^^\nTypeError: '>' not supported between instances of 'str' and 'int'\n";
        let failures = [failed(
            "test_contract.py::test_runs",
            &format!("solution.py exited with 1 on the sample data:\n{stderr}"),
        )];
        let kept = shown_outputs(&failures, &test_lines(""), false);
        assert_eq!(
            kept[0],
            "solution.py exited with 1 on the sample data:\nTraceback (most recent call last):\n  File \"/var/task/solution.py\", line 9, in main\n  File \"/var/task/solution.py\", line 9, in <genexpr>\n    total = sum(float(r[\"kwh\"]) for r in rows if r[\"kwh\"] > 3)\n                                                  ^^^^^^^^^^^^^\nTypeError: '>' not supported between instances of 'str' and 'int'\n"
        );
    }

    #[test]
    fn a_comprehension_on_a_test_s_line_shows_the_line_once() {
        let tests = "def test_count(run_solution, tmp_path):\n    result = run_solution()\n    expected = len([r for r in rows if r[\"a\"] > 1])\n    assert expected == 1\n";
        // pytest 8's report (Python 3.11): the test's entry, then the comprehension's.
        let output = "run_solution = <function run_solution.<locals>.run at 0x…>\ntmp_path = PosixPath('/tmp/pytest-of-root/pytest-0/test_count0')\n\n    def test_count(run_solution, tmp_path):\n        result = run_solution()\n>       expected = len([r for r in rows if r[\"a\"] > 1])\n                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n\ntest_solution.py:3: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\n.0 = <list_iterator object at 0x…>\n\n>   expected = len([r for r in rows if r[\"a\"] > 1])\n                                       ^^^^^^^^^^\nE   TypeError: '>' not supported between instances of 'str' and 'int'\n\ntest_solution.py:3: TypeError\n";
        let kept = shown_outputs(
            &[failed("test_solution.py::test_count", output)],
            &test_lines(tests),
            true,
        );
        assert_eq!(
            kept[0],
            "\n.0 = <list_iterator object at 0x…>\n\n>   expected = len([r for r in rows if r[\"a\"] > 1])\nE   TypeError: '>' not supported between instances of 'str' and 'int'\n\ntest_solution.py:3: TypeError\n"
        );
    }

    #[test]
    fn the_harness_s_locations_lose_their_numbers_and_no_other_does() {
        let output = "conftest.py:152: in run\n    raise TypeError(\nE   TypeError: run_solution got ['x']\n/tmp/work/conftest.py:61: in _read_output\ntest_contract.py:88: AssertionError\ntest_solution.py:6: in test_total\nsolution.py:23: in main\nmy_conftest.py:4: in f\n  see conftest.py:12: here\n";
        assert_eq!(
            without_harness_line_numbers(output),
            "conftest.py: in run\n    raise TypeError(\nE   TypeError: run_solution got ['x']\n/tmp/work/conftest.py: in _read_output\ntest_contract.py: AssertionError\ntest_solution.py:6: in test_total\nsolution.py:23: in main\nmy_conftest.py:4: in f\n  see conftest.py:12: here\n"
        );
    }

    #[test]
    fn the_test_lines_pytest_echoes_are_dropped_and_the_rest_kept() {
        let tests = "import json\n\ndef test_total(run_solution, tmp_path):\n    rows = ['a,1', 'b,2']\n    result = run_solution({'f': rows})\n    assert result.outputs['total'] == 4\n";
        let output = "run_solution = <function run at 0x…>\n\n    def test_total(run_solution, tmp_path):\n        rows = ['a,1', 'b,2']\n        result = run_solution({'f': rows})\n>       assert result.outputs['total'] == 4\nE       assert 3 == 4\n\nconftest.py:40: in run\n    proc = subprocess.run(argv)\n    def test_other():\ntest_solution.py:6: AssertionError\n";
        assert_eq!(
            without_echoed_tests(output, &test_lines(tests)),
            "run_solution = <function run at 0x…>\n\n>       assert result.outputs['total'] == 4\nE       assert 3 == 4\n\nconftest.py:40: in run\n    proc = subprocess.run(argv)\n    def test_other():\ntest_solution.py:6: AssertionError\n"
        );
        assert_eq!(
            without_echoed_tests(output, &test_lines("")),
            output,
            "no test file, nothing dropped"
        );
    }

    #[test]
    fn caret_lines_are_dropped_and_the_rest_kept() {
        let output = "Traceback (solution.py's lines only):\n  File \"/var/task/solution.py\", line 80, in main\n    query(con, TOTAL, inputs)\n    ^^^^^^^^^^^^^^^^^^^^^^^^^\nE     ~~~~^^^^\nBinder Error: Values list \"o\" does not have a column named \"qty\"\n\nLINE 5:     SUM(o.qty * p.price)\n                ^^^^^\nx = a ^ b\n";
        assert_eq!(
            without_carets(output),
            "Traceback (solution.py's lines only):\n  File \"/var/task/solution.py\", line 80, in main\n    query(con, TOTAL, inputs)\nBinder Error: Values list \"o\" does not have a column named \"qty\"\n\nLINE 5:     SUM(o.qty * p.price)\nx = a ^ b\n"
        );
    }
}

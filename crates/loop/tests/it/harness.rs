//! The pytest harness (`templates/harness/conftest.py.j2`) run with real Python and pytest:
//! defaults come from samples, arguments are passed the way the contract promises, outputs are
//! read back strictly and cleared between runs.

use std::path::Path;
use std::process::Command;

use autocoder_loop::harness::raised_in;
use autocoder_prompts::Prompts;
use serde_json::json;

fn python() -> String {
    std::env::var("AUTOCODER_TEST_PYTHON")
        .expect("AUTOCODER_TEST_PYTHON must point at a Python with pytest (scripts/test sets it)")
}

const SOLUTION: &str = r#"
import argparse, pathlib, sys

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--strict", default="false")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    rows = pathlib.Path(args.data).read_text().split()
    if args.strict not in ("true", "false"):
        sys.exit("--strict must be true or false")
    out = pathlib.Path(OUT)
    count = float(len(rows)) if args.scale == 0.5 else len(rows)  # pandas writes 2.0
    (out / "count").write_text(str(count) + "\n")
    if args.scale < 0:
        (out / "scaled").write_text("0    1.0\n1    2.0\n")  # like a pandas Series
    else:
        (out / "scaled").write_text(repr(len(rows) * args.scale))
    (out / "strict").write_text(args.strict.upper())
    (out / "elapsed").write_text("1 day, 2:03:04.5")
    if args.strict == "true":
        (out / "report.txt").write_text("strict run")

if __name__ == "__main__":
    main()
"#;

const TESTS: &str = r#"
def test_defaults_come_from_the_sample_and_the_sample_values(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["count"] == 3
    assert result.outputs["scaled"] == 6.0  # --scale 2, its value on the samples
    assert result.outputs["strict"] is False
    assert result.outputs["elapsed"].total_seconds() == 93784.5
    assert result.outputs["report.txt"] is None

def test_bools_arrive_as_true_and_outputs_are_cleared(run_solution, tmp_path):
    data = tmp_path / "two.txt"
    data.write_text("a b")
    result = run_solution({"data": data, "strict": True, "scale": 0.5})
    assert result.outputs["count"] == 2 and isinstance(result.outputs["count"], int)
    assert result.outputs["scaled"] == 1.0
    assert result.outputs["strict"] is True
    assert result.outputs["report.txt"].read_text() == "strict run"
    again = run_solution({"data": data})
    assert again.outputs["report.txt"] is None

def test_a_series_where_one_value_belongs_is_named_as_such(run_solution):
    import pytest
    with pytest.raises(ValueError, match=r"must be one float, but solution.py wrote 2 lines starting '0    1.0' \(a Series"):
        run_solution({"scale": -1})

def test_a_failing_run_reports_its_exit_code(run_solution):
    result = run_solution({"strict": "maybe"})
    assert result.returncode != 0
    assert "--strict must be true or false" in result.stderr
"#;

/// Runs the real pytest on `file` in `dir`.
fn pytest(dir: &Path, file: &str) -> std::process::Output {
    #[allow(clippy::disallowed_methods)] // the real pytest is the point of these tests
    Command::new(python())
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", file])
        .current_dir(dir)
        .output()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn the_harness_runs_the_script_end_to_end_under_real_pytest() {
    harness_end_to_end(false);
}

/// Under the tracer (`--trace-values`) the script behaves as when run directly: the same
/// arguments, outputs, exit codes and messages.
#[test]
fn the_traced_harness_runs_the_script_as_the_plain_one_does() {
    harness_end_to_end(true);
}

/// `conftest.py` writing outputs to `outputs`, its runs cut at 60 s, with the rest of the
/// template's context from `context` (output types, defaults, input names, trace).
fn conftest(outputs: &Path, context: serde_json::Value) -> String {
    let mut context = context;
    context["outputs_dir"] = json!(outputs);
    context["timeout_seconds"] = json!(60);
    context["trace_chars"] = json!(6000);
    Prompts::embedded()
        .unwrap()
        .render("harness/conftest.py.j2", context)
        .unwrap()
}

fn harness_end_to_end(trace: bool) {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs");
    let sample = dir.path().join("sample.txt");
    std::fs::write(&sample, "x y z").unwrap();
    let conftest = conftest(
        &outputs,
        json!({
            "output_types": {"count": "int", "scaled": "float", "strict": "bool",
                             "elapsed": "timedelta", "report.txt": "file"},
            "default_arguments": {"data": sample},
            "default_values": {"scale": "2"},
            "input_names": ["data", "strict", "scale"],
            "trace": trace,
        }),
    );
    write(dir.path(), "conftest.py", &conftest);
    if trace {
        let tracer = autocoder_loop::harness::tracer(&Prompts::embedded().unwrap()).unwrap();
        write(dir.path(), autocoder_loop::harness::TRACER_FILE, &tracer);
    }
    write(
        dir.path(),
        "solution.py",
        &SOLUTION.replace("OUT", &format!("{:?}", outputs.display().to_string())),
    );
    write(dir.path(), "test_solution.py", TESTS);
    let run = pytest(dir.path(), "test_solution.py");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("4 passed"), "{stdout}");
}

/// Writes `report.csv` from the readings; `MODE` picks one of the ways to break the rule.
const REPORT_SOLUTION: &str = r#"
import argparse, csv, pathlib

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--readings", required=True)
    args = parser.parse_args()
    with open(args.readings, newline="") as handle:
        sensors = sorted({row["sensor_id"] for row in csv.DictReader(handle)})
    mode = MODE
    rows = [["sensor_id", "n"]] + [[s, 1] for s in sensors]
    if mode == "headerless":
        rows = rows[1:]
    elif mode == "repeated":
        rows.append(rows[1])
    elif mode == "missing":
        rows = rows[:-1]
    elif mode == "extra":
        rows.append(["S9", 1])
    elif mode == "renamed":
        rows[0] = ["Sensor", "n"]
    elif mode == "indexed":
        rows = [[""] + rows[0]] + [[i] + row for i, row in enumerate(rows[1:])]
    elif mode == "swapped":
        rows = [row[::-1] for row in rows]
    elif mode == "empty":
        rows = []
    elif mode == "crash":
        raise SystemExit("error: could not parse the readings")
    elif mode == "silent":
        return
    with open(pathlib.Path(OUT) / "report.csv", "w", newline="") as handle:
        csv.writer(handle).writerows(rows)

if __name__ == "__main__":
    main()
"#;

/// Writes the harness (`conftest.py` for one input `input` defaulting to `sample`, and
/// `test_contract.py` with `contract` added to its context) and `solution`, with `OUT` in it
/// standing for the outputs directory, into a new directory and runs the contract test there;
/// returns pytest's stdout, whether it passed and how many lines the script appended to
/// `runs.log` beside the outputs directory.
fn run_contract_test(
    sample_text: &str,
    input: &str,
    output_types: &serde_json::Value,
    contract: impl Fn(&Path) -> serde_json::Value,
    solution: &str,
) -> (String, bool, usize) {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs");
    let sample = dir.path().join(format!("{input}.csv"));
    std::fs::write(&sample, sample_text).unwrap();
    let prompts = Prompts::embedded().unwrap();
    let conftest = prompts
        .render(
            "harness/conftest.py.j2",
            json!({
                "outputs_dir": outputs,
                "timeout_seconds": 60,
                "output_types": output_types,
                "default_arguments": {input: sample},
                "default_values": {},
                "input_names": [input],
                "trace": false,
            }),
        )
        .unwrap();
    let mut context = contract(&sample);
    context["outputs_dir"] = json!(outputs);
    for (name, empty) in [("csv_outputs", json!({})), ("output_orders", json!([]))] {
        if context.get(name).is_none() {
            context[name] = empty;
        }
    }
    let contract = prompts
        .render("harness/test_contract.py.j2", context)
        .unwrap();
    write(dir.path(), "conftest.py", &conftest);
    write(dir.path(), "test_contract.py", &contract);
    let solution = solution.replace("OUT", &format!("{:?}", outputs.display().to_string()));
    write(dir.path(), "solution.py", &solution);
    let run = pytest(dir.path(), "test_contract.py");
    let runs = std::fs::read_to_string(dir.path().join("runs.log")).unwrap_or_default();
    (
        String::from_utf8_lossy(&run.stdout).into_owned(),
        run.status.success(),
        runs.lines().count(),
    )
}

/// The rule "one row per `sensor_id`" of `report.csv`, as the harness's context has it, for the
/// readings sample at `sample` with fields separated by `delimiter`.
fn sensor_row_key(sample: &Path, delimiter: char) -> serde_json::Value {
    json!({
        "rule": "Output report must have one row per unique sensor_id",
        "output": "report.csv",
        "column": "sensor_id",
        "sample": "readings",
        "mount": sample,
        "delimiter": delimiter,
    })
}

/// Runs the harness's contract test (with a "one row per `sensor_id`" rule) against the report
/// script in `mode`; returns pytest's stdout and whether it passed.
fn contract_run(mode: &str) -> (String, bool) {
    contract_run_delimited(mode, ',')
}

/// [`contract_run`] with the sample's fields separated by `delimiter` (and the script reading
/// them so).
fn contract_run_delimited(mode: &str, delimiter: char) -> (String, bool) {
    let row_key = |sample: &Path| {
        json!({
            "row_keys": [sensor_row_key(sample, delimiter)],
            "output_columns": [],
            "csv_inputs": {},
        })
    };
    let solution = REPORT_SOLUTION
        .replace("MODE", &format!("{mode:?}"))
        .replace(
            "csv.DictReader(handle)",
            &format!(
                "csv.DictReader(handle, delimiter={:?})",
                delimiter.to_string()
            ),
        );
    let (stdout, passed, _) = run_contract_test(
        &"sensor_id,temp\nS1,1\nS2,2\nS1,3\nS3,4\n".replace(',', &delimiter.to_string()),
        "readings",
        &json!({"report.csv": "file"}),
        row_key,
        &solution,
    );
    (stdout, passed)
}

/// The keys of a `;`-separated sample are read with its delimiter: a right report passes, one
/// with a key missing fails (read with a comma, the sample would have no keys at all, and every
/// row written would count as extra).
#[test]
fn one_row_per_key_reads_the_sample_with_its_delimiter() {
    let (stdout, passed) = contract_run_delimited("right", ';');
    assert!(passed && stdout.contains("2 passed"), "{stdout}");
    let (stdout, passed) = contract_run_delimited("missing", ';');
    assert!(
        !passed && stdout.contains("has no row for sensor_id ['S3']"),
        "{stdout}"
    );
}

#[test]
fn the_contract_test_checks_one_row_per_key_in_the_written_csv() {
    let (stdout, passed) = contract_run("right");
    assert!(passed && stdout.contains("2 passed"), "{stdout}");
    for (mode, says) in [
        (
            "headerless",
            "report.csv must have a sensor_id column in its header row",
        ),
        (
            "repeated",
            "report.csv has more than one row for sensor_id ['S1']",
        ),
        ("missing", "report.csv has no row for sensor_id ['S3']"),
        ("extra", "report.csv has rows for sensor_id ['S9']"),
    ] {
        let (stdout, passed) = contract_run(mode);
        assert!(!passed, "{mode}: {stdout}");
        assert!(stdout.contains("1 failed, 1 passed"), "{mode}: {stdout}");
        assert!(stdout.contains(says), "{mode}: {stdout}");
    }
}

/// Runs the contract test with the task's columns `sensor_id, n` for `report.csv` against the
/// report script in `mode`; returns pytest's stdout and whether it passed.
fn columns_run(mode: &str) -> (String, bool) {
    let (stdout, passed, _) = run_contract_test(
        "sensor_id,temp\nS1,1\nS2,2\n",
        "readings",
        &json!({"report.csv": "file"}),
        |_| {
            json!({
                "row_keys": [],
                "output_columns": [{
                    "output": "report.csv",
                    "columns": ["sensor_id", "n"],
                    "phrase": "report.csv with the columns sensor_id and n (the readings' count)",
                }],
                "csv_inputs": {},
            })
        },
        &REPORT_SOLUTION.replace("MODE", &format!("{mode:?}")),
    );
    (stdout, passed)
}

/// Runs the contract test with every check of `report.csv` the harness has (one row per
/// `sensor_id`, the task's columns, the task's order) against the report script in `mode`;
/// returns pytest's stdout and whether it passed.
fn every_check_run(mode: &str) -> (String, bool) {
    let (stdout, passed, _) = run_contract_test(
        "sensor_id,temp\nS1,1\nS2,2\n",
        "readings",
        &json!({"report.csv": "file"}),
        |sample| {
            json!({
                "row_keys": [sensor_row_key(sample, ',')],
                "output_columns": [{
                    "output": "report.csv",
                    "columns": ["sensor_id", "n"],
                    "phrase": "report.csv with the columns sensor_id and n",
                }],
                "output_orders": [{
                    "output": "report.csv",
                    "keys": [{"words": ["sensor_id"], "descending": false}],
                    "phrase": "sorted by sensor_id",
                }],
                "csv_inputs": {},
            })
        },
        &REPORT_SOLUTION.replace("MODE", &format!("{mode:?}")),
    );
    (stdout, passed)
}

/// A script that fails on the samples, or writes nothing there, is reported once, by the
/// first test: the checks of what it writes skip instead of failing on the same run again, and
/// a failure reads as the harness's message alone (no harness source, no line of
/// `test_contract.py`, no account of the comparison), so a diagnosis reads each fact once.
#[test]
fn a_script_failing_on_the_samples_is_reported_once_by_its_message_alone() {
    let (stdout, passed) = every_check_run("right");
    assert!(passed && stdout.contains("4 passed"), "{stdout}");
    for (mode, says) in [
        (
            "crash",
            "solution.py exited with 1 on the sample data:\nerror: could not parse the readings",
        ),
        (
            "silent",
            "solution.py exited 0 but did not write ['report.csv']",
        ),
    ] {
        let (stdout, passed) = every_check_run(mode);
        assert!(!passed, "{mode}: {stdout}");
        assert!(stdout.contains("1 failed, 3 skipped"), "{mode}: {stdout}");
        assert!(stdout.contains(says), "{mode}: {stdout}");
        for noise in ["SolutionRun(", "assert ", "def test_"] {
            assert!(!stdout.contains(noise), "{mode}: {noise:?} in {stdout}");
        }
        assert!(!numbers_a_harness_line(&stdout), "{mode}: {stdout}");
    }
    let (stdout, passed) = every_check_run("swapped");
    assert!(!passed && stdout.contains("1 failed, 3 passed"), "{stdout}");
    assert!(
        !numbers_a_harness_line(&stdout) && !stdout.contains("assert "),
        "{stdout}"
    );
}

/// Whether pytest's output names a line of `test_contract.py` (`test_contract.py:41:`).
fn numbers_a_harness_line(stdout: &str) -> bool {
    stdout
        .match_indices("test_contract.py:")
        .any(|(at, found)| {
            stdout[at + found.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
}

#[test]
fn the_contract_test_checks_the_header_row_against_the_columns_the_task_lists() {
    let (stdout, passed) = columns_run("right");
    assert!(passed && stdout.contains("2 passed"), "{stdout}");
    for (mode, header) in [
        ("headerless", "['S1', '1']"),
        ("renamed", "['Sensor', 'n']"),
        ("indexed", "['', 'sensor_id', 'n']"),
        ("swapped", "['n', 'sensor_id']"),
        ("empty", "[]"),
    ] {
        let (stdout, passed) = columns_run(mode);
        assert!(!passed, "{mode}: {stdout}");
        assert!(stdout.contains("1 failed, 1 passed"), "{mode}: {stdout}");
        let says = format!(
            "the header row of report.csv is {header}, and the task asks for the columns \
             ['sensor_id', 'n'] in this order"
        );
        assert!(stdout.contains(&says), "{mode}: {stdout}");
        assert!(stdout.contains("the readings' count"), "{mode}: {stdout}");
    }
}

/// Writes the sum of the orders' `amount` as `total` and their names, one a line, as
/// `names.txt`; `ROWS` stands for how the rows (dicts) are read from `handle`, `NAMES` for
/// how the names are found.
const ORDERS_SOLUTION: &str = r#"
import argparse
import csv
import pathlib

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--orders", required=True)
    args = parser.parse_args()
    with open(args.orders, newline="", encoding="utf-8-sig") as handle:
        rows = ROWS
    out = pathlib.Path(OUT)
    with open(out.parent / "runs.log", "a") as log:
        log.write("ran\n")
    (out / "total").write_text(str(sum(float(r["amount"] or 0) for r in rows)))
    (out / "names.txt").write_text("\n".join(NAMES))

if __name__ == "__main__":
    main()
"#;

const BY_CSV: &str = "list(csv.DictReader(handle))";
const NAMES: &str = r#"r["name"] for r in rows"#;

/// A byte-order mark, a quoted comma, a doubled quote, an empty amount, a quoted line break.
const TRICKY: &str =
    "\u{feff}name,amount\r\n\"Smith, J\",1.5\r\nAl \"\"Bo\"\",\r\n\"two\nlines\",2\r\n";

/// Runs the harness's contract test against the orders script (`rows`, `names`) on a sample
/// of `sample_text`; returns pytest's stdout, whether it passed and how often the script ran.
fn quoted_run(sample_text: &str, rows: &str, names: &str) -> (String, bool, usize) {
    run_contract_test(
        sample_text,
        "orders",
        &json!({"total": "float", "names.txt": "file"}),
        |sample| {
            json!({
                "row_keys": [],
                "output_columns": [],
                "csv_inputs": {"orders": {"path": sample, "delimiter": ","}},
            })
        },
        &ORDERS_SOLUTION
            .replace("ROWS", rows)
            .replace("NAMES", names),
    )
}

#[test]
fn the_contract_test_expects_the_same_outputs_from_a_quoted_copy_of_a_csv_sample() {
    // A CSV parser reads the copy as the same data: mark, line breaks, quotes and all.
    let (stdout, passed, runs) = quoted_run(TRICKY, BY_CSV, NAMES);
    assert!(passed && stdout.contains("2 passed"), "{stdout}");
    // Once on the samples (the first test's run serves both) and once on the copy.
    assert_eq!(runs, 2);
    // Rows in another order (as from a set, whose order changes from process to process) are
    // the same output: here the run on the quoted copy (in its own scratch directory) writes them
    // reversed.
    let shuffled = "[r['name'] for r in rows][::-1 if 'autocoder-quoted-' in args.orders else 1]";
    let (stdout, passed, _) = quoted_run(TRICKY, BY_CSV, shuffled);
    assert!(passed && stdout.contains("2 passed"), "{stdout}");
    // Splitting lines on commas works on a plain sample and crashes on its quoted copy.
    let plain = "name,amount\nSmith,1.5\nAl,\n";
    let split =
        "[dict(zip(['name', 'amount'], line.strip().split(','))) for line in list(handle)[1:]]";
    let (stdout, passed, _) = quoted_run(plain, split, NAMES);
    assert!(!passed, "{stdout}");
    assert!(stdout.contains("1 failed, 1 passed"), "{stdout}");
    assert!(
        stdout.contains("when every field of")
            && stdout.contains("could not convert string to float"),
        "{stdout}"
    );
    // An output that changes without a crash is named, with both values.
    let raw_line = "[open(args.orders).read().splitlines()[1]]";
    let (stdout, passed, _) = quoted_run(plain, BY_CSV, raw_line);
    assert!(!passed, "{stdout}");
    assert!(
        stdout.contains("names.txt changed when every field of")
            && stdout.contains(r#"'Smith,1.5' from the samples as given, '"Smith","1.5"' from"#),
        "{stdout}"
    );
    // A script that already fails on the samples fails once: the quoted copy is skipped.
    let (stdout, passed, _) = quoted_run(TRICKY, split, NAMES);
    assert!(
        !passed && stdout.contains("1 failed, 1 skipped"),
        "{stdout}"
    );
}

/// A script that catches an exception and stops with its message, as the skeleton does.
const CATCHING: &str = r#"
import argparse, json, sys

def compute(rows):
    if rows == 2:
        return json.loads("{")
    if rows == 4:
        return 1 / 0
    if rows == 5:
        return sum(int(x) for x in ["a"])
    table = {"qty": rows}
    return table["price"]

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, required=True)
    args = parser.parse_args()
    if args.rows == 0:
        sys.exit(0)
    try:
        compute(args.rows)
    except (KeyError, ValueError) as err:
        sys.exit(f"error: {err}")

if __name__ == "__main__":
    main()
"#;

/// The runner a try on the samples uses: the script runs with its own arguments, and when it
/// stops with a message while handling an exception, the traceback names the line that raised
/// it; a plain exit status prints nothing more.
#[test]
#[allow(clippy::disallowed_methods)] // the runner under real Python is the point of this test
fn the_where_runner_shows_the_line_behind_a_caught_exception() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = Prompts::embedded().unwrap();
    let runner = autocoder_loop::harness::where_runner(&prompts).unwrap();
    let runner_path = dir.path().join(autocoder_loop::harness::WHERE_RUNNER_FILE);
    std::fs::write(&runner_path, runner).unwrap();
    std::fs::write(dir.path().join("solution.py"), CATCHING).unwrap();
    let run = |rows: &str| {
        Command::new(python())
            .arg(&runner_path)
            .args(["--rows", rows])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let out = run("3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error: 'price'"), "{stderr}");
    assert!(
        stderr.contains("solution.py\", line 12, in compute"),
        "{stderr}"
    );
    assert!(stderr.contains("return table[\"price\"]"), "{stderr}");
    assert!(stderr.contains("KeyError: 'price'"), "{stderr}");
    assert_eq!(raised_in(&stderr).as_deref(), Some("compute"));
    // Raised inside a library: solution.py's line shows, the library's frames do not.
    let out = run("2");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("solution.py\", line 6, in compute"),
        "{stderr}"
    );
    assert!(stderr.contains("json.loads(\"{\")"), "{stderr}");
    assert!(stderr.contains("JSONDecodeError"), "{stderr}");
    assert!(!stderr.contains("decoder.py"), "{stderr}");
    assert_eq!(raised_in(&stderr).as_deref(), Some("compute"));
    // Not caught by the script: reported the same way, with Python's exit status.
    let out = run("4");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("return 1 / 0"), "{stderr}");
    assert!(stderr.contains("ZeroDivisionError"), "{stderr}");
    assert!(!stderr.contains("runpy"), "{stderr}");
    assert_eq!(raised_in(&stderr).as_deref(), Some("compute"));
    // Raised in a generator expression: the function around it.
    let out = run("5");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("in <genexpr>"), "{stderr}");
    assert_eq!(raised_in(&stderr).as_deref(), Some("compute"));
    let out = run("0");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(raised_in(&String::from_utf8_lossy(&out.stderr)), None);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Arguments the script does not take fail in the script's own parser, under its name.
    let out = Command::new(python())
        .arg(&runner_path)
        .arg("--nope")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("solution.py: error"), "{stderr}");
}

/// The runner the sandbox's test runs start the script under (`as_python`): an exception the
/// script does not catch, or a script that does not compile, reads on stderr exactly as under
/// `python solution.py`, with the same exit status; a caught one it stops with shows its line.
#[test]
#[allow(clippy::disallowed_methods)] // the runner under real Python is the point of this test
fn the_test_runs_runner_prints_what_python_prints_and_a_caught_exception_s_line() {
    let dir = tempfile::tempdir().unwrap();
    let runner = Prompts::embedded()
        .unwrap()
        .render(
            "harness/where.py.j2",
            json!({"file_name": autocoder_loop::harness::WHERE_RUNNER_FILE, "as_python": true}),
        )
        .unwrap();
    let runner_path = dir.path().join(autocoder_loop::harness::WHERE_RUNNER_FILE);
    std::fs::write(&runner_path, runner).unwrap();
    let solution = dir.path().join("solution.py");
    let stderr_of = |program: &Path, args: &[&str]| {
        let out = Command::new(python())
            .arg(program)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for script in [
        "def f(x):\n    return x / 0\n\ndef main():\n    f(1)\n\nif __name__ == '__main__':\n    main()\n",
        "import json\n\ndef main():\n    json.loads('{')\n\nmain()\n",
        "def main():\n    try:\n        {}['a']\n    except KeyError:\n        raise ValueError('bad')\n\nmain()\n",
        "rows = [1, 'a']\nprint(sum(r + 1 for r in rows))\n",
        "def main(:\n    pass\n",
        "import no_such_module_here\n",
    ] {
        std::fs::write(&solution, script).unwrap();
        let (direct, under_runner) = (stderr_of(&solution, &[]), stderr_of(&runner_path, &[]));
        assert_eq!(direct.0, Some(1), "{script}: {}", direct.1);
        assert_eq!(under_runner, direct, "{script}");
    }
    std::fs::write(&solution, CATCHING).unwrap();
    let (status, stderr) = stderr_of(&runner_path, &["--rows", "3"]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("return table[\"price\"]"), "{stderr}");
    assert!(
        stderr.ends_with("KeyError: 'price'\nerror: 'price'\n"),
        "{stderr}"
    );
}

/// A float output written as NaN or infinity on the samples fails the contract test; a number
/// passes it.
#[test]
fn the_contract_test_refuses_a_float_output_that_is_not_a_number() {
    for (written, passes) in [("2.5", true), ("nan", false), ("-inf", false)] {
        let solution = format!(
            r#"
import argparse, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--readings", required=True)
args = parser.parse_args()
pathlib.Path(OUT, "mean").write_text("{written}")
"#
        );
        let (stdout, passed, _) = run_contract_test(
            "sensor_id,temp\nS1,1\n",
            "readings",
            &json!({"mean": "float"}),
            |_| json!({"row_keys": [], "output_columns": [], "csv_inputs": {}}),
            &solution,
        );
        assert_eq!(passed, passes, "{written}: {stdout}");
        if !passes {
            assert!(
                stdout.contains("['mean'] on the sample data as NaN or infinity"),
                "{written}: {stdout}"
            );
        }
    }
}

/// A script of `sales` (`region,qty,price`) that fails when asked to (`--fail yes`).
const SALES_SOLUTION: &str = r#"
import argparse, csv, pathlib, sys
parser = argparse.ArgumentParser()
parser.add_argument("--sales", required=True)
parser.add_argument("--fail", default="no")
args = parser.parse_args()
if args.fail == "yes":
    sys.exit("asked to fail")
with open(args.sales, newline="") as f:
    total = sum(float(r["qty"]) * float(r["price"]) for r in csv.DictReader(f))
pathlib.Path(OUT, "total").write_text(repr(total))
"#;

/// Tests that give the script files of their own (see the test below).
const OWN_FILE_TESTS: &str = r#"
def file(tmp_path, text):
    path = tmp_path / "sales.csv"
    path.write_text(text)
    return path

def test_without_price(run_solution, tmp_path):
    assert run_solution({"sales": file(tmp_path, "region,qty\nnorth,2\n")}).returncode != 0

def test_a_path_that_does_not_exist(run_solution, tmp_path):
    assert run_solution({"sales": str(tmp_path / "nope.csv")}).returncode != 0

def test_columns_in_another_order_with_a_bad_value(run_solution, tmp_path):
    path = file(tmp_path, "price,region,qty\nx,north,2\n")
    assert run_solution({"sales": path}).returncode != 0

def test_an_empty_file(run_solution, tmp_path):
    # An empty file may be the edge case a test means: no note, though the script failed.
    assert run_solution({"sales": file(tmp_path, ""), "fail": "yes"}).returncode != 0

def test_a_column_the_script_does_not_need(run_solution, tmp_path):
    # The file lacks `region`, but the script did not fail on it: a note only follows a failure.
    assert run_solution({"sales": file(tmp_path, "qty,price\n2,1.5\n")}).returncode == 0

def test_a_run_that_succeeds(run_solution, tmp_path):
    assert run_solution({"sales": file(tmp_path, "qty,price,region\n2,1.5,north\n")}).returncode == 0
"#;

/// The values of the user property `name` that a junit XML report records for `test`.
fn junit_properties(xml: &str, test: &str, name: &str) -> Vec<String> {
    let start = xml
        .find(&format!("name=\"{test}\""))
        .unwrap_or_else(|| panic!("{test} not in {xml}"));
    let case = &xml[start..];
    let case = &case[..case.find("</testcase>").unwrap_or(case.len())];
    case.split(&format!("<property name=\"{name}\" value=\""))
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].replace("&apos;", "'"))
        .collect()
}

/// When the script fails on files a test wrote, the harness records (as the test's user
/// property `autocoder_input`, which the sandbox's pytest plugin reports) what makes those
/// files off the task's data: a path that does not exist, a table without a column of its
/// sample. Columns in another order, an empty file and a run that succeeds record nothing.
#[test]
fn the_harness_says_when_a_tests_own_file_lacks_the_samples_columns() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs");
    let sample = dir.path().join("sales.csv");
    std::fs::write(&sample, "region,qty,price\nnorth,3,2.5\n").unwrap();
    let conftest = conftest(
        &outputs,
        json!({
            "output_types": {"total": "float"},
            "default_arguments": {"sales": sample},
            "default_values": {"fail": "no"},
            "input_names": ["sales", "fail"],
            "trace": false,
        }),
    );
    write(dir.path(), "conftest.py", &conftest);
    write(
        dir.path(),
        "solution.py",
        &SALES_SOLUTION.replace("OUT", &format!("{:?}", outputs.display().to_string())),
    );
    write(dir.path(), "test_solution.py", OWN_FILE_TESTS);
    #[allow(clippy::disallowed_methods)] // the real pytest is the point of these tests
    let run = Command::new(python())
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--junitxml=report.xml",
            "test_solution.py",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    let xml = std::fs::read_to_string(dir.path().join("report.xml")).unwrap();
    let notes = |test: &str| junit_properties(&xml, test, "autocoder_input");
    assert_eq!(
        notes("test_without_price"),
        [
            "the test's `sales` file has the columns ['region', 'qty'], without ['price'] of the task's `sales` (its sample has ['region', 'qty', 'price'])"
        ]
    );
    let missing = notes("test_a_path_that_does_not_exist");
    assert_eq!(missing.len(), 1, "{xml}");
    assert!(
        missing[0].starts_with("the test passed `sales` = ")
            && missing[0].ends_with("nope.csv', a path that does not exist"),
        "{missing:?}"
    );
    for test in [
        "test_columns_in_another_order_with_a_bad_value",
        "test_an_empty_file",
        "test_a_column_the_script_does_not_need",
        "test_a_run_that_succeeds",
    ] {
        assert_eq!(notes(test), Vec::<String>::new(), "{test}: {xml}");
    }
}

/// pytest's tracebacks name the contract test's lines, and the prompts show them: the checks that
/// only some tasks get (the order, the looked-up values) come after every other test, so a task
/// that gets them sees the other tests at the lines it would see without them.
#[test]
fn the_checks_some_tasks_get_come_last_and_move_no_other_test() {
    let prompts = Prompts::embedded().unwrap();
    let render = |orders: serde_json::Value, outputs: serde_json::Value| {
        prompts
            .render(
                "harness/test_contract.py.j2",
                json!({
                    "outputs_dir": "/var/outputs",
                    "row_keys": [{"output": "joined.csv", "column": "order_id", "rule": "one row per order_id", "mount": "/var/inputs/orders.csv", "delimiter": ","}],
                    "output_columns": [{"output": "joined.csv", "columns": ["order_id", "name"], "phrase": "joined.csv with columns order_id, name"}],
                    "csv_inputs": {
                        "orders": {"path": "/var/inputs/orders.csv", "delimiter": ","},
                        "customers": {"path": "/var/inputs/customers.csv", "delimiter": ","},
                    },
                    "csv_outputs": outputs,
                    "output_orders": orders,
                }),
            )
            .unwrap()
    };
    let without = render(json!([]), json!({}));
    let with = render(
        json!([{"output": "joined.csv", "keys": [{"words": ["order_id"], "descending": false}], "phrase": "sorted by order_id"}]),
        json!({"joined.csv": ","}),
    );
    assert!(with.contains("def test_joined_csv_is_in_the_order_the_task_gives"));
    assert!(with.contains("def test_joined_csv_takes_each_looked_up_value_from_its_keys_row"));
    assert!(
        with.starts_with(without.trim_end()),
        "the tests every task gets moved:\n{with}"
    );
}

//! What the harness checks of a CSV output on the sample run, whatever the model's own tests
//! check: a rule "the output has one row per <column>" (and the tests prompt computes the row
//! count from it), and the columns the task lists for it.

use autocoder_loop::GenerateOptions;
use autocoder_loop::request::{Declaration, Sample};

use crate::generate::{Fixture, code, edit_fix, fixture, plan, test_error_verdict, test_file};

const READINGS: &str = "sensor_id,temp\nS1,1.5\nS2,2.0\nS1,3.5\n";

/// Writes one `sensor_id,max_temp` row per sensor; `HEADER` stands for the header row.
const REPORT_SCRIPT: &str = r#"import argparse
import csv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--readings", required=True)
    args = parser.parse_args()
    highest = {}
    with open(args.readings, newline="") as handle:
        for row in csv.DictReader(handle):
            temp = float(row["temp"])
            highest[row["sensor_id"]] = max(temp, highest.get(row["sensor_id"], temp))
    with open("/var/outputs/report.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        HEADER
        for sensor in sorted(highest):
            writer.writerow([sensor, highest[sensor]])


if __name__ == "__main__":
    main()
"#;

const WITH_HEADER: &str = r#"writer.writerow(["sensor_id", "max_temp"])"#;
const NO_HEADER: &str = "pass  # no header row";

/// Counts rows the way the 1.5B model's tests did: a headerless report still reads back as rows.
const WEAK_TESTS: &str = r#"import pytest


def test_report_is_written(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["report.csv"] is not None
"#;

/// The request for `report.csv` from the readings sample (written into the fixture's directory).
fn report_options(f: &Fixture, prompt: &str) -> GenerateOptions {
    let sample = f.dir.path().join("readings.csv");
    std::fs::write(&sample, READINGS).unwrap();
    GenerateOptions {
        prompt: prompt.into(),
        samples: vec![Sample {
            name: "readings".into(),
            path: sample,
        }],
        outputs: vec!["report.csv:file".parse::<Declaration>().unwrap()],
        ..f.options()
    }
}

const ROW_TEST: &str = "test_contract.py::test_report_csv_has_one_row_per_sensor_id";

#[tokio::test]
async fn a_headerless_report_fails_the_one_row_per_key_rule_and_goes_to_the_code_fixer() {
    let f = fixture(vec![
        plan(),
        code(&REPORT_SCRIPT.replace("HEADER", NO_HEADER)),
        test_file(WEAK_TESTS),
        test_error_verdict(ROW_TEST),
        edit_fix(NO_HEADER, WITH_HEADER),
    ])
    .await;
    let options = GenerateOptions {
        constraints: vec!["Output report must have one row per unique sensor_id".into()],
        ..report_options(&f, "The highest temperature of each sensor, as report.csv.")
    };
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    // The model called it a test error; the harness's check cannot be fixed by a test patch.
    assert_eq!(result.iterations[0].error_types[ROW_TEST], "logic");
    let first_run =
        std::fs::read_to_string(f.dir.path().join("run/iterations/1/test_output.txt")).unwrap();
    assert!(
        first_run.contains("report.csv must have a sensor_id column in its header row"),
        "{first_run}"
    );
    // Every prompt says the rule is checked; the tests prompt gives the row count as code computed from the test's own rows.
    f.assert_request_says(1, "the harness checks it");
    f.assert_request_says(
        2,
        "expected_rows = len({r['sensor_id'] for r in readings_rows})",
    );
    let written = std::fs::read_to_string(f.dir.path().join("run/test_contract.py")).unwrap();
    assert!(written.contains("def test_report_csv_has_one_row_per_sensor_id"));
}

const COLUMNS_TEST: &str = "test_contract.py::test_report_csv_has_the_columns_the_task_lists";

#[tokio::test]
async fn a_report_without_the_columns_the_task_lists_goes_to_the_code_fixer() {
    let misnamed = r#"writer.writerow(["sensor", "max_temp"])"#;
    let f = fixture(vec![
        plan(),
        code(&REPORT_SCRIPT.replace("HEADER", misnamed)),
        test_file(WEAK_TESTS),
        test_error_verdict(COLUMNS_TEST),
        edit_fix(misnamed, WITH_HEADER),
    ])
    .await;
    let options = report_options(
        &f,
        "Write report.csv with the columns sensor_id and max_temp (the highest temperature), \
         sorted by sensor_id.",
    );
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    // The model called it a test error; the task's own columns are not the tests' to change.
    assert_eq!(result.iterations[0].error_types[COLUMNS_TEST], "logic");
    let first_run =
        std::fs::read_to_string(f.dir.path().join("run/iterations/1/test_output.txt")).unwrap();
    assert!(
        first_run.contains(
            "the header row of report.csv is ['sensor', 'max_temp'], and the task asks for the \
             columns ['sensor_id', 'max_temp'] in this order"
        ),
        "{first_run}"
    );
}

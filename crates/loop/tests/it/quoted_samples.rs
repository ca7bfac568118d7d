//! The harness runs the script on its CSV samples written another way with the same data (every
//! field in double quotes): a script that splits lines on commas passes weak tests on the
//! samples as given and breaks on a quoted copy, which is what real files (and held-out data)
//! do to it. The failure goes to the code fixer.

use autocoder_loop::GenerateOptions;
use autocoder_loop::request::{Declaration, Sample};

use crate::generate::{code, edit_fix, fixture, plan, test_error_verdict, test_file};

const READINGS: &str = "sensor_id,temp\nS1,1.5\nS2,\nS1,3.5\n";

/// Sums the readings; `PARSE` stands for how a line becomes its two fields.
const SUM_SCRIPT: &str = r#"import argparse
import csv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--readings", required=True)
    args = parser.parse_args()
    total = 0.0
    with open(args.readings, newline="") as handle:
        PARSE
            if temp:
                total += float(temp)
    with open("/var/outputs/total", "w") as handle:
        handle.write(str(total))


if __name__ == "__main__":
    main()
"#;

const BY_SPLITTING: &str =
    "next(handle)\n        for sensor, temp in (line.strip().split(\",\") for line in handle):";
const BY_CSV: &str = "for sensor, temp in list(csv.reader(handle))[1:]:";

const WEAK_TESTS: &str = r#"def test_total_is_written(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == 5.0
"#;

const QUOTED_TEST: &str =
    "test_contract.py::test_reads_quoted_fields_of_the_csv_samples_as_the_same_data";

fn options(f: &crate::generate::Fixture) -> GenerateOptions {
    let sample = f.dir.path().join("readings.csv");
    std::fs::write(&sample, READINGS).unwrap();
    GenerateOptions {
        prompt: "The sum of all temperatures, as total.".into(),
        samples: vec![Sample {
            name: "readings".into(),
            path: sample,
        }],
        outputs: vec!["total:float".parse::<Declaration>().unwrap()],
        ..f.options()
    }
}

#[tokio::test]
async fn a_script_splitting_lines_on_commas_fails_on_a_quoted_copy_and_goes_to_the_code_fixer() {
    let f = fixture(vec![
        plan(),
        code(&SUM_SCRIPT.replace("PARSE", BY_SPLITTING)),
        test_file(WEAK_TESTS),
        test_error_verdict(QUOTED_TEST),
        edit_fix(BY_SPLITTING, BY_CSV),
    ])
    .await;
    let result = f.generate(&options(&f)).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    // The model called it a test error; a test patch cannot change the harness's check.
    assert_eq!(result.iterations[0].error_types[QUOTED_TEST], "logic");
    let first_run =
        std::fs::read_to_string(f.dir.path().join("run/iterations/1/test_output.txt")).unwrap();
    assert!(
        first_run.contains("when every field of /var/inputs/readings.csv was in double quotes"),
        "{first_run}"
    );
    assert!(
        first_run.contains("could not convert string to float"),
        "{first_run}"
    );
}

#[tokio::test]
async fn a_script_reading_csv_passes_the_quoted_copy_at_the_first_run() {
    let f = fixture(vec![
        plan(),
        code(&SUM_SCRIPT.replace("PARSE", BY_CSV)),
        test_file(WEAK_TESTS),
    ])
    .await;
    let result = f.generate(&options(&f)).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests"]);
    let written = std::fs::read_to_string(f.dir.path().join("run/test_contract.py")).unwrap();
    assert!(written.contains("def test_reads_quoted_fields_of_the_csv_samples_as_the_same_data"));
}

/// A sample whose fields are separated by `;`: its quoted copy keeps the `;` (the delimiter the
/// profiler found), so a script reading it right passes. A copy joined with commas would be one
/// quoted field per line, and fail every correct script.
#[tokio::test]
async fn the_quoted_copy_of_a_semicolon_sample_keeps_its_delimiter() {
    let by_semicolons = "for sensor, temp in list(csv.reader(handle, delimiter=\";\"))[1:]:";
    let f = fixture(vec![
        plan(),
        code(&SUM_SCRIPT.replace("PARSE", by_semicolons)),
        test_file(WEAK_TESTS),
    ])
    .await;
    let options = options(&f);
    std::fs::write(&options.samples[0].path, READINGS.replace(',', ";")).unwrap();
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests"]);
    let written = std::fs::read_to_string(f.dir.path().join("run/test_contract.py")).unwrap();
    assert!(written.contains(r#""delimiter": ";""#), "{written}");
}

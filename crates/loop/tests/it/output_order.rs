//! The harness checks the order the task gives a CSV output's rows ("sorted by revenue
//! descending") on the run on the samples: rows written in a dict's order pass tests that look
//! a region up, and the failure goes to the code fixer.

use autocoder_loop::GenerateOptions;
use autocoder_loop::request::{Declaration, Sample};

use crate::generate::{code, edit_fix, fixture, plan, test_error_verdict, test_file};
use crate::looked_up_values::first_outcome;

/// Revenue by region, first seen first: north 5, south 9, east 100.
const SALES: &str = "region,qty,price\nnorth,1,5\nsouth,2,4.5\neast,4,25\n";

/// Writes each region's revenue; `ROWS` stands for the rows in the order written.
const BY_REGION: &str = r#"import argparse
import csv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    totals = {}
    with open(args.sales, newline="") as handle:
        for row in csv.DictReader(handle):
            revenue = float(row["qty"]) * float(row["price"])
            totals[row["region"]] = totals.get(row["region"], 0.0) + revenue
    with open("/var/outputs/by_region.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["region", "revenue"])
        for region, revenue in ROWS:
            writer.writerow([region, f"{revenue:.2f}"])


if __name__ == "__main__":
    main()
"#;

const AS_SEEN: &str = "totals.items()";
/// Largest first, as numbers: "100.00" before "9.00", which text order would put the other way.
const LARGEST_FIRST: &str = "sorted(totals.items(), key=lambda item: -item[1])";

const LOOKUP_TESTS: &str = r#"import csv


def test_east_is_written(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    with open(result.outputs["by_region.csv"], newline="") as handle:
        assert "east" in {row["region"] for row in csv.DictReader(handle)}
"#;

const ORDER_TEST: &str = "test_contract.py::test_by_region_csv_is_in_the_order_the_task_gives";

fn options(f: &crate::generate::Fixture, prompt: &str) -> GenerateOptions {
    let path = f.dir.path().join("sales.csv");
    std::fs::write(&path, SALES).unwrap();
    GenerateOptions {
        prompt: prompt.into(),
        samples: vec![Sample {
            name: "sales".into(),
            path,
        }],
        outputs: vec!["by_region.csv:file".parse::<Declaration>().unwrap()],
        ..f.options()
    }
}

const SORTED_TASK: &str =
    "Write by_region.csv with columns region, revenue (2 decimals), sorted by revenue descending.";

fn script(rows: &str) -> String {
    BY_REGION.replace("ROWS", rows)
}

#[tokio::test]
async fn rows_in_another_order_than_the_task_gives_fail_the_harness_and_go_to_the_code_fixer() {
    let f = fixture(vec![
        plan(),
        code(&script(AS_SEEN)),
        test_file(LOOKUP_TESTS),
        test_error_verdict(ORDER_TEST),
        edit_fix(AS_SEEN, LARGEST_FIRST),
    ])
    .await;
    let result = f.generate(&options(&f, SORTED_TASK)).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    // The model called it a test error; a test patch cannot change the harness's check.
    assert_eq!(result.iterations[0].error_types[ORDER_TEST], "logic");
    let first_run =
        std::fs::read_to_string(f.dir.path().join("run/iterations/1/test_output.txt")).unwrap();
    assert!(
        first_run.contains(
            "the task asks for by_region.csv sorted by revenue descending, and line 3 has revenue '9.00' after '5.00' on the line before"
        ),
        "{first_run}"
    );
    // The message is the whole failure: not the helper's source.
    assert!(!first_run.contains("def _check_order"), "{first_run}");
}

/// "100.00" before "9.00" is the order as numbers, not as text: any reading in order passes.
#[tokio::test]
async fn numbers_in_the_order_the_task_gives_pass_at_the_first_run() {
    let f = fixture(vec![
        plan(),
        code(&script(LARGEST_FIRST)),
        test_file(LOOKUP_TESTS),
    ])
    .await;
    let result = f.generate(&options(&f, SORTED_TASK)).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests"]);
    assert_eq!(first_outcome(&f, ORDER_TEST), "passed");
    let written = std::fs::read_to_string(f.dir.path().join("run/test_contract.py")).unwrap();
    assert!(written.contains("def test_by_region_csv_is_in_the_order_the_task_gives"));
}

/// A task that gives no order has no order to check: rows as seen pass.
#[tokio::test]
async fn a_task_that_gives_no_order_checks_none() {
    let f = fixture(vec![
        plan(),
        code(&script(AS_SEEN)),
        test_file(LOOKUP_TESTS),
    ])
    .await;
    let result = f
        .generate(&options(
            &f,
            "Write by_region.csv with columns region, revenue (2 decimals).",
        ))
        .await;
    assert!(result.success, "{result:#?}");
    let written = std::fs::read_to_string(f.dir.path().join("run/test_contract.py")).unwrap();
    assert!(
        !written.contains("_is_in_the_order_the_task_gives"),
        "{written}"
    );
}

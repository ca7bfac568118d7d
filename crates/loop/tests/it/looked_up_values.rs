//! The harness checks what a script looked up in one sample by a key another sample repeats
//! (a join): each looked-up value must be the one on its key's row. A script that writes one
//! customer's name on every order passes tests that count rows; the harness finds the rows
//! whose name belongs to another customer, and the failure goes to the code fixer.

use autocoder_loop::GenerateOptions;
use autocoder_loop::request::{Declaration, Sample};
use serde_json::Value;

use crate::generate::{code, edit_fix, fixture, plan, test_error_verdict, test_file};

/// C2 has two orders: `customer_id` in `orders` is the other side of the customers' key.
const ORDERS: &str = "order_id,customer_id,total\nO1,C2,10\nO2,C1,5\nO3,C2,7\n";
const CUSTOMERS: &str = "customer_id,name,country\nC1,Ann,FR\nC2,Bob,DE\nC3,Cid,JP\n";

/// Joins each order to its customer's name; `NAME` stands for what the row's name is.
const JOIN_SCRIPT: &str = r#"import argparse
import csv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--orders", required=True)
    parser.add_argument("--customers", required=True)
    args = parser.parse_args()
    names = {}
    with open(args.customers, newline="") as handle:
        for customer in csv.DictReader(handle):
            names[customer["customer_id"]] = customer["name"]
            name = customer["name"]
    with open(args.orders, newline="") as handle, open("/var/outputs/joined.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["order_id", "customer_id", "name", "total"])
        for order in csv.DictReader(handle):
            writer.writerow([order["order_id"], order["customer_id"], NAME, order["total"]])


if __name__ == "__main__":
    main()
"#;

/// The last customer's name on every row.
const LAST_NAME: &str = "name";
const OWN_NAME: &str = r#"names[order["customer_id"]]"#;

const ROW_COUNT_TESTS: &str = r#"import csv


def test_one_row_per_order(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    with open(result.outputs["joined.csv"], newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 3
"#;

const LOOKUP_TEST: &str =
    "test_contract.py::test_joined_csv_takes_each_looked_up_value_from_its_keys_row";

fn options(f: &crate::generate::Fixture, orders: &str, customers: &str) -> GenerateOptions {
    let sample = |name: &str, text: &str| {
        let path = f.dir.path().join(format!("{name}.csv"));
        std::fs::write(&path, text).unwrap();
        Sample {
            name: name.into(),
            path,
        }
    };
    GenerateOptions {
        prompt: "Each order with its customer's name, as joined.csv.".into(),
        samples: vec![sample("orders", orders), sample("customers", customers)],
        outputs: vec!["joined.csv:file".parse::<Declaration>().unwrap()],
        ..f.options()
    }
}

fn script(name: &str) -> String {
    JOIN_SCRIPT.replace("NAME", name)
}

/// The outcome the first test run recorded for `test` in the run's journal.
pub(crate) fn first_outcome(f: &crate::generate::Fixture, test: &str) -> String {
    let journal = std::fs::read_to_string(f.dir.path().join("run/journal.jsonl")).unwrap();
    journal
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter_map(|line| line["report"]["tests"].as_array().cloned())
        .flatten()
        .find(|case| case["id"] == test)
        .and_then(|case| case["outcome"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("{test} did not run: {journal}"))
}

#[tokio::test]
async fn a_script_writing_another_customers_name_fails_the_harness_and_goes_to_the_code_fixer() {
    let f = fixture(vec![
        plan(),
        code(&script(LAST_NAME)),
        test_file(ROW_COUNT_TESTS),
        test_error_verdict(LOOKUP_TEST),
        edit_fix(
            r#"order["customer_id"], name, order["total"]"#,
            &format!(r#"order["customer_id"], {OWN_NAME}, order["total"]"#),
        ),
    ])
    .await;
    let result = f.generate(&options(&f, ORDERS, CUSTOMERS)).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    // The model called it a test error; a test patch cannot change the harness's check.
    assert_eq!(result.iterations[0].error_types[LOOKUP_TEST], "logic");
    let first_run =
        std::fs::read_to_string(f.dir.path().join("run/iterations/1/test_output.txt")).unwrap();
    // Every customer's name is Cid's (the last row): O1 and O3 are Bob's, O2 is Ann's.
    assert!(
        first_run.contains("joined.csv has 3 value(s) looked up by customer_id that belong to another row of /var/inputs/customers.csv"),
        "{first_run}"
    );
    assert!(
        first_run.contains(
            "line 2 has customer_id 'C2' with name 'Cid', where /var/inputs/customers.csv has 'Bob'"
        ),
        "{first_run}"
    );
    // The message is the whole failure: no source of the harness, no list of every row.
    assert!(!first_run.contains("known = {column"), "{first_run}");
    assert!(!first_run.contains("assert not ["), "{first_run}");
    assert_eq!(first_outcome(&f, LOOKUP_TEST), "failed");
}

#[tokio::test]
async fn a_script_looking_each_name_up_by_its_key_passes_the_check_at_the_first_run() {
    let f = fixture(vec![
        plan(),
        code(&script(OWN_NAME)),
        test_file(ROW_COUNT_TESTS),
    ])
    .await;
    let result = f.generate(&options(&f, ORDERS, CUSTOMERS)).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests"]);
    assert_eq!(first_outcome(&f, LOOKUP_TEST), "passed");
}

/// No sample repeats `customer_id` (one order per customer): nothing says which table's key it
/// is, so nothing is checked, even with another customer's name on every row.
#[tokio::test]
async fn a_key_no_other_sample_repeats_is_not_checked() {
    let one_each = "order_id,customer_id,total\nO1,C2,10\nO2,C1,5\nO3,C3,7\n";
    let f = fixture(vec![
        plan(),
        code(&script(LAST_NAME)),
        test_file(ROW_COUNT_TESTS),
    ])
    .await;
    let result = f.generate(&options(&f, one_each, CUSTOMERS)).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(first_outcome(&f, LOOKUP_TEST), "skipped");
}

/// A value the script made itself (not one of the sample's) is not a lookup to check: here every
/// name upper-cased.
#[tokio::test]
async fn a_value_the_sample_does_not_have_is_not_taken_for_another_rows() {
    let f = fixture(vec![
        plan(),
        code(&script(&format!("{OWN_NAME}.upper()"))),
        test_file(ROW_COUNT_TESTS),
    ])
    .await;
    let result = f.generate(&options(&f, ORDERS, CUSTOMERS)).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(first_outcome(&f, LOOKUP_TEST), "passed");
}

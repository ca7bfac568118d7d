//! What the loop benches share: the sales sample, a script with a slot for its revenue
//! expression (wrong, then right), and the scripted answers of a fail-diagnose-fix run.

use autocoder_testkit::{Entry, Reply};
use serde_json::json;

/// The sample: revenue 25.5.
pub(crate) const SALES: &str = "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\nnorth,1,10.0\n";

/// The script, with `BUG` where the revenue expression goes.
const SCRIPT: &str = r#"import argparse
import csv
import os
import sys


def total_revenue(path):
    with open(path, newline="") as handle:
        return sum(BUG for row in csv.DictReader(handle))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    try:
        total = total_revenue(args.sales)
    except OSError as err:
        sys.exit(f"cannot read {args.sales}: {err}")
    outputs = os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs")
    with open(os.path.join(outputs, "total"), "w") as handle:
        handle.write(str(total))


if __name__ == "__main__":
    main()
"#;

/// The right expression.
pub(crate) const GOOD: &str = r#"float(row["qty"]) * float(row["price"])"#;
/// The wrong one.
pub(crate) const BAD: &str = r#"float(row["qty"])"#;

/// The script with `expression` as its revenue.
pub(crate) fn script(expression: &str) -> String {
    SCRIPT.replace("BUG", expression)
}

/// The plan, code and tests answers.
pub(crate) fn plan_code_tests(code: &str, tests: &str) -> Vec<Entry> {
    vec![
        Entry::step(
            "plan",
            Reply::Json(
                json!({"summary": "sum qty * price", "approach": ["read", "sum", "write"], "edge_cases": []}),
            ),
        ),
        Entry::step(
            "code",
            Reply::Json(json!({"code": code, "packages": [], "system_packages": []})),
        ),
        Entry::step("tests", Reply::Json(json!({"tests": tests}))),
    ]
}

/// A diagnosis of the wrong total as a logic error.
pub(crate) fn diagnosis() -> Entry {
    Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": [{
            "test_id": "test_solution.py::test_total_is_revenue",
            "kind": "logic", "evidence": "3*2.5 + 2*4 + 10 = 25.5",
            "fix": "multiply qty by price", "packages": []}]})),
    )
}

/// The code fix from [`BAD`] to [`GOOD`].
pub(crate) fn code_fix() -> Entry {
    Entry::step(
        "fix_code",
        Reply::Json(
            json!({"edits": [{"find": BAD, "replace": GOOD}], "packages": [], "explanation": "revenue"}),
        ),
    )
}

//! Expected values a test wrote by hand where it could compute them.
//!
//! With sample rows in the test, the test shape asks for each expected value computed in Python
//! from the rows it reads back. The 1.5B model wrote numbers instead (`expected_count = 3` where
//! the rows give 2, `len(written) == 5` for 4 sensors), and the code fixer then changed a right
//! script until it matched: the join example passed its tests without its `min_total` filter.
//! Such lines are found here so the test writer can be asked once to compute them.

use std::sync::LazyLock;

use regex::Regex;

/// `expected_x = 3`, `expected_x = -1.5  # ...`, `assert len(written) == 4, 'message'`.
static HAND_WRITTEN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:expected_\w+\s*=\s*[-+]?\d[\d_]*(?:\.\d+)?|assert\s+len\(\s*written\s*\)\s*==\s*\d+\s*(?:,.*)?)\s*(?:#.*)?$",
    )
    .ok()
});

/// The lines of `tests` that set an expected value, or a CSV output's row count, to a bare
/// number.
pub(crate) fn hand_written_expectations(tests: &str) -> Vec<String> {
    let Some(pattern) = HAND_WRITTEN.as_ref() else {
        return Vec::new();
    };
    tests
        .lines()
        .filter(|line| pattern.is_match(line))
        .map(|line| line.trim().to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::hand_written_expectations;

    #[test]
    fn bare_numbers_are_found_and_computations_are_not() {
        let tests = "\
def test_main_result(run_solution, tmp_path):
    expected_count = 3  # computed in Python from `orders_rows`, as the task says
    expected_rate = -0.25
    assert len(written) == 5, 'Expected 5 rows'
    assert len(written) == 4
    expected_total = sum(float(r['total']) for r in orders_rows)
    expected_rows = len(readings_rows)
    expected_name = 'north'
    expected_units = 1_000
    assert len(written) == len({r['sensor_id'] for r in readings_rows})
";
        assert_eq!(
            hand_written_expectations(tests),
            [
                "expected_count = 3  # computed in Python from `orders_rows`, as the task says",
                "expected_rate = -0.25",
                "assert len(written) == 5, 'Expected 5 rows'",
                "assert len(written) == 4",
                "expected_units = 1_000",
            ]
        );
    }
}

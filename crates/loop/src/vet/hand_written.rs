//! Expected values a test wrote by hand where it could compute them.
//!
//! With sample rows in the test, the test shape asks for each expected value computed in Python
//! from the rows it reads back. The 1.5B model wrote numbers instead (`expected_count = 3` where
//! the rows give 2, `len(written) == 5` for 4 sensors), and the code fixer then changed a right
//! script until it matched: the join example passed its tests without its `min_total` filter.
//! The log tests wrote whole reports by hand (`{'levels': {'ERROR': 2}, ...}`, half of it wrong)
//! and counts in quotes (`'2'`). Such lines are found here so the test writer can be asked once
//! to compute them.

use std::sync::LazyLock;

use regex::Regex;

/// `expected_x = 3`, `expected_x = -1.5  # ...`, `assert len(written) == 4, 'message'`.
static HAND_WRITTEN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:expected_\w+\s*=\s*[-+]?\d[\d_]*(?:\.\d+)?|assert\s+len\(\s*written\s*\)\s*==\s*\d+\s*(?:,.*)?)\s*(?:#.*)?$",
    )
    .ok()
});

/// `expected_x = <right-hand side>` on one line.
static EXPECTED: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\s*expected_\w+\s*=\s*(.+?)\s*$").ok());

/// A quoted string without quotes inside it.
static QUOTED: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"'[^'\\]*'|"[^"\\]*""#).ok());

/// Whether `value` is a literal holding a number typed by hand: a dict or list of numbers
/// (`{'ERROR': 2, 'INFO': 1}`), or a number in quotes (`'2'`). Names, calls and comprehensions
/// are computations; strings without a number outside quotes (`'north'`, `'2024-07-01'`) are
/// values the task can state.
fn literal_with_numbers(value: &str) -> bool {
    let Some(quoted) = QUOTED.as_ref() else {
        return false;
    };
    let value = value.split(" #").next().unwrap_or(value).trim();
    let bare = quoted.replace_all(value, "''");
    let number_in_quotes =
        bare == "''" && value.len() > 2 && value[1..value.len() - 1].trim().parse::<f64>().is_ok();
    let collection = value.starts_with(['{', '['])
        && bare.chars().any(|c| c.is_ascii_digit())
        && bare
            .chars()
            .all(|c| c.is_ascii_digit() || " \t.,:{}[]+-_'".contains(c));
    number_in_quotes || collection
}

/// The name `expected_x` a line assigns to.
static ASSIGNED: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\s*(expected_\w+)\s*=[^=]").ok());

/// Whether `tests` builds `name` up after setting it: `+=`, an item or a method that changes it
/// (`name['k'] = ...`, `name.append(...)`), or a second assignment. Such a start value (`0`,
/// `0.0`) is where a loop over the test's own lines begins, not a number typed by hand.
fn built_up(tests: &str, name: &str) -> bool {
    let name = regex::escape(name);
    let update = Regex::new(&format!(
        r"\b{name}\s*(?:[-+*/]=|\[|\.\s*(?:append|update|setdefault|add|extend)\b)"
    ));
    let assignment = Regex::new(&format!(r"(?m)^\s*{name}\s*=[^=]"));
    match (update, assignment) {
        (Ok(update), Ok(assignment)) => {
            update.is_match(tests) || assignment.find_iter(tests).count() > 1
        }
        _ => false,
    }
}

/// The lines of `tests` that set an expected value, or a CSV output's row count, to a number
/// typed by hand.
pub(crate) fn hand_written_expectations(tests: &str) -> Vec<String> {
    let (Some(pattern), Some(expected), Some(assigned)) =
        (HAND_WRITTEN.as_ref(), EXPECTED.as_ref(), ASSIGNED.as_ref())
    else {
        return Vec::new();
    };
    tests
        .lines()
        .filter(|line| {
            pattern.is_match(line)
                || expected
                    .captures(line)
                    .is_some_and(|c| literal_with_numbers(&c[1]))
        })
        .filter(|line| {
            assigned
                .captures(line)
                .is_none_or(|c| !built_up(tests, &c[1]))
        })
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
    expected_summary = {'levels': {'ERROR': 2, 'INFO': 1}, 'error_rate': 0.5}
    expected_error_count = '2'
    expected_levels = {'ERROR': sum(1 for l in log_file_lines if ' ERROR ' in l)}
    expected_date = '2024-07-01'
    expected_ids = ['O0001', 'O0002']
    expected_totals = [1.5, -2]
";
        assert_eq!(
            hand_written_expectations(tests),
            [
                "expected_count = 3  # computed in Python from `orders_rows`, as the task says",
                "expected_rate = -0.25",
                "assert len(written) == 5, 'Expected 5 rows'",
                "assert len(written) == 4",
                "expected_units = 1_000",
                "expected_summary = {'levels': {'ERROR': 2, 'INFO': 1}, 'error_rate': 0.5}",
                "expected_error_count = '2'",
                "expected_totals = [1.5, -2]",
            ]
        );
    }

    #[test]
    fn start_values_a_loop_builds_up_are_not_hand_written() {
        let tests = "\
def test_main_result(run_solution, tmp_path):
    expected_error_count = 0
    expected_error_rate = 0.0
    expected_lines = 0
    expected_levels = {'ERROR': 0}
    expected_warnings = 2
    for line in log_file_lines:
        expected_lines += 1
        if ' ERROR ' in line:
            expected_error_count = expected_error_count + 1
        expected_levels['ERROR'] = 1
    expected_error_rate = expected_error_count / expected_lines
    assert result.outputs['error_count'] == expected_error_count
";
        assert_eq!(
            hand_written_expectations(tests),
            ["expected_warnings = 2"],
            "only the value nothing builds up is typed by hand"
        );
    }
}

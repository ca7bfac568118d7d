//! What a failing test's report shows about the script, read once where the report becomes a
//! [`TestResult`]: the session decides on these [`Fault`]s, never on the report's wording.

use crate::protocol::{Fault, TestOutcome, TestResult};
use crate::vet::solution_imports::name_missing_from_solution;

/// What the harness (`templates/harness/conftest.py.j2`) says when the script wrote an output
/// that is not of its declared type, such as a pandas Series where one float belongs.
const OUTPUT_TYPE_ERROR: &str = "but solution.py wrote";

impl TestResult {
    /// A result, with the faults its report shows.
    pub fn new(id: String, outcome: TestOutcome, output: String) -> Self {
        let faults = if outcome == TestOutcome::Passed {
            Vec::new()
        } else {
            faults(&output)
        };
        TestResult {
            id,
            outcome,
            output,
            faults,
            trace: None,
        }
    }

    /// The result with what the script's lines computed in the test (for a failure only: a
    /// passing test's values are of no use to a diagnosis).
    #[must_use]
    pub fn with_trace(mut self, trace: Option<String>) -> Self {
        if self.outcome != TestOutcome::Passed {
            self.trace = trace.filter(|t| !t.trim().is_empty());
        }
        self
    }
}

/// The faults a test's report shows, in the order of [`Fault`]'s variants.
pub(crate) fn faults(output: &str) -> Vec<Fault> {
    let mut found = Vec::new();
    if output.contains(OUTPUT_TYPE_ERROR) {
        found.push(Fault::OutputType);
    }
    if undefined_name_in_the_script(output) {
        found.push(Fault::UndefinedName);
    }
    if let Some(name) = name_missing_from_solution(output) {
        found.push(Fault::MissingFromSolution { name });
    }
    found
}

/// Whether a test's report shows the script itself crashing on a name it never defined
/// (`NameError`, `UnboundLocalError` raised in `solution.py`).
fn undefined_name_in_the_script(output: &str) -> bool {
    // `/solution.py"` or `"solution.py"`: not `test_solution.py"`.
    (output.contains("/solution.py\"") || output.contains("\"solution.py\""))
        && ["NameError: name '", "UnboundLocalError: "]
            .iter()
            .any(|error| output.contains(error))
}

#[cfg(test)]
mod tests {
    use super::faults;
    use crate::protocol::Fault;

    #[test]
    fn each_fault_is_read_from_its_report() {
        assert_eq!(
            faults(
                "E   ValueError: output 'total' must be one float, but solution.py wrote 2 lines"
            ),
            [Fault::OutputType]
        );
        let crash =
            "  File \"/sandbox/solution.py\", line 9, in main\nNameError: name 'df' is not defined";
        assert_eq!(faults(crash), [Fault::UndefinedName]);
        // The test's own NameError is the test's problem.
        let own =
            "  File \"/sandbox/test_solution.py\", line 9\nNameError: name 'x' is not defined";
        assert!(faults(own).is_empty());
        assert_eq!(
            faults(
                "E   ImportError: cannot import name 'parse_log' from 'solution' (/sandbox/solution.py)"
            ),
            [Fault::MissingFromSolution {
                name: "parse_log".into()
            }]
        );
        assert!(faults("E   assert 7 == 6").is_empty());
    }
}

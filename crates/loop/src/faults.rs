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

    /// The result with what the harness found wrong with the input files the test gave the
    /// script (for a failure only), as [`Fault::TestInput`]s.
    #[must_use]
    pub fn with_input_notes(mut self, notes: &[String]) -> Self {
        if self.outcome != TestOutcome::Passed {
            self.faults.extend(
                notes
                    .iter()
                    .filter(|note| !note.trim().is_empty())
                    .map(|note| Fault::TestInput { note: note.clone() }),
            );
        }
        self
    }

    /// What the harness found wrong with the test's input files ([`Fault::TestInput`]).
    pub fn input_notes(&self) -> Vec<String> {
        self.faults
            .iter()
            .filter_map(|fault| match fault {
                Fault::TestInput { note } => Some(note.clone()),
                _ => None,
            })
            .collect()
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
    let missing_from_solution = name_missing_from_solution(output);
    let import_of_solution = missing_from_solution.is_some();
    if let Some(name) = missing_from_solution {
        found.push(Fault::MissingFromSolution { name });
    }
    if dependency_missing(output, import_of_solution) {
        found.push(Fault::MissingDependency);
    }
    found
}

/// What Python, the loader and the shell say when something the run needs is not installed.
const MISSING_DEPENDENCY: [&str; 9] = [
    "ModuleNotFoundError",
    "No module named",
    "cannot open shared object file",
    "command not found",
    "PackageNotFoundError",
    "ZoneInfoNotFoundError",
    "UnknownTimeZoneError",
    "No time zone found",
    "library not found",
];

/// Whether a test's report shows something the run needs that is not installed here. An
/// `ImportError` counts unless it is a name missing from `solution` (the tests' guess).
fn dependency_missing(output: &str, import_of_solution: bool) -> bool {
    MISSING_DEPENDENCY.iter().any(|said| output.contains(said))
        || (!import_of_solution && output.contains("ImportError"))
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

    #[test]
    fn a_missing_module_library_program_or_time_zone_is_a_missing_dependency() {
        for report in [
            "E   ModuleNotFoundError: No module named 'scipy'",
            "E   ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
            "E   ImportError: cannot import name 'Self' from 'typing'",
            "/bin/sh: 1: tesseract: command not found",
            "E   zoneinfo._common.ZoneInfoNotFoundError: 'No time zone found with key Europe/Paris'",
            "E   pytz.exceptions.UnknownTimeZoneError: 'Europe/Paris'",
        ] {
            assert!(
                faults(report).contains(&Fault::MissingDependency),
                "{report}"
            );
        }
        // A wrong value, a crash in the script, a name the tests guessed: nothing to install.
        for report in [
            "E   AssertionError: assert {'db': 2} == {'db': 1}",
            "  File \"/sandbox/solution.py\", line 9, in compute\nAttributeError: Can only use .dt accessor with datetimelike values",
            "E   ImportError: cannot import name 'parse_log' from 'solution' (/sandbox/solution.py)",
        ] {
            assert!(
                !faults(report).contains(&Fault::MissingDependency),
                "{report}"
            );
        }
    }
}

//! Tests that import from `solution` although they were written without seeing it.
//!
//! A blind test writer does not know the script's function names: the contract is the command
//! line, and the tests run the script through `run_solution`. The 1.5B model imported functions
//! anyway (`from solution import parse_log`), the collection failed, and the code fixer then
//! added the functions the tests had guessed instead of fixing what was wrong. Such lines are
//! found here before a test run is spent on them.

use std::sync::LazyLock;

use regex::Regex;

/// `from solution import x, y`, `import solution`, `import solution as s`.
static SOLUTION_IMPORT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:from\s+solution\s+import\b.*|import\s+solution\b(?:\s+as\s+\w+)?\s*(?:#.*)?)$",
    )
    .ok()
});

/// The lines of `tests` that import the script as a module.
pub(crate) fn solution_imports(tests: &str) -> Vec<String> {
    let Some(pattern) = SOLUTION_IMPORT.as_ref() else {
        return Vec::new();
    };
    tests
        .lines()
        .filter(|line| pattern.is_match(line))
        .map(|line| line.trim().to_owned())
        .collect()
}

/// The name a test failed to import from `solution`, as pytest reports a collection error
/// (`ImportError: cannot import name 'parse_log' from 'solution' (/sandbox/solution.py)`) or a
/// call (`AttributeError: module 'solution' has no attribute 'parse_log'`).
pub(crate) fn name_missing_from_solution(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let imported = line
            .split_once("cannot import name '")
            .and_then(|(_, rest)| rest.split_once("' from 'solution'"))
            .map(|(name, _)| name);
        let attribute = line
            .split_once("module 'solution' has no attribute '")
            .and_then(|(_, rest)| rest.split_once('\''))
            .map(|(name, _)| name);
        imported.or(attribute).map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::{name_missing_from_solution, solution_imports};

    #[test]
    fn imports_of_the_script_are_found_and_others_are_not() {
        let tests = "\
import pytest
from solution import parse_log, summarize
import solution
import solution as s  # the module
import solutions
from solution_helpers import x
    from solution import main
# from solution import nothing
";
        assert_eq!(
            solution_imports(tests),
            [
                "from solution import parse_log, summarize",
                "import solution",
                "import solution as s  # the module",
                "from solution import main",
            ]
        );
    }

    #[test]
    fn the_missing_name_is_read_from_pytest_output() {
        let collection = "E   ImportError: cannot import name 'parse_log' from 'solution' (/sandbox/solution.py)";
        assert_eq!(
            name_missing_from_solution(collection).as_deref(),
            Some("parse_log")
        );
        let call = "E       AttributeError: module 'solution' has no attribute 'summarize'";
        assert_eq!(
            name_missing_from_solution(call).as_deref(),
            Some("summarize")
        );
        let own =
            "E   ImportError: cannot import name 'foo' from 'pandas' (/venv/pandas/__init__.py)";
        assert_eq!(name_missing_from_solution(own), None);
    }
}

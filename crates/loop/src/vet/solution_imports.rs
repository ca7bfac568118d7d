//! The one family of slips around `solution` as a module, found in one place.
//!
//! A blind test writer does not know the script's function names: the contract is the command
//! line, and the tests run the script through `run_solution`. The 1.5B model imported functions
//! anyway (`from solution import parse_log`), the collection failed, and the code fixer then
//! added the functions the tests had guessed instead of fixing what was wrong. So:
//! - names imported from `solution` that the tests never use are dropped
//!   ([`unused_solution_imports`], a repair);
//! - blind tests that still import from it are sent back once ([`solution_imports`], a check of
//!   [`super::test_file`]);
//! - a test run whose tests used a name the script lacks has its tests written anew
//!   ([`name_missing_from_solution`] reads the name from pytest's report into
//!   [`crate::protocol::Fault::MissingFromSolution`]; the session decides on that);
//! - a "whole script" from the code fixer that imports the script itself is sent back
//!   ([`imports_itself`], a check of [`super::code`]).

use std::sync::LazyLock;

use regex::Regex;

use crate::repairs::slips::repair_fixture_imports;

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

/// Names a test file imports from `solution` (one-line imports) and never uses: tests written
/// without seeing the script guess its function names (`from solution import read_sales`), and
/// such an import fails the whole file at collection although no test calls the name.
pub(crate) fn unused_solution_imports(tests: &str) -> Vec<String> {
    let mut unused = Vec::new();
    for (index, line) in tests.lines().enumerate() {
        let Some(names) = line.trim().strip_prefix("from solution import ") else {
            continue;
        };
        let names = names.split('#').next().unwrap_or(names);
        let names = names.trim().trim_start_matches('(').trim_end_matches(')');
        for entry in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let mut words = entry.split_whitespace();
            let name = words.next().unwrap_or(entry);
            let bound = match (words.next(), words.next()) {
                (Some("as"), Some(alias)) => alias,
                _ => name,
            };
            let used = tests
                .lines()
                .enumerate()
                .any(|(other, text)| other != index && mentions(text, bound));
            if !used {
                unused.push(name.to_owned());
            }
        }
    }
    unused
}

/// The test file without the names it imports from `solution` and never uses (an import line
/// left empty goes), or `None` when there are none.
pub(crate) fn without_unused_solution_imports(tests: &str) -> Option<String> {
    let unused = unused_solution_imports(tests);
    let names: Vec<&str> = unused.iter().map(String::as_str).collect();
    repair_fixture_imports(tests, &names)
}

/// Whether `text` holds `name` as a whole identifier.
fn mentions(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Whether `code` imports the script itself (`from solution import ...`, `import solution`):
/// a stub, not a script.
pub(crate) fn imports_itself(code: &str) -> bool {
    code.lines().any(|line| {
        let line = line.trim();
        line.starts_with("from solution import") || line == "import solution"
    })
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
    use super::{
        imports_itself, name_missing_from_solution, solution_imports, unused_solution_imports,
    };
    use crate::repairs::slips::repair_fixture_imports;
    #[test]
    fn solution_imports_the_tests_never_use_are_found() {
        let tests = "import pytest\nfrom solution import read_sales, compute as c, main  # guess\n\n\
                     def test_a(run_solution):\n    assert c(1) == main_total\n";
        assert_eq!(unused_solution_imports(tests), vec!["read_sales", "main"]);
        assert!(unused_solution_imports("from solution import f\nf()\n").is_empty());
        assert_eq!(
            repair_fixture_imports(
                "from solution import (read_sales)\nx = 1\n",
                &["read_sales"]
            )
            .as_deref(),
            Some("x = 1\n")
        );
    }

    #[test]
    fn a_script_that_imports_itself_is_a_stub() {
        assert!(imports_itself("from solution import main\nmain()\n"));
        assert!(imports_itself("  import solution\n"));
        assert!(!imports_itself(
            "import solutions\nfrom solution_x import y\n"
        ));
    }

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

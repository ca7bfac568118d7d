//! Checks of a test file.

use serde_json::json;

use super::hand_written::hand_written_expectations;
use super::solution_imports::solution_imports;
use super::{Check, Note, SentBack, Verdict};

/// What the checks of a test file need to know besides the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TestFileContext<'a> {
    /// Python's syntax error in the file, if any.
    pub(crate) syntax_error: Option<&'a str>,
    /// The tests were written without seeing the script.
    pub(crate) blind: bool,
    /// What the tests compute expected values from, as the test shape names them
    /// (`orders_rows`, `log_lines`); empty when there is nothing to compute from.
    pub(crate) sources: &'a [String],
    /// Whether expected values typed by hand are sent back (a model profile's choice).
    pub(crate) hand_written_checks: bool,
}

/// The checks, in order: the file compiles; blind tests import nothing from `solution`;
/// expected values are computed from the rows, not typed by hand. Only a file that compiles is
/// checked further.
pub(crate) fn test_file(tests: &str, context: TestFileContext<'_>, sent: &mut SentBack) -> Verdict {
    if let Some(error) = context.syntax_error {
        return sent.once(
            Check::NotCompiled,
            Note::new(
                "loop/notes/tests_not_compiled.j2",
                json!({ "error": error }),
            ),
            (),
        );
    }
    let imported = if context.blind {
        solution_imports(tests)
    } else {
        Vec::new()
    };
    if !imported.is_empty()
        && let Verdict::AskAgain(note) = sent.once(
            Check::ImportsSolution,
            Note::new(
                "loop/notes/tests_import_solution.j2",
                json!({ "lines": imported }),
            ),
            (),
        )
    {
        return Verdict::AskAgain(note);
    }
    if context.hand_written_checks && !context.sources.is_empty() {
        let by_hand = hand_written_expectations(tests);
        if !by_hand.is_empty() {
            return sent.once(
                Check::HandWritten,
                Note::new(
                    "loop/notes/tests_hand_written.j2",
                    json!({ "sources": context.sources, "lines": by_hand }),
                ),
                (),
            );
        }
    }
    Verdict::Accept(())
}

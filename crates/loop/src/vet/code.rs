//! Checks of a script: the first version, and the answer to a code fix.

use serde_json::json;

use super::solution_imports::imports_itself;
use super::{Check, Note, SentBack, Verdict};
use crate::protocol::Edit;
use crate::pysrc::fix_blocks::apply_fix_blocks;

/// A new script that does not compile is written again, once.
pub(crate) fn script(syntax_error: Option<&str>, sent: &mut SentBack) -> Verdict {
    match syntax_error {
        Some(error) => sent.once(
            Check::NotCompiled,
            Note::new("loop/notes/code_not_compiled.j2", json!({ "error": error })),
            (),
        ),
        None => Verdict::Accept(()),
    }
}

/// What a code fix answered with.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FixAnswer<'a> {
    /// Python blocks to merge into the script (code in fences).
    Blocks(&'a [String]),
    /// The whole new script.
    WholeScript(&'a str),
    /// Exact edits.
    Edits(&'a [Edit]),
}

/// The edits a code fix stands for: the merged blocks or the whole new script as one edit of
/// the whole script, or the exact edits. Blocks that cannot be merged, or a "whole script" that
/// is not one (small models answer with a stub that imports the script itself, or with only the
/// changed lines), are sent back once; then the fix is no edit at all.
pub(crate) fn fix_edits(
    current: &str,
    answer: FixAnswer<'_>,
    sent: &mut SentBack,
) -> Verdict<Vec<Edit>> {
    let whole = |replace: String| {
        vec![Edit {
            find: current.to_owned(),
            replace,
        }]
    };
    match answer {
        FixAnswer::Blocks(blocks) => match apply_fix_blocks(current, blocks) {
            Ok(merged) => Verdict::Accept(whole(merged)),
            Err(problem) => sent.once(
                Check::NotMerged,
                Note::new(
                    "loop/notes/fix_not_merged.j2",
                    json!({ "problem": problem }),
                ),
                Vec::new(),
            ),
        },
        FixAnswer::WholeScript(code) => match not_a_whole_script(current, code) {
            Some(note) => sent.once(Check::NotWhole, note, Vec::new()),
            None => Verdict::Accept(whole(code.to_owned())),
        },
        FixAnswer::Edits(edits) => Verdict::Accept(edits.to_vec()),
    }
}

/// A fix of a failure that names the one function it may change (a unit, with `--units`):
/// rewritten to the whole script with that function as the fix has it, the functions and imports
/// the fix adds, and every other function as it was. A fix that drops the function is kept as
/// it is.
pub(crate) fn kept_to(current: &str, edits: Vec<Edit>, function: &str) -> Vec<Edit> {
    let fixed = crate::pysrc::edit::apply_edits(current, &edits).code;
    match crate::pysrc::merge::keep_to_function(current, &fixed, function) {
        Some(kept) => {
            if kept != fixed {
                tracing::info!(
                    function,
                    "the fix changed more than the failing unit; the rest is kept as it was"
                );
            }
            vec![Edit {
                find: current.to_owned(),
                replace: kept,
            }]
        }
        None => edits,
    }
}

/// A fixed script that does not compile goes back once with the error before a test run is
/// spent on it.
pub(crate) fn fixed_script(syntax_error: Option<&str>, sent: &mut SentBack) -> Verdict {
    match syntax_error {
        Some(error) => sent.once(
            Check::NotCompiled,
            Note::new("loop/notes/fix_not_compiled.j2", json!({ "error": error })),
            (),
        ),
        None => Verdict::Accept(()),
    }
}

/// Why `code`, offered as the whole new version of `current`, is not one.
fn not_a_whole_script(current: &str, code: &str) -> Option<Note> {
    let template = "loop/notes/fix_not_whole.j2";
    if imports_itself(code) {
        return Some(Note::new(template, json!({ "imports_itself": true })));
    }
    let lines = |text: &str| text.lines().filter(|l| !l.trim().is_empty()).count();
    let (before, after) = (lines(current), lines(code));
    (after < 3 || after * 3 < before).then(|| {
        Note::new(
            template,
            json!({ "imports_itself": false, "lines": after, "script_lines": before }),
        )
    })
}

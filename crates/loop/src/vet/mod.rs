//! Vetting the model's answers before a test run is spent on them: one module per step, each a
//! list of checks that accept the answer or send it back once with a note (a template under
//! `templates/loop/notes/`). Every check is sent back at most once per step, so a model that
//! keeps making the same mistake cannot hold the loop; the answer is then taken as it is.
//!
//! - [`code`]: the first script, and code fixes (whole script, merged blocks, exact edits);
//! - [`test_file`]: the test file;
//! - [`solution_imports`]: the one family of slips around `solution` as a module (tests that
//!   import from it, scripts that import themselves, names a test found missing in it);
//! - [`hand_written`]: expected values typed by hand where the test could compute them.

use std::collections::BTreeSet;

use autocoder_prompts::{PromptError, Prompts};
use serde_json::{Value, json};

pub(crate) mod code;
pub(crate) mod hand_written;
pub(crate) mod solution_imports;
pub(crate) mod test_file;

/// A check an answer can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Check {
    /// The answer could not be read (cut off at the token limit, not JSON).
    Unusable,
    /// The code (or the test file) is not valid Python.
    NotCompiled,
    /// Blind tests import from `solution`, whose names they cannot know.
    ImportsSolution,
    /// Tests type expected values by hand.
    HandWritten,
    /// A "whole script" that is not one.
    NotWhole,
    /// Fix blocks that could not be merged into the script.
    NotMerged,
}

/// What to tell the model when an answer is sent back: a template and its context.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Note {
    /// The template's name, `loop/notes/<name>.j2`.
    pub(crate) template: &'static str,
    /// What it is rendered with.
    pub(crate) context: Value,
}

impl Note {
    fn new(name: &'static str, context: Value) -> Self {
        Note {
            template: name,
            context,
        }
    }

    /// The note's text, one line.
    pub(crate) fn render(&self, prompts: &Prompts) -> Result<String, PromptError> {
        let text = prompts.render(self.template, &self.context)?;
        Ok(text.trim_matches('\n').to_owned())
    }
}

/// What becomes of an answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict<T = ()> {
    /// Taken, as this.
    Accept(T),
    /// Sent back with this note.
    AskAgain(Note),
}

/// The checks sent back so far in one step.
#[derive(Debug, Default)]
pub(crate) struct SentBack(BTreeSet<Check>);

impl SentBack {
    /// `note` the first time `check` fails, else `fallback`: each check is sent back once.
    pub(crate) fn once<T>(&mut self, check: Check, note: Note, fallback: T) -> Verdict<T> {
        if self.0.insert(check) {
            Verdict::AskAgain(note)
        } else {
            Verdict::Accept(fallback)
        }
    }
}

/// An answer that could not be read after the client's repair round: asked for once more with
/// the reason (its first 200 characters).
pub(crate) fn unusable(error: &str, sent: &mut SentBack) -> Verdict {
    let error: String = error.chars().take(200).collect();
    sent.once(
        Check::Unusable,
        Note::new("loop/notes/unusable.j2", json!({ "error": error })),
        (),
    )
}

#[cfg(test)]
mod tests;

//! A call the model makes twice in a row, word for word, is not run again: nothing changed in
//! between, so it would do the same (write the same file, read the same text, run the same
//! tests). The model is told so, with the step the work is at instead (the local 1.5B model
//! wrote the same `solution.py` seven times in a row and never wrote its tests).

use serde_json::Value;

/// Where the work is, for the note on a repeated call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NextStep {
    /// `solution.py` does not exist.
    WriteScript,
    /// `test_solution.py` does not exist.
    WriteTests,
    /// Files changed since the last test run (or there was none).
    RunTests,
    /// The last test run failed and nothing changed since.
    Fix,
    /// The last test run passed and nothing changed since.
    Finish,
}

impl NextStep {
    /// The name the note's template takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::WriteScript => "write_script",
            Self::WriteTests => "write_tests",
            Self::RunTests => "run_tests",
            Self::Fix => "fix",
            Self::Finish => "finish",
        }
    }
}

/// The last call, and whether the files changed since the last test run.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    last: Option<(String, Value, u32)>,
    /// Why the last call did not happen (refused or failed: its result's first line).
    last_failure: Option<String>,
    /// Whether a file was written since the last test run (`None`: no test run yet).
    changed_since_tests: Option<bool>,
    last_tests_passed: bool,
}

impl Repeats {
    /// The turn of the previous call when `name(arguments)` repeats it word for word (not for
    /// `finish`, which checks the tests again); otherwise records the call and returns `None`.
    pub(crate) fn repeated(&mut self, name: &str, arguments: &Value, turn: u32) -> Option<u32> {
        if name != "finish"
            && let Some((last_name, last_arguments, last_turn)) = &self.last
            && last_name == name
            && last_arguments == arguments
        {
            return Some(*last_turn);
        }
        self.last = Some((name.to_owned(), arguments.clone(), turn));
        self.last_failure = None;
        None
    }

    /// The outcome of the call just made (`ok`, `refused`, `error`, ...) and its result.
    pub(crate) fn outcome(&mut self, outcome: &str, result: &str) {
        if outcome == "refused" || outcome == "error" || outcome == "denied" {
            self.last_failure = Some(result.lines().next().unwrap_or_default().to_owned());
        }
    }

    /// Why the repeated call did not happen the first time, if it did not.
    pub(crate) fn first_failure(&self) -> Option<&str> {
        self.last_failure.as_deref()
    }

    /// A file of the workspace was written or edited.
    pub(crate) fn wrote(&mut self) {
        if self.changed_since_tests.is_some() {
            self.changed_since_tests = Some(true);
        }
    }

    /// The tests ran, and passed or not.
    pub(crate) fn tested(&mut self, passed: bool) {
        self.changed_since_tests = Some(false);
        self.last_tests_passed = passed;
    }

    /// The step the work is at, given which files exist.
    pub(crate) fn next_step(&self, script: bool, tests: bool) -> NextStep {
        if !script {
            NextStep::WriteScript
        } else if !tests {
            NextStep::WriteTests
        } else if self.changed_since_tests != Some(false) {
            NextStep::RunTests
        } else if self.last_tests_passed {
            NextStep::Finish
        } else {
            NextStep::Fix
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_same_call_right_after_is_a_repeat() {
        let mut r = Repeats::default();
        let write = json!({"path": "solution.py", "text": "x"});
        assert_eq!(r.repeated("write_file", &write, 1), None);
        assert_eq!(r.repeated("write_file", &write, 2), Some(1));
        assert_eq!(r.repeated("write_file", &write, 3), Some(1));
        assert_eq!(
            r.repeated("read_file", &json!({"path": "solution.py"}), 4),
            None
        );
        assert_eq!(r.repeated("write_file", &write, 5), None);
        let other = json!({"path": "solution.py", "text": "y"});
        assert_eq!(r.repeated("write_file", &other, 6), None);
        assert_eq!(r.repeated("finish", &json!({}), 7), None);
        assert_eq!(r.repeated("finish", &json!({}), 8), None);
    }

    #[test]
    fn the_next_step_follows_the_files_and_the_last_test_run() {
        let mut r = Repeats::default();
        assert_eq!(r.next_step(false, false), NextStep::WriteScript);
        assert_eq!(r.next_step(true, false), NextStep::WriteTests);
        assert_eq!(r.next_step(true, true), NextStep::RunTests);
        r.tested(false);
        assert_eq!(r.next_step(true, true), NextStep::Fix);
        r.wrote();
        assert_eq!(r.next_step(true, true), NextStep::RunTests);
        r.tested(true);
        assert_eq!(r.next_step(true, true), NextStep::Finish);
    }
}

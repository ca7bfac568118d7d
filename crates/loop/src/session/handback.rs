//! Which script a generation that never passed hands back: the best one its tests saw, not
//! merely the last. A fix can make a script worse (a wrong test talked the code fixer into it,
//! or an edit crashed it), and the run then ended with the worse one. Scripts are ranked by the
//! harness's contract test first (it is not the model's: a script that breaks it is wrong
//! whatever the model's tests say), then by the tests passed; ties go to the later script, so a
//! run whose last script is as good as any keeps it.

use std::collections::BTreeSet;

use super::{CONTRACT_TEST_FILE, Session};
use crate::protocol::TestRun;

/// A script as one test run found it.
#[derive(Debug, Clone)]
pub(super) struct Tested {
    code: String,
    packages: BTreeSet<String>,
    run: u32,
    contract_held: bool,
    passed: usize,
    error: Option<String>,
}

impl Tested {
    fn rank(&self) -> (bool, usize, u32) {
        (self.contract_held, self.passed, self.run)
    }
}

impl Session {
    /// Records the script of the test run just counted (`self.runs`) and how it did.
    pub(super) fn record_tested(&mut self, run: &TestRun) {
        let Some(code) = self.code.clone() else {
            return;
        };
        let contract_held = !run
            .failures()
            .any(|failure| failure.id.starts_with(CONTRACT_TEST_FILE));
        self.tested.push(Tested {
            code,
            packages: self.packages.clone(),
            run: self.runs,
            contract_held,
            passed: run.passed().count(),
            error: self.last_error.clone(),
        });
    }

    /// At a failed finish: makes the best tested script (among those tested with the
    /// packages the environment has now) the script, when it is not the current one and the
    /// current one did worse or was never tested, and says so in the notes.
    pub(super) fn hand_back_best(&mut self) {
        let current = self
            .tested
            .iter()
            .filter(|t| Some(&t.code) == self.code.as_ref())
            .map(Tested::rank)
            .max();
        let Some(best) = self
            .tested
            .iter()
            .filter(|t| t.packages == self.packages)
            .max_by_key(|t| t.rank())
        else {
            return;
        };
        if Some(&best.code) == self.code.as_ref() || current.is_some_and(|c| c >= best.rank()) {
            return;
        }
        let why = match current {
            Some((held, passed, run)) => format!(
                "the last script (test run {run}) {} and passed {passed} tests",
                if held {
                    "kept the contract"
                } else {
                    "broke the contract"
                }
            ),
            None => "the last script was never tested".to_owned(),
        };
        let note = format!(
            "code: handed back the script of test run {} ({}, {} tests passed): {why}",
            best.run,
            if best.contract_held {
                "it kept the contract"
            } else {
                "it broke the contract too"
            },
            best.passed
        );
        self.code = Some(best.code.clone());
        self.last_error.clone_from(&best.error);
        self.notes.push(note);
    }
}

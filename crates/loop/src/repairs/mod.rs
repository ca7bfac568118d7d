//! The deterministic repairs applied to the model's code before anything runs, each logged
//! when it changes something, when the model profile asks for them
//! ([`crate::model_profile::ModelProfile::slip_repairs`]). The repairs themselves live in
//! [`slips`], [`column_tuples`], [`missing_imports`], [`crate::vet::solution_imports`] and
//! [`crate::pysrc::splice`].

pub(crate) mod column_tuples;
pub(crate) mod missing_imports;
pub(crate) mod slips;

use crate::pysrc::splice::remove_top_level_function;
use crate::vet::solution_imports::without_unused_solution_imports;
use column_tuples::repair_grouped_column_tuples;
use missing_imports::add_missing_imports;
use slips::{repair_fixture_imports, repair_keyword_slips};

/// The pytest fixture `templates/harness/conftest.py.j2` gives the tests.
const RUN_SOLUTION_FIXTURE: &str = "run_solution";

/// The repairs a generation applies: all of them, or none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Repairs {
    /// Whether the slips are repaired at all.
    pub(crate) slips: bool,
}

impl Repairs {
    /// A fragment of code (the replacement text of an edit), repaired.
    pub(crate) fn fragment(self, code: String) -> String {
        if self.slips {
            fragment_repaired(code)
        } else {
            code
        }
    }

    /// A whole script, repaired.
    pub(crate) fn script(self, code: String) -> String {
        if self.slips {
            script_repaired(code)
        } else {
            code
        }
    }

    /// A whole test file, repaired.
    pub(crate) fn tests(self, tests: String) -> String {
        if self.slips {
            tests_repaired(tests)
        } else {
            tests
        }
    }
}

/// A fragment of code (the replacement text of an edit): keyword slips repaired, and tuples of
/// columns after a `groupby` made lists.
fn fragment_repaired(code: String) -> String {
    let code = repaired(code, repair_keyword_slips, "repaired an `eif` keyword slip");
    repaired(
        code,
        repair_grouped_column_tuples,
        "made a tuple of columns after a `groupby` a list (pandas 2 refuses the tuple)",
    )
}

/// A whole script: keyword slips repaired and forgotten imports added.
fn script_repaired(code: String) -> String {
    repaired(
        fragment_repaired(code),
        add_missing_imports,
        "added an import the code uses but forgot",
    )
}

/// A whole test file: as a script, and the harness's fixture neither imported from a module nor
/// defined again (a `run_solution` of the test module would shadow the harness's).
fn tests_repaired(tests: String) -> String {
    let tests = repaired(
        script_repaired(tests),
        |t| repair_fixture_imports(t, &[RUN_SOLUTION_FIXTURE]),
        "dropped an import of the `run_solution` fixture from the tests",
    );
    let tests = repaired(
        tests,
        without_unused_solution_imports,
        "dropped names the tests import from `solution` but never use",
    );
    repaired(
        tests,
        |t| remove_top_level_function(t, RUN_SOLUTION_FIXTURE),
        "dropped the tests' own `run_solution`: the harness's fixture is used",
    )
}

fn repaired(code: String, repair: impl FnOnce(&str) -> Option<String>, what: &str) -> String {
    match repair(&code) {
        Some(fixed) => {
            tracing::info!("{what}");
            fixed
        }
        None => code,
    }
}

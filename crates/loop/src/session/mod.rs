//! The loop's decisions, without I/O. A [`Session`] says what to do next ([`Action`]); the driver
//! does it (a model call, an environment build, a test run) and reports back ([`Event`]). Keeping
//! the decisions apart from the calls makes every rule of the loop testable on its own and keeps
//! the driver a thin translation to the model and the sandbox.
//!
//! The rules:
//! - plan, then code, then the environment, then tests written without seeing the code;
//! - with `sample_fixes` above 0, the script is first run on the samples: one that crashes
//!   there or writes an output not of its declared type gets a code fix (at most
//!   `sample_fixes` of them) before any test is written;
//! - with `candidates` above 1, each new script is several: run on the samples and grouped by
//!   what they computed, the tests run against each group's script, the one passing the most
//!   is kept, and its diagnosis sees what the other groups computed;
//! - a distribution the index lacks is replaced by the model's answer (three at most, none
//!   twice), else the script is written without it; a Debian package the environment cannot get
//!   is replaced by the model's answer once (never by one asked for before), else dropped with a
//!   note, and the run ends when none of the unusable ones is the model's to drop;
//! - a failure whose report shows the script at fault (an output of the wrong type, a name the
//!   script never defined: [`Fault`](crate::protocol::Fault)) or that the contract test found
//!   never goes to the test fixer;
//! - a run passes only when at least one test passed and none failed or errored (skips and
//!   xfails are not passes); a collection error is diagnosed like any failure, except that
//!   tests using a name `solution` does not define are written anew (they test a guess);
//! - each failure is routed by its diagnosis through the [`Reclassifier`], so a failure that
//!   survives one kind of fix goes to the other fixer;
//! - code fixes are exact edits; one that changes nothing is sent back once with the reason, and
//!   one that breaks a test that passed before is reverted (passing tests are anchors);
//! - the same (code, tests, packages) never runs twice: the loop escalates instead (new tests,
//!   then new code) and gives up when there is nothing left to try;
//! - it stops on success, at `max_iterations` test runs, or when the token budget is spent,
//!   reporting the last real error; a run that never passed hands back the best script its
//!   tests saw (contract test kept, then tests passed, then the later), not merely the last.

mod candidates;
mod environment;
mod fixes;
mod handback;
mod limits;
mod runs;
mod samples;
mod state;
#[cfg(test)]
mod tests;

pub use limits::Limits;
pub use samples::{SAMPLE_RUN_ID, SKELETON_FUNCTIONS};
pub use state::{CONFTEST_FILE, CONTRACT_TEST_FILE, Session};

pub use crate::protocol::{
    Action, Diagnosis, Event, FailedTest, Finish, RoutedFailure, TestOutcome, TestResult, TestRun,
    Usage,
};
pub use crate::reclassify::Reclassifier;

//! Decides which fixer a failure goes to. The model's diagnosis is a guess; when a failure
//! survives a fix of the kind it was diagnosed as, the same guess again is probably wrong. Each
//! failure is identified by a signature (test id plus its normalised error), and a signature that
//! survived a `test_error` fix goes to the code fixer next (and the other way round) however the
//! model labels it. When every kind of fix has been tried, the loop must escalate instead of
//! repeating itself.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::protocol::FailureKind;

/// A failure's identity across iterations: which test, failing how.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Signature {
    /// The pytest node id without parameters.
    pub test_id: String,
    /// The normalised last error line.
    pub error: String,
}

static ADDRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"0x[0-9a-fA-F]+").unwrap_or_else(|_| unreachable!()));
static TMP_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/tmp/[^\s:'\x22]*").unwrap_or_else(|_| unreachable!()));
static LINE_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\.py):\d+").unwrap_or_else(|_| unreachable!()));
static DURATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\d+(\.\d+)?s\b").unwrap_or_else(|_| unreachable!()));

impl Signature {
    /// The signature of `test_id` failing with `output` (pytest's report for that test).
    pub fn new(test_id: &str, output: &str) -> Self {
        let test_id = test_id.split('[').next().unwrap_or(test_id).to_owned();
        Signature {
            test_id,
            error: normalise_error(output),
        }
    }
}

/// The line that says what went wrong: pytest's first `E ` line (the error itself; later ones
/// explain it), else the last line that names an
/// exception, else the last non-empty line; with addresses, temporary paths, line numbers and
/// durations replaced, so reruns of the same failure compare equal.
pub fn normalise_error(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let chosen = lines
        .iter()
        .find(|l| l.starts_with("E ") || l.starts_with("E\t"))
        .map(|l| l[1..].trim())
        .or_else(|| {
            lines
                .iter()
                .rev()
                .find(|l| l.contains("Error") || l.contains("Exception"))
                .copied()
        })
        .or_else(|| lines.last().copied())
        .unwrap_or("");
    let text = ADDRESS.replace_all(chosen, "0x?");
    let text = TMP_PATH.replace_all(&text, "/tmp/?");
    let text = LINE_NUMBER.replace_all(&text, "$1:?");
    DURATION.replace_all(&text, "?s").into_owned()
}

static MEMORY_ADDRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b0x[0-9a-fA-F]{8,16}\b").unwrap_or_else(|_| unreachable!()));

/// A test's report with object addresses (`<Foo object at 0x7f3a...>`) masked: the only part
/// of a failure that changes from run to run in the same sandbox, so prompts (and recordings
/// keyed by them) stay the same for the same failure.
pub fn mask_addresses(output: &str) -> String {
    MEMORY_ADDRESS.replace_all(output, "0x…").into_owned()
}

/// Where a failure goes this round, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// The fixer that handles it.
    pub kind: FailureKind,
    /// The diagnosis this overrides, when it was reclassified.
    pub reclassified_from: Option<FailureKind>,
    /// Fixes already tried on this signature, oldest first.
    pub tried: Vec<FailureKind>,
}

/// The outcome of routing one failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Send it to this fixer.
    Fix(Route),
    /// Every fixer has had it and it still fails the same way: regenerate instead.
    Exhausted {
        /// The fixes tried.
        tried: Vec<FailureKind>,
    },
}

/// Remembers which fixes each failure signature has survived.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reclassifier {
    tried: HashMap<String, Vec<FailureKind>>,
}

impl Reclassifier {
    /// A reclassifier with no history.
    pub fn new() -> Self {
        Self::default()
    }

    fn key(signature: &Signature) -> String {
        format!("{}\u{1f}{}", signature.test_id, signature.error)
    }

    /// Routes a failure the model diagnosed as `diagnosed`.
    ///
    /// - Never tried: as diagnosed.
    /// - Survived a fix of the diagnosed kind: the other kind (`logic` <-> `test_error`; an
    ///   `environment` failure that survived a package fix goes to the code, whose import is then
    ///   the likely culprit).
    /// - Survived both code and test fixes: exhausted.
    pub fn route(&self, signature: &Signature, diagnosed: FailureKind) -> Decision {
        let tried = self
            .tried
            .get(&Self::key(signature))
            .cloned()
            .unwrap_or_default();
        let has = |kind| tried.contains(&kind);
        if has(FailureKind::Logic) && has(FailureKind::TestError) {
            return Decision::Exhausted { tried };
        }
        let kind = if has(diagnosed) {
            match diagnosed {
                FailureKind::Logic => FailureKind::TestError,
                FailureKind::TestError | FailureKind::Environment if has(FailureKind::Logic) => {
                    FailureKind::TestError
                }
                FailureKind::TestError | FailureKind::Environment => FailureKind::Logic,
            }
        } else {
            diagnosed
        };
        Decision::Fix(Route {
            kind,
            reclassified_from: (kind != diagnosed).then_some(diagnosed),
            tried,
        })
    }

    /// Records that a fix of `kind` was applied for this failure.
    pub fn record_fix(&mut self, signature: &Signature, kind: FailureKind) {
        let tried = self.tried.entry(Self::key(signature)).or_default();
        if !tried.contains(&kind) {
            tried.push(kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAILURE: &str = "    def test_total(run_solution):\n>       assert r.outputs['total'] == 10\nE       AssertionError: assert 12 == 10\nE        +  where 12 = ...\n/tmp/pytest-of-root/pytest-7/test_solution.py:14: AssertionError";

    #[test]
    fn signatures_ignore_run_specific_noise() {
        let again = FAILURE
            .replace("pytest-7", "pytest-9")
            .replace(":14:", ":15:");
        assert_eq!(
            Signature::new("test_total", FAILURE),
            Signature::new("test_total[a]", &again)
        );
        assert_eq!(normalise_error(FAILURE), "AssertionError: assert 12 == 10");
        assert_eq!(
            mask_addresses("E  <Frame object at 0x7f3a9c2b1d60> != 0x10"),
            "E  <Frame object at 0x…> != 0x10"
        );
        assert_eq!(
            normalise_error(
                "Traceback\n  File \"/work/solution.py\", line 3\nKeyError: <object at 0x7f3a>"
            ),
            "KeyError: <object at 0x?>"
        );
        assert_ne!(
            Signature::new("t", "E assert 12 == 10"),
            Signature::new("t", "E assert 11 == 10"),
            "a different wrong value is a different failure"
        );
    }

    fn routed(
        reclassifier: &Reclassifier,
        signature: &Signature,
        diagnosed: FailureKind,
    ) -> FailureKind {
        match reclassifier.route(signature, diagnosed) {
            Decision::Fix(route) => route.kind,
            Decision::Exhausted { .. } => panic!("exhausted"),
        }
    }

    #[test]
    fn a_test_error_that_survives_a_test_fix_goes_to_the_code_fixer() {
        let mut r = Reclassifier::new();
        let sig = Signature::new("test_total", FAILURE);
        assert_eq!(
            routed(&r, &sig, FailureKind::TestError),
            FailureKind::TestError
        );
        r.record_fix(&sig, FailureKind::TestError);
        let Decision::Fix(route) = r.route(&sig, FailureKind::TestError) else {
            panic!()
        };
        assert_eq!(route.kind, FailureKind::Logic);
        assert_eq!(route.reclassified_from, Some(FailureKind::TestError));
        r.record_fix(&sig, FailureKind::Logic);
        assert!(matches!(
            r.route(&sig, FailureKind::Logic),
            Decision::Exhausted { .. }
        ));
    }

    #[test]
    fn a_logic_error_that_survives_a_code_fix_goes_to_the_test_fixer() {
        let mut r = Reclassifier::new();
        let sig = Signature::new("test_total", FAILURE);
        r.record_fix(&sig, FailureKind::Logic);
        assert_eq!(routed(&r, &sig, FailureKind::Logic), FailureKind::TestError);
        assert_eq!(
            routed(&r, &sig, FailureKind::TestError),
            FailureKind::TestError
        );
    }

    #[test]
    fn an_environment_failure_that_survives_a_package_fix_goes_to_the_code() {
        let mut r = Reclassifier::new();
        let sig = Signature::new(
            "test_total",
            "E ModuleNotFoundError: No module named 'sklearn_extra'",
        );
        r.record_fix(&sig, FailureKind::Environment);
        assert_eq!(
            routed(&r, &sig, FailureKind::Environment),
            FailureKind::Logic
        );
    }

    #[test]
    fn a_changed_error_starts_fresh() {
        let mut r = Reclassifier::new();
        r.record_fix(
            &Signature::new("t", "E assert 12 == 10"),
            FailureKind::TestError,
        );
        assert_eq!(
            routed(
                &r,
                &Signature::new("t", "E assert 11 == 10"),
                FailureKind::TestError
            ),
            FailureKind::TestError
        );
    }
}

//! Bounds on a generation.

use serde::{Deserialize, Serialize};

/// Bounds on a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Test runs at most (the first run included).
    pub max_iterations: u32,
    /// Input plus output tokens at most, over all model calls.
    pub token_budget: Option<u64>,
    /// Stop once the code and its environment exist, without tests.
    pub skip_tests: bool,
    /// Scripts written for each new version of the code (`--candidates`): run on the samples,
    /// grouped by what they computed, and the one passing the most tests kept. 1 writes one.
    #[serde(default = "one")]
    pub candidates: u32,
    /// Code fixes spent, before any test is written, on a script that fails when run on the
    /// samples (`--sample-fixes`): a crash or an output of the wrong type needs no test to be
    /// known wrong. 0 runs no such check.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sample_fixes: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(value: &u32) -> bool {
    *value == 0
}

fn one() -> u32 {
    1
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_iterations: 10,
            token_budget: None,
            skip_tests: false,
            candidates: 1,
            sample_fixes: 0,
        }
    }
}

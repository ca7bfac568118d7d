//! Integration tests of the eval: the suite in `evals/` (its references, in the real sandbox)
//! and `run_suite` against the scripted LLM server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod smoke;
mod suite;

//! Integration tests: the rule corpus, evaluation over files, and the Pandera round trip.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod corpus;
mod llm;
mod local_model;
mod pandera;
mod report;

//! Integration tests of the loop's prompts (snapshots) and its pytest harness (real Python).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod candidates;
mod generate;
mod handback;
mod harness;
mod looked_up_values;
mod output_checks;
mod output_order;
mod prompts;
mod pysrc;
mod queries;
mod quoted_samples;
mod system_packages;

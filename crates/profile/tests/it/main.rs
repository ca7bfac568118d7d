//! Integration tests of the profiler on real files, checked against real pandas and pandera
//! (the interpreter named by `AUTOCODER_TEST_PYTHON`, which `scripts/test` sets up).
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns
#![allow(clippy::float_cmp)] // exact statistics are compared exactly

mod bad_input;
mod basics;
mod chunking;
mod expectations;
mod formats;
mod ipc_layout;
mod pandas;
mod parquet_layout;
mod published;
mod scan;

//! Integration tests of the profiler on real files, checked against real pandas.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod basics;

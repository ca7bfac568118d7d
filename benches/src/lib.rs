//! Benchmarks for autocoder. The criterion benchmarks live in `benches/benches/` (run them with
//! `cargo bench -p autocoder-benches`); the scripts in `benches/scripts/` time the whole CLI
//! against other tools on the same file in one run. This library holds the data generators the
//! benchmarks share.

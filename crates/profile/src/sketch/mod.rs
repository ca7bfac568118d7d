//! Mergeable summaries: hashing, `HyperLogLog`, bottom-k samples and value counts.

pub(crate) mod bottomk;
pub(crate) mod counts;
pub(crate) mod flat;
pub(crate) mod hash;
pub(crate) mod heavy;
pub(crate) mod hll;

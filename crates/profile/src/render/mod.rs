//! Human-facing renderings of a [`crate::Profile`]: [`text`] for a terminal, [`context`] for a
//! prompt.
//!
//! Both print exact values: counts as integers, floats in their shortest form that reads back to
//! the same `f64` (as in the JSON rendering), never rounded to a few digits.

mod context;
mod format;
mod text;

pub use context::{CONTEXT_BYTES_PER_TOKEN, context};
pub use text::text;

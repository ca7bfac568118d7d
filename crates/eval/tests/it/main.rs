//! Integration tests of the eval: the suite in `evals/` (its references, in the real sandbox)
//! and `run_suite` against the scripted LLM server.

mod smoke;
mod suite;

//! Python source handled as text, without Python: the pieces of the loop that put a model's
//! answer into a file. Each works on lines, indentation, brackets and triple-quoted strings
//! (all a script's or a test file's top-level structure needs) and never panics on any text;
//! the loop parses the result with the sandbox's Python before it runs anything
//! (`fuzz/fuzz_targets/pysrc_merge.rs` feeds them arbitrary text).
//!
//! - [`edit`]: exact `{find, replace}` edits of a script;
//! - [`splice`]: test functions replaced by name in a test file;
//! - [`merge`]: a fix given as whole functions (and imports) merged into a script;
//! - [`fix_blocks`]: a fix answered as several Markdown blocks (quotes and their corrections).

pub mod edit;
pub mod fix_blocks;
pub mod merge;
pub mod splice;

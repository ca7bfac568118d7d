//! Business rules in plain words become typed checks on a table's columns: "quantity must be
//! positive" is `quantity > 0`, "status is one of pending, shipped" is an `isin` check, "email must
//! look like an email" uses the shared pattern library. A deterministic parser reads the common
//! phrasings offline; what it cannot read goes to the model through validated structured output;
//! what neither can apply stays as text with the reason, so no rule is ever dropped. The checks
//! are then evaluated over the whole file, streaming, with violation counts and examples.
//!
//! ```
//! use autocoder_constraints::{Outcome, parse_rules};
//! use autocoder_schema::{Check, ColumnSchema, DataType, Scalar, TableSchema};
//!
//! let mut table = TableSchema::new("orders");
//! table.columns.push(ColumnSchema::new("quantity", DataType::Integer));
//! let rules = vec!["Quantities must be positive".to_owned(), "price is reasonable".to_owned()];
//! let outcomes = parse_rules(&rules, &table);
//! assert_eq!(outcomes[0].constraint().unwrap().describe(), "quantity > 0");
//! assert!(matches!(outcomes[1], Outcome::Unapplied { .. }));
//! ```

mod apply;
mod compare;
mod error;
mod eval;
mod file;
pub mod llm;
mod model;
mod nulls;
mod parse;
mod predicate;
mod regex_compat;
mod report;
mod resolve;
mod strings;
mod text;
mod typed;
mod values;

pub use apply::{apply_outcomes, parse_rules};
pub use error::ConstraintError;
pub use eval::{CheckResult, EXAMPLES, Evaluator, Violation};
pub use file::{EvalOptions, evaluate_path, evaluate_path_with, schema_constraints};
pub use model::{Constraint, Outcome, Source, rules_as_text};
pub use nulls::{NullSpec, PANDAS_DEFAULT_NA};
pub use parse::{Parsed, parse_rule};
pub use regex_compat::check_portable_regex;
pub use report::{Report, report, report_for_file, report_for_file_with_model};
pub use resolve::resolve_column;

//! The flags that shape the loop's prompts, shared by `generate` and `eval`.

use autocoder_loop::{ProfileName, Prompting};

/// What the loop's prompts show and ask for.
#[allow(clippy::struct_excessive_bools)] // independent flags, each read by its name
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PromptingFlags {
    /// Show the script to the test writer (by default it writes the tests from the task, the
    /// data and the contract alone).
    #[arg(long)]
    tests_see_code: bool,
    /// When a test fails, show its diagnosis and fix what the script's lines computed (each name
    /// bound or changed, with its type, shape and first values), not only the error: test runs
    /// run the script under a tracer.
    #[arg(long)]
    trace_values: bool,
    /// Make the script skeleton the code step fills in one function per declared output, each
    /// returning that output's value (written by the skeleton's `main`), instead of one
    /// `compute` for everything. Only where the model profile gives a skeleton (`small`,
    /// `guarded`); not with `--agent`.
    #[arg(long, conflicts_with = "agent")]
    units: bool,
    /// Give the code step the query skeleton: each CSV sample read by pandas into a `DuckDB` table
    /// named after its input, each table and scalar output one SQL query to fill in, other
    /// outputs Python functions; only where every file input has a CSV sample and the model
    /// profile gives a skeleton. Not with `--agent`.
    #[arg(long, conflicts_with_all = ["agent", "no_queries"])]
    queries: bool,
    /// Never the query skeleton, whatever the model profile.
    #[arg(long, conflicts_with = "agent")]
    no_queries: bool,
    /// Write the first script without asking the model for a plan first (one call fewer; the
    /// plans of 1.5B-class models add steps the task never asked for). Not with `--agent`.
    #[arg(long, conflicts_with = "agent")]
    no_plan: bool,
    /// Ask for the script and the tests as Markdown code blocks instead of JSON strings (small
    /// local models write valid Python far more often that way; packages then come from the
    /// script's imports), whatever the model profile.
    #[arg(long)]
    code_in_fences: bool,
    /// What the loop does for a kind of model: `small` (1.5B-class local models: code as
    /// Markdown blocks, repairs of their slips such as `eif`, a second ask for tests that type
    /// expected values by hand, a script skeleton to fill in), `guarded` (all of that with code
    /// inside JSON), `capable` (none of it; only when named). Default: chosen by the model's
    /// name: a size up to 14B (`qwen2.5-coder-1.5b`) is small, any other model guarded.
    /// `--code-in-fences` adds code blocks to any profile.
    #[arg(long, value_name = "NAME", value_parser = parse_model_profile)]
    model_profile: Option<ProfileName>,
}

impl PromptingFlags {
    /// How the flags shape the prompts.
    pub(crate) fn prompting(&self) -> Prompting {
        Prompting {
            tests_see_code: self.tests_see_code,
            trace_values: self.trace_values,
            units: self.units,
            queries: match (self.queries, self.no_queries) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            no_plan: self.no_plan,
            code_in_fences: self.code_in_fences,
            model_profile: self.model_profile,
        }
    }
}

/// A `--model-profile` name.
pub(crate) fn parse_model_profile(name: &str) -> Result<ProfileName, String> {
    ProfileName::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = ProfileName::ALL.iter().map(|p| p.name()).collect();
        format!(
            "`{name}` is not a model profile; one of {}",
            names.join(", ")
        )
    })
}

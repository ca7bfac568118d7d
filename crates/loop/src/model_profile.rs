//! The one place that decides what is specific to weak models. Small local models (the 1.5B
//! class) write valid Python far more often as Markdown code blocks than inside JSON, make
//! slips a deterministic repair can undo (`eif x:`, forgotten imports, the harness's fixture
//! imported from the script), type expected values by hand where a test could compute them, and
//! copy a script skeleton more reliably than they follow the contract in prose, and copy the
//! caret lines of a traceback (`^^^^`) into the script they fix. A capable model gets none of
//! that: no fences unless asked for, no repairs, no hand-written-number check, no skeleton in
//! its prompts, failures as the run printed them.
//!
//! Three profiles: `small` (every quirk, code in fences), `guarded` (every safeguard, but code
//! inside JSON: any model not known to be small) and `capable` (none; only when named, until the
//! task suite measures it). A profile is chosen by the model's name ([`ModelProfile::for_model`])
//! unless one is named (`--model-profile`);
//! `--code-in-fences` turns fences on whatever the profile.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// The profiles there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileName {
    /// Small local models (up to 14B parameters, by the name): every quirk, code in fences.
    Small,
    /// A model its name does not place: every safeguard of `small`, code inside JSON.
    Guarded,
    /// Hosted frontier models and large open ones: none.
    Capable,
}

impl ProfileName {
    /// Every profile, as `--model-profile` takes them.
    pub const ALL: [ProfileName; 3] = [
        ProfileName::Small,
        ProfileName::Guarded,
        ProfileName::Capable,
    ];

    /// The name `--model-profile` takes.
    pub fn name(self) -> &'static str {
        match self {
            ProfileName::Small => "small",
            ProfileName::Guarded => "guarded",
            ProfileName::Capable => "capable",
        }
    }

    /// Parses `small`, `guarded` or `capable`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What the loop does differently for a kind of model.
#[allow(clippy::struct_excessive_bools)] // independent quirks, each read by its name
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelProfile {
    /// Which profile this is.
    pub name: ProfileName,
    /// Ask for the script, the tests and code fixes as Markdown code blocks in plain answers
    /// instead of JSON strings (the plan and the diagnoses stay JSON).
    pub code_in_fences: bool,
    /// Repair the slips small models make in code before it is compiled (`eif` for `if`/`elif`,
    /// a tuple of columns after a `groupby` for a list, imports used but forgotten, the harness's `run_solution` imported or defined again in
    /// the tests, names imported from `solution` and never used).
    pub slip_repairs: bool,
    /// Send back, once, tests that type expected values as numbers where the rows they read
    /// back could compute them.
    pub hand_written_checks: bool,
    /// Give the code step a skeleton of the script (argument parsing and output writing written
    /// out) to fill in.
    pub skeleton: bool,
    /// Make that skeleton one function per declared output, each returning its output's value
    /// (`--units`), instead of one `compute` for all of them. Off in every profile until the
    /// task suite shows it helps.
    #[serde(default)]
    pub units: bool,
    /// Give the code step the query skeleton where the data allows it (every file input has a
    /// CSV sample): each sample read by pandas into a `DuckDB` table, each table and scalar
    /// output one SQL query to fill in, other outputs Python functions (`--queries`).
    #[serde(default)]
    pub queries: bool,
    /// Show the output of a failed run without Python's and `DuckDB`'s caret lines (`^^^^`
    /// under the failing expression): the 1.5B model copies them into the script as code.
    #[serde(default)]
    pub plain_tracebacks: bool,
    /// Ask for a plan (summary, steps, edge cases) before the first script and show it in the
    /// code prompt. On in every profile; `--no-plan` turns it off (the 1.5B model's plans add
    /// steps the task never asked for, which its scripts then carry out).
    #[serde(default = "planned")]
    pub plan: bool,
}

/// Profiles written before [`ModelProfile::plan`] existed planned.
fn planned() -> bool {
    true
}

/// A parameter count in a model's name: `1.5b`, `7B`, `qwen2.5-coder:14b` (not `gpt-4.1`).
static SIZE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)(?:^|[^a-z0-9.])(\d+(?:\.\d+)?)b(?:$|[^a-z0-9])").ok());

/// Parameters, in billions, up to which a model counts as small.
const SMALL_UP_TO_BILLIONS: f64 = 14.0;

impl ModelProfile {
    /// Every quirk on: what the 1.5B model the examples were recorded with needs.
    pub fn small() -> Self {
        ModelProfile {
            name: ProfileName::Small,
            code_in_fences: true,
            slip_repairs: true,
            hand_written_checks: true,
            skeleton: true,
            units: false,
            queries: false,
            plain_tracebacks: true,
            plan: true,
        }
    }

    /// Every safeguard of [`ModelProfile::small`], with code inside JSON.
    pub fn guarded() -> Self {
        ModelProfile {
            name: ProfileName::Guarded,
            code_in_fences: false,
            ..Self::small()
        }
    }

    /// No quirk at all.
    pub fn capable() -> Self {
        ModelProfile {
            name: ProfileName::Capable,
            code_in_fences: false,
            slip_repairs: false,
            hand_written_checks: false,
            skeleton: false,
            units: false,
            queries: false,
            plain_tracebacks: false,
            plan: true,
        }
    }

    /// The profile called `name`.
    pub fn named(name: ProfileName) -> Self {
        match name {
            ProfileName::Small => Self::small(),
            ProfileName::Guarded => Self::guarded(),
            ProfileName::Capable => Self::capable(),
        }
    }

    /// The profile for `model` (`provider/name`, as `--model` takes it): `small` when the name
    /// gives a size up to 14B, else `guarded` (every safeguard, as before profiles existed).
    /// `capable` is only used when named: dropping the safeguards for frontier models changes
    /// their prompts, and no held-out suite score shows that it helps yet.
    pub fn for_model(model: &str) -> Self {
        let name = model
            .split_once('/')
            .map_or(model, |(_, name)| name)
            .to_ascii_lowercase();
        let size = SIZE
            .as_ref()
            .and_then(|re| re.captures(&name))
            .and_then(|c| c[1].parse::<f64>().ok());
        match size {
            Some(billions) if billions <= SMALL_UP_TO_BILLIONS => Self::small(),
            _ => Self::guarded(),
        }
    }

    /// The profile a generation uses: the one named, else the model's; `code_in_fences` (the
    /// `--code-in-fences` flag) turns fences on in either.
    pub fn choose(named: Option<ProfileName>, model: &str, code_in_fences: bool) -> Self {
        let mut profile = named.map_or_else(|| Self::for_model(model), Self::named);
        profile.code_in_fences |= code_in_fences;
        profile
    }
}

#[cfg(test)]
mod tests {
    use super::{ModelProfile, ProfileName};

    #[test]
    fn the_model_name_chooses_the_profile() {
        for small in [
            "openai/qwen2.5-coder-1.5b-instruct",
            "ollama/qwen2.5-coder:7b",
            "ollama/llama3.1:8B",
            "openai/phi-3-mini-3.8b",
        ] {
            assert_eq!(
                ModelProfile::for_model(small).name,
                ProfileName::Small,
                "{small}"
            );
        }
        // Frontier and large models keep the safeguards until the suite shows `capable` helps.
        for large in [
            "openai/gpt-4.1",
            "openai/gpt-4o-mini",
            "openai/o3-mini",
            "anthropic/claude-sonnet-4-5",
            "gemini/gemini-2.5-pro",
            "openai/llama-3.1-405b-instruct",
            "openai/qwen3-coder-480b-a35b",
        ] {
            assert_eq!(
                ModelProfile::for_model(large).name,
                ProfileName::Guarded,
                "{large}"
            );
        }
    }

    #[test]
    fn a_name_that_gives_no_size_nor_family_keeps_every_safeguard_in_json() {
        for unknown in ["ollama/codellama", "openai/scripted", "openai/gpt4all"] {
            assert_eq!(ModelProfile::for_model(unknown), ModelProfile::guarded());
        }
        let guarded = ModelProfile::guarded();
        assert!(guarded.slip_repairs && guarded.hand_written_checks && guarded.skeleton);
        assert!(!guarded.code_in_fences);
    }

    #[test]
    fn a_named_profile_wins_and_the_fences_flag_adds_fences() {
        let chosen = ModelProfile::choose(Some(ProfileName::Capable), "openai/qwen-1.5b", false);
        assert_eq!(chosen, ModelProfile::capable());
        let fenced = ModelProfile::choose(Some(ProfileName::Capable), "openai/gpt-4.1", true);
        assert!(fenced.code_in_fences);
        assert!(!fenced.skeleton && !fenced.slip_repairs && !fenced.hand_written_checks);
        let guarded = ModelProfile::choose(None, "openai/gpt-4.1", true);
        assert!(guarded.code_in_fences && guarded.skeleton && guarded.slip_repairs);
        assert_eq!(
            ModelProfile::choose(None, "openai/qwen2.5-coder-1.5b-instruct", true),
            ModelProfile::small()
        );
        assert_eq!(
            ProfileName::from_name("capable"),
            Some(ProfileName::Capable)
        );
        assert_eq!(ProfileName::from_name("tiny"), None);
    }
}

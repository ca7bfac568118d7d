//! Decides whether an agent's shell command may run: the command is parsed with a real bash
//! parser (tree-sitter-bash), refused unless it is plain words joined by `&&`, `||`, `;` and `|`
//! (with redirections to workspace files), and every command in it is checked against a
//! flag-aware rule set read from a policy file; anything not allowed is denied, with a reason
//! the model can act on. Commands that stand for an agent tool (`pytest`, `pip install`,
//! `apt-get install`) are intercepted when they are the whole command.
//!
//! An allowed command comes back as argv vectors with their redirections and the operators
//! between them ([`Script`]); the caller runs those in the sandbox and never hands the original
//! string to a shell.
//!
//! ```
//! use std::path::Path;
//! use autocoder_policy::{Decision, Policy};
//!
//! let policy = Policy::builtin()?;
//! let workspace = Path::new("/tmp/ws");
//! match policy.decide("grep -c ERROR app.log && wc -l app.log", workspace) {
//!     Decision::Allow(script) => assert_eq!(script.argvs().count(), 2),
//!     other => panic!("{other:?}"),
//! }
//! let denied = policy.decide("cat x | sh", workspace);
//! assert!(denied.denied().unwrap().reason.contains("is a shell"));
//! # Ok::<(), autocoder_policy::PolicyError>(())
//! ```
//!
//! The rules are data: [`BUILTIN_POLICY`] is the policy shipped with the crate (TOML, documented
//! inline), and [`Policy::load`] reads a replacement.

mod argv;
mod awk;
mod decide;
mod decision;
mod error;
mod expand;
mod parse;
mod paths;
mod rules;
mod sed;
mod words;

use std::path::Path;

pub use decision::{
    Command, Decision, Denial, DenyKind, Input, Interception, Output, PackageManager, Script, Step,
    When,
};
pub use error::PolicyError;
pub use parse::{MAX_COMMAND_BYTES, MAX_COMMANDS};

use rules::{Expect, Rules, Source};

/// The policy shipped with the crate (`default-policy.toml`).
pub const BUILTIN_POLICY: &str = include_str!("../default-policy.toml");

/// The name errors give the shipped policy.
const BUILTIN_NAME: &str = "<builtin policy>";

/// The workspace examples are decided in: one that does not exist, so only lexical path rules
/// apply and no glob matches.
const EXAMPLE_WORKSPACE: &str = "/nonexistent-autocoder-policy-workspace";

/// A loaded, checked policy.
#[derive(Debug, Clone)]
pub struct Policy {
    name: String,
    rules: Rules,
}

impl Policy {
    /// The policy shipped with the crate.
    pub fn builtin() -> Result<Self, PolicyError> {
        Self::from_toml(BUILTIN_POLICY, BUILTIN_NAME)
    }

    /// Reads a policy file (the format of [`BUILTIN_POLICY`]).
    pub fn load(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// Reads a policy from TOML text; `name` names it in errors. Every rule's `examples` and
    /// `counterexamples` are decided, and one that gets the wrong decision is an error.
    pub fn from_toml(text: &str, name: &str) -> Result<Self, PolicyError> {
        let source = Source { name, text };
        let rules = rules::load(&source)?;
        let policy = Self {
            name: name.to_owned(),
            rules,
        };
        policy.check_examples(&source)?;
        Ok(policy)
    }

    fn check_examples(&self, source: &Source<'_>) -> Result<(), PolicyError> {
        for example in &self.rules.examples {
            let decision = self.decide(&example.command, Path::new(EXAMPLE_WORKSPACE));
            let ok = matches!(
                (example.expect, &decision),
                (Expect::Allow, Decision::Allow(_))
                    | (Expect::Intercept, Decision::Intercept(_))
                    | (Expect::Deny, Decision::Deny(_))
            );
            if !ok {
                let got = match &decision {
                    Decision::Allow(_) => "allowed".to_owned(),
                    Decision::Intercept(i) => format!("intercepted as {i:?}"),
                    Decision::Deny(d) => format!("denied ({})", d.reason),
                };
                let wanted = match example.expect {
                    Expect::Allow => "allowed",
                    Expect::Intercept => "intercepted",
                    Expect::Deny => "denied",
                };
                return Err(source.error(
                    Some(example.span.clone()),
                    format!(
                        "the example `{}` should be {wanted} but is {got}",
                        example.command
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The name the policy was loaded under (its file, or `<builtin policy>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Decides `command`, run from `workspace` (the directory relative paths start from and the
    /// only one commands may write). Never fails: what cannot be parsed is denied.
    pub fn decide(&self, command: &str, workspace: &Path) -> Decision {
        decide::decide(&self.rules, command, workspace)
    }

    /// The programs the policy allows, sorted.
    pub fn programs(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.rules.programs.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_policy_loads_and_its_examples_hold() {
        let policy = Policy::builtin().unwrap();
        assert!(policy.programs().contains(&"ls"));
    }
}

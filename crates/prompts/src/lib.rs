//! Every prompt autocoder sends to a model is a minijinja template under the workspace's
//! `templates/` directory; this crate compiles them into the binary and renders them. No prompt
//! text lives in Rust code: callers pass data (a serializable context), templates hold the words.
//!
//! Rendering is strict: a variable the template uses but the context lacks is an error, not an
//! empty string, so a renamed field cannot silently drop a section from a prompt.
//!
//! ```
//! use autocoder_prompts::Prompts;
//!
//! let prompts = Prompts::embedded().unwrap();
//! assert!(prompts.names().any(|name| name == "loop/plan.j2"));
//! ```
//!
//! Users can point [`Prompts::with_overrides`] at a directory of their own templates with the
//! same names to change any prompt without rebuilding.

mod error;

use std::path::Path;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

pub use error::PromptError;

include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// The template set, ready to render.
#[derive(Debug)]
pub struct Prompts {
    env: Environment<'static>,
}

impl Prompts {
    /// The templates compiled into this binary.
    pub fn embedded() -> Result<Self, PromptError> {
        let mut env = new_environment();
        for (name, source) in EMBEDDED {
            env.add_template(name, source)
                .map_err(|source| PromptError::Syntax {
                    name: (*name).to_owned(),
                    source,
                })?;
        }
        Ok(Self { env })
    }

    /// The embedded templates, with any file under `dir` that has the same relative name
    /// (e.g. `dir/loop/plan.j2`) replacing the embedded one. Unknown names are an error, so a
    /// typo does not go unnoticed.
    pub fn with_overrides(dir: &Path) -> Result<Self, PromptError> {
        let mut prompts = Self::embedded()?;
        for (name, _) in EMBEDDED {
            let path = dir.join(name);
            if !path.exists() {
                continue;
            }
            let source = std::fs::read_to_string(&path).map_err(|source| PromptError::Read {
                path: path.clone(),
                source,
            })?;
            prompts
                .env
                .add_template_owned((*name).to_owned(), source)
                .map_err(|source| PromptError::Syntax {
                    name: (*name).to_owned(),
                    source,
                })?;
        }
        let unknown = unknown_files(dir, dir);
        if let Some(name) = unknown.into_iter().next() {
            return Err(PromptError::UnknownOverride {
                path: dir.join(&name),
                name,
            });
        }
        Ok(prompts)
    }

    /// Renders the template `name` with `context`.
    pub fn render<C: Serialize>(&self, name: &str, context: C) -> Result<String, PromptError> {
        let template = self
            .env
            .get_template(name)
            .map_err(|_| PromptError::Missing {
                name: name.to_owned(),
            })?;
        template
            .render(Serde(context))
            .map_err(|source| PromptError::Render {
                name: name.to_owned(),
                source,
            })
    }

    /// The names of all templates (`loop/plan.j2`, ...).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        EMBEDDED.iter().map(|(name, _)| *name)
    }
}

fn new_environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Block tags on their own lines leave no blank lines behind; files keep their final newline.
    if let Ok(syntax) = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env
}

fn unknown_files(root: &Path, dir: &Path) -> Vec<String> {
    let mut unknown = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return unknown;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            unknown.extend(unknown_files(root, &path));
        } else if path.extension().is_some_and(|e| e == "j2") {
            let name = path
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            if !EMBEDDED.iter().any(|(known, _)| *known == name) {
                unknown.push(name);
            }
        }
    }
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_template_parses() {
        let prompts = Prompts::embedded().unwrap();
        let names: Vec<&str> = prompts.names().collect();
        for expected in [
            "loop/system.j2",
            "loop/plan.j2",
            "loop/diagnose.j2",
            "harness/conftest.py.j2",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} not embedded: {names:?}"
            );
        }
    }

    #[test]
    fn a_missing_variable_is_an_error_not_an_empty_string() {
        let prompts = Prompts::embedded().unwrap();
        let err = prompts
            .render(
                "loop/replace_package.j2",
                serde_json::json!({"package": "x"}),
            )
            .unwrap_err();
        assert!(matches!(err, PromptError::Render { .. }), "{err:?}");
    }

    #[test]
    fn an_override_directory_replaces_a_template_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("loop")).unwrap();
        std::fs::write(
            dir.path().join("loop/replace_package.j2"),
            "swap {{ package }}",
        )
        .unwrap();
        let prompts = Prompts::with_overrides(dir.path()).unwrap();
        let text = prompts
            .render(
                "loop/replace_package.j2",
                serde_json::json!({"package": "sklearn"}),
            )
            .unwrap();
        assert_eq!(text, "swap sklearn");
    }

    #[test]
    fn an_override_with_an_unknown_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("loop")).unwrap();
        std::fs::write(dir.path().join("loop/plann.j2"), "typo").unwrap();
        let err = Prompts::with_overrides(dir.path()).unwrap_err();
        assert!(err.to_string().contains("loop/plann.j2"), "{err}");
    }

    #[test]
    fn unknown_template_names_are_reported() {
        let prompts = Prompts::embedded().unwrap();
        let err = prompts
            .render("loop/nope.j2", serde_json::json!({}))
            .unwrap_err();
        assert!(err.to_string().contains("loop/nope.j2"));
    }
}

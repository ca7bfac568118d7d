//! Errors from loading or rendering templates.

use std::path::PathBuf;

/// What went wrong with a template.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// No template has this name.
    #[error("there is no prompt template named `{name}`")]
    Missing {
        /// The name asked for.
        name: String,
    },
    /// A template does not parse.
    #[error("prompt template `{name}` has a syntax error")]
    Syntax {
        /// The template.
        name: String,
        /// minijinja's error, with line.
        #[source]
        source: minijinja::Error,
    },
    /// Rendering failed, e.g. the context lacks a variable the template uses.
    #[error("cannot render prompt template `{name}`")]
    Render {
        /// The template.
        name: String,
        /// minijinja's error, with line and the missing name.
        #[source]
        source: minijinja::Error,
    },
    /// An override file cannot be read.
    #[error("cannot read prompt override {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An override file has a name no embedded template has.
    #[error(
        "{path}: no embedded prompt template is named `{name}`; overrides must use the same names"
    )]
    UnknownOverride {
        /// The file.
        path: PathBuf,
        /// Its name relative to the override directory.
        name: String,
    },
}

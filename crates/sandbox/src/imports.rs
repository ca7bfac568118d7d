//! From a script's imports to the distributions an environment needs.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;

use crate::error::SandboxError;
use crate::python::run_helper;

const IMPORTS_PY: &str = include_str!("helpers/imports.py");

/// Import names whose distribution is called differently (import name, distribution).
pub const IMPORT_TO_DISTRIBUTION: &[(&str, &str)] = &[
    ("sklearn", "scikit-learn"),
    ("cv2", "opencv-python-headless"),
    ("PIL", "pillow"),
    ("yaml", "pyyaml"),
    ("bs4", "beautifulsoup4"),
    ("dateutil", "python-dateutil"),
    ("skimage", "scikit-image"),
    ("Crypto", "pycryptodome"),
    ("OpenSSL", "pyopenssl"),
    ("jwt", "pyjwt"),
    ("dotenv", "python-dotenv"),
    ("docx", "python-docx"),
    ("pptx", "python-pptx"),
    ("magic", "python-magic"),
    ("serial", "pyserial"),
    ("usb", "pyusb"),
    ("attr", "attrs"),
    ("google.protobuf", "protobuf"),
    ("MySQLdb", "mysqlclient"),
    ("psycopg2", "psycopg2-binary"),
    ("fitz", "pymupdf"),
    ("Levenshtein", "python-levenshtein"),
    ("tables", "tables"),
    ("lxml", "lxml"),
    ("pyarrow", "pyarrow"),
];

/// What a script imports, sorted into distributions to install, the standard library, and names
/// that need a decision.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImportAnalysis {
    /// Distributions to install (mapped through [`IMPORT_TO_DISTRIBUTION`], else the import name).
    pub distributions: BTreeSet<String>,
    /// Top-level imports that belong to the interpreter's standard library.
    pub stdlib: BTreeSet<String>,
    /// Imports that are neither (none today: unmapped names are assumed to be distributions of
    /// the same name; kept for callers that want to confirm them).
    pub unknown: BTreeSet<String>,
    /// Top-level imports of `local_modules` (the script's own modules it imports).
    pub local: BTreeSet<String>,
    /// A syntax error that stopped the analysis, with its line.
    pub syntax_error: Option<String>,
}

#[derive(Deserialize)]
struct HelperOutput {
    imports: Vec<String>,
    stdlib: Vec<String>,
    syntax_error: Option<String>,
}

/// Parses `code` with `python`'s own `ast` and classifies its imports. `local_modules` (the other
/// files shipped with the script, e.g. `solution`) are left out.
pub async fn imports_to_packages(
    python: &Path,
    code: &str,
    local_modules: &[&str],
) -> Result<ImportAnalysis, SandboxError> {
    let file = tempfile::Builder::new()
        .suffix(".py")
        .tempfile()
        .map_err(SandboxError::io(
            "creating a temporary file in",
            std::env::temp_dir(),
        ))?;
    std::fs::write(file.path(), code).map_err(SandboxError::io("writing", file.path()))?;
    let (stdout, _) = run_helper(python, IMPORTS_PY, &[file.path().as_os_str()]).await?;
    let out: HelperOutput =
        serde_json::from_str(stdout.trim()).map_err(|source| SandboxError::Json {
            what: "the import analysis helper".into(),
            source,
        })?;
    let stdlib: BTreeSet<String> = out.stdlib.into_iter().collect();
    let mut analysis = ImportAnalysis {
        syntax_error: out.syntax_error,
        ..ImportAnalysis::default()
    };
    for name in out.imports {
        if local_modules.contains(&name.as_str()) {
            analysis.local.insert(name);
            continue;
        }
        if name == "__future__" {
            continue;
        }
        if stdlib.contains(&name) {
            analysis.stdlib.insert(name);
        } else if let Some((_, dist)) = IMPORT_TO_DISTRIBUTION.iter().find(|(i, _)| *i == name) {
            analysis.distributions.insert((*dist).to_owned());
        } else if name.starts_with('_') {
            analysis.unknown.insert(name);
        } else {
            analysis
                .distributions
                .insert(name.to_ascii_lowercase().replace('_', "-"));
        }
    }
    Ok(analysis)
}

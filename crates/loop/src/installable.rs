//! Keeps a diagnosis' package list to what `pip` could install.
//!
//! The 1.5B model named `os` (standard library), `solution` (the script itself) and
//! "none beyond the standard library and pytest" as packages to install. Each such name would
//! cost an environment build and a replacement question, and a dropped "package" ends with the
//! script being written again from scratch. They are dropped here, before the session sees them.

use std::path::Path;
use std::sync::LazyLock;

use autocoder_sandbox::imports_to_packages;
use regex::Regex;

use crate::LoopError;
use crate::protocol::Diagnosis;

/// A PEP 508 name, optional extras and optional version specifiers.
static REQUIREMENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._, -]+\])?(\s*(==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?)*$",
    )
    .ok()
});

/// What the model writes in a package list when it means "no package".
const NO_PACKAGE: [&str; 5] = ["none", "null", "n/a", "nothing", "-"];

/// The modules the harness ships next to the tests: never packages.
const LOCAL_MODULES: [&str; 3] = ["solution", "test_solution", "conftest"];

/// Removes from each diagnosis the packages that are not installable requirements: text that is
/// no requirement, the harness's own modules, and (asked of `python`) the standard library.
pub(crate) async fn keep_installable(
    python: &Path,
    diagnoses: &mut [Diagnosis],
) -> Result<(), LoopError> {
    let looks_like_requirement =
        |p: &str| REQUIREMENT.as_ref().is_some_and(|re| re.is_match(p.trim()));
    let candidates: Vec<String> = diagnoses
        .iter()
        .flat_map(|d| d.packages.iter())
        .filter(|p| looks_like_requirement(p))
        .map(|p| module_name(p))
        .filter(|m| is_identifier(m))
        .collect();
    let stdlib = if candidates.is_empty() {
        std::collections::BTreeSet::default()
    } else {
        let code: String = candidates
            .iter()
            .flat_map(|m| ["import ", m.as_str(), "\n"])
            .collect();
        imports_to_packages(python, &code, &LOCAL_MODULES)
            .await?
            .stdlib
    };
    for diagnosis in diagnoses {
        diagnosis.packages.retain(|p| {
            let module = module_name(p);
            let keep = looks_like_requirement(p)
                && !NO_PACKAGE.contains(&p.trim().to_ascii_lowercase().as_str())
                && !LOCAL_MODULES.contains(&module.as_str())
                && !stdlib.contains(&module);
            if !keep {
                tracing::info!("dropped {p:?} from a diagnosis: not an installable package");
            }
            keep
        });
    }
    Ok(())
}

/// The top-level module a requirement would most likely be imported by (`PyYAML>=6` ->
/// `PyYAML`, `os.path` -> `os`, `solution.py` -> `solution`).
fn module_name(requirement: &str) -> String {
    requirement
        .trim()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Whether `import name` parses: an ASCII identifier that is not a keyword.
fn is_identifier(name: &str) -> bool {
    const KEYWORDS: [&str; 35] = [
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
        "try", "while", "with", "yield",
    ];
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_and_prose_are_told_apart() {
        let re = REQUIREMENT.as_ref().unwrap();
        for ok in [
            "pandas",
            "scikit-learn",
            "PyYAML>=6",
            "pandas==2.2.1",
            "uvicorn[standard]",
            "a.b_c",
        ] {
            assert!(re.is_match(ok), "{ok}");
        }
        for prose in [
            "none beyond the standard library and pytest",
            "",
            "pip install pandas",
            "-r requirements.txt",
        ] {
            assert!(!re.is_match(prose), "{prose}");
        }
        assert_eq!(module_name("PyYAML>=6"), "PyYAML");
        assert_eq!(module_name("solution.py"), "solution");
        assert_eq!(module_name("os.path"), "os");
        assert!(is_identifier("os") && !is_identifier("scikit-learn") && !is_identifier("1x"));
        assert!(!is_identifier("None") && !is_identifier("pass"));
    }
}

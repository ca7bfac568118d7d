//! Glob expansion, done here because no shell runs the command: a word with unquoted `*`, `?`
//! or `[` becomes the sorted workspace paths it matches (hidden files only when the pattern
//! starts with `.`), or stays as written when nothing matches, as in bash. Patterns may not be
//! absolute or climb with `..`: globs only look inside the workspace.

use glob::{MatchOptions, Pattern};

use crate::decision::{Denial, DenyKind};
use crate::paths::Workspace;
use crate::words::Word;

/// The most paths one glob may expand to.
const MAX_MATCHES: usize = 4096;

/// The words a command's word stands for after expansion.
pub(crate) fn expand(word: &Word, workspace: &Workspace) -> Result<Vec<String>, Denial> {
    let Some(pattern) = &word.glob else {
        return Ok(vec![word.text.clone()]);
    };
    if pattern.starts_with('/') || pattern.split('/').any(|part| part == "..") {
        return Err(Denial::new(
            DenyKind::Path,
            format!(
                "the glob `{}` looks outside the workspace; globs may only match files in it",
                word.text
            ),
        ));
    }
    let root = workspace.root().to_string_lossy();
    let full = format!("{}/{pattern}", Pattern::escape(&root));
    let options = MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        // glob 0.3 drops every hidden entry under this option, even for `.h*`; bash's rule
        // is applied below instead.
        require_literal_leading_dot: false,
    };
    let pattern_parts: Vec<&str> = pattern.split('/').collect();
    let Ok(paths) = glob::glob_with(&full, options) else {
        return Ok(vec![word.text.clone()]); // not a valid pattern: bash keeps it as written
    };
    let prefix = format!("{root}/");
    let mut matches = Vec::new();
    for path in paths.flatten() {
        if let Some(parent) = path.parent()
            && !workspace.holds(parent)
        {
            return Err(Denial::new(
                DenyKind::Path,
                format!(
                    "the glob `{}` reaches outside the workspace through a symbolic link",
                    word.text
                ),
            ));
        }
        let text = path.to_string_lossy();
        let relative = text.strip_prefix(&prefix).unwrap_or(&text).to_owned();
        if !bash_would_match(&relative, &pattern_parts) {
            continue;
        }
        matches.push(relative);
        if matches.len() > MAX_MATCHES {
            return Err(Denial::new(
                DenyKind::Argument,
                format!(
                    "the glob `{}` matches more than {MAX_MATCHES} files; narrow it",
                    word.text
                ),
            ));
        }
    }
    if matches.is_empty() {
        return Ok(vec![word.text.clone()]);
    }
    matches.sort();
    Ok(matches)
}

/// Bash's rules on top of glob's: a hidden name only matches a pattern part that starts with a
/// literal `.`, and `.` and `..` never match a wildcard (bash 5.2's `globskipdots`).
fn bash_would_match(relative: &str, pattern_parts: &[&str]) -> bool {
    relative.split('/').zip(pattern_parts).all(|(name, part)| {
        let special = name == "." || name == "..";
        if special {
            return name == *part;
        }
        !name.starts_with('.') || part.starts_with('.')
    })
}

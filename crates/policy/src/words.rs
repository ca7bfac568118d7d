//! Word decoding as bash does it for plain words: quotes and backslashes removed, with each
//! character remembered as quoted or not, so that unquoted `*?[` make a glob and an unquoted
//! leading `~` or `{a,b}` (expansions we do not perform) are refused rather than passed on
//! literally. `$` and backticks are refused wherever they would expand.

use crate::decision::{Denial, DenyKind};
use crate::parse::{construct, syntax};

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The word as the program would see it without glob expansion.
    pub(crate) text: String,
    /// A glob pattern (quoted metacharacters escaped) when the word has unquoted `*`, `?`, `[`.
    pub(crate) glob: Option<String>,
}

/// Characters of a word being decoded, each with whether it was quoted.
pub(crate) type Chars = Vec<(char, bool)>;

/// The raw text of a `raw_string` (`'...'`): everything quoted.
pub(crate) fn single_quoted(inner: &str, out: &mut Chars) {
    out.extend(inner.chars().map(|c| (c, true)));
}

/// An unquoted word: `\x` quotes `x`, backslash-newline disappears; `$` and backticks refused.
pub(crate) fn unquoted(text: &str, out: &mut Chars) -> Result<(), Denial> {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(next) => out.push((next, true)),
                None => out.push(('\\', true)),
            },
            '$' => return Err(syntax(construct("$"))),
            '`' => return Err(syntax(construct("command_substitution"))),
            c => out.push((c, false)),
        }
    }
    Ok(())
}

/// The inside of `"..."`: backslash escapes only `$`, backtick, `"`, `\` and newline.
pub(crate) fn double_quoted(text: &str, out: &mut Chars) -> Result<(), Denial> {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(&next @ ('$' | '`' | '"' | '\\')) => {
                    chars.next();
                    out.push((next, true));
                }
                _ => out.push(('\\', true)),
            },
            '$' => return Err(syntax(construct("$"))),
            '`' => return Err(syntax(construct("command_substitution"))),
            c => out.push((c, true)),
        }
    }
    Ok(())
}

/// Builds the word, refusing expansions we do not perform (tilde, braces) and marking globs.
pub(crate) fn finish_word(chars: &[(char, bool)]) -> Result<Word, Denial> {
    if let Some(('~', false)) = chars.first() {
        return Err(Denial::new(
            DenyKind::Path,
            "`~` is the home directory, which is outside the workspace; use paths relative to the workspace",
        ));
    }
    if has_brace_expansion(chars) {
        return Err(syntax(construct("brace_expression")));
    }
    let text: String = chars.iter().map(|(c, _)| c).collect();
    let is_glob = chars
        .iter()
        .any(|&(c, quoted)| !quoted && matches!(c, '*' | '?' | '['));
    let glob = is_glob.then(|| {
        let mut pattern = String::new();
        let mut previous_star = false;
        for &(c, quoted) in chars {
            // Bash has no `**` without globstar: it is `*`, not glob's recursive wildcard.
            let star = c == '*' && !quoted;
            if star && previous_star {
                continue;
            }
            previous_star = star;
            if quoted && matches!(c, '*' | '?' | '[' | ']') {
                pattern.push('[');
                pattern.push(c);
                pattern.push(']');
            } else {
                pattern.push(c);
            }
        }
        pattern
    });
    Ok(Word { text, glob })
}

/// An unquoted `{` ... `}` holding an unquoted `,` or `..`, as bash would expand.
fn has_brace_expansion(chars: &[(char, bool)]) -> bool {
    let mut open: Option<usize> = None;
    for (i, &(c, quoted)) in chars.iter().enumerate() {
        if quoted {
            continue;
        }
        match c {
            '{' => open = Some(i),
            '}' => {
                if let Some(start) = open {
                    let inner = &chars[start + 1..i];
                    let comma = inner.iter().any(|&(c, q)| c == ',' && !q);
                    let range = inner
                        .windows(2)
                        .any(|w| w[0] == ('.', false) && w[1] == ('.', false));
                    if comma || range {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

//! A script's output shown on a terminal: control characters escaped, so the script cannot move
//! the cursor, rewrite what is on screen, retitle the window or set the clipboard.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character except newline and tab written as a visible escape
/// (`\x1b`, `\r`, `\u{9b}`), for writing a sandboxed script's output to a terminal.
pub fn escape_for_terminal(text: &str) -> Cow<'_, str> {
    let needs = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !needs(c) {
            out.push(c);
        } else if c == '\r' {
            out.push_str("\\r");
        } else if u32::from(c) < 0x80 {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_become_visible() {
        assert!(matches!(
            escape_for_terminal("plain\ttext\n"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_for_terminal("\x1b]0;owned\x07red\x1b[31m\rX\u{9b}2J"),
            "\\x1b]0;owned\\x07red\\x1b[31m\\rX\\u{9b}2J"
        );
    }
}

//! HTML escaping. Every text that comes from the data (file names, column names, values,
//! shapes) goes through [`text`] before it reaches the page; ids and classes are never built
//! from data.

use std::borrow::Cow;

use autocoder_profile::render::format::{escape_controls, truncate};

/// `s` safe as HTML text and as a double- or single-quoted attribute value: `&`, `<`, `>`, `"`
/// and `'` become entities, and control characters become visible escapes (`\n`, `\u{1b}`), so
/// a value cannot close an element, open a script or break a line of a table cell.
pub(crate) fn text(s: &str) -> Cow<'_, str> {
    let needs = s
        .chars()
        .any(|c| matches!(c, '&' | '<' | '>' | '"' | '\'') || c.is_control());
    if !needs {
        return Cow::Borrowed(s);
    }
    Cow::Owned(markup(&escape_controls(s, &[])))
}

/// `s` with `&`, `<`, `>`, `"` and `'` as entities and nothing else changed (line breaks stay):
/// a whole page made safe as a quoted attribute value (`srcdoc`).
pub(crate) fn markup(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to `max` characters (ending with `…`), then escaped as [`text`].
pub(crate) fn short(s: &str, max: usize) -> String {
    text(&truncate(s, max)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_quotes_become_entities() {
        assert_eq!(
            text("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
        );
        assert_eq!(text("a \"b\" & c"), "a &quot;b&quot; &amp; c");
        assert_eq!(text("plain_name"), "plain_name");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn markup_keeps_line_breaks() {
        assert_eq!(
            markup("a\n<b c='d' e=\"f\">&"),
            "a\n&lt;b c=&#39;d&#39; e=&quot;f&quot;&gt;&amp;"
        );
    }

    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(text("two\nlines"), "two\\nlines");
        assert_eq!(text("\u{1b}[2J<"), "\\u{1b}[2J&lt;");
    }

    #[test]
    fn cutting_happens_before_escaping() {
        // An entity is never cut in half.
        assert_eq!(short("<<<<<<", 4), "&lt;&lt;&lt;…");
        assert_eq!(short("abc", 4), "abc");
    }
}

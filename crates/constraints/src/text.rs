//! A cursor over a rule's text that matches lowercase phrases while keeping the original case
//! of values (so `one of Pending, Shipped` keeps `Pending`).

/// The rule text, its ASCII-lowercase twin (same byte offsets), and a position in both.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    orig: &'a str,
    lower: String,
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(orig: &'a str) -> Self {
        let mut c = Self {
            orig,
            lower: orig.to_ascii_lowercase(),
            pos: 0,
        };
        c.skip_space();
        c
    }

    /// The rest, lowercased.
    pub(crate) fn rest(&self) -> &str {
        &self.lower[self.pos..]
    }

    /// The rest, as written.
    pub(crate) fn rest_orig(&self) -> &'a str {
        &self.orig[self.pos..]
    }

    fn skip_space(&mut self) {
        let rest = &self.lower[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// Consumes `phrase` when the rest starts with it as whole words.
    pub(crate) fn eat(&mut self, phrase: &str) -> bool {
        if starts_with_words(self.rest(), phrase) {
            self.pos += phrase.len();
            self.skip_space();
            true
        } else {
            false
        }
    }

    /// Consumes the first of `phrases` the rest starts with; returns its index.
    pub(crate) fn eat_any(&mut self, phrases: &[&str]) -> Option<usize> {
        let i = phrases
            .iter()
            .position(|p| starts_with_words(self.rest(), p))?;
        self.eat(phrases[i]);
        Some(i)
    }

    /// Whether the rest starts with any of `phrases` as whole words.
    pub(crate) fn peek_any(&self, phrases: &[&str]) -> bool {
        phrases.iter().any(|p| starts_with_words(self.rest(), p))
    }
}

/// Whether `text` starts with `phrase`, ending at a word boundary when the phrase ends in a
/// letter or digit.
pub(crate) fn starts_with_words(text: &str, phrase: &str) -> bool {
    if !text.starts_with(phrase) {
        return false;
    }
    let ends_in_word = phrase.chars().last().is_some_and(char::is_alphanumeric);
    !ends_in_word
        || text[phrase.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_')
}

/// The lowercase words of `text` (letters, digits, `-` and `_` inside words).
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `text` without surrounding quotes or backticks (one pair), trimmed.
pub(crate) fn unquote(text: &str) -> &str {
    let t = text.trim();
    for (open, close) in [('"', '"'), ('\'', '\''), ('`', '`'), ('“', '”'), ('‘', '’')] {
        if let Some(inner) = t.strip_prefix(open).and_then(|s| s.strip_suffix(close)) {
            return inner;
        }
    }
    t
}

/// Whether `text` is wrapped in one pair of quotes or backticks.
pub(crate) fn is_quoted(text: &str) -> bool {
    unquote(text).len() != text.trim().len()
}

/// Collapses runs of whitespace and drops a final period.
pub(crate) fn tidy(rule: &str) -> String {
    let collapsed = rule.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_end_matches(['.', '!', ';'])
        .trim_end()
        .to_owned()
}

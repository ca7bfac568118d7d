//! Secrets: environment variables passed into a run whose values never leave it in what the
//! sandbox captures. Their `Debug` shows the name only, and every captured text (stdout,
//! stderr, pytest's reports) has each value replaced by [`MASK`].

use std::fmt;

/// What a secret's value is replaced with in captured output.
pub const MASK: &str = "***";

/// An environment variable for the script whose value is masked in everything captured.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    /// The variable's name.
    pub name: String,
    value: String,
}

impl Secret {
    /// A secret `name` with `value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }

    /// The value, for passing it into the run.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({}=[masked])", self.name)
    }
}

/// `text` with every non-empty secret value replaced by [`MASK`] (longest first, so a secret
/// containing another is masked whole).
pub fn mask(text: &str, secrets: &[Secret]) -> String {
    let mut values: Vec<&str> = secrets
        .iter()
        .map(Secret::value)
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return text.to_owned();
    }
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    let mut masked = text.to_owned();
    for value in values {
        if masked.contains(value) {
            masked = masked.replace(value, MASK);
        }
    }
    masked
}

/// [`mask`] in place.
pub(crate) fn mask_in_place(text: &mut String, secrets: &[Secret]) {
    if secrets
        .iter()
        .any(|s| !s.value.is_empty() && text.contains(&s.value))
    {
        *text = mask(text, secrets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_masked_and_never_debug_printed() {
        let secrets = [
            Secret::new("TOKEN", "abc123"),
            Secret::new("LONG", "abc123-and-more"),
            Secret::new("EMPTY", ""),
        ];
        assert_eq!(mask("t=abc123 l=abc123-and-more", &secrets), "t=*** l=***");
        assert_eq!(mask("nothing here", &secrets), "nothing here");
        let shown = format!("{secrets:?}");
        assert!(
            !shown.contains("abc123") && shown.contains("TOKEN"),
            "{shown}"
        );
    }
}

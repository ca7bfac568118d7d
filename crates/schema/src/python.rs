//! Small helpers for writing Python source text.

/// A Python string literal for `s`: a raw string when that is exact and readable, else a quoted
/// string with escapes (JSON string escapes are valid Python escapes).
pub fn python_str(s: &str) -> String {
    let raw_ok = s.contains('\\')
        && !s.contains('"')
        && !s.ends_with('\\')
        && !s.chars().any(char::is_control);
    if raw_ok {
        format!("r\"{s}\"")
    } else {
        serde_json::Value::String(s.to_owned()).to_string()
    }
}

/// A Python identifier derived from `name`: lowercase ASCII letters, digits and underscores, not
/// starting with a digit, never empty and never a keyword.
pub fn python_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let trimmed = out.trim_matches('_');
    let mut ident = if trimmed.is_empty() {
        "data".to_owned()
    } else {
        trimmed.to_owned()
    };
    if ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert(0, '_');
    }
    if PYTHON_KEYWORDS.contains(&ident.as_str()) {
        ident.push('_');
    }
    ident
}

const PYTHON_KEYWORDS: &[&str] = &[
    "false", "none", "true", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_become_valid_literals() {
        assert_eq!(python_str("abc"), "\"abc\"");
        assert_eq!(python_str(r"^\d+$"), r#"r"^\d+$""#);
        assert_eq!(python_str("say \"hi\"\n"), r#""say \"hi\"\n""#);
        assert_eq!(python_str(r"ends\"), r#""ends\\""#);
    }

    #[test]
    fn identifiers_are_safe() {
        assert_eq!(python_identifier("Sales Data-2024"), "sales_data_2024");
        assert_eq!(python_identifier("2024 sales"), "_2024_sales");
        assert_eq!(python_identifier("class"), "class_");
        assert_eq!(python_identifier("ßß"), "data");
    }
}

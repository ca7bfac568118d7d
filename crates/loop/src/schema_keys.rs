//! The top-level keys of a schema text shaped like a JSON object (`{"levels": {...},
//! "error_rate": <float>}`), read without parsing it as JSON: such texts hold placeholders
//! (`<count>`) that no JSON parser accepts. The test shape spells an expected report with them:
//! the 1.5B model wrote `{'ERROR': 2, 'INFO': 2}` for a report whose levels sit under `levels`.

/// The keys at depth 1 of `text`, in order, when it starts with `{`; empty otherwise.
pub(crate) fn top_level_keys(text: &str) -> Vec<String> {
    let text = text.trim();
    if !text.starts_with('{') {
        return Vec::new();
    }
    let mut keys = Vec::new();
    let mut depth = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            '"' | '\'' => {
                let mut word = String::new();
                let mut closed = false;
                for (_, inner) in chars.by_ref() {
                    if inner == c {
                        closed = true;
                        break;
                    }
                    word.push(inner);
                }
                if !closed {
                    break;
                }
                while chars.next_if(|(_, w)| w.is_whitespace()).is_some() {}
                let is_key = chars.peek().is_some_and(|(_, next)| *next == ':');
                if depth == 1 && is_key && !word.is_empty() && !keys.contains(&word) {
                    keys.push(word);
                }
            }
            _ => {}
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::top_level_keys;

    #[test]
    fn keys_at_the_top_level_only() {
        let schema = r#" {"levels": {"<LEVEL>": <count>}, "components": {"<name>": <count>},
            "error_rate": <float between 0 and 1>, 'note': "a: b"} "#;
        assert_eq!(
            top_level_keys(schema),
            ["levels", "components", "error_rate", "note"]
        );
        assert_eq!(
            top_level_keys(r#"{"rows": [{"id": 1}], "total": 2}"#),
            ["rows", "total"]
        );
        for not_an_object in [r#"[{"id": 1}]"#, "a line of text per sensor", r#"{"open"#] {
            assert!(top_level_keys(not_an_object).is_empty(), "{not_an_object}");
        }
    }
}

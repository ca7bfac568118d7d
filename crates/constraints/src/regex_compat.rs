//! Regular expressions from rules run in two engines: Rust's `regex` (our evaluator) and Python's
//! `re` (the Pandera module we emit). At run time we accept only a conservative subset whose
//! meaning is the same in both; the tests confirm accepted patterns with the real Python `re`.

/// Checks that `pattern` compiles in Rust and avoids the constructs Python's `re` lacks or reads
/// differently: `\p{..}` classes, `(?<name>..)` groups, POSIX `[[:alpha:]]` classes, nested classes
/// and set operations (`&&`, `--`, `~~`), `\<` `\>` `\b{..}` boundaries, `\z`, and the `U` flag.
pub fn check_portable_regex(pattern: &str) -> Result<(), String> {
    if pattern.len() > 1_000 {
        return Err("the regular expression is longer than 1000 characters".to_owned());
    }
    if let Err(e) = regex::Regex::new(pattern) {
        return Err(format!(
            "the regular expression {pattern:?} does not compile: {}",
            e.to_string()
                .lines()
                .last()
                .unwrap_or("syntax error")
                .trim()
        ));
    }
    let unportable = |what: &str| {
        Err(format!(
            "the regular expression {pattern:?} uses {what}, which Python's re reads differently or not at all; rewrite it without"
        ))
    };
    let bytes = pattern.as_bytes();
    let mut in_class = false;
    let mut class_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        match b {
            b'\\' => {
                match next {
                    Some(b'p' | b'P') => return unportable("a Unicode property class (\\p{..})"),
                    Some(b'<' | b'>') => return unportable("a word-boundary escape (\\< or \\>)"),
                    Some(b'z') => return unportable("\\z"),
                    Some(b'b') if bytes.get(i + 2) == Some(&b'{') => {
                        return unportable("a \\b{..} boundary");
                    }
                    _ => {}
                }
                i += 2;
                continue;
            }
            b'[' if in_class => {
                if next == Some(b':') {
                    return unportable("a POSIX class ([[:alpha:]])");
                }
                return unportable("a nested character class");
            }
            b'[' => {
                in_class = true;
                class_start = i;
                // A `]` right after `[` or `[^` is a literal in both engines.
                let skip = usize::from(next == Some(b'^'));
                if bytes.get(i + 1 + skip) == Some(&b']') {
                    i += 1 + skip;
                }
            }
            b']' if in_class && i > class_start => in_class = false,
            b'&' | b'-' | b'~' if in_class && next == Some(b) => {
                return unportable("a class set operation (&&, -- or ~~)");
            }
            b'(' if !in_class && next == Some(b'?') => {
                let rest = &pattern[i + 2..];
                if rest.starts_with('<') && !rest.starts_with("<=") && !rest.starts_with("<!") {
                    return unportable("a (?<name>..) group (write (?P<name>..))");
                }
                let flags: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic() || *c == '-')
                    .collect();
                if flags.contains('U') || flags.contains('R') {
                    return unportable("the U or R flag");
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_common_subset_and_refuses_the_rest() {
        for ok in [
            r"^[A-Z]{3}-\d{4}$",
            r"^[^@]+@[^@]+$",
            r"^(?P<y>\d{4})$",
            r"^[]a]$",
            r"(?i)^abc",
        ] {
            assert!(check_portable_regex(ok).is_ok(), "{ok}");
        }
        for bad in [
            r"^\p{L}+$",
            r"(?<y>\d)",
            r"[[:alpha:]]",
            r"[a-z&&[^aeiou]]",
            r"\<word\>",
            r"abc\z",
            r"(?U)a+",
            r"([a-z",
        ] {
            assert!(check_portable_regex(bad).is_err(), "{bad}");
        }
    }
}

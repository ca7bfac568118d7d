//! Deterministic repair of keyword slips small models make inside JSON-encoded code.
//!
//! Under a JSON grammar, Qwen2.5-Coder-1.5B writes `eif __name__ == '__main__':` for
//! `if __name__ ...` in about one script in three (never in free text). `eif <expr>:` is a
//! syntax error in every context, so rewriting it loses nothing: it becomes `elif` when it
//! continues an `if`/`elif` at its indentation and `if` otherwise.

/// The code with every `eif ...:` line rewritten, or `None` when there is none.
pub(crate) fn repair_keyword_slips(code: &str) -> Option<String> {
    let lines: Vec<&str> = code.split_inclusive('\n').collect();
    let mut repaired = String::with_capacity(code.len() + 8);
    let mut changed = false;
    for (index, line) in lines.iter().enumerate() {
        let indent = indentation(line);
        let body = &line[indent..];
        if is_eif_header(body) {
            let keyword = if continues_if_chain(&lines[..index], indent) {
                "elif"
            } else {
                "if"
            };
            repaired.push_str(&line[..indent]);
            repaired.push_str(keyword);
            repaired.push_str(&body["eif".len()..]);
            changed = true;
        } else {
            repaired.push_str(line);
        }
    }
    changed.then_some(repaired)
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// `eif <something>:` (a trailing comment allowed): never valid Python.
fn is_eif_header(body: &str) -> bool {
    let Some(rest) = body.strip_prefix("eif") else {
        return false;
    };
    if !rest.starts_with([' ', '(']) {
        return false;
    }
    let code = rest.split('#').next().unwrap_or(rest);
    code.trim_end().ends_with(':')
}

/// Whether the nearest statement above at the same indentation (skipping deeper lines, blank
/// lines and comments) opens or continues an `if` chain.
fn continues_if_chain(above: &[&str], indent: usize) -> bool {
    for line in above.iter().rev() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let own = indentation(line);
        if own > indent {
            continue;
        }
        if own < indent {
            return false;
        }
        let body = &line[own..];
        return body.starts_with("if ")
            || body.starts_with("if(")
            || body.starts_with("elif ")
            || body.starts_with("elif(");
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_top_level_eif_after_a_function_becomes_if() {
        let code =
            "def main():\n    if x:\n        pass\n\neif __name__ == '__main__':\n    main()\n";
        let fixed = repair_keyword_slips(code).expect("a slip");
        assert_eq!(
            fixed,
            "def main():\n    if x:\n        pass\n\nif __name__ == '__main__':\n    main()\n"
        );
    }

    #[test]
    fn an_eif_that_continues_an_if_becomes_elif() {
        let code = "if a:\n    x = 1\n    if b:\n        y = 2\neif c:  # note\n    z = 3\n";
        let fixed = repair_keyword_slips(code).expect("a slip");
        assert!(fixed.contains("\nelif c:  # note\n"), "{fixed}");
        let nested =
            "def f(v):\n    if v > 1:\n        return 1\n    eif(v < 0):\n        return 2\n";
        let fixed = repair_keyword_slips(nested).expect("a slip");
        assert!(fixed.contains("\n    elif(v < 0):\n"), "{fixed}");
    }

    #[test]
    fn valid_uses_of_the_name_eif_are_left_alone() {
        for code in [
            "eif = 3\nprint(eif)\n",
            "eif(3)\n",
            "x = 'eif a:'\n",
            "def eif():\n    return 1\n",
            "",
        ] {
            assert_eq!(repair_keyword_slips(code), None, "{code:?}");
        }
    }

    #[test]
    fn code_without_a_final_newline_keeps_its_last_line() {
        let fixed = repair_keyword_slips("x = 1\neif x:\n    pass").expect("a slip");
        assert_eq!(fixed, "x = 1\nif x:\n    pass");
    }
}

//! Deterministic repair of slips small models make in code, where the right text is certain.
//!
//! Under a JSON grammar, Qwen2.5-Coder-1.5B writes `eif __name__ == '__main__':` for
//! `if __name__ ...` in about one script in three (never in free text). `eif <expr>:` is a
//! syntax error in every context, so rewriting it loses nothing: it becomes `elif` when it
//! continues an `if`/`elif` at its indentation and `if` otherwise.
//!
//! In test files the same model writes `from solution import run_solution`: `run_solution` is the
//! harness's pytest fixture (from `conftest.py`), never a name of the script, so the import
//! can only fail at collection. The name is dropped from the import (and so is any name imported
//! from `solution` that the tests never use: [`crate::vet::solution_imports`]).

use crate::pysrc::splice::indentation;

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

/// The test file with the harness's fixture names removed from `from ... import ...` lines
/// (the line goes when nothing else is imported), or `None` when no import names one.
pub(crate) fn repair_fixture_imports(tests: &str, fixtures: &[&str]) -> Option<String> {
    let mut repaired = String::with_capacity(tests.len());
    let mut changed = false;
    for line in tests.split_inclusive('\n') {
        match without_fixture_names(line, fixtures) {
            Some(kept) => {
                repaired.push_str(&kept);
                changed = true;
            }
            None => repaired.push_str(line),
        }
    }
    changed.then_some(repaired)
}

/// The import line without the fixture names (empty when none is left), or `None` when the
/// line is not a one-line `from ... import ...` naming a fixture.
fn without_fixture_names(line: &str, fixtures: &[&str]) -> Option<String> {
    let indent = indentation(line);
    let body = line[indent..].trim_end();
    let rest = body.strip_prefix("from ")?;
    let (module, names) = rest.split_once(" import ")?;
    let (names, comment) = match names.split_once('#') {
        Some((names, comment)) => (names, Some(comment)),
        None => (names, None),
    };
    let inner = names.trim();
    let (inner, parenthesised) = match inner.strip_prefix('(') {
        Some(open) => (open.strip_suffix(')')?, true),
        None => (inner, false),
    };
    let all: Vec<&str> = inner
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    let kept: Vec<&str> = all
        .iter()
        .copied()
        .filter(|name| !fixtures.contains(&name.split_whitespace().next().unwrap_or(name)))
        .collect();
    if kept.len() == all.len() {
        return None;
    }
    if kept.is_empty() {
        return Some(String::new());
    }
    let newline = if line.ends_with('\n') { "\n" } else { "" };
    let list = kept.join(", ");
    let list = if parenthesised {
        format!("({list})")
    } else {
        list
    };
    let comment = comment.map(|c| format!("  #{c}")).unwrap_or_default();
    Some(format!(
        "{}from {module} import {list}{comment}{newline}",
        &line[..indent]
    ))
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
    fn fixture_names_are_dropped_from_imports() {
        let fixtures = ["run_solution"];
        let tests = "import pytest\nfrom solution import run_solution\n\ndef test_a(run_solution):\n    pass\n";
        assert_eq!(
            repair_fixture_imports(tests, &fixtures).as_deref(),
            Some("import pytest\n\ndef test_a(run_solution):\n    pass\n")
        );
        assert_eq!(
            repair_fixture_imports(
                "from solution import (main, run_solution)  # both\n",
                &fixtures
            )
            .as_deref(),
            Some("from solution import (main)  # both\n")
        );
        assert_eq!(
            repair_fixture_imports("from conftest import run_solution as rs, x", &fixtures)
                .as_deref(),
            Some("from conftest import x")
        );
        for untouched in [
            "from solution import main\n",
            "from solution import (\n    run_solution,\n)\n",
            "x = 'from solution import run_solution'\n",
            "from solution import run_solutions\n",
        ] {
            assert_eq!(
                repair_fixture_imports(untouched, &fixtures),
                None,
                "{untouched:?}"
            );
        }
    }

    #[test]
    fn code_without_a_final_newline_keeps_its_last_line() {
        let fixed = repair_keyword_slips("x = 1\neif x:\n    pass").expect("a slip");
        assert_eq!(fixed, "x = 1\nif x:\n    pass");
    }
}

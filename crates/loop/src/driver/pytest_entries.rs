//! pytest's long traceback as the report shows it: an entry whose next entry is on the same line
//! of the same file (a generator expression or a comprehension on a test's failing line) is
//! shown without its failing line and its location. pytest prints that line under the test's
//! entry and again under the comprehension's (`.0 = <list_iterator ...>`), where the `E` lines
//! and the carets that point inside it follow; the test's own line, often its longest, was
//! shown twice (`docs/notes/prompt-cache.md`).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// An entry's location line: `test_solution.py:24: ` (an entry the traceback goes on from) or
/// `test_solution.py:24: TypeError` (the last), with or without a directory before the name.
static LOCATION: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^(?P<place>\S+\.py:\d+):(?: .*)?$").ok());

/// The line pytest prints between two entries: `_ _ _ _ ...`.
static SEPARATOR: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^(?:_ )+_?\s*$").ok());

/// `output` without the failing line (`>`) of each entry followed by an entry at the same file
/// and line that shows the same line, nor what stands between the two (the carets, the entry's
/// location, pytest's separator): the entry's lines above its failing line stay. Borrowed when
/// nothing changed.
pub(super) fn without_repeated_lines(output: &str) -> Cow<'_, str> {
    let (Some(location), Some(separator)) = (LOCATION.as_ref(), SEPARATOR.as_ref()) else {
        return output.into();
    };
    if !output.contains("\n_ _ ") {
        return output.into();
    }
    let lines: Vec<&str> = output.split_inclusive('\n').collect();
    let text = |i: usize| lines[i].trim_end();
    let place = |i: usize| {
        location
            .captures(text(i))
            .and_then(|c| c.name("place"))
            .map(|p| p.as_str())
    };
    let mut dropped = vec![false; lines.len()];
    for at in (0..lines.len()).filter(|&i| separator.is_match(text(i))) {
        // The entry before the separator: its location is its last line that is not blank.
        let Some(before) = (0..at).rev().find(|&i| !text(i).is_empty()) else {
            continue;
        };
        let Some(here) = place(before) else {
            continue;
        };
        // The next entry, up to its location.
        let Some(next) = (at + 1..lines.len()).find(|&i| place(i).is_some()) else {
            continue;
        };
        if place(next) != Some(here) {
            continue;
        }
        let start = (0..before)
            .rev()
            .find(|&i| separator.is_match(text(i)))
            .map_or(0, |i| i + 1);
        // A failing line (`>`) and its statement.
        let failing = |i: usize| Some((i, text(i).strip_prefix('>')?.trim()));
        let (Some((line, shown)), Some((_, again))) = (
            (start..before).rev().find_map(failing),
            (at + 1..next).find_map(failing),
        ) else {
            continue;
        };
        if shown != again {
            continue;
        }
        // The line, its carets, the entry's location (the next entry's says the same) and
        // the separator.
        dropped[line..=at].fill(true);
    }
    if !dropped.contains(&true) {
        return output.into();
    }
    lines
        .iter()
        .zip(dropped)
        .filter(|(_, dropped)| !dropped)
        .map(|(line, _)| *line)
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pytest 8's output (Python 3.11) for a generator expression on a test's failing line.
    const GENERATOR_ON_A_TEST_LINE: &str = r#"run_solution = <function run_solution.<locals>.run at 0x…>

    def test_count(run_solution, tmp_path):
        result = run_solution()
        threshold = 1
>       expected = sum(1 for r in rows if r["a"] > threshold)
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

test_solution.py:14: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

.0 = <list_iterator object at 0x…>

>   expected = sum(1 for r in rows if r["a"] > threshold)
                                      ^^^^^^^^^^^^^^^^^^
E   TypeError: '>' not supported between instances of 'str' and 'int'

test_solution.py:14: TypeError
"#;

    #[test]
    fn the_test_s_line_is_shown_once_under_the_entry_that_points_inside_it() {
        let outer = concat!(
            ">       expected = sum(1 for r in rows if r[\"a\"] > threshold)\n",
            "                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
            "\n",
            "test_solution.py:14: \n",
            "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n",
        );
        assert!(GENERATOR_ON_A_TEST_LINE.contains(outer));
        let shown = without_repeated_lines(GENERATOR_ON_A_TEST_LINE);
        assert_eq!(shown, GENERATOR_ON_A_TEST_LINE.replacen(outer, "", 1));
        assert!(shown.contains(">   expected = sum(1 for r in rows if r[\"a\"] > threshold)\n"));
        assert!(shown.contains("                                      ^^^^^^^^^^^^^^^^^^\n"));
    }

    #[test]
    fn an_entry_on_another_line_or_file_keeps_its_failing_line() {
        for (from, to) in [
            ("test_solution.py:14: \n", "test_solution.py:13: \n"),
            ("test_solution.py:14: \n", "helpers.py:14: \n"),
            (
                ">   expected = sum(1 for r in rows if r[\"a\"] > threshold)\n",
                ">   return sum(1 for r in rows if r[\"a\"] > threshold)\n",
            ),
        ] {
            let output = GENERATOR_ON_A_TEST_LINE.replacen(from, to, 1);
            assert!(
                matches!(without_repeated_lines(&output), Cow::Borrowed(_)),
                "{output}"
            );
        }
        // A single entry, and a traceback through the harness (`conftest.py:152: in run`).
        let single = "    def test_x():\n>       assert 1 == 2\nE       assert 1 == 2\n\ntest_solution.py:3: AssertionError\n";
        assert!(matches!(without_repeated_lines(single), Cow::Borrowed(_)));
        let through = ">       result = run_solution({})\n\ntest_solution.py:5: \n_ _ _ _ _ _ _ _\nconftest.py:152: in run\n    raise TypeError(x)\nE   TypeError: x\n";
        assert!(matches!(without_repeated_lines(through), Cow::Borrowed(_)));
    }
}

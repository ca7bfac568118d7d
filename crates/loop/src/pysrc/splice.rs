//! Replaces individual test functions in a pytest file. A test fix comes back as whole functions;
//! we put each one where the old one was, decorators included, for top-level functions and for
//! methods of test classes (`TestTotals.test_sum`), and leave everything else byte for byte.
//!
//! This works on lines and indentation, aware of triple-quoted strings and bracket nesting,
//! which is all a test file's structure needs. The loop still parses the result with the
//! sandbox's Python before running it.

use serde::{Deserialize, Serialize};

use crate::protocol::FunctionPatch;

/// The file after splicing, and the names that could not be found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpliceReport {
    /// The new file.
    pub source: String,
    /// Names of patches applied.
    pub replaced: Vec<String>,
    /// Names of patches whose function is not in the file (nothing was changed for them).
    pub missing: Vec<String>,
}

/// Replaces the functions named in `patches` and adds `imports` lines the file lacks after its
/// leading imports.
pub fn splice_functions(
    source: &str,
    patches: &[FunctionPatch],
    imports: &[String],
) -> SpliceReport {
    let mut current = source.to_owned();
    let mut replaced = Vec::new();
    let mut missing = Vec::new();
    for patch in patches {
        let name = strip_parameters(&patch.name);
        let lines: Vec<&str> = current.split_inclusive('\n').collect();
        let logical = logical_lines(&lines);
        match locate(&lines, &logical, name) {
            Some(span) => {
                let indent = indentation(lines[span.def_line]);
                let mut out: String = lines[..span.start].concat();
                out.push_str(&reindent(&patch.source, indent));
                out.push_str(&lines[span.end..].concat());
                current = out;
                replaced.push(name.to_owned());
            }
            None => missing.push(name.to_owned()),
        }
    }
    let source = add_imports(&current, imports);
    SpliceReport {
        source,
        replaced,
        missing,
    }
}

/// The source of the function `name` (`test_x`, `Class.test_x`, a `[param]` suffix ignored),
/// decorators included, as it stands in `source`.
pub fn function_source(source: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let logical = logical_lines(&lines);
    let span = locate(&lines, &logical, strip_parameters(name))?;
    Some(lines[span.start..span.end].concat())
}

/// `source` without any top-level function `name` (decorators included); `None` when it
/// defines none.
pub fn remove_top_level_function(source: &str, name: &str) -> Option<String> {
    let mut current = source.to_owned();
    let mut removed = false;
    while let Some(span) = {
        let lines: Vec<&str> = current.split_inclusive('\n').collect();
        let logical = logical_lines(&lines);
        locate(&lines, &logical, name).map(|span| {
            let mut kept = lines[..span.start].concat();
            kept.push_str(&lines[span.end..].concat());
            kept
        })
    } {
        current = span;
        removed = true;
    }
    removed.then_some(current)
}

/// The function name in a pytest node id: `tests.py::TestX::test_y[1]` -> `TestX.test_y`.
pub fn function_name(test_id: &str) -> String {
    let without_file = match test_id.split_once("::") {
        Some((_, rest)) => rest,
        None => test_id,
    };
    strip_parameters_keep_class(without_file).replace("::", ".")
}

fn strip_parameters_keep_class(name: &str) -> &str {
    name.split('[').next().unwrap_or(name).trim()
}

/// `test_sum[case-1]` -> `test_sum`.
fn strip_parameters(name: &str) -> &str {
    let name = name.rsplit("::").next().unwrap_or(name);
    name.split('[').next().unwrap_or(name).trim()
}

/// Lines `[start, end)` of a function with its decorators; `def_line` is the `def` line.
struct Span {
    start: usize,
    def_line: usize,
    end: usize,
}

/// For each physical line, whether it starts a logical line (not inside a string or brackets).
pub(crate) fn logical_lines(lines: &[&str]) -> Vec<bool> {
    let mut starts = Vec::with_capacity(lines.len());
    let mut in_triple: Option<&'static str> = None;
    let mut depth: i32 = 0;
    for line in lines {
        starts.push(in_triple.is_none() && depth == 0);
        let mut rest: &str = line;
        while !rest.is_empty() {
            if let Some(quote) = in_triple {
                match rest.find(quote) {
                    Some(at) => {
                        rest = &rest[at + 3..];
                        in_triple = None;
                    }
                    None => rest = "",
                }
                continue;
            }
            let Some(c) = rest.chars().next() else { break };
            if let Some(quote) = ["\"\"\"", "'''"].into_iter().find(|q| rest.starts_with(q)) {
                in_triple = Some(quote);
                rest = &rest[3..];
            } else if c == '#' {
                rest = "";
            } else if c == '"' || c == '\'' {
                rest = skip_short_string(&rest[1..], c);
            } else {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth = (depth - 1).max(0),
                    _ => {}
                }
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    starts
}

fn skip_short_string(rest: &str, quote: char) -> &str {
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote || c == '\n' {
            return &rest[i + c.len_utf8()..];
        }
    }
    ""
}

/// Leading spaces and tabs of a line, in bytes.
pub(crate) fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

pub(crate) fn is_blank(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

fn defines(line: &str, name: &str) -> bool {
    let trimmed = line.trim_start();
    let rest = trimmed
        .strip_prefix("async def ")
        .or_else(|| trimmed.strip_prefix("def "));
    rest.is_some_and(|rest| {
        rest.strip_prefix(name)
            .is_some_and(|after| after.trim_start().starts_with('('))
    })
}

fn defines_class(line: &str, name: &str) -> bool {
    line.trim_start()
        .strip_prefix("class ")
        .and_then(|rest| rest.strip_prefix(name))
        .is_some_and(|after| after.starts_with([':', '(', ' ']))
}

/// The end (exclusive) of the block opened at `header`: the next logical line indented no deeper.
pub(crate) fn block_end(lines: &[&str], logical: &[bool], header: usize) -> usize {
    let indent = indentation(lines[header]);
    let mut end = header + 1;
    let mut last_body = header + 1;
    while end < lines.len() {
        if logical[end] && !is_blank(lines[end]) && indentation(lines[end]) <= indent {
            break;
        }
        if !is_blank(lines[end]) || !logical[end] {
            last_body = end + 1;
        }
        end += 1;
    }
    last_body.min(lines.len())
}

fn locate(lines: &[&str], logical: &[bool], name: &str) -> Option<Span> {
    let (range, function) = match name.split_once('.') {
        Some((class, method)) => {
            let header = (0..lines.len()).find(|&i| {
                logical[i] && indentation(lines[i]) == 0 && defines_class(lines[i], class)
            })?;
            ((header + 1, block_end(lines, logical, header)), method)
        }
        None => ((0, lines.len()), name),
    };
    let top_level = !name.contains('.');
    let def_line = (range.0..range.1).find(|&i| {
        logical[i] && defines(lines[i], function) && (!top_level || indentation(lines[i]) == 0)
    })?;
    let indent = indentation(lines[def_line]);
    let mut start = def_line;
    while start > range.0
        && logical[start - 1]
        && lines[start - 1].trim_start().starts_with('@')
        && indentation(lines[start - 1]) == indent
    {
        start -= 1;
    }
    Some(Span {
        start,
        def_line,
        end: block_end(lines, logical, def_line),
    })
}

/// Moves `source` so its least-indented line sits at `indent` spaces; ends with a newline.
fn reindent(source: &str, indent: usize) -> String {
    let lines: Vec<&str> = source.trim_matches('\n').lines().collect();
    let current = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indentation(l))
        .min()
        .unwrap_or(0);
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for line in lines {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            out.push_str(&pad);
            out.push_str(line.get(current..).unwrap_or_else(|| line.trim_start()));
            out.push('\n');
        }
    }
    out
}

pub(crate) fn add_imports(source: &str, imports: &[String]) -> String {
    let present: Vec<&str> = source.lines().map(str::trim).collect();
    let needed: Vec<&str> = imports
        .iter()
        .map(|i| i.trim())
        .filter(|i| !i.is_empty() && !present.contains(i))
        .collect();
    if needed.is_empty() {
        return source.to_owned();
    }
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let after = lines
        .iter()
        .rposition(|l| l.starts_with("import ") || l.starts_with("from "))
        .map_or(0, |i| i + 1);
    let mut out: String = lines[..after].concat();
    if after > 0 && !out.ends_with('\n') {
        out.push('\n');
    }
    for import in needed {
        out.push_str(import);
        out.push('\n');
    }
    out.push_str(&lines[after..].concat());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_definitions_are_removed_with_their_decorators() {
        let tests = "import pytest\n\ndef run_solution(d):\n    pass\n\n@pytest.fixture\ndef run_solution():\n    pass\n\ndef test_a(run_solution):\n    assert run_solution().returncode == 0\n";
        assert_eq!(
            remove_top_level_function(tests, "run_solution").as_deref(),
            Some(
                "import pytest\n\n\n\ndef test_a(run_solution):\n    assert run_solution().returncode == 0\n"
            )
        );
        let nested = "class T:\n    def run_solution(self):\n        pass\n";
        assert_eq!(remove_top_level_function(nested, "run_solution"), None);
    }

    const TESTS: &str = r#"import pytest


def test_total(run_solution):
    result = run_solution()
    assert result.outputs["total"] == 10


@pytest.mark.parametrize("n", [1, 2])
def test_param(run_solution, n):
    doc = """
def test_fake():
    pass
"""
    assert n


class TestEdges:
    def test_empty(self, run_solution):
        assert run_solution({"data": "empty.csv"}).returncode != 0

    def test_other(self):
        assert True


def test_last():
    assert (1 +
2) == 3
"#;

    fn patch(name: &str, source: &str) -> FunctionPatch {
        FunctionPatch {
            name: name.into(),
            source: source.into(),
        }
    }

    #[test]
    fn a_top_level_function_is_replaced_and_the_rest_is_untouched() {
        let report = splice_functions(
            TESTS,
            &[patch(
                "test_total",
                "def test_total(run_solution):\n    assert run_solution().outputs[\"total\"] == 12\n",
            )],
            &[],
        );
        assert_eq!(report.replaced, vec!["test_total"]);
        assert!(report.source.contains("== 12") && !report.source.contains("== 10"));
        let (before, after) = TESTS.split_once("def test_total").unwrap();
        assert!(report.source.starts_with(before));
        assert!(
            report
                .source
                .ends_with(&after[after.find("\n\n\n@pytest").unwrap()..])
        );
    }

    #[test]
    fn decorators_go_with_the_function_and_strings_are_not_code() {
        let report = splice_functions(
            TESTS,
            &[patch(
                "test_param[1]",
                "@pytest.mark.parametrize(\"n\", [3])\ndef test_param(run_solution, n):\n    assert n == 3\n",
            )],
            &[],
        );
        assert_eq!(report.replaced, vec!["test_param"]);
        assert_eq!(report.source.matches("parametrize").count(), 1);
        assert!(
            !report.source.contains("def test_fake"),
            "{}",
            report.source
        );
        assert!(report.source.contains("class TestEdges"));
    }

    #[test]
    fn methods_are_found_in_their_class_and_reindented() {
        let report = splice_functions(
            TESTS,
            &[patch(
                "TestEdges.test_empty",
                "def test_empty(self, run_solution):\n    assert run_solution({\"data\": \"e.csv\"}).returncode == 2\n",
            )],
            &[],
        );
        assert_eq!(report.replaced, vec!["TestEdges.test_empty"]);
        assert!(report.source.contains("    def test_empty(self, run_solution):\n        assert run_solution({\"data\": \"e.csv\"}).returncode == 2\n\n    def test_other"), "{}", report.source);
    }

    #[test]
    fn continuation_lines_stay_inside_the_function() {
        let report = splice_functions(
            TESTS,
            &[patch("test_last", "def test_last():\n    assert 3 == 3\n")],
            &[],
        );
        assert!(
            report
                .source
                .ends_with("def test_last():\n    assert 3 == 3\n"),
            "{}",
            report.source
        );
    }

    #[test]
    fn sources_and_names_are_found_from_node_ids() {
        assert_eq!(
            function_name("test_solution.py::TestEdges::test_empty[a-1]"),
            "TestEdges.test_empty"
        );
        assert_eq!(function_name("test_solution.py::test_total"), "test_total");
        let source = function_source(TESTS, "TestEdges.test_other").unwrap();
        assert_eq!(source, "    def test_other(self):\n        assert True\n");
        assert!(
            function_source(TESTS, "test_param")
                .unwrap()
                .starts_with("@pytest.mark")
        );
        assert!(function_source(TESTS, "nope").is_none());
    }

    #[test]
    fn unknown_names_are_reported_and_imports_added_once() {
        let report = splice_functions(
            TESTS,
            &[patch("test_nope", "def test_nope():\n    pass\n")],
            &["import math".to_owned(), "import pytest".to_owned()],
        );
        assert_eq!(report.missing, vec!["test_nope"]);
        assert!(report.source.starts_with("import pytest\nimport math\n"));
        assert_eq!(report.source.matches("import pytest").count(), 1);
    }
}

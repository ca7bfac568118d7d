//! What a test run's report says once: pytest and the harness print some facts more than once,
//! and every copy is prompt tokens a diagnosis pays for anew (`docs/notes/prompt-cache.md`).
//! - the lines of the test function's arguments that open a failure of the model's test
//!   (`run_solution = <function ...>`, `tmp_path = PosixPath(...)`): the prompt shows the test
//!   file, so they say nothing ([`without_funcargs`]);
//! - the standard error inside a `SolutionRun(...)` where pytest explains a failed assertion,
//!   when the report already shows each of its lines ([`with_shown_stderr_elided`]): a test that
//!   asserts `result.returncode == 0, result.stderr` shows the traceback as its message and again
//!   in that line; and that line itself, once its standard error is left out, when it only
//!   explains the exit code the assertion above it shows ([`without_crash_wheres`]);
//! - a run of lines a failure shares with a failure listed before it, such as the traceback of a
//!   crash on the samples that the harness's first test and the model's tests each print
//!   ([`without_runs_shown_before`]).
//!
//! Nothing is left out that the report does not show elsewhere: each elision names where.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::own_frames;

/// Fewest lines a repeated run must have to be replaced by a pointer to its first showing.
const RUN_MIN_LINES: usize = 3;

/// Fewest characters (of its lines without their indentation) a repeated run must have: more
/// than the line that points to it takes.
const RUN_MIN_CHARS: usize = 120;

/// A line of pytest's function arguments: `name = value`, several joined by `, ` when short.
static FUNCARG: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]* = \S").ok());

/// `output` without the block of the test function's arguments that opens it: the lines
/// before its first blank line, when each is pytest's `name = value`, and that blank line.
/// Any other opening is kept as it is.
pub(super) fn without_funcargs(output: &str) -> &str {
    let Some(funcarg) = FUNCARG.as_ref() else {
        return output;
    };
    let mut end = 0;
    for (args, line) in output.split_inclusive('\n').enumerate() {
        let text = line.trim_end();
        if text.is_empty() {
            return if args > 0 {
                &output[end + line.len()..]
            } else {
                output
            };
        }
        if !funcarg.is_match(text) {
            return output;
        }
        end += line.len();
    }
    output
}

/// A line as the report shows its content: without pytest's `E` marker and the indentation
/// around it, and without trailing white space.
fn content(line: &str) -> &str {
    let text = line.trim();
    match text.strip_prefix('E') {
        Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => rest.trim(),
        _ => text,
    }
}

/// Whether a line is only the carets and tildes Python prints under an expression (the
/// report may show them or not; either way they carry nothing to look up).
pub(super) fn is_marks(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| matches!(c, '^' | '~'))
}

/// What pytest puts before the message of a failed `assert ..., message`.
const MESSAGE_OPENING: &str = "AssertionError: ";

/// The contents ([`content`]) of the lines of `outputs`, for [`with_shown_stderr_elided`]; a
/// message's first line counts also without pytest's [`MESSAGE_OPENING`].
pub(super) fn shown_lines<'o>(outputs: impl IntoIterator<Item = &'o str>) -> HashSet<&'o str> {
    outputs
        .into_iter()
        .flat_map(str::lines)
        .map(content)
        .filter(|c| !c.is_empty())
        .flat_map(|c| [Some(c), c.strip_prefix(MESSAGE_OPENING)])
        .flatten()
        .collect()
}

/// `output` with the `stderr='...'` of each `SolutionRun(...)` it shows replaced by a note
/// that it is shown above, when every line of that text (but blank and caret lines, and with
/// its frames as the report shows them: [`own_frames`]) is among `shown`
/// ([`shown_lines`] of this output and those before it). A text whose quoting this
/// cannot read, or with a line shown nowhere else, is kept whole.
pub(super) fn with_shown_stderr_elided(output: &str, shown: &HashSet<&str>) -> String {
    const OPEN: &str = "SolutionRun(";
    const FIELD: &str = "stderr=";
    let mut kept = String::with_capacity(output.len());
    let mut rest = output;
    while let Some(at) = rest.find(OPEN) {
        let (before, from) = rest.split_at(at);
        kept.push_str(before);
        let Some(field) = from.find(FIELD).filter(|f| !from[..*f].contains('\n')) else {
            kept.push_str(OPEN);
            rest = &from[OPEN.len()..];
            continue;
        };
        let literal_at = field + FIELD.len();
        match python_string(&from[literal_at..]) {
            Some((text, len))
                if !text.trim().is_empty() && all_shown(&own_frames::shown(&text), shown) =>
            {
                kept.push_str(&from[..literal_at]);
                kept.push_str(STDERR_SHOWN_ABOVE);
                rest = &from[literal_at + len..];
            }
            _ => {
                kept.push_str(&from[..literal_at]);
                rest = &from[literal_at..];
            }
        }
    }
    kept.push_str(rest);
    kept
}

/// What [`with_shown_stderr_elided`] puts in place of a standard error the report shows.
const STDERR_SHOWN_ABOVE: &str = "<the standard error shown above>";

/// pytest's line explaining a failed `assert result.returncode == 0` by the run's fields
/// (`+  where 1 = SolutionRun(returncode=1, outputs={...}, stderr=...).returncode`).
static RETURNCODE_WHERE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\+\s+where -?\d+ = SolutionRun\(.*\)\.returncode$").ok());

/// `output` without pytest's `where N = SolutionRun(...).returncode` lines whose standard error
/// [`with_shown_stderr_elided`] left out: the assertion above says the exit code, the report
/// shows the crash, and what is left are the outputs a crashed run left behind.
pub(super) fn without_crash_wheres(output: String) -> String {
    let Some(where_line) = RETURNCODE_WHERE.as_ref() else {
        return output;
    };
    let is_crash_where = |line: &str| {
        let text = content(line);
        text.contains(STDERR_SHOWN_ABOVE) && where_line.is_match(text)
    };
    if !output.lines().any(is_crash_where) {
        return output;
    }
    output
        .split_inclusive('\n')
        .filter(|line| !is_crash_where(line))
        .collect()
}

fn all_shown(text: &str, shown: &HashSet<&str>) -> bool {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !is_marks(l))
        .all(|l| shown.contains(l))
}

/// The Python string literal (`repr` of a `str`) that `source` begins with: its text and its
/// length in `source`. None when `source` does not begin with one or an escape is not one
/// `repr` writes.
fn python_string(source: &str) -> Option<(String, usize)> {
    let mut chars = source.char_indices();
    let (_, quote) = chars.next().filter(|(_, c)| matches!(c, '\'' | '"'))?;
    let mut text = String::new();
    while let Some((at, c)) = chars.next() {
        if c == quote {
            return Some((text, at + c.len_utf8()));
        }
        if c == '\n' {
            return None;
        }
        if c != '\\' {
            text.push(c);
            continue;
        }
        let (_, escape) = chars.next()?;
        match escape {
            'n' => text.push('\n'),
            't' => text.push('\t'),
            'r' => text.push('\r'),
            '\\' | '\'' | '"' => text.push(escape),
            'x' | 'u' | 'U' => {
                let digits = match escape {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.by_ref().take(digits).map(|(_, d)| d).collect();
                let code = u32::from_str_radix(&hex, 16).ok()?;
                text.push(char::from_u32(code)?);
            }
            _ => return None,
        }
    }
    None
}

/// Each output of `failures` (test id, output, in the report's order) with every run of lines
/// it shares with an output before it replaced by one line saying where it was shown: a run
/// of at least [`RUN_MIN_LINES`] non-blank lines and [`RUN_MIN_CHARS`] characters whose
/// contents ([`content`]) match line for line. The first output is kept whole.
pub(super) fn without_runs_shown_before(failures: &[(&str, String)]) -> Vec<String> {
    let mut kept_outputs: Vec<String> = Vec::with_capacity(failures.len());
    // The contents of the earlier outputs as kept, so a pointer names the output that shows the
    // lines, never one that points on.
    let mut contents: Vec<Vec<String>> = Vec::with_capacity(failures.len());
    for (_, output) in failures {
        let lines: Vec<&str> = output.split_inclusive('\n').collect();
        let mine: Vec<&str> = lines.iter().map(|l| content(l)).collect();
        let mut kept = String::with_capacity(output.len());
        let mut p = 0;
        while p < lines.len() {
            if let Some((len, j)) = longest_shared_run(&mine[p..], &contents) {
                kept.push_str(lead(lines[p]));
                for piece in [
                    "(the ",
                    &len.to_string(),
                    " lines shown under `",
                    failures[j].0,
                    "` above)\n",
                ] {
                    kept.push_str(piece);
                }
                p += len;
            } else {
                kept.push_str(lines[p]);
                p += 1;
            }
        }
        contents.push(
            kept.split_inclusive('\n')
                .map(|l| content(l).to_owned())
                .collect(),
        );
        kept_outputs.push(kept);
    }
    kept_outputs
}

/// What opens `line` before its [`content`]: indentation and pytest's `E` marker.
fn lead(line: &str) -> &str {
    let start = content(line).as_ptr() as usize - line.as_ptr() as usize;
    &line[..start.min(line.len())]
}

/// The longest run at the start of `lines` that some earlier output holds line for line, long
/// enough to replace: its length and the earlier output's index.
fn longest_shared_run(lines: &[&str], earlier: &[Vec<String>]) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for (j, other) in earlier.iter().enumerate() {
        for q in 0..other.len() {
            let len = lines
                .iter()
                .zip(&other[q..])
                .take_while(|(a, b)| !a.is_empty() && **a == b.as_str())
                .count();
            if best.is_none_or(|(l, _)| len > l) {
                best = Some((len, j));
            }
        }
    }
    best.filter(|(len, _)| {
        *len >= RUN_MIN_LINES
            && lines[..*len].iter().map(|l| l.len()).sum::<usize>() >= RUN_MIN_CHARS
    })
}

#[cfg(test)]
mod tests {
    use super::{
        python_string, shown_lines, with_shown_stderr_elided, without_crash_wheres,
        without_funcargs, without_runs_shown_before,
    };

    /// A crash on the samples as the harness's first test and two of the model's tests report
    /// it (pytest 9, `verbosity_assertions=2`, the test file's echoed lines already left out).
    const HARNESS: &str = "solution.py exited with 1 on the sample data:\nTraceback (most recent call last):\n  File \"/var/task/solution.py\", line 5, in <module>\n    main()\n  File \"/var/task/solution.py\", line 4, in main\n    return x[\"it's\"]\n           ~^^^^^^^^\nKeyError: \"it's\"\n";
    const WITH_MESSAGE: &str = "run_solution = <function run_solution.<locals>.run at 0x…>\ntmp_path = PosixPath('/tmp/pytest-of-root/pytest-0/test_b0')\n\n>       assert result.returncode == 0, result.stderr\nE       AssertionError: Traceback (most recent call last):\nE           File \"/var/task/solution.py\", line 5, in <module>\nE             main()\nE           File \"/var/task/solution.py\", line 4, in main\nE             return x[\"it's\"]\nE                    ~^^^^^^^^\nE         KeyError: \"it's\"\nE         \nE       assert 1 == 0\nE        +  where 1 = SolutionRun(returncode=1, outputs={'total': None}, stderr='Traceback (most recent call last):\\n  File \"/var/task/solution.py\", line 5, in <module>\\n    main()\\n  File \"/var/task/solution.py\", line 4, in main\\n    return x[\"it\\'s\"]\\n           ~^^^^^^^^\\nKeyError: \"it\\'s\"\\n').returncode\n\ntest_solution.py:8: AssertionError\n";
    const BARE: &str = "run_solution = <function run_solution.<locals>.run at 0x…>\n\n>       assert result.returncode == 0\nE       assert 1 == 0\nE        +  where 1 = SolutionRun(returncode=1, outputs={'total': None}, stderr='Traceback (most recent call last):\\n  File \"/var/task/solution.py\", line 9, in <module>\\nValueError: bad row\\n').returncode\n\ntest_solution.py:11: AssertionError\n";

    #[test]
    fn the_test_function_s_arguments_are_dropped_and_nothing_else() {
        assert!(without_funcargs(WITH_MESSAGE).starts_with(">       assert result.returncode"));
        assert!(without_funcargs(BARE).starts_with(">       assert result.returncode"));
        assert_eq!(
            without_funcargs("a = 1, b = PosixPath('/tmp/x')\n\n> assert f()\n"),
            "> assert f()\n"
        );
        for kept in [
            HARNESS,
            "x = 1\nnot an argument line\n\nrest\n",
            "\nx = 1\n\nrest\n",
            "run_solution = <function run>\n",
            "",
        ] {
            assert_eq!(without_funcargs(kept), kept);
        }
    }

    #[test]
    fn python_reprs_of_strings_are_read_back() {
        assert_eq!(
            python_string(r"'it\'s\n\ta\\b \x1b \u00e9' tail"),
            Some(("it's\n\ta\\b \u{1b} é".to_owned(), 27))
        );
        assert_eq!(
            python_string(r#""it's" tail"#),
            Some(("it's".to_owned(), 6))
        );
        assert_eq!(python_string("'unclosed"), None);
        assert_eq!(python_string(r"'\q'"), None);
        assert_eq!(python_string("no quote"), None);
    }

    #[test]
    fn a_solution_run_s_standard_error_is_elided_only_where_every_line_is_shown() {
        let shown = shown_lines([WITH_MESSAGE]);
        let elided = with_shown_stderr_elided(WITH_MESSAGE, &shown);
        assert!(elided.contains(
            "where 1 = SolutionRun(returncode=1, outputs={'total': None}, stderr=<the standard error shown above>).returncode\n"
        ), "{elided}");
        assert!(
            elided.contains("E         KeyError: \"it's\"\n"),
            "the message stays"
        );
        // The bare assertion's traceback is shown nowhere else: kept whole, even beside another
        // failure's lines.
        let shown = shown_lines([HARNESS, BARE]);
        assert_eq!(with_shown_stderr_elided(BARE, &shown), BARE);
        // The same crash as the harness's: every line shown above.
        let same = BARE.replace(
            r"line 9, in <module>\nValueError: bad row",
            r#"line 4, in main\nKeyError: \"it\'s\""#,
        );
        let shown = shown_lines([HARNESS, same.as_str()]);
        assert!(
            with_shown_stderr_elided(&same, &shown)
                .contains("stderr=<the standard error shown above>)")
        );
        // An empty text, or one whose quoting cannot be read, is kept.
        for kept in [
            "where 1 = SolutionRun(returncode=1, outputs={}, stderr='').returncode\n",
            "where 1 = SolutionRun(returncode=1, outputs={}, stderr='KeyError: \\q').returncode\n",
            "SolutionRun(\nstderr='KeyError')\n",
        ] {
            let shown = shown_lines([HARNESS, kept]);
            assert_eq!(with_shown_stderr_elided(kept, &shown), kept);
        }
    }

    #[test]
    fn the_exit_code_s_where_line_goes_only_once_its_standard_error_is_shown_above() {
        let elided = with_shown_stderr_elided(WITH_MESSAGE, &shown_lines([WITH_MESSAGE]));
        assert_eq!(
            without_crash_wheres(elided.clone()),
            elided.replace(
                "E        +  where 1 = SolutionRun(returncode=1, outputs={'total': None}, stderr=<the standard error shown above>).returncode\n",
                ""
            )
        );
        assert!(without_crash_wheres(elided).contains("E       assert 1 == 0\n"));
        // A standard error shown nowhere else keeps its line, and so does a `where` line that
        // explains another field than the exit code.
        assert_eq!(without_crash_wheres(BARE.to_owned()), BARE);
        let outputs = "E       assert None == 3\nE        +  where None = SolutionRun(returncode=1, outputs={'total': None}, stderr=<the standard error shown above>).outputs['total']\n";
        assert_eq!(without_crash_wheres(outputs.to_owned()), outputs);
    }

    #[test]
    fn a_run_of_lines_shown_under_an_earlier_failure_is_said_once() {
        let failures = [
            ("test_contract.py::test_runs", HARNESS.to_owned()),
            (
                "test_solution.py::test_b",
                without_funcargs(WITH_MESSAGE).to_owned(),
            ),
            (
                "test_solution.py::test_c",
                without_funcargs(BARE).to_owned(),
            ),
        ];
        let outputs = without_runs_shown_before(&failures);
        assert_eq!(outputs[0], HARNESS, "the first is kept whole");
        assert_eq!(
            outputs[1],
            ">       assert result.returncode == 0, result.stderr\nE       AssertionError: Traceback (most recent call last):\nE           (the 6 lines shown under `test_contract.py::test_runs` above)\nE         \nE       assert 1 == 0\n".to_owned()
                + WITH_MESSAGE.lines().nth(13).unwrap_or_default()
                + "\n\ntest_solution.py:8: AssertionError\n"
        );
        assert_eq!(outputs[2], failures[2].1, "nothing of it was shown before");
        // Short runs stay: two lines, or three short ones.
        let failures = [
            (
                "a",
                "x = 1\nsame line one, long enough to count\nsame line two\n".to_owned(),
            ),
            (
                "b",
                "same line one, long enough to count\nsame line two\nother\n".to_owned(),
            ),
            ("c", "E   p\nE   q\nE   r\n".to_owned()),
            ("d", "p\nq\nr\n".to_owned()),
        ];
        let outputs = without_runs_shown_before(&failures);
        for (output, (_, given)) in outputs.iter().zip(&failures) {
            assert_eq!(output, given);
        }
    }
}

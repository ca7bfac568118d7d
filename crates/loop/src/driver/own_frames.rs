//! A Python traceback as the report shows it: the frames of the files the run wrote (the script,
//! the tests) as printed, each run of frames inside an installed package or the standard library
//! said in one line that names them (`(9 frames inside pandas)`). A crash in a `groupby` printed
//! 21 lines of which 14 were pandas' own files under the environment's path, all new to the
//! prompt cache and none of them the script's to fix (`docs/notes/prompt-cache.md`); the
//! script's frames and the exception say where and what. A frame whose next frame is on the same
//! line of the same file (a generator expression, a lambda or a comprehension called from it)
//! is shown by its header alone: Python prints that source line, often the longest of the
//! script, once for each of them.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// A frame's header in a Python traceback, with whatever stands before `File` (pytest's `E`
/// marker and the indentation): `  File "/x/solution.py", line 12, in main`.
static FRAME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"^(?P<lead>(?:E)?\s*)File "(?P<path>[^"]+)", line (?P<line>\d+), in "#).ok()
});

/// A path under an interpreter's library: the standard library (`/usr/lib/python3.11/`) or an
/// environment's packages (`.../lib/python3.11/site-packages/`).
static LIBRARY_DIR: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"/lib/python\d[^/]*/(?:(?:site|dist)-packages/)?").ok());

/// `output` as the report shows a traceback: its library frames said in one line
/// ([`without_library_frames`]) and a source line the next frame shows not shown before it
/// ([`without_repeated_sources`]).
pub(super) fn shown(output: &str) -> Cow<'_, str> {
    match without_library_frames(output) {
        Cow::Borrowed(kept) => without_repeated_sources(kept),
        Cow::Owned(kept) => without_repeated_sources(&kept).into_owned().into(),
    }
}

/// `output` without the source line (and carets) of each frame followed, at the same
/// indentation, by a frame of the same file and line that shows it: the later frame's carets
/// point inside the line.
pub(super) fn without_repeated_sources(output: &str) -> Cow<'_, str> {
    rewritten(output, |lines, i, shown| {
        let frame = frame_at(lines[i])?;
        let end = frame_end(lines, i + 1, frame.depth);
        let next_shows_it = end > i + 1
            && lines.get(end).and_then(|l| frame_at(l)).map(FrameAt::place) == Some(frame.place())
            && frame_end(lines, end + 1, frame.depth) > end + 1;
        if !next_shows_it {
            return None;
        }
        shown.push_str(lines[i]);
        Some(end)
    })
}

/// A frame's header ([`FRAME`]): what stands before `File`, the indentation that gives, the
/// file and the line.
#[derive(Clone, Copy)]
struct FrameAt<'l> {
    lead: &'l str,
    depth: usize,
    path: &'l str,
    line: &'l str,
}

impl<'l> FrameAt<'l> {
    /// Where the frame is: its indentation, file and line (not how pytest marked it).
    fn place(self) -> (usize, &'l str, &'l str) {
        (self.depth, self.path, self.line)
    }
}

fn frame_at(line: &str) -> Option<FrameAt<'_>> {
    let header = FRAME.as_ref()?.captures(line)?;
    let lead = header.name("lead")?.as_str();
    Some(FrameAt {
        lead,
        depth: indentation(lead).0,
        path: header.name("path")?.as_str(),
        line: header.name("line")?.as_str(),
    })
}

/// `output` with each run of library frames ([`library_package`]) replaced by one line at the
/// first frame's indentation. Lines that are no frame, and the frames of other files, are kept
/// as they are.
pub(super) fn without_library_frames(output: &str) -> Cow<'_, str> {
    rewritten(output, |lines, mut i, shown| {
        let (first, package) = library_frame(lines[i])?;
        let mut packages = vec![package];
        let mut frames = 0;
        loop {
            frames += 1;
            i = frame_end(lines, i + 1, first.depth);
            match lines.get(i).and_then(|l| library_frame(l)) {
                Some((next, package)) if next.depth == first.depth => {
                    if !packages.contains(&package) {
                        packages.push(package);
                    }
                }
                _ => break,
            }
        }
        let noun = if frames == 1 { "frame" } else { "frames" };
        for piece in [first.lead, "(", &frames.to_string(), " ", noun, " inside "] {
            shown.push_str(piece);
        }
        shown.push_str(&packages.join(", "));
        shown.push_str(")\n");
        Some(i)
    })
}

/// `output` rewritten from line to line of its tracebacks: `step`, given the lines and an
/// index, either writes what the report shows of the lines from there on and returns the
/// index after them, or returns `None` and the line is kept as it is. Borrowed when nothing
/// changed (and when `output` has no frame at all, without looking further).
fn rewritten(
    output: &str,
    mut step: impl FnMut(&[&str], usize, &mut String) -> Option<usize>,
) -> Cow<'_, str> {
    if !output.contains("File \"") {
        return output.into();
    }
    let lines: Vec<&str> = output.split_inclusive('\n').collect();
    let mut shown = String::with_capacity(output.len());
    let mut i = 0;
    while i < lines.len() {
        if let Some(next) = step(&lines, i, &mut shown) {
            i = next;
        } else {
            shown.push_str(lines[i]);
            i += 1;
        }
    }
    if shown == output {
        output.into()
    } else {
        shown.into()
    }
}

/// The header of `line` and its package, when it is the header of a library frame
/// ([`library_package`]).
fn library_frame(line: &str) -> Option<(FrameAt<'_>, &str)> {
    let frame = frame_at(line)?;
    Some((frame, library_package(frame.path)?))
}

/// The columns a line's content starts at, after pytest's `E` marker if any, and the content.
fn indentation(line: &str) -> (usize, &str) {
    let text = line.strip_prefix('E').unwrap_or(line);
    let body = text.trim_start();
    (text.len() - body.len(), body)
}

/// The index of the first line from `from` on that is not part of a frame whose header is
/// indented `depth`: its source line and carets are indented further.
fn frame_end(lines: &[&str], mut from: usize, depth: usize) -> usize {
    while let Some(line) = lines.get(from) {
        let (indent, body) = indentation(line);
        if body.trim_end().is_empty() || indent <= depth {
            break;
        }
        from += 1;
    }
    from
}

/// The endings of the Cython sources a compiled module's frames name (`pandas/_libs/index.pyx`,
/// `pandas/_libs/hashtable_class_helper.pxi`): paths inside the package, never a file the run
/// wrote.
const COMPILED_SOURCES: [&str; 3] = [".pyx", ".pxi", ".pxd"];

/// The top-level package a frame's `path` is in, when the path is library code: under an
/// interpreter's library ([`LIBRARY_DIR`]), a compiled module's source ([`COMPILED_SOURCES`])
/// or a frozen module (`<frozen importlib._bootstrap>`). `None` for any other file.
fn library_package(path: &str) -> Option<&str> {
    if let Some(frozen) = path.strip_prefix("<frozen ") {
        return frozen.trim_end_matches('>').split('.').next();
    }
    let rest = match LIBRARY_DIR.as_ref().and_then(|d| d.find(path)) {
        Some(dir) => &path[dir.end()..],
        None if COMPILED_SOURCES.iter().any(|ext| path.ends_with(ext)) => {
            path.trim_start_matches('/')
        }
        None => return None,
    };
    let first = rest.split('/').next().filter(|p| !p.is_empty())?;
    Some(first.strip_suffix(".py").unwrap_or(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUPBY_CRASH: &str = r#"Traceback (most recent call last):
  File "/sandbox/solution.py", line 58, in <module>
    main()
  File "/sandbox/solution.py", line 41, in main
    minutes = grouped["end"] - grouped["start"]
              ~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~
  File "/root/.cache/autocoder/envs/3f2a/lib/python3.11/site-packages/pandas/core/ops/common.py", line 76, in new_method
    return method(self, other)
           ^^^^^^^^^^^^^^^^^^^
  File "/root/.cache/autocoder/envs/3f2a/lib/python3.11/site-packages/pandas/core/arraylike.py", line 194, in __sub__
    return self._arith_method(other, operator.sub)
  File "/root/.cache/autocoder/envs/3f2a/lib/python3.11/site-packages/numpy/core/fromnumeric.py", line 9, in f
    raise TypeError(msg)
TypeError: unsupported operand type(s) for -: 'SeriesGroupBy' and 'SeriesGroupBy'
"#;

    #[test]
    fn a_run_of_library_frames_becomes_one_line_naming_its_packages() {
        let shown = without_library_frames(GROUPBY_CRASH);
        assert_eq!(
            shown,
            r#"Traceback (most recent call last):
  File "/sandbox/solution.py", line 58, in <module>
    main()
  File "/sandbox/solution.py", line 41, in main
    minutes = grouped["end"] - grouped["start"]
              ~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~
  (3 frames inside pandas, numpy)
TypeError: unsupported operand type(s) for -: 'SeriesGroupBy' and 'SeriesGroupBy'
"#
        );
    }

    #[test]
    fn frames_under_pytest_s_marker_keep_the_marker_and_the_script_s_frames_stay() {
        let output = concat!(
            "E       AssertionError: Traceback (most recent call last):\n",
            "E           File \"/sandbox/solution.py\", line 12, in main\n",
            "E             df = pd.read_csv(path)\n",
            "E           File \"/usr/lib/python3.11/csv.py\", line 3, in reader\n",
            "E             raise Error(x)\n",
            "E           File \"pandas/_libs/parsers.pyx\", line 890, in pandas._libs.parsers.TextReader.read\n",
            "E           File \"pandas/_libs/hashtable_class_helper.pxi\", line 7726, in pandas._libs.hashtable.PyObjectHashTable.get_item\n",
            "E         _csv.Error: field larger than field limit\n",
            "E       assert 1 == 0\n",
        );
        assert_eq!(
            without_library_frames(output),
            concat!(
                "E       AssertionError: Traceback (most recent call last):\n",
                "E           File \"/sandbox/solution.py\", line 12, in main\n",
                "E             df = pd.read_csv(path)\n",
                "E           (3 frames inside csv, pandas)\n",
                "E         _csv.Error: field larger than field limit\n",
                "E       assert 1 == 0\n",
            )
        );
    }

    #[test]
    fn a_script_frame_between_library_frames_splits_them() {
        let output = concat!(
            "  File \"/x/lib/python3.12/site-packages/pandas/core/apply.py\", line 1, in agg\n",
            "    f(x)\n",
            "  File \"/sandbox/solution.py\", line 9, in <lambda>\n",
            "    return x.total / x.count\n",
            "  File \"<frozen importlib._bootstrap>\", line 1, in _find_and_load\n",
            "ZeroDivisionError: division by zero\n",
        );
        assert_eq!(
            without_library_frames(output),
            concat!(
                "  (1 frame inside pandas)\n",
                "  File \"/sandbox/solution.py\", line 9, in <lambda>\n",
                "    return x.total / x.count\n",
                "  (1 frame inside importlib)\n",
                "ZeroDivisionError: division by zero\n",
            )
        );
    }

    #[test]
    fn a_frame_on_the_line_its_next_frame_shows_keeps_only_its_header() {
        let output = concat!(
            "E           File \"/sandbox/solution.py\", line 50, in compute\n",
            "E             return [f(r) for r in rows]\n",
            "E                    ^^^^^^^^^^^^^^^^^^^^\n",
            "E           File \"/sandbox/solution.py\", line 50, in <listcomp>\n",
            "E             return [f(r) for r in rows]\n",
            "E                     ^^^^\n",
            "E           File \"/sandbox/solution.py\", line 12, in f\n",
            "E             return r / 0\n",
            "E           File \"/sandbox/solution.py\", line 12, in g\n",
            "E         ZeroDivisionError: division by zero\n",
        );
        // The outer frame's line and carets go; the inner frame's, and `f`'s (whose next frame
        // shows no line), stay.
        let outer = concat!(
            "E             return [f(r) for r in rows]\n",
            "E                    ^^^^^^^^^^^^^^^^^^^^\n",
        );
        assert!(output.contains(outer));
        assert_eq!(
            without_repeated_sources(output),
            output.replacen(outer, "", 1),
            "a frame whose next frame shows no line keeps its own"
        );
        // Another file, or another line, is another source line.
        let other = "  File \"/sandbox/solution.py\", line 5, in main\n    run()\n  File \"/sandbox/helpers.py\", line 5, in run\n    run()\n  File \"/sandbox/helpers.py\", line 6, in run\n    x()\nNameError: x\n";
        assert!(matches!(without_repeated_sources(other), Cow::Borrowed(_)));
    }

    #[test]
    fn library_frames_and_repeated_lines_are_both_left_out_by_shown() {
        let lambda = "  File \"/sandbox/solution.py\", line 41, in <lambda>\n    minutes = grouped[\"end\"] - grouped[\"start\"]\n";
        let output = GROUPBY_CRASH.replace(
            "              ~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~\n",
            &format!("              ~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~\n{lambda}"),
        );
        let kept = shown(&output);
        assert_eq!(
            kept,
            format!(
                "Traceback (most recent call last):\n  File \"/sandbox/solution.py\", line 58, in <module>\n    main()\n  File \"/sandbox/solution.py\", line 41, in main\n{lambda}  (3 frames inside pandas, numpy)\nTypeError: unsupported operand type(s) for -: 'SeriesGroupBy' and 'SeriesGroupBy'\n"
            )
        );
    }

    #[test]
    fn an_output_with_no_library_frame_is_returned_as_it_is() {
        let output = "  File \"/sandbox/solution.py\", line 3, in main\n    x = 1 / 0\nZeroDivisionError: division by zero\n";
        assert!(matches!(without_library_frames(output), Cow::Borrowed(_)));
        assert!(matches!(
            without_library_frames("error: 'product_id'\n"),
            Cow::Borrowed(_)
        ));
    }
}

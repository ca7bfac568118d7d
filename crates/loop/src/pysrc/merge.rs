//! Merges a code fix given as pieces into the script. Asked for "only the functions you change",
//! a model answers with one or two whole functions, maybe new imports, maybe the `__main__`
//! block: each top-level piece replaces the one of the same name in the script, new functions go
//! before the `__main__` block, and new imports join the script's. An answer that is a whole
//! script (it has the `__main__` block and every function of the script) replaces the script.
//!
//! Small models copy a 60-line script unchanged more readily than they rewrite one function of
//! it; a short answer about the function at fault is also cheaper to generate.

use crate::protocol::FunctionPatch;
use crate::pysrc::splice::{add_imports, block_end, indentation, is_blank, logical_lines};

/// What a top-level piece of a Python file is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Import,
    /// A function or class, by name.
    Definition(String),
    /// `if __name__ == "__main__":` and its block.
    Main,
    /// `NAME = ...` at the top level.
    Assignment(String),
    Other,
}

/// One top-level piece: lines `[start, end)`, decorators included.
#[derive(Debug, Clone)]
struct Piece {
    kind: Kind,
    start: usize,
    end: usize,
}

/// The script with `answer`'s pieces merged in, or why nothing could be taken from it.
pub fn merge_into_script(script: &str, answer: &str) -> Result<String, String> {
    let answer_lines: Vec<&str> = answer.split_inclusive('\n').collect();
    let answer_pieces = pieces(&answer_lines);
    let text = |p: &Piece| answer_lines[p.start..p.end].concat();
    let script_lines: Vec<&str> = script.split_inclusive('\n').collect();
    let script_pieces = pieces(&script_lines);
    let has_main = answer_pieces.iter().any(|p| p.kind == Kind::Main);
    let covers_every_definition = script_pieces.iter().all(|s| match &s.kind {
        Kind::Definition(_) => answer_pieces.iter().any(|a| a.kind == s.kind),
        _ => true,
    });
    if has_main && covers_every_definition {
        return Ok(answer.to_owned());
    }
    // A top-level `NAME = ...` replaces the script's constant of that name; one the script does
    // not have is a line from inside a function, which would break the module if added.
    let takes = |kind: &Kind| match kind {
        Kind::Definition(_) | Kind::Main => true,
        Kind::Assignment(_) => script_pieces.iter().any(|s| s.kind == *kind),
        Kind::Import | Kind::Other => false,
    };
    if !answer_pieces.iter().any(|p| takes(&p.kind)) {
        return Err("it has no whole function (a `def` line and its body) to put in".to_owned());
    }
    let mut merged = script.to_owned();
    for piece in answer_pieces.iter().filter(|p| takes(&p.kind)) {
        merged = put(&merged, &piece.kind, &text(piece));
    }
    let imports: Vec<String> = answer_pieces
        .iter()
        .filter(|p| p.kind == Kind::Import)
        .map(|p| text(p).trim_end().to_owned())
        .collect();
    Ok(add_imports(&merged, &imports))
}

/// The top-level functions and classes of `answer`, and its import lines: a test fix given as
/// a code block rather than as JSON.
pub fn definitions_and_imports(answer: &str) -> (Vec<FunctionPatch>, Vec<String>) {
    let lines: Vec<&str> = answer.split_inclusive('\n').collect();
    let mut definitions = Vec::new();
    let mut imports = Vec::new();
    for piece in pieces(&lines) {
        let text = lines[piece.start..piece.end].concat().trim_end().to_owned();
        match piece.kind {
            Kind::Definition(name) => definitions.push(FunctionPatch { name, source: text }),
            Kind::Import => imports.push(text),
            Kind::Main | Kind::Assignment(_) | Kind::Other => {}
        }
    }
    (definitions, imports)
}

/// `fixed` kept to the one function `function` of `script`: `script` with `fixed`'s version of
/// that function, the functions `fixed` adds and its imports, and every other function of
/// `script` as it was. `None` when `fixed` has no function of that name.
pub fn keep_to_function(script: &str, fixed: &str, function: &str) -> Option<String> {
    let (ours, _) = definitions_and_imports(script);
    let (theirs, imports) = definitions_and_imports(fixed);
    if !theirs.iter().any(|d| d.name == function) {
        return None;
    }
    let kept: Vec<String> = theirs
        .into_iter()
        .filter(|d| d.name == function || !ours.iter().any(|o| o.name == d.name))
        .map(|d| d.source)
        .collect();
    let answer = format!("{}\n\n\n{}\n", imports.join("\n"), kept.join("\n\n\n"));
    merge_into_script(script, &answer).ok()
}

/// `script` with the piece of `kind` replaced by `text`, or `text` added where it belongs.
fn put(script: &str, kind: &Kind, text: &str) -> String {
    let lines: Vec<&str> = script.split_inclusive('\n').collect();
    let found = pieces(&lines);
    let body = format!("{}\n", text.trim_end_matches('\n'));
    if let Some(old) = found.iter().find(|p| p.kind == *kind) {
        return [lines[..old.start].concat(), body, lines[old.end..].concat()].concat();
    }
    let at = match kind {
        Kind::Main => lines.len(),
        _ => found
            .iter()
            .find(|p| p.kind == Kind::Main)
            .map_or(lines.len(), |p| p.start),
    };
    let mut before = lines[..at].concat();
    if !before.is_empty() && !before.ends_with('\n') {
        before.push('\n');
    }
    [
        before,
        "\n\n".to_owned(),
        body,
        "\n\n".to_owned(),
        lines[at..].concat(),
    ]
    .concat()
}

/// The top-level pieces of a file, in order; blank lines and comments between them belong to none.
fn pieces(lines: &[&str]) -> Vec<Piece> {
    let logical = logical_lines(lines);
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        if !logical[at] || is_blank(lines[at]) || indentation(lines[at]) > 0 {
            at += 1;
            continue;
        }
        let start = at;
        let mut header = at;
        while header < lines.len() && lines[header].starts_with('@') {
            header = block_end(lines, &logical, header).max(header + 1);
        }
        let header = header.min(lines.len().saturating_sub(1));
        let end = block_end(lines, &logical, header).max(header + 1);
        found.push(Piece {
            kind: kind_of(lines[header]),
            start,
            end,
        });
        at = end;
    }
    found
}

fn kind_of(line: &str) -> Kind {
    let line = line.trim_end();
    if line.starts_with("import ") || line.starts_with("from ") {
        return Kind::Import;
    }
    if line.starts_with("if __name__") {
        return Kind::Main;
    }
    let definition = line
        .strip_prefix("async def ")
        .or_else(|| line.strip_prefix("def "))
        .or_else(|| line.strip_prefix("class "));
    if let Some(rest) = definition {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        return Kind::Definition(name);
    }
    let name: String = line
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let rest = line[name.len()..].trim_start();
    if !name.is_empty() && rest.starts_with('=') && !rest.starts_with("==") {
        return Kind::Assignment(name);
    }
    Kind::Other
}

#[cfg(test)]
mod tests {
    use super::{definitions_and_imports, keep_to_function, merge_into_script};

    const SCRIPT: &str = r#"import argparse
import os

OUTPUT_DIR = "/var/outputs"


@cache
def compute(path):
    """Counts
    lines."""
    return len(open(path).read().splitlines())


def main():
    args = argparse.ArgumentParser().parse_args()
    print(compute(args.path))


if __name__ == "__main__":
    main()
"#;

    #[test]
    fn a_changed_function_replaces_its_old_version_and_nothing_else() {
        let answer = "import sys\n\ndef compute(path):\n    with open(path) as f:\n        return sum(1 for _ in f)\n";
        let merged = merge_into_script(SCRIPT, answer).unwrap();
        assert!(merged.contains("import os\nimport sys\n"), "{merged}");
        assert!(merged.contains("def compute(path):\n    with open(path) as f:\n        return sum(1 for _ in f)\n\n\ndef main():"), "{merged}");
        assert!(
            !merged.contains("@cache") && !merged.contains("splitlines"),
            "{merged}"
        );
        assert!(
            merged.ends_with("if __name__ == \"__main__\":\n    main()\n"),
            "{merged}"
        );
    }

    #[test]
    fn new_functions_go_before_the_main_block_and_constants_are_replaced() {
        let answer = "OUTPUT_DIR = \"/tmp/out\"\n\ndef helper(x):\n    return x\n";
        let merged = merge_into_script(SCRIPT, answer).unwrap();
        assert!(merged.contains("OUTPUT_DIR = \"/tmp/out\"\n") && !merged.contains("/var/outputs"));
        let helper = merged.find("def helper").unwrap();
        assert!(merged.find("def main").unwrap() < helper);
        assert!(helper < merged.find("if __name__").unwrap(), "{merged}");
    }

    #[test]
    fn a_whole_script_replaces_the_script() {
        let answer = SCRIPT
            .replace("len(", "max(0, len(")
            .replace("splitlines())", "splitlines()))");
        assert_eq!(merge_into_script(SCRIPT, &answer).unwrap(), answer);
    }

    #[test]
    fn a_main_block_alone_replaces_the_main_block() {
        let answer = "if __name__ == '__main__':\n    raise SystemExit(main())\n";
        let merged = merge_into_script(SCRIPT, answer).unwrap();
        assert!(
            merged.ends_with("if __name__ == '__main__':\n    raise SystemExit(main())\n"),
            "{merged}"
        );
        assert!(merged.contains("def compute(path):\n    \"\"\"Counts"));
    }

    #[test]
    fn an_answer_without_functions_is_refused() {
        assert!(merge_into_script(SCRIPT, "x.append(1)\nprint(x)\n").is_err());
        assert!(merge_into_script(SCRIPT, "import sys\n").is_err());
        // A line from inside a function is not a module constant.
        assert!(merge_into_script(SCRIPT, "total = qty * price\n").is_err());
    }

    #[test]
    fn a_test_fix_block_gives_its_functions_and_imports() {
        let answer = "import json\n\n\n@pytest.mark.slow\ndef test_main(run_solution, tmp_path):\n    lines = [\n        'a',\n    ]\n\n    assert lines\n\n\ndef test_other(run_solution):\n    assert True\n";
        let (definitions, imports) = definitions_and_imports(answer);
        assert_eq!(imports, ["import json"]);
        let names: Vec<&str> = definitions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["test_main", "test_other"]);
        assert_eq!(
            definitions[0].source,
            "@pytest.mark.slow\ndef test_main(run_solution, tmp_path):\n    lines = [\n        'a',\n    ]\n\n    assert lines"
        );
    }

    /// A fix kept to one function: its new version of that function, a helper it adds and an
    /// import stay; its rewrite of `main` (the argument parsing dropped) does not.
    #[test]
    fn a_fix_kept_to_one_function_leaves_the_others_as_they_were() {
        let fixed = "import sys\n\n\ndef count(f):\n    return sum(1 for _ in f)\n\n\ndef compute(path):\n    with open(path) as f:\n        return count(f)\n\n\ndef main():\n    print(compute(sys.argv[1]))\n\n\nif __name__ == \"__main__\":\n    main()\n";
        let kept = keep_to_function(SCRIPT, fixed, "compute").unwrap();
        assert!(kept.contains("import os\nimport sys\n"), "{kept}");
        assert!(
            kept.contains("def count(f):\n    return sum(1 for _ in f)\n")
                && kept.contains(
                    "def compute(path):\n    with open(path) as f:\n        return count(f)\n"
                ),
            "{kept}"
        );
        assert!(
            kept.contains("def main():\n    args = argparse.ArgumentParser().parse_args()\n    print(compute(args.path))\n"),
            "main as it was: {kept}"
        );
        assert!(
            !kept.contains("sys.argv") && !kept.contains("splitlines"),
            "{kept}"
        );
        // A fix without the function: nothing to keep it to.
        assert_eq!(
            keep_to_function(SCRIPT, "def main():\n    pass\n", "compute"),
            None
        );
    }
}

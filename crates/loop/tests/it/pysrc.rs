//! The stable stand-in for the `pysrc_merge` fuzz target: seeded random scripts and answers built
//! from Python fragments (definitions, decorators, classes, brackets, triple-quoted strings,
//! imports, the `__main__` block, Markdown-ish pieces) go through the Python-source helpers,
//! with the same properties: no panic or hang; no edits leave the script as it was, and edits
//! none of which applied too; each patch is replaced or missing; a function's source is a piece
//! of the file; removing a function shortens the file.

use autocoder_loop::protocol::{Edit, FunctionPatch};
use autocoder_loop::pysrc::edit::{EditOutcome, apply_edits};
use autocoder_loop::pysrc::fix_blocks::apply_fix_blocks;
use autocoder_loop::pysrc::merge::{definitions_and_imports, merge_into_script};
use autocoder_loop::pysrc::splice::{function_source, remove_top_level_function, splice_functions};

const FRAGMENTS: &[&str] = &[
    "def test_a(run_solution):\n",
    "def total(rows):\n",
    "def main():\n",
    "async def f(x,\n        y):\n",
    "    return 1\n",
    "    pass\n",
    "        x = [\n",
    "    ]\n",
    ")\n",
    "@pytest.mark.slow\n",
    "@decorator(\n    arg)\n",
    "class TestTotals:\n",
    "    def test_sum(self):\n",
    "        assert 1 == 1\n",
    "    '''doc\n",
    "def inside():\n'''\n",
    "\"\"\"\n",
    "import os\n",
    "from solution import total\n",
    "import pandas as pd\n",
    "if __name__ == '__main__':\n",
    "    main()\n",
    "\n",
    "\t\n",
    "# comment\n",
    "x = 1",
    "\\\n",
    "```python\n",
    "```\n",
    "é",
    "\r\n",
    "\u{1}",
];

#[test]
fn random_python_holds_the_fuzz_properties() {
    let mut rng = fastrand::Rng::with_seed(22);
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..rng.usize(1..24) {
            text.push_str(FRAGMENTS[rng.usize(..FRAGMENTS.len())]);
        }
        check(&text);
    }
}

fn check(text: &str) {
    let mut parts = text.split('\u{1}');
    let script = parts.next().unwrap_or_default();
    let pieces: Vec<String> = parts.map(str::to_owned).collect();

    assert_eq!(apply_edits(script, &[]).code, script, "{text:?}");
    let edits: Vec<Edit> = pieces
        .chunks(2)
        .map(|pair| Edit {
            find: pair[0].clone(),
            replace: pair.get(1).cloned().unwrap_or_default(),
        })
        .collect();
    let report = apply_edits(script, &edits);
    assert_eq!(report.outcomes.len(), edits.len(), "{text:?}");
    if !report.outcomes.iter().any(EditOutcome::applied) {
        assert_eq!(report.code, script, "{text:?}");
    }

    assert_eq!(
        splice_functions(script, &[], &[]).source,
        script,
        "{text:?}"
    );
    let (patches, imports) = definitions_and_imports(&pieces.join("\n"));
    let spliced = splice_functions(script, &patches, &imports);
    assert_eq!(
        spliced.replaced.len() + spliced.missing.len(),
        patches.len(),
        "{text:?}"
    );
    let named: Vec<FunctionPatch> = ["test_a", "total", "main", "TestTotals.test_sum", "f"]
        .iter()
        .map(|name| FunctionPatch {
            name: (*name).to_owned(),
            source: pieces.first().cloned().unwrap_or_default(),
        })
        .collect();
    let _ = splice_functions(script, &named, &pieces);
    for patch in patches.iter().chain(&named) {
        if let Some(source) = function_source(script, &patch.name) {
            assert!(script.contains(&source), "{text:?}");
        }
        if let Some(rest) = remove_top_level_function(script, &patch.name) {
            assert!(rest.len() < script.len(), "{text:?}");
        }
    }

    let _ = apply_fix_blocks(script, &pieces);
    for piece in &pieces {
        let _ = merge_into_script(script, piece);
    }
}

//! Arbitrary text through the loop's Python-source helpers (`autocoder_loop::pysrc`): the input
//! is cut at `\x01` into a script and the pieces of an answer (edit pairs, test-function patches,
//! fix blocks). Any result is fine except: a panic; no edits changing the script, or a report
//! with another number of outcomes than edits; edits none of which applied changing the script;
//! no patches changing the file, or a patch neither replaced nor missing; a function's source
//! that is not a piece of the file; a function removed that leaves the file as long as before.
#![no_main]

use autocoder_loop::protocol::{Edit, FunctionPatch};
use autocoder_loop::pysrc::edit::apply_edits;
use autocoder_loop::pysrc::fix_blocks::apply_fix_blocks;
use autocoder_loop::pysrc::merge::{definitions_and_imports, merge_into_script};
use autocoder_loop::pysrc::splice::{function_source, remove_top_level_function, splice_functions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\u{1}');
    let script = parts.next().unwrap_or_default();
    let pieces: Vec<String> = parts.map(str::to_owned).collect();

    let unchanged = apply_edits(script, &[]);
    assert_eq!(unchanged.code, script, "no edits changed the script");
    let edits: Vec<Edit> = pieces
        .chunks(2)
        .map(|pair| Edit {
            find: pair[0].clone(),
            replace: pair.get(1).cloned().unwrap_or_default(),
        })
        .collect();
    let report = apply_edits(script, &edits);
    assert_eq!(report.outcomes.len(), edits.len());
    if !report.outcomes.iter().any(|o| o.applied()) {
        assert_eq!(report.code, script, "edits that did not apply changed the script");
    }
    let _ = report.problems(&edits);

    assert_eq!(splice_functions(script, &[], &[]).source, script);
    let (patches, imports) = definitions_and_imports(&pieces.join("\n"));
    let spliced = splice_functions(script, &patches, &imports);
    assert_eq!(
        spliced.replaced.len() + spliced.missing.len(),
        patches.len(),
        "each patch is replaced or missing"
    );
    let named: Vec<FunctionPatch> = pieces
        .iter()
        .map(|piece| FunctionPatch {
            name: piece.lines().next().unwrap_or_default().to_owned(),
            source: piece.clone(),
        })
        .collect();
    let _ = splice_functions(script, &named, &pieces);

    for patch in patches.iter().chain(&named) {
        if let Some(source) = function_source(script, &patch.name) {
            assert!(script.contains(&source), "a function's source is a piece of the file");
        }
        if let Some(rest) = remove_top_level_function(script, &patch.name) {
            assert!(rest.len() < script.len(), "removing a function shortened the file");
        }
    }

    let _ = apply_fix_blocks(script, &pieces);
    for piece in &pieces {
        let _ = merge_into_script(script, piece);
    }
});

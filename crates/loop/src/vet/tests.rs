//! Each check sends an answer back once with its note, then lets it through.

use autocoder_prompts::Prompts;

use super::code::{FixAnswer, fix_edits, fixed_script, script};
use super::test_file::{TestFileContext, test_file};
use super::{SentBack, Verdict, unusable};
use crate::protocol::Edit;

fn text<T: std::fmt::Debug>(verdict: Verdict<T>) -> String {
    match verdict {
        Verdict::AskAgain(note) => note.render(&Prompts::embedded().unwrap()).unwrap(),
        Verdict::Accept(value) => panic!("expected a note, got {value:?}"),
    }
}

#[test]
fn a_script_that_does_not_compile_is_sent_back_once() {
    let mut sent = SentBack::default();
    assert_eq!(
        text(script(Some("line 2: invalid syntax"), &mut sent)),
        "the script was not valid Python (line 2: invalid syntax); write it again, complete"
    );
    assert_eq!(script(Some("line 2"), &mut sent), Verdict::Accept(()));
    assert_eq!(script(None, &mut SentBack::default()), Verdict::Accept(()));
}

#[test]
fn an_unusable_answer_is_asked_for_once_more_with_the_head_of_the_error() {
    let mut sent = SentBack::default();
    let long = "x".repeat(300);
    let note = text(unusable(&long, &mut sent));
    assert_eq!(
        note,
        format!(
            "your previous answer was unusable ({}); answer again, complete and shorter, without repeating yourself",
            "x".repeat(200)
        )
    );
    assert_eq!(unusable("again", &mut sent), Verdict::Accept(()));
}

const SCRIPT: &str = "import sys\n\n\ndef total(rows):\n    return sum(rows)\n\n\ndef main():\n    print(total([1, 2]))\n\n\nif __name__ == '__main__':\n    main()\n";

#[test]
fn a_whole_script_that_is_not_one_is_sent_back_once_then_is_no_edit() {
    let mut sent = SentBack::default();
    let stub = "from solution import main\nmain()\n";
    assert_eq!(
        text(fix_edits(SCRIPT, FixAnswer::WholeScript(stub), &mut sent)),
        "your answer was not the whole script: it imports `solution`, the script itself; write the script"
    );
    assert_eq!(
        fix_edits(SCRIPT, FixAnswer::WholeScript(stub), &mut sent),
        Verdict::Accept(Vec::new())
    );
    let lines = "def total(rows):\n    return sum(rows) + 1\n";
    assert_eq!(
        text(fix_edits(
            SCRIPT,
            FixAnswer::WholeScript(lines),
            &mut SentBack::default()
        )),
        "your answer was not the whole script: it has 2 lines where the script has 7; answer with every line"
    );
    let whole = SCRIPT.replace("sum(rows)", "sum(rows) + 1");
    assert_eq!(
        fix_edits(SCRIPT, FixAnswer::WholeScript(&whole), &mut sent),
        Verdict::Accept(vec![Edit {
            find: SCRIPT.into(),
            replace: whole
        }])
    );
}

#[test]
fn fix_blocks_are_merged_or_sent_back_and_edits_pass_through() {
    let block = "def total(rows):\n    return sum(rows) * 2\n".to_owned();
    let merged = fix_edits(
        SCRIPT,
        FixAnswer::Blocks(std::slice::from_ref(&block)),
        &mut SentBack::default(),
    );
    let Verdict::Accept(edits) = merged else {
        panic!("{merged:?}")
    };
    assert!(edits[0].replace.contains("sum(rows) * 2") && edits[0].replace.contains("def main"));
    let mut sent = SentBack::default();
    let quote = vec!["    return sum(rows)\n".to_owned()];
    assert_eq!(
        text(fix_edits(SCRIPT, FixAnswer::Blocks(&quote), &mut sent)),
        "your answer could not be merged into the script: it only quotes lines of the script, with no corrected version"
    );
    assert_eq!(
        fix_edits(SCRIPT, FixAnswer::Blocks(&quote), &mut sent),
        Verdict::Accept(Vec::new())
    );
    let edits = [Edit {
        find: "a".into(),
        replace: "b".into(),
    }];
    assert_eq!(
        fix_edits(SCRIPT, FixAnswer::Edits(&edits), &mut sent),
        Verdict::Accept(edits.to_vec())
    );
    assert_eq!(
        text(fixed_script(Some("line 1"), &mut sent)),
        "the script was not valid Python after your change (line 1); the script above is unchanged"
    );
}

const BLIND: &str = "import pytest\nfrom solution import total\n\n\ndef test_total(run_solution):\n    expected_total = 7\n    assert run_solution().outputs['total'] == expected_total\n";

fn context<'a>(sources: &'a [String], syntax_error: Option<&'a str>) -> TestFileContext<'a> {
    TestFileContext {
        syntax_error,
        blind: true,
        sources,
        hand_written_checks: true,
    }
}

#[test]
fn a_test_file_is_checked_in_order_each_check_once() {
    let sources = ["sales_rows".to_owned(), "log_lines".to_owned()];
    let mut sent = SentBack::default();
    assert_eq!(
        text(test_file(
            BLIND,
            context(&sources, Some("line 9")),
            &mut sent
        )),
        "the test file was not valid Python (line 9); write it again, complete"
    );
    // A file that does not compile is not checked further, even once the error was said.
    assert_eq!(
        test_file(BLIND, context(&sources, Some("line 9")), &mut sent),
        Verdict::Accept(())
    );
    assert_eq!(
        text(test_file(BLIND, context(&sources, None), &mut sent)),
        "these lines import from `solution`, whose function names you do not know: `from solution import total`; remove them and run the script only through `run_solution`, reading what it writes"
    );
    assert_eq!(
        text(test_file(BLIND, context(&sources, None), &mut sent)),
        "these lines write an expected value as a number instead of computing it in Python from `sales_rows` and `log_lines`: `expected_total = 7`; compute each one from the rows (for example `len([r for r in rows if ...])` or `sum(float(r['x']) for r in rows)`)"
    );
    assert_eq!(
        test_file(BLIND, context(&sources, None), &mut sent),
        Verdict::Accept(())
    );
}

#[test]
fn tests_that_saw_the_code_may_import_it_and_a_profile_may_skip_the_number_check() {
    let sources = ["sales_rows".to_owned()];
    let seeing = TestFileContext {
        blind: false,
        hand_written_checks: false,
        ..context(&sources, None)
    };
    assert_eq!(
        test_file(BLIND, seeing, &mut SentBack::default()),
        Verdict::Accept(())
    );
    // Nothing to compute from: numbers are all a test can write.
    let no_rows = TestFileContext {
        blind: false,
        ..context(&[], None)
    };
    assert_eq!(
        test_file(BLIND, no_rows, &mut SentBack::default()),
        Verdict::Accept(())
    );
}

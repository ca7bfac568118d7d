//! Reads a code fix answered as several Markdown blocks. Asked to name the wrong line and fix it,
//! small models answer "The line that is wrong is: ```A``` It should be: ```B```", sometimes
//! several such pairs, sometimes a quoted line followed by the whole script. A block whose lines
//! are lines of the script is a quote: followed by a block that is not, it is replaced by that
//! block (re-indented to where the quote stands); otherwise it is only context. Every other block
//! is merged as whole functions or a whole script ([`merge_into_script`]).

use crate::pysrc::merge::merge_into_script;
use crate::pysrc::splice::indentation;

/// The script with every usable block applied in order, or why none was.
pub fn apply_fix_blocks(script: &str, blocks: &[String]) -> Result<String, String> {
    let mut fixed = script.to_owned();
    let mut took = false;
    let mut problem = "it holds no code block".to_owned();
    let mut at = 0;
    while at < blocks.len() {
        let block = &blocks[at];
        if let Some(quoted) = quoted_lines(&fixed, block) {
            let next = blocks.get(at + 1);
            let replacement = next.filter(|next| {
                quoted_lines(&fixed, next).is_none() && merge_into_script(&fixed, next).is_err()
            });
            if let Some(replacement) = replacement {
                fixed = replace_lines(&fixed, quoted, replacement);
                took = true;
                at += 2;
                continue;
            }
            "it only quotes lines of the script, with no corrected version"
                .clone_into(&mut problem);
            at += 1;
            continue;
        }
        match merge_into_script(&fixed, block) {
            Ok(merged) => {
                fixed = merged;
                took = true;
            }
            Err(why) => problem = why,
        }
        at += 1;
    }
    if took { Ok(fixed) } else { Err(problem) }
}

/// The lines `[start, end)` of `script` that `block`'s non-blank lines are, in order and
/// consecutive, compared without surrounding whitespace; `None` if they are not all there.
fn quoted_lines(script: &str, block: &str) -> Option<(usize, usize)> {
    let wanted: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let lines: Vec<&str> = script.lines().collect();
    (0..lines.len().saturating_sub(wanted.len() - 1))
        .find(|&start| {
            wanted
                .iter()
                .zip(&lines[start..])
                .all(|(w, line)| line.trim() == *w)
        })
        .map(|start| (start, start + wanted.len()))
}

/// `script` with lines `[start, end)` replaced by `block`, shifted so that its least indented
/// line stands where the first replaced line stood.
fn replace_lines(script: &str, (start, end): (usize, usize), block: &str) -> String {
    let lines: Vec<&str> = script.split_inclusive('\n').collect();
    let base = " ".repeat(indentation(lines[start]));
    let own = block
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(indentation)
        .min()
        .unwrap_or(0);
    let body: String = block
        .lines()
        .map(|l| {
            if l.trim().is_empty() {
                "\n".to_owned()
            } else {
                format!("{base}{}\n", &l[own.min(indentation(l))..])
            }
        })
        .collect();
    [lines[..start].concat(), body, lines[end..].concat()].concat()
}

#[cfg(test)]
mod tests {
    use super::apply_fix_blocks;

    const SCRIPT: &str = "import csv\n\n\ndef compute(path):\n    total = 0\n    for row in csv.DictReader(open(path)):\n        total += row['units']\n    return total\n\n\nif __name__ == \"__main__\":\n    print(compute('x'))\n";

    fn blocks(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn a_quoted_line_is_replaced_by_the_block_after_it_at_its_indentation() {
        let fixed = apply_fix_blocks(
            SCRIPT,
            &blocks(&["total += row['units']\n", "total += int(row['units'])\n"]),
        )
        .unwrap();
        assert!(
            fixed.contains("        total += int(row['units'])\n    return total"),
            "{fixed}"
        );
        assert_eq!(fixed.lines().count(), SCRIPT.lines().count());
    }

    #[test]
    fn several_pairs_apply_in_order_and_an_unchanged_pair_is_only_a_quote() {
        let fixed = apply_fix_blocks(
            SCRIPT,
            &blocks(&[
                "    total = 0\n",
                "total = 0.0\n",
                "return total\n",
                "return total\n",
                "for row in csv.DictReader(open(path)):\n    total += row['units']\n",
                "with open(path) as f:\n    for row in csv.DictReader(f):\n        total += float(row['units'])\n",
            ]),
        )
        .unwrap();
        assert!(fixed.contains("    total = 0.0\n    with open(path) as f:\n        for row in csv.DictReader(f):\n            total += float(row['units'])\n    return total\n"), "{fixed}");
    }

    #[test]
    fn a_quote_followed_by_a_whole_function_takes_the_function() {
        let fixed = apply_fix_blocks(
            SCRIPT,
            &blocks(&[
                "total += row['units']\n",
                "def compute(path):\n    return 7\n",
            ]),
        )
        .unwrap();
        assert!(
            fixed.contains("def compute(path):\n    return 7\n") && !fixed.contains("row['units']"),
            "{fixed}"
        );
    }

    #[test]
    fn quotes_alone_or_loose_lines_are_refused_with_a_reason() {
        let quoted = apply_fix_blocks(SCRIPT, &blocks(&["return total\n"])).unwrap_err();
        assert!(quoted.contains("only quotes"), "{quoted}");
        let loose = apply_fix_blocks(SCRIPT, &blocks(&["total = sum(units)\n"])).unwrap_err();
        assert!(loose.contains("no whole function"), "{loose}");
        assert!(apply_fix_blocks(SCRIPT, &[]).is_err());
    }
}

//! A tuple of column names after a `groupby` (`df.groupby("k")["a", "b"].sum()`), rewritten as
//! the list it meant (`df.groupby("k")[["a", "b"]].sum()`).
//!
//! pandas 1 read the tuple as a list with a `FutureWarning`; pandas 2 raises `ValueError: Cannot
//! subset columns with a tuple with more than one element. Use a list instead.` So the line has
//! only ever had the one meaning, and in pandas 2 it can only crash: rewriting it loses nothing.
//! Qwen2.5-Coder-1.5B writes it in a sizeable share of its grouped aggregations (its training
//! data predates pandas 2), and its fixes keep the line even with the error shown.
//!
//! The scan is over text: strings and comments are skipped, brackets are matched, and nothing
//! is changed unless the subscript right after a `.groupby(...)` holds two or more items at its
//! top level and is not already a list or a slice.

/// The code with every tuple subscript after a `.groupby(...)` made a list, or `None` when
/// there is none.
pub(crate) fn repair_grouped_column_tuples(code: &str) -> Option<String> {
    let bytes = code.as_bytes();
    let mut insertions: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if let Some(past) = past_literal(bytes, at) {
            at = past;
            continue;
        }
        match bytes[at] {
            b'.' if bytes[at + 1..].starts_with(b"groupby") => {
                at += 1 + "groupby".len();
                if let Some(subscript) = tuple_subscript_after_call(bytes, at) {
                    insertions.push(subscript);
                    at = subscript.0 + 1;
                }
            }
            _ => at += 1,
        }
    }
    if insertions.is_empty() {
        return None;
    }
    let mut repaired = String::with_capacity(code.len() + 2 * insertions.len());
    let mut copied = 0;
    for (open, close) in insertions {
        repaired.push_str(&code[copied..=open]);
        repaired.push('[');
        repaired.push_str(&code[open + 1..close]);
        repaired.push(']');
        copied = close;
    }
    repaired.push_str(&code[copied..]);
    Some(repaired)
}

/// After `.groupby` (at `at`): the positions of `[` and `]` of a tuple subscript that follows
/// its call, when there is one.
fn tuple_subscript_after_call(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let open_paren = skip_spaces(bytes, at);
    if bytes.get(open_paren) != Some(&b'(') {
        return None;
    }
    let close_paren = matching(bytes, open_paren)?;
    let open = skip_spaces(bytes, close_paren + 1);
    if bytes.get(open) != Some(&b'[') {
        return None;
    }
    let close = matching(bytes, open)?;
    is_tuple_of_items(&bytes[open + 1..close]).then_some((open, close))
}

/// Whether a subscript's inside is two or more items at its top level (`"a", "b"`), not a list
/// (`["a", "b"]`), a single item, or a slice.
fn is_tuple_of_items(inside: &[u8]) -> bool {
    let trimmed = inside.trim_ascii();
    if trimmed.first() == Some(&b'[') && matching(trimmed, 0) == Some(trimmed.len() - 1) {
        return false;
    }
    let mut items = 0;
    let mut item_has_text = false;
    let mut at = 0;
    while at < inside.len() {
        if let Some(past) = past_literal(inside, at) {
            item_has_text |= inside[at] != b'#';
            at = past;
            continue;
        }
        match inside[at] {
            b',' => {
                if item_has_text {
                    items += 1;
                }
                item_has_text = false;
                at += 1;
            }
            b':' => return false,
            b'(' | b'[' | b'{' => {
                item_has_text = true;
                match matching(inside, at) {
                    Some(close) => at = close + 1,
                    None => return false,
                }
            }
            byte => {
                if !byte.is_ascii_whitespace() && byte != b'\\' {
                    item_has_text = true;
                }
                at += 1;
            }
        }
    }
    if item_has_text {
        items += 1;
    }
    items >= 2
}

/// The position of the bracket that closes the one at `open`, skipping strings and comments.
fn matching(bytes: &[u8], open: usize) -> Option<usize> {
    let mut stack = vec![closer(bytes[open])?];
    let mut at = open + 1;
    while at < bytes.len() {
        if let Some(past) = past_literal(bytes, at) {
            at = past;
            continue;
        }
        match bytes[at] {
            b'(' | b'[' | b'{' => stack.push(closer(bytes[at])?),
            byte @ (b')' | b']' | b'}') => {
                if stack.pop() != Some(byte) {
                    return None;
                }
                if stack.is_empty() {
                    return Some(at);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// When a string literal or a comment starts at `at`: the position just past it.
fn past_literal(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes[at] {
        b'#' => Some(line_end(bytes, at)),
        b'\'' | b'"' => Some(string_end(bytes, at)),
        _ => None,
    }
}

fn closer(open: u8) -> Option<u8> {
    match open {
        b'(' => Some(b')'),
        b'[' => Some(b']'),
        b'{' => Some(b'}'),
        _ => None,
    }
}

/// The position just past the string literal whose quote is at `at` (single, double or triple
/// quoted, backslash escapes honoured), or the end of the text when it never closes.
fn string_end(bytes: &[u8], at: usize) -> usize {
    let quote = bytes[at];
    let triple = bytes[at..].starts_with(&[quote; 3]);
    let mut pos = at + if triple { 3 } else { 1 };
    while pos < bytes.len() {
        match bytes[pos] {
            b'\\' => pos += 2,
            byte if byte == quote => {
                if !triple {
                    return pos + 1;
                }
                if bytes[pos..].starts_with(&[quote; 3]) {
                    return pos + 3;
                }
                pos += 1;
            }
            b'\n' if !triple => return pos,
            _ => pos += 1,
        }
    }
    bytes.len()
}

/// The position of the newline that ends the line holding `at` (or the end of the text).
fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |offset| at + offset)
}

fn skip_spaces(bytes: &[u8], at: usize) -> usize {
    let mut pos = at;
    while bytes.get(pos).is_some_and(|b| *b == b' ' || *b == b'\t') {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tuple_after_a_groupby_becomes_a_list() {
        let code = "totals = df.groupby('region')['quantity', 'revenue'].sum()\n";
        assert_eq!(
            repair_grouped_column_tuples(code).as_deref(),
            Some("totals = df.groupby('region')[['quantity', 'revenue']].sum()\n")
        );
    }

    #[test]
    fn keys_given_as_a_list_and_calls_spread_over_lines_are_handled() {
        let code = "g = sales.groupby(\n    ['species', 'sex'],  # the keys\n    as_index=False,\n)[\"a\", \"b\",].mean()\nh = df.groupby(by='k') [ 'x' , 'y' ]\n";
        assert_eq!(
            repair_grouped_column_tuples(code).as_deref(),
            Some(
                "g = sales.groupby(\n    ['species', 'sex'],  # the keys\n    as_index=False,\n)[[\"a\", \"b\",]].mean()\nh = df.groupby(by='k') [[ 'x' , 'y' ]]\n"
            )
        );
    }

    #[test]
    fn every_slip_in_a_script_is_repaired() {
        let code = "a = df.groupby('k')['x', 'y'].sum()\nb = df.groupby(df['k'].str.lower())[cols[0], cols[1]].max()\n";
        let fixed = repair_grouped_column_tuples(code).expect("two slips");
        assert_eq!(
            fixed,
            "a = df.groupby('k')[['x', 'y']].sum()\nb = df.groupby(df['k'].str.lower())[[cols[0], cols[1]]].max()\n"
        );
    }

    #[test]
    fn valid_selections_and_lookalikes_are_left_alone() {
        for code in [
            "df.groupby('k')[['x', 'y']].sum()\n",
            "df.groupby('k')['x'].sum()\n",
            "df.groupby('k')[('x', 'y')].sum()\n",
            "df.groupby('k')['x',].sum()\n",
            "df.groupby('k').sum()['x']\n",
            "df.groupby('k')[cols].sum()\n",
            "df.loc[:, 'a', 'b']\n",
            "df['a', 'b']\n",
            "s = \".groupby('k')['x', 'y']\"\n",
            "# df.groupby('k')['x', 'y']\n",
            "rows[1:3]\n",
            "df.groupby('k')\n",
            "df.groupby\n",
        ] {
            assert_eq!(repair_grouped_column_tuples(code), None, "{code}");
        }
    }

    #[test]
    fn unbalanced_or_cut_off_text_is_left_alone_without_panicking() {
        for code in [
            "df.groupby('k'",
            "df.groupby('k')['x', 'y'",
            "df.groupby('k')['x', \"y",
            "df.groupby(]",
            "df.groupby('k')[\"\"\"",
            ".groupby",
            "'\\",
            ".groupby(\"\\",
        ] {
            assert_eq!(repair_grouped_column_tuples(code), None, "{code}");
        }
    }

    #[test]
    fn non_ascii_text_around_a_slip_is_kept() {
        let code = "# Umsätze je Region\nt = df.groupby('région')['menge', 'preis'].sum()  # €\n";
        assert_eq!(
            repair_grouped_column_tuples(code).as_deref(),
            Some("# Umsätze je Region\nt = df.groupby('région')[['menge', 'preis']].sum()  # €\n")
        );
    }

    #[test]
    fn random_text_never_panics_and_only_gains_bracket_pairs() {
        let pieces = [
            ".groupby", "(", ")", "[", "]", "{", "}", "'", "\"", "\"\"\"", "\\", "#", "\n", ",",
            ":", " ", "'a'", "x", "é", "df",
        ];
        let mut rng = fastrand::Rng::with_seed(22);
        for _ in 0..20_000 {
            let code: String = (0..rng.usize(0..24))
                .map(|_| pieces[rng.usize(..pieces.len())])
                .collect();
            if let Some(fixed) = repair_grouped_column_tuples(&code) {
                assert!(fixed.len() > code.len(), "{code:?}");
                let without: String = fixed.chars().filter(|c| !"[]".contains(*c)).collect();
                let before: String = code.chars().filter(|c| !"[]".contains(*c)).collect();
                assert_eq!(without, before, "{code:?}");
                assert_eq!(
                    fixed.matches('[').count() - code.matches('[').count(),
                    fixed.matches(']').count() - code.matches(']').count()
                );
            }
        }
    }
}

//! Which value shapes (the profiler's `9` for a digit, `A` for a letter) are dates written as
//! text, for the "date stored as text" alert.

/// Whether a value shape (`9` digits, `A` letters) is a date, optionally followed by a time:
/// `9999-99-99`, `99/99/9999`, `99.99.9999`, `99 AAA 9999`, `AAA 99, 9999`.
pub(crate) fn date_shape(shape: &str) -> bool {
    // Split the shape into runs of digits, runs of letters and single separators.
    let mut tokens: Vec<(char, usize)> = Vec::new();
    for c in shape.chars() {
        match tokens.last_mut() {
            Some((k, n)) if *k == c && (c == '9' || c == 'A') => *n += 1,
            _ => tokens.push((c, 1)),
        }
    }
    let parts: Vec<(char, usize)> = tokens
        .iter()
        .copied()
        .filter(|(k, _)| *k == '9' || *k == 'A')
        .collect();
    let seps: Vec<char> = tokens
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| *k != '9' && *k != 'A')
        .collect();
    let digits = |p: (char, usize), lo: usize, hi: usize| p.0 == '9' && (lo..=hi).contains(&p.1);
    let month = |p: (char, usize)| p.0 == 'A' && (3..=9).contains(&p.1);
    let [a, b, c, rest @ ..] = parts.as_slice() else {
        return false;
    };
    let (a, b, c) = (*a, *b, *c);
    let numeric_sep =
        seps.first().is_some_and(|s| matches!(s, '-' | '/' | '.')) && seps.get(1) == seps.first();
    let date = (numeric_sep
        && ((digits(a, 4, 4) && digits(b, 1, 2) && digits(c, 1, 2))
            || (digits(a, 1, 2) && digits(b, 1, 2) && digits(c, 4, 4))))
        || (digits(a, 1, 2) && month(b) && digits(c, 4, 4))
        || (month(a) && digits(b, 1, 2) && digits(c, 4, 4));
    // A time may follow: digit runs (hours, minutes, seconds, fractions), `T`, `Z`, `AM`/`PM`.
    date && rest.iter().all(|p| p.0 == '9' || p.1 <= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_shapes() {
        for yes in [
            "9999-99-99",
            "99/99/9999",
            "9/9/9999",
            "99.99.9999",
            "99 AAA 9999",
            "AAA 99, 9999",
            "9999-99-99 99:99:99",
            "99/99/9999 9:99",
        ] {
            assert!(date_shape(yes), "{yes}");
        }
        for no in [
            "9.9.9",
            "999-999-9999",
            "AAA-9999",
            "99/99/99",
            "9999",
            "AAAA AAAA",
        ] {
            assert!(!date_shape(no), "{no}");
        }
    }
}

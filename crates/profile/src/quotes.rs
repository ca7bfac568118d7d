//! Finds a quote that opens a field and never closes: `csv-core` would read the rest of the
//! input as that field, silently, so the profiler names the quote's line instead.

use crate::Dialect;

/// Where the quote is that opens a field still open at the end of `bytes` (which must start on
/// a record boundary), following `csv-core`'s reading: a quote opens a quoted field only at the
/// start of a field; inside one, a doubled quote is a quote and a single one closes it; after
/// the closing quote, text up to the delimiter is kept.
pub(crate) fn unclosed_quote(bytes: &[u8], dialect: Dialect) -> Option<usize> {
    let (quote, delimiter) = (dialect.quote, dialect.delimiter);
    let mut at_field_start = true;
    let mut open: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(start) = open {
            // Inside quotes: the next quote closes, unless doubled.
            let Some(next) = memchr::memchr(quote, &bytes[i..]) else {
                return Some(start);
            };
            let q = i + next;
            if bytes.get(q + 1) == Some(&quote) {
                i = q + 2;
            } else {
                open = None;
                i = q + 1;
                at_field_start = false;
            }
            continue;
        }
        let b = bytes[i];
        if at_field_start && b == quote {
            open = Some(i);
        } else {
            at_field_start = b == delimiter || b == b'\n' || b == b'\r';
        }
        i += 1;
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_quotes_that_open_a_field_and_stay_open() {
        let d = Dialect::default();
        assert_eq!(unclosed_quote(b"a,\"b\nc\n", d), Some(2));
        assert_eq!(unclosed_quote(b"a,\"b\"\"\nc\"\n", d), None);
        assert_eq!(
            unclosed_quote(b"a,b\"c\n", d),
            None,
            "a quote inside a field"
        );
        assert_eq!(unclosed_quote(b"\"x\"y,\"z\n", d), Some(5));
        assert_eq!(unclosed_quote(b"1,\"\"\n\"", d), Some(5));
        assert_eq!(unclosed_quote(b"", d), None);
    }
}

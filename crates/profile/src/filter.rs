//! Drops what pandas' `skiprows=N` and `comment=C` drop, as the bytes stream in: the first `N`
//! lines, and from a comment character outside quotes to the end of its line. Every newline
//! is kept, so the lines left blank are skipped as blank lines and physical line numbers in
//! errors and samples stay those of the file.

use std::io::{self, Read};

/// A reader that blanks skipped lines and comments.
pub(crate) struct LineFilter<R> {
    inner: R,
    /// Lines still to skip.
    skip: u64,
    comment: Option<u8>,
    quote: u8,
    in_quotes: bool,
    in_comment: bool,
    buf: Vec<u8>,
    /// Filtered bytes not yet handed out: `buf[taken..len]`.
    taken: usize,
    len: usize,
}

impl<R: Read> LineFilter<R> {
    pub(crate) fn new(inner: R, skip: u64, comment: Option<u8>, quote: u8) -> Self {
        Self {
            inner,
            skip,
            comment,
            quote,
            in_quotes: false,
            in_comment: false,
            buf: vec![0; 64 << 10],
            taken: 0,
            len: 0,
        }
    }

    /// Keeps the bytes of `buf[..n]` that are not skipped, at the front of `buf`.
    fn filter(&mut self, n: usize) -> usize {
        let mut kept = 0;
        for i in 0..n {
            let b = self.buf[i];
            let keep = if b == b'\n' {
                self.in_comment = false;
                if self.skip > 0 {
                    self.skip -= 1;
                    // A quote in a skipped line does not carry over.
                    self.in_quotes = false;
                }
                true
            } else if self.skip > 0 || self.in_comment {
                false
            } else if b == self.quote {
                self.in_quotes = !self.in_quotes;
                true
            } else if Some(b) == self.comment && !self.in_quotes {
                self.in_comment = true;
                false
            } else {
                true
            };
            if keep {
                self.buf[kept] = b;
                kept += 1;
            }
        }
        kept
    }
}

impl<R: Read> Read for LineFilter<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.taken == self.len {
            let n = self.inner.read(&mut self.buf)?;
            if n == 0 {
                return Ok(0);
            }
            self.len = self.filter(n);
            self.taken = 0;
        }
        let n = out.len().min(self.len - self.taken);
        out[..n].copy_from_slice(&self.buf[self.taken..self.taken + n]);
        self.taken += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filtered(text: &str, skip: u64, comment: Option<u8>) -> String {
        let mut out = String::new();
        LineFilter::new(text.as_bytes(), skip, comment, b'"')
            .read_to_string(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn skips_lines_and_cuts_comments_keeping_newlines() {
        assert_eq!(filtered("a\n\"b\nc\nd\n", 2, None), "\n\nc\nd\n");
        assert_eq!(
            filtered("# top\nx,y # note\n1,\"#2\"#c\n", 0, Some(b'#')),
            "\nx,y \n1,\"#2\"\n"
        );
        assert_eq!(filtered("skip # me\n#\na\n", 1, Some(b'#')), "\n\na\n");
    }
}

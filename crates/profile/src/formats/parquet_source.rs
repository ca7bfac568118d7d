//! The file parquet reads pages from, made to fail where parquet (60) would read on at the end
//! of the file. Its page-header reader skips a field it does not know with `io::copy` of the
//! field's length, which ends quietly at the end of the file, and goes on to the next element: a
//! corrupt header that declares a few thousand nested lists past the end makes it read the end
//! of the file over and over (a 3.5 KB file took minutes, found by the `profile_formats` fuzz
//! target). A reader that has said "end" once and is asked again has been ignored, so the second
//! ask is an error here, and parquet's skip returns it.

use std::fs::File;
use std::io::{self, BufReader, Read};

use bytes::Bytes;
use parquet::errors::Result;
use parquet::file::reader::{ChunkReader, Length};

/// A Parquet file whose readers refuse to be read again after reporting its end.
pub(crate) struct EndBound(pub(crate) File);

impl Length for EndBound {
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl ChunkReader for EndBound {
    type T = OnceAtEnd<BufReader<File>>;

    fn get_read(&self, start: u64) -> Result<Self::T> {
        Ok(OnceAtEnd {
            inner: self.0.get_read(start)?,
            at_end: false,
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes> {
        self.0.get_bytes(start, length)
    }
}

/// A reader that reports its end once; a read after that is an error.
pub(crate) struct OnceAtEnd<R> {
    inner: R,
    at_end: bool,
}

impl<R: Read> Read for OnceAtEnd<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.at_end {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read on past the end of the file (a structure declares more than the file holds)",
            ));
        }
        let n = self.inner.read(buf)?;
        self.at_end = n == 0;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_is_reported_once_and_a_second_read_there_is_an_error() {
        let mut r = OnceAtEnd {
            inner: &b"abc"[..],
            at_end: false,
        };
        let mut all = Vec::new();
        r.read_to_end(&mut all).unwrap();
        assert_eq!(all, b"abc");
        let mut buf = [0u8; 4];
        let err = r.read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(r.read(&mut []).unwrap(), 0);
    }

    #[test]
    fn skipping_past_the_end_as_parquet_does_fails_on_the_second_skip() {
        let mut r = OnceAtEnd {
            inner: &b"abcdef"[..],
            at_end: false,
        };
        let mut skip = |n: u64| io::copy(&mut (&mut r).take(n), &mut io::sink());
        assert_eq!(skip(4).unwrap(), 4);
        assert_eq!(skip(8).unwrap(), 2);
        assert!(skip(8).is_err());
    }
}

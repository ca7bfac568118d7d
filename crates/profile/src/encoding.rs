//! Text encodings other than UTF-8: the [`Encoding`] a file is written in (named as Python
//! names it, so that the read recipe can pass it to pandas), and the reader that decodes it
//! to UTF-8 as the bytes stream in. Bytes that are not valid in the encoding are an error, as
//! in Python (`encoding_rs` would otherwise replace them silently).

use std::io::{self, Read};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A text encoding, from the labels Python and the WHATWG Encoding Standard know (`latin-1`,
/// `cp1252`, `utf-16`, `shift_jis`, ...). UTF-8 is the default and needs no decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Encoding(Kind);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Kind {
    #[default]
    Utf8,
    /// ISO-8859-1 as Python reads it: every byte is the code point of its value. (The WHATWG
    /// standard reads the label `latin1` as windows-1252, which differs in 0x80..0x9F.)
    Latin1,
    /// UTF-16 with a byte-order mark deciding the byte order (little-endian without one).
    Utf16,
    /// Any other encoding of the standard.
    Other(&'static encoding_rs::Encoding),
}

/// Labels that mean Python's `latin-1`.
const LATIN1_LABELS: [&str; 7] = [
    "latin-1",
    "latin1",
    "latin_1",
    "iso-8859-1",
    "iso8859-1",
    "iso_8859_1",
    "l1",
];

impl Encoding {
    /// UTF-8.
    pub const UTF8: Encoding = Encoding(Kind::Utf8);

    /// The encoding a label names (case-insensitive; Python's and WHATWG's spellings), or
    /// `None` when no encoding has that name.
    pub fn for_label(label: &str) -> Option<Encoding> {
        let lower = label.trim().to_ascii_lowercase();
        if LATIN1_LABELS.contains(&lower.as_str()) {
            return Some(Encoding(Kind::Latin1));
        }
        match lower.as_str() {
            "utf-8" | "utf8" | "utf_8" | "utf-8-sig" | "utf_8_sig" => {
                return Some(Encoding(Kind::Utf8));
            }
            "utf-16" | "utf16" | "utf_16" => return Some(Encoding(Kind::Utf16)),
            _ => {}
        }
        // Python's `cp1252`-style names are WHATWG's `windows-1252`.
        let whatwg = match lower.strip_prefix("cp") {
            Some(digits) if digits.len() == 4 && digits.starts_with("12") => {
                format!("windows-{digits}")
            }
            _ => lower.replace('_', "-"),
        };
        encoding_rs::Encoding::for_label(whatwg.as_bytes()).map(|e| {
            if e == encoding_rs::UTF_8 {
                Encoding(Kind::Utf8)
            } else {
                Encoding(Kind::Other(e))
            }
        })
    }

    /// Whether this is UTF-8 (no decoding needed).
    pub fn is_utf8(self) -> bool {
        self.0 == Kind::Utf8
    }

    /// The name Python's codecs (and so `pd.read_csv(encoding=...)`) know it by.
    pub fn python_name(self) -> String {
        match self.0 {
            Kind::Utf8 => "utf-8".to_owned(),
            Kind::Latin1 => "latin-1".to_owned(),
            Kind::Utf16 => "utf-16".to_owned(),
            Kind::Other(e) => match e.name().strip_prefix("windows-") {
                Some(digits) if digits.starts_with("12") => format!("cp{digits}"),
                _ => e.name().to_ascii_lowercase(),
            },
        }
    }

    /// The encoding announced by a UTF-16 byte-order mark at the start of `head`.
    pub(crate) fn sniff_utf16(head: &[u8]) -> Option<Encoding> {
        matches!(head, [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..]).then_some(Encoding(Kind::Utf16))
    }

    /// Wraps `reader` so that it yields UTF-8; `reader` itself for UTF-8.
    pub(crate) fn decoder<'a>(
        self,
        reader: Box<dyn Read + Send + 'a>,
    ) -> Box<dyn Read + Send + 'a> {
        match self.0 {
            Kind::Utf8 => reader,
            Kind::Latin1 => Box::new(Decode::new(reader, Codec::Latin1)),
            Kind::Utf16 => Box::new(Decode::new(
                reader,
                Codec::Standard(encoding_rs::UTF_16LE.new_decoder()),
            )),
            Kind::Other(e) => Box::new(Decode::new(reader, Codec::Standard(e.new_decoder()))),
        }
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.python_name())
    }
}

impl Serialize for Encoding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.python_name())
    }
}

impl<'de> Deserialize<'de> for Encoding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let label = String::deserialize(d)?;
        Encoding::for_label(&label)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown encoding `{label}`")))
    }
}

/// How [`Decode`] turns bytes into UTF-8.
enum Codec {
    Latin1,
    Standard(encoding_rs::Decoder),
}

/// A reader that decodes its input to UTF-8, failing on malformed bytes.
struct Decode<R> {
    inner: R,
    codec: Codec,
    input: Vec<u8>,
    /// Decoded bytes not yet handed out: `output[taken..]`.
    output: Vec<u8>,
    taken: usize,
    eof: bool,
    /// Newlines decoded so far, to name the line of a malformed byte.
    lines: u64,
}

impl<R: Read> Decode<R> {
    fn new(inner: R, codec: Codec) -> Self {
        Self {
            inner,
            codec,
            input: Vec::with_capacity(64 << 10),
            output: Vec::with_capacity(128 << 10),
            taken: 0,
            eof: false,
            lines: 0,
        }
    }

    /// Decodes the next piece of input into `output`; false at the end.
    fn refill(&mut self) -> io::Result<bool> {
        self.output.clear();
        self.taken = 0;
        while self.output.is_empty() {
            if self.eof {
                return Ok(false);
            }
            self.input.resize(64 << 10, 0);
            let n = self.inner.read(&mut self.input)?;
            self.input.truncate(n);
            self.eof = n == 0;
            match &mut self.codec {
                Codec::Latin1 => {
                    for &b in &self.input {
                        if b < 0x80 {
                            self.output.push(b);
                        } else {
                            self.output.extend([0xC0 | (b >> 6), 0x80 | (b & 0x3F)]);
                        }
                    }
                }
                Codec::Standard(decoder) => {
                    let mut read = 0;
                    loop {
                        let room = decoder
                            .max_utf8_buffer_length_without_replacement(self.input.len() - read)
                            .unwrap_or(1 << 20)
                            .max(16);
                        let start = self.output.len();
                        self.output.resize(start + room, 0);
                        let (result, used, written) = decoder.decode_to_utf8_without_replacement(
                            &self.input[read..],
                            &mut self.output[start..],
                            self.eof,
                        );
                        self.output.truncate(start + written);
                        read += used;
                        match result {
                            encoding_rs::DecoderResult::InputEmpty => break,
                            encoding_rs::DecoderResult::OutputFull => {}
                            encoding_rs::DecoderResult::Malformed(_, _) => {
                                let line = self.lines
                                    + 1
                                    + memchr::memchr_iter(b'\n', &self.output).count() as u64;
                                return Err(io::Error::new(
                                    io::ErrorKind::InvalidData,
                                    MalformedAt(line),
                                ));
                            }
                        }
                    }
                }
            }
        }
        self.lines += memchr::memchr_iter(b'\n', &self.output).count() as u64;
        Ok(true)
    }
}

impl<R: Read> Read for Decode<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.taken == self.output.len() && !self.refill()? {
            return Ok(0);
        }
        let n = buf.len().min(self.output.len() - self.taken);
        buf[..n].copy_from_slice(&self.output[self.taken..self.taken + n]);
        self.taken += n;
        Ok(n)
    }
}

/// The error a [`Decode`] reader fails with on a malformed byte: the physical line it is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed bytes at line {0}")]
pub(crate) struct MalformedAt(pub(crate) u64);

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(encoding: Encoding, bytes: &[u8]) -> io::Result<String> {
        let mut out = String::new();
        encoding
            .decoder(Box::new(bytes))
            .read_to_string(&mut out)
            .map(|_| out)
    }

    #[test]
    fn labels_name_python_codecs() {
        for (label, python) in [
            ("latin-1", "latin-1"),
            ("ISO-8859-1", "latin-1"),
            ("cp1252", "cp1252"),
            ("windows-1252", "cp1252"),
            ("utf-16", "utf-16"),
            ("UTF8", "utf-8"),
            ("shift_jis", "shift_jis"),
        ] {
            assert_eq!(Encoding::for_label(label).unwrap().python_name(), python);
        }
        assert!(Encoding::for_label("klingon").is_none());
    }

    #[test]
    fn decodes_and_refuses_malformed_bytes() {
        let latin1 = Encoding::for_label("latin-1").unwrap();
        assert_eq!(decode(latin1, b"caf\xe9\x85").unwrap(), "café\u{85}");
        let cp1252 = Encoding::for_label("cp1252").unwrap();
        assert_eq!(decode(cp1252, b"\x80 \x85").unwrap(), "€ …");
        let utf16 = Encoding::for_label("utf-16").unwrap();
        assert_eq!(decode(utf16, b"\xFE\xFF\x00a\x00\n").unwrap(), "a\n");
        assert_eq!(decode(utf16, b"\xFF\xFEa\x00").unwrap(), "a");
        let sjis = Encoding::for_label("shift_jis").unwrap();
        let err = decode(sjis, b"ok\nok\n\x82").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("line 3"), "{err}");
    }
}

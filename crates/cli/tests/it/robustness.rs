//! A stable, seeded stand-in for the cargo-fuzz target (`fuzz/`): thousands of random inputs,
//! CSV-like and raw bytes, through sniffing and profiling. None may panic, and reading the bytes
//! sequentially must agree with reading them as a file cut into 64-byte chunks on two threads.

use autocoder_profile::{Dialect, Profile, ProfileOptions, UTF8_BOM, profile_path, profile_reader};

/// `SplitMix64`: a tiny deterministic generator, so failures reproduce from the case number.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
}

/// Pieces real and broken CSV files are made of.
const TOKENS: [&[u8]; 33] = [
    b",",
    b",",
    b",",
    b";",
    b"\t",
    b"|",
    b"\n",
    b"\n",
    b"\r\n",
    b"\r",
    b"\"",
    b"\"\"",
    b"1",
    b"42",
    b"-7",
    b"0123",
    b"3.25",
    b"-1.5e3",
    b"inf",
    b"NA",
    b"",
    b"null",
    b"True",
    b"false",
    b"2024-01-31",
    b"2024-02-30",
    b"2024-01-31T10:00:00Z",
    b"2024-01-31 10:00:00+02:00",
    b"a@b.co",
    b"$1,234.56",
    "é".as_bytes(),
    b"\xff\xfe",
    b"\0",
];

fn csv_like(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    if rng.below(8) == 0 {
        out.extend_from_slice(UTF8_BOM);
    }
    let header_fields = 1 + rng.below(5);
    for i in 0..header_fields {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(format!("c{i}").as_bytes());
    }
    out.push(b'\n');
    for _ in 0..rng.below(120) {
        let token = TOKENS[rng.below(TOKENS.len())];
        // NUL bytes are rare in real data: keep them rare here.
        if token == b"\0" && rng.below(8) != 0 {
            continue;
        }
        out.extend_from_slice(token);
    }
    out
}

fn raw_bytes(rng: &mut Rng) -> Vec<u8> {
    let len = rng.below(300);
    (0..len)
        .map(|_| u8::try_from(rng.next() & 0xFF).unwrap())
        .collect()
}

fn same_facts(a: &Profile, b: &Profile) -> Result<(), String> {
    let facts = |p: &Profile| {
        (
            p.rows,
            p.duplicate_rows,
            p.bad_rows.clone(),
            p.columns
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        c.dtype,
                        c.count,
                        c.nulls,
                        c.distinct,
                        c.min.clone(),
                        c.max.clone(),
                    )
                })
                .collect::<Vec<_>>(),
        )
    };
    let (x, y) = (facts(a), facts(b));
    if x == y {
        Ok(())
    } else {
        Err(format!("sequential {x:?}\nchunked    {y:?}"))
    }
}

#[test]
fn random_inputs_never_panic_and_chunking_does_not_change_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let sequential = ProfileOptions {
        threads: 1,
        sample_rows: 3,
        ..ProfileOptions::default()
    };
    let chunked = ProfileOptions {
        threads: 2,
        chunk_bytes: 64,
        ..sequential.clone()
    };
    let mut rng = Rng(0x00C0_FFEE);
    let mut disagreements = Vec::new();
    let cases = 3_000;
    for case in 0..cases {
        let input = if case % 4 == 3 {
            raw_bytes(&mut rng)
        } else {
            csv_like(&mut rng)
        };
        let _ = Dialect::sniff(&input);
        let path = dir.path().join(format!("case{case}.csv"));
        std::fs::write(&path, &input).unwrap();
        let a = profile_reader(input.as_slice(), "case", &sequential, &|_, _| {});
        let b = profile_path(&path, &chunked, &|_, _| {});
        let verdict = match (&a, &b) {
            (Ok(a), Ok(b)) => same_facts(a, b),
            (Err(_), Err(_)) => Ok(()),
            (a, b) => Err(format!(
                "sequential {:?}\nchunked    {:?}",
                a.as_ref().err(),
                b.as_ref().err()
            )),
        };
        if let Err(why) = verdict
            && disagreements.len() < 5
        {
            disagreements.push(format!(
                "case {case}, input {:?}:\n{why}",
                String::from_utf8_lossy(&input)
            ));
        }
        std::fs::remove_file(&path).unwrap();
    }
    assert!(
        disagreements.is_empty(),
        "reading sequentially and in chunks disagree:\n{}",
        disagreements.join("\n\n")
    );
}

/// A U+FEFF character inside the data (not at the start of the file) is text, as pandas reads
/// it, whichever way the file is cut. Found by the test above (case 2084 of an earlier
/// generator, which put byte-order marks anywhere).
#[test]
fn a_byte_order_mark_inside_the_data_is_text() {
    let data: &[u8] = b"c0,c1,c2,c3,c4\n,null,\"\"\t-7a@b.coNA$1,234.56\r\n\
        2024-02-30$1,234.56NAa@b.coTrueinf2024-01-31\n\xef\xbb\xbf,,0123NA2024-02-302024-01-31\n\
        \rNA\n\"2024-01-31 10:00:00+02:00True2024-02-30infnulla@b.co-1.5e3\rinf2024-01-31T10:00:00Z,\
        \"\"\"\rNA-1.5e32024-02-30$1,234.56,\xc3\xa92024-01-31|\tnullfalse$1,234.563.25|false";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom_inside.csv");
    std::fs::write(&path, data).unwrap();
    let options = ProfileOptions {
        threads: 2,
        chunk_bytes: 64,
        ..ProfileOptions::default()
    };
    let chunked = profile_path(&path, &options, &|_, _| {}).unwrap();
    let whole = ProfileOptions {
        threads: 1,
        ..ProfileOptions::default()
    };
    let sequential = profile_reader(data, "bom_inside", &whole, &|_, _| {}).unwrap();
    same_facts(&sequential, &chunked).unwrap();
}

/// A field larger than the record limit (typically an unclosed quote) is an error naming the
/// line where the record starts, not a buffer that grows with the file.
#[test]
fn a_huge_field_is_an_error_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.csv");
    let mut data = b"id,text\n1,short\n2,\"".to_vec();
    data.extend(std::iter::repeat_n(b'x', 8_192));
    data.extend_from_slice(b"\n3,after\n");
    std::fs::write(&path, &data).unwrap();
    let options = ProfileOptions {
        max_record_bytes: 1_024,
        ..ProfileOptions::default()
    };
    let err = profile_path(&path, &options, &|_, _| {}).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("line 3"), "{message}");
    assert!(message.contains("huge.csv"), "{message}");
}

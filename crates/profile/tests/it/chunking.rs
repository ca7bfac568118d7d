//! Quote-aware chunking: any chunk size and any number of threads give the same profile.

use autocoder_profile::{Profile, ProfileOptions};

use crate::basics::profile_bytes;

/// A deterministic CSV with quoted commas, doubled quotes and newlines inside fields.
pub(crate) fn tricky_csv(rows: u64) -> String {
    let mut s = String::from("id,amount,comment,day,flag,zip\n");
    let mut x: u64 = 12345;
    for id in 1..=rows {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = x >> 33;
        let amount = if r.is_multiple_of(7) {
            "NA".to_string()
        } else {
            format!("{}.{}", r % 1000, r % 10)
        };
        let comment = match r % 5 {
            0 => format!("\"line one\nline \"\"{}\"\"\n\"", r % 13),
            1 => format!("\"a, b, {}\"", r % 11),
            2 => String::new(),
            _ => format!("plain {}", r % 17),
        };
        let day = format!("2024-{:02}-{:02}", 1 + r % 12, 1 + r % 28);
        let flag = ["True", "False", ""][(r % 3) as usize];
        writeln!(s, "{id},{amount},{comment},{day},{flag},{:05}", r % 100_000).unwrap();
    }
    s
}

use std::fmt::Write as _;

fn with(chunk_bytes: usize, threads: usize) -> ProfileOptions {
    ProfileOptions {
        chunk_bytes,
        threads,
        ..ProfileOptions::default()
    }
}

fn same_facts(a: &Profile, b: &Profile) {
    assert_eq!(a.rows, b.rows);
    assert_eq!(a.duplicate_rows, b.duplicate_rows);
    for (x, y) in a.columns.iter().zip(&b.columns) {
        assert_eq!(x.dtype, y.dtype, "{}", x.name);
        assert_eq!(
            (x.count, x.nulls, x.distinct),
            (y.count, y.nulls, y.distinct)
        );
        assert_eq!((&x.min, &x.max), (&y.min, &y.max));
        assert_eq!(x.top_values, y.top_values);
        assert_eq!(x.quantiles, y.quantiles);
        assert_eq!(x.monotonic, y.monotonic);
        assert_eq!(x.lengths, y.lengths);
        if let (Some(p), Some(q)) = (&x.numeric, &y.numeric) {
            assert!((p.mean - q.mean).abs() <= 1e-12 * p.mean.abs());
            let (ps, qs) = (p.std.unwrap(), q.std.unwrap());
            assert!((ps - qs).abs() <= 1e-12 * ps);
        }
    }
}

#[test]
fn threads_and_chunk_sizes_do_not_change_the_profile() {
    let text = tricky_csv(3000);
    let one = profile_bytes(text.as_bytes(), &with(1 << 30, 1));
    assert_eq!(one.rows, 3000);
    for chunk in [97, 1000, 4096] {
        let single = profile_bytes(text.as_bytes(), &with(chunk, 1));
        let mut many = profile_bytes(text.as_bytes(), &with(chunk, 4));
        many.source.clone_from(&single.source);
        assert_eq!(single, many, "chunk size {chunk}");
        same_facts(&one, &single);
    }
}

#[test]
fn a_stray_quote_falls_back_to_parsed_boundaries() {
    // `5"` has a quote inside an unquoted field: quote counting is misled, parsing is not.
    let mut text = String::from("a,b\n1,5\" tall\n");
    for i in 0..2000 {
        writeln!(text, "{i},\"x\ny\"").unwrap();
    }
    let whole = profile_bytes(text.as_bytes(), &with(1 << 30, 1));
    let chunked = profile_bytes(text.as_bytes(), &with(256, 2));
    assert_eq!(whole.rows, 2001);
    same_facts(&whole, &chunked);
}

#[test]
fn a_byte_order_mark_at_a_chunk_start_is_text() {
    // Only the file's first bytes may be a byte-order mark; a field holding U+FEFF at the start
    // of a later chunk is text, as pandas reads it.
    let text = "a,b\n1,x\n\u{feff},y\n\u{feff}2,z\n";
    let whole = profile_bytes(text.as_bytes(), &with(1 << 20, 1));
    let a = &whole.columns[0];
    assert_eq!((a.count, a.nulls, a.distinct), (3, 0, 3), "{a:?}");
    for threads in [1, 2] {
        let chunked = profile_bytes(text.as_bytes(), &with(1, threads));
        assert_eq!(chunked.columns, whole.columns, "{threads} threads");
    }
}

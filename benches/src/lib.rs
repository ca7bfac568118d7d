//! Benchmarks for autocoder. The criterion benchmarks live in `benches/benches/` (run them with
//! `cargo bench -p autocoder-benches`); the scripts in `benches/scripts/` time the whole CLI
//! against other tools on the same file in one run. This library holds the data generators the
//! benchmarks share.

use std::io::{self, Write};

/// A small deterministic random number generator (`splitmix64`), so generated data is the same
/// on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        let i = usize::try_from(self.below(items.len() as u64)).unwrap_or(0);
        items.get(i).copied().unwrap_or("")
    }
}

const CATEGORIES: [&str; 6] = [
    "pending",
    "shipped",
    "delivered",
    "returned",
    "lost",
    "on hold",
];
const WORDS: [&str; 12] = [
    "alpha", "beta", "gamma", "delta", "quick", "brown", "fox", "lazy", "dog", "data", "rust",
    "csv",
];

/// The header of [`write_mixed_csv`].
pub const MIXED_HEADER: &str =
    "id,amount,discount,status,comment,day,updated_at,email,uuid,active,zip,price\n";

/// Writes `rows` rows of a mixed CSV: integers, floats with nulls (`NA` and empty), categories,
/// free text with commas, quotes and newlines, ISO dates and datetimes, emails, UUIDs, booleans
/// with nulls, zero-padded zip codes and currency strings. About 150 bytes a row.
pub fn write_mixed_csv(out: &mut impl Write, rows: u64, seed: u64) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    out.write_all(MIXED_HEADER.as_bytes())?;
    for id in 1..=rows {
        let amount = rng.below(100_000);
        let discount = match rng.below(10) {
            0 => String::from("NA"),
            1 => String::new(),
            _ => format!("{}.{:02}", rng.below(50), rng.below(100)),
        };
        let status = rng.pick(&CATEGORIES);
        let comment = match rng.below(8) {
            0 => format!(
                "\"{} said \"\"{}\"\"\n{}\"",
                rng.pick(&WORDS),
                rng.pick(&WORDS),
                rng.pick(&WORDS)
            ),
            1 => format!("\"{}, {}\"", rng.pick(&WORDS), rng.pick(&WORDS)),
            _ => format!(
                "{} {} {}",
                rng.pick(&WORDS),
                rng.pick(&WORDS),
                rng.pick(&WORDS)
            ),
        };
        let day = format!(
            "20{:02}-{:02}-{:02}",
            10 + rng.below(15),
            1 + rng.below(12),
            1 + rng.below(28)
        );
        let at = format!(
            "{}T{:02}:{:02}:{:02}Z",
            day,
            rng.below(24),
            rng.below(60),
            rng.below(60)
        );
        let email = format!("user{}@example{}.com", rng.below(1_000_000), rng.below(10));
        let a = rng.next_u64();
        let b = rng.next_u64();
        let uuid = format!(
            "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            b >> 52,
            b & 0xffff_ffff_ffff
        );
        let active = match rng.below(5) {
            0 => "",
            1 | 2 => "True",
            _ => "False",
        };
        let zip = format!("{:05}", rng.below(100_000));
        let price = format!("${}.{:02}", rng.below(2000), rng.below(100));
        writeln!(
            out,
            "{id},{amount},{discount},{status},{comment},{day},{at},{email},{uuid},{active},{zip},{price}"
        )?;
    }
    Ok(())
}

/// [`write_mixed_csv`] into memory.
pub fn mixed_csv(rows: u64, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(usize::try_from(rows).unwrap_or(0) * 160);
    // Writing to a Vec cannot fail.
    let _ = write_mixed_csv(&mut out, rows, seed);
    out
}

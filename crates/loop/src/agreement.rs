//! How much two candidates' outputs agree when they are not equal: each output is cut into
//! cells (a scalar is one cell, a file one cell per line, numbers in a line to 6 significant
//! digits), and two candidates agree by the share of cells they have in common. Among scripts
//! the tests cannot tell apart, the one that agrees most with the others is the likeliest right
//! (minimum Bayes risk over the candidates, as in MBR-exec).

/// Cells one output contributes at most (the samples' outputs are small; this bounds a
/// journal entry).
const MAX_CELLS: usize = 2_000;

/// The cells of output `name` whose canonical text is `exact` (lines of a file; file names and
/// texts of a directory separated by NUL), as sorted hashes.
pub fn cells(name: &str, exact: &str) -> Vec<u64> {
    let mut cells: Vec<u64> = exact
        .split(['\n', '\0'])
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(MAX_CELLS)
        .map(|line| {
            let mut hash = fnv1a(FNV_OFFSET, name.as_bytes());
            hash = fnv1a(hash, b"\0");
            fnv1a(hash, normalized(line).as_bytes())
        })
        .collect();
    cells.sort_unstable();
    cells
}

/// A line with each comma-separated number written to 6 significant digits, so that `17.5`
/// and `17.50` (or float noise) are one cell.
fn normalized(line: &str) -> String {
    line.split(',')
        .map(|field| {
            let field = field.trim();
            match field.parse::<f64>() {
                Ok(v) if v.is_finite() => format!("{v:.5e}"),
                _ => field.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The share of cells two candidates have in common (multiset Jaccard, 0 to 1) of two sorted
/// cell lists; two empty lists agree on nothing.
pub fn similarity(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    if union == 0 {
        return 0.0;
    }
    // Cell counts are far below 2^52: exact as f64.
    common as f64 / union as f64
}

/// How much candidate `index` agrees with all the others (the sum of its similarities).
pub fn agreement(index: usize, all: &[&[u64]]) -> f64 {
    let Some(own) = all.get(index) else {
        return 0.0;
    };
    all.iter()
        .enumerate()
        .filter(|(other, _)| *other != index)
        .map(|(_, cells)| similarity(own, cells))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-12, "{got} is not {want}");
    }

    #[test]
    fn rows_in_another_order_or_with_float_noise_are_the_same_cells() {
        let a = cells("by_region.csv", "region,revenue\nnorth,17.5\nsouth,3");
        let b = cells(
            "by_region.csv",
            "region,revenue\nsouth,3.0\nnorth,17.500000001",
        );
        same(similarity(&a, &b), 1.0);
    }

    #[test]
    fn files_sharing_most_rows_agree_more_than_files_sharing_none() {
        let right = cells("out.csv", "k,v\na,1\nb,2\nc,3");
        let close = cells("out.csv", "k,v\na,1\nb,2\nc,4");
        let far = cells("out.csv", "total\n6");
        // The header and two rows in common, of five rows in either.
        same(similarity(&right, &close), 3.0 / 5.0);
        same(similarity(&right, &far), 0.0);
        assert!(agreement(0, &[&right, &close, &far]) > agreement(2, &[&right, &close, &far]));
    }

    #[test]
    fn the_same_text_under_another_output_name_is_another_cell() {
        same(similarity(&cells("a", "1"), &cells("b", "1")), 0.0);
    }

    #[test]
    fn repeated_rows_count_as_many_times_as_they_occur() {
        let twice = cells("o", "x\nx");
        let once = cells("o", "x");
        same(similarity(&twice, &once), 0.5);
    }

    #[test]
    fn nothing_agrees_with_nothing() {
        same(similarity(&[], &[]), 0.0);
        same(agreement(3, &[]), 0.0);
    }
}

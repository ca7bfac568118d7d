//! Profiles a file and prints the wall time, rows and columns: `cargo run --release -p
//! autocoder-benches --example profile_file -- PATH [THREADS]`. With `--generate ROWS PATH`,
//! writes the mixed benchmark CSV first.
#![allow(clippy::print_stdout, clippy::unwrap_used)] // a measuring tool, not a library

use std::path::Path;
use std::time::Instant;

use autocoder_profile::{ProfileOptions, profile_path};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--generate") {
        let rows: u64 = args[1].parse().unwrap();
        let file = std::fs::File::create(&args[2]).unwrap();
        let mut out = std::io::BufWriter::new(file);
        autocoder_benches::write_mixed_csv(&mut out, rows, 42).unwrap();
        return;
    }
    let options = ProfileOptions {
        threads: args.get(1).map_or(0, |t| t.parse().unwrap()),
        ..ProfileOptions::default()
    };
    let start = Instant::now();
    let profile = profile_path(Path::new(&args[0]), &options, &|_, _| {}).unwrap();
    let elapsed = start.elapsed();
    println!(
        "{} bytes, {} rows, {} columns in {:.3} s ({:.0} MB/s)",
        profile.bytes,
        profile.rows,
        profile.columns.len(),
        elapsed.as_secs_f64(),
        profile.bytes as f64 / 1e6 / elapsed.as_secs_f64()
    );
    for c in &profile.columns {
        println!(
            "  {:12} {:9} nulls={} distinct={}",
            c.name, c.dtype, c.nulls, c.distinct
        );
    }
}

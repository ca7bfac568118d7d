//! Parse and inference throughput on generated mixed CSV.
#![allow(clippy::unwrap_used, missing_docs)] // criterion's macros generate undocumented items

use std::hint::black_box;

use autocoder_profile::{ProfileOptions, profile_reader};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn parse_only(data: &[u8]) -> u64 {
    let mut reader = csv_core::Reader::new();
    let mut out = vec![0u8; 1 << 16];
    let mut ends = vec![0usize; 64];
    let mut input = data;
    let mut records = 0;
    loop {
        let (result, nin, _, _) = reader.read_record(input, &mut out, &mut ends);
        input = &input[nin..];
        match result {
            csv_core::ReadRecordResult::Record => records += 1,
            csv_core::ReadRecordResult::End => return records,
            _ => {}
        }
    }
}

fn benches(c: &mut Criterion) {
    let data = autocoder_benches::mixed_csv(100_000, 7);
    let mut group = c.benchmark_group("mixed_csv_100k_rows");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.sample_size(10);
    group.bench_function("csv_core_parse_only", |b| {
        b.iter(|| parse_only(black_box(&data)));
    });
    for threads in [1, 2] {
        let options = ProfileOptions {
            threads,
            ..ProfileOptions::default()
        };
        group.bench_function(format!("profile_{threads}_threads"), |b| {
            b.iter(|| profile_reader(black_box(&data[..]), "bench", &options, &|_, _| {}).unwrap());
        });
    }
    group.finish();
}

criterion_group!(profile, benches);
criterion_main!(profile);

//! Where the profiler's time goes, stage by stage, on one file: `cargo run --release -p
//! autocoder-benches --example stages -- PATH [THREADS] [--json OUT]`. Runs the profile three
//! times with less and less of the per-record work left out (parse only; parse and type
//! inference; everything) and reports wall and CPU seconds of each, the differences as the
//! stages' costs, and the calling thread's merge and finish time. `compare.sh` runs it after
//! the comparison; the numbers go into `benches/compare/README.md`.
#![allow(clippy::print_stdout, clippy::unwrap_used)] // a measuring tool, not a library

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use autocoder_profile::{ProfileOptions, StageTimes, Stages, profile_path};

/// User + system CPU seconds of this process so far (Linux: `/proc/self/stat`).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name in parentheses; utime and stime are the 14th and 15th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|t| t.parse::<f64>().ok()).sum()
    });
    ticks / 100.0
}

struct Run {
    wall: f64,
    cpu: f64,
    merge: f64,
    finish: f64,
}

fn run(path: &Path, threads: usize, stages: Stages) -> Run {
    let times = Arc::new(StageTimes::default());
    let options = ProfileOptions {
        threads,
        stages,
        stage_times: Some(Arc::clone(&times)),
        ..ProfileOptions::default()
    };
    let (cpu, start) = (cpu_seconds(), Instant::now());
    let profile = profile_path(path, &options, &|_, _| {}).unwrap();
    std::hint::black_box(&profile);
    Run {
        wall: start.elapsed().as_secs_f64(),
        cpu: cpu_seconds() - cpu,
        merge: times.merge_ns.load(Ordering::Relaxed) as f64 / 1e9,
        finish: times.finish_ns.load(Ordering::Relaxed) as f64 / 1e9,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = Path::new(&args[0]);
    let threads = args.get(1).and_then(|t| t.parse().ok()).unwrap_or(0);
    let json = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1));
    // Warm the page cache and the allocator once.
    let _ = run(path, threads, Stages::Parse);
    let best = |stages| {
        (0..3)
            .map(|_| run(path, threads, stages))
            .min_by(|a, b| a.wall.total_cmp(&b.wall))
            .unwrap()
    };
    let parse = best(Stages::Parse);
    let infer = best(Stages::Infer);
    let all = best(Stages::All);
    let rows = [
        ("parse (chunking, splitting fields)", parse.wall, parse.cpu),
        (
            "type inference (classify, type statistics)",
            infer.wall - parse.wall,
            infer.cpu - parse.cpu,
        ),
        (
            "sketches (counts, HLL, samples, patterns, extremes, duplicates)",
            all.wall - infer.wall,
            all.cpu - infer.cpu,
        ),
    ];
    println!(
        "{} ({} threads; best of 3 per stage)",
        path.display(),
        threads
    );
    println!("{:66} {:>8} {:>8}", "stage", "wall s", "CPU s");
    for (name, wall, cpu) in rows {
        println!("{name:66} {wall:8.2} {cpu:8.2}");
    }
    println!(
        "{:66} {:8.2} {:>8}",
        "  of which merge on the calling thread (overlaps the workers)", all.merge, ""
    );
    println!(
        "{:66} {:8.2} {:>8}",
        "  finish (after the pass)", all.finish, ""
    );
    println!("{:66} {:8.2} {:8.2}", "total", all.wall, all.cpu);
    if let Some(out) = json {
        let text = format!(
            "{{\"threads\": {threads}, \"parse_s\": {:.3}, \"infer_s\": {:.3}, \"all_s\": {:.3}, \
             \"parse_cpu_s\": {:.3}, \"infer_cpu_s\": {:.3}, \"all_cpu_s\": {:.3}, \
             \"merge_s\": {:.3}, \"finish_s\": {:.3}}}\n",
            parse.wall, infer.wall, all.wall, parse.cpu, infer.cpu, all.cpu, all.merge, all.finish
        );
        std::fs::write(out, text).unwrap();
    }
}

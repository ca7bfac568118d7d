//! The page looks like the committed reference screenshot, within a tolerance for font
//! rendering. `AUTOCODER_UPDATE_SCREENSHOTS=1` rewrites the reference (and `docs/report.png`)
//! after an intended change to the page.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::{browser, real, root};

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 1500;
/// A pixel differs when one of its channels differs by more than this.
const CHANNEL: u8 = 40;
/// The share of differing pixels allowed (antialiasing and hinting of text).
const TOLERANCE: f64 = 0.02;

struct Image {
    width: u32,
    height: u32,
    /// RGB, row by row.
    rgb: Vec<[u8; 3]>,
}

fn decode(path: &Path) -> Image {
    let file =
        BufReader::new(File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| match channels {
            1 | 2 => [p[0], p[0], p[0]],
            _ => [p[0], p[1], p[2]],
        })
        .collect();
    Image {
        width: info.width,
        height: info.height,
        rgb,
    }
}

/// The share of pixels that differ.
fn difference(a: &Image, b: &Image) -> f64 {
    assert_eq!((a.width, a.height), (b.width, b.height), "sizes differ");
    let differing = a
        .rgb
        .iter()
        .zip(&b.rgb)
        .filter(|(x, y)| {
            x.iter()
                .zip(y.iter())
                .any(|(p, q)| p.abs_diff(*q) > CHANNEL)
        })
        .count();
    differing as f64 / a.rgb.len() as f64
}

fn shoot(file: &str, dir: &Path) -> PathBuf {
    let html = dir.join(format!("{file}.html"));
    std::fs::write(&html, autocoder_report::html(&real(file))).unwrap();
    let png = dir.join(format!("{file}.png"));
    let run = browser::screenshot(&html, &png, WIDTH, HEIGHT);
    assert!(run.console.is_empty(), "console: {:#?}", run.console);
    png
}

#[test]
fn penguins_raw_looks_like_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let actual = shoot("penguins_raw.csv", dir.path());
    let reference =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/reference/penguins_raw.png");
    if std::env::var_os("AUTOCODER_UPDATE_SCREENSHOTS").is_some() {
        std::fs::copy(&actual, &reference).unwrap();
        std::fs::copy(&actual, root().join("docs/report.png")).unwrap();
    }
    let share = difference(&decode(&actual), &decode(&reference));
    println!(
        "{:.3}% of the pixels differ from the reference",
        share * 100.0
    );
    if share > TOLERANCE {
        let kept = std::env::temp_dir().join("autocoder-report-penguins_raw.png");
        std::fs::copy(&actual, &kept).unwrap();
        panic!(
            "{:.2}% of the pixels differ from {} (at most {:.0}% may): see {}; if the change is \
             intended, rerun with AUTOCODER_UPDATE_SCREENSHOTS=1",
            share * 100.0,
            reference.display(),
            TOLERANCE * 100.0,
            kept.display()
        );
    }
    // The comparison tells pages apart: another file's page is far beyond the tolerance.
    let other = shoot("stocks.csv", dir.path());
    let apart = difference(&decode(&other), &decode(&reference));
    println!("another file's page: {:.1}% differ", apart * 100.0);
    assert!(apart > 5.0 * TOLERANCE, "{apart}");
}

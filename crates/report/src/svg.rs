//! The charts, drawn as inline SVG: a histogram, a bar chart of frequent values and the
//! missing-values matrix. Sizes are fixed (the page lays them out), coordinates are rounded to
//! a tenth of a pixel to keep the page small, and every label from the data is escaped.

use std::fmt::Write as _;

use autocoder_profile::render::format::{human, human_scalar};
use autocoder_profile::{Histogram, Profile, ValueCount};

use crate::alerts::percent;
use crate::escape::{short, text};

/// Width of the column charts.
const WIDTH: f64 = 320.0;

/// An equal-width histogram: one bar per bin with its range and count as a tooltip, the
/// extremes under the axis and the largest count above it.
pub(crate) fn histogram(h: &Histogram, label: &str) -> String {
    const HEIGHT: f64 = 150.0;
    const TOP: f64 = 14.0;
    const BOTTOM: f64 = 122.0;
    let mut out = open(WIDTH, HEIGHT, &format!("histogram of {label}"));
    let top = h.bins.iter().map(|b| b.count).max().unwrap_or(0).max(1);
    let n = h.bins.len().max(1) as f64;
    let step = (WIDTH - 8.0) / n;
    for (i, bin) in h.bins.iter().enumerate() {
        let height = (BOTTOM - TOP) * bin.count as f64 / top as f64;
        let height = if bin.count > 0 { height.max(1.0) } else { 0.0 };
        let x = 4.0 + step * i as f64;
        let _ = write!(
            out,
            r#"<rect class="bar" x="{x:.1}" y="{:.1}" width="{:.1}" height="{height:.1}"><title>{} to {}: {}</title></rect>"#,
            BOTTOM - height,
            (step - 1.0).max(0.5),
            text(&human_scalar(&bin.lo)),
            text(&human_scalar(&bin.hi)),
            bin.count
        );
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="4" y1="{BOTTOM}" x2="{}" y2="{BOTTOM}"/>"#,
        WIDTH - 4.0
    );
    if let (Some(first), Some(last)) = (h.bins.first(), h.bins.last()) {
        let _ = write!(
            out,
            r#"<text x="4" y="138">{}</text><text x="{}" y="138" text-anchor="end">{}</text>"#,
            short(&human_scalar(&first.lo), 24),
            WIDTH - 4.0,
            short(&human_scalar(&last.hi), 24)
        );
    }
    let _ = write!(
        out,
        r#"<text x="4" y="10" class="muted">max {top} per bin{}</text>"#,
        if h.exact {
            ""
        } else {
            " (scaled from a sample)"
        }
    );
    out.push_str("</svg>");
    out
}

/// Horizontal bars of the most frequent values, with `other` (the values not listed) as a
/// last bar when known.
pub(crate) fn bars(values: &[ValueCount], other: Option<u64>, label: &str) -> String {
    const ROW: f64 = 18.0;
    const LABEL: f64 = 118.0;
    let rows = values.len() + usize::from(other.is_some_and(|o| o > 0));
    let height = ROW * rows as f64 + 4.0;
    let mut out = open(WIDTH, height, &format!("frequent values of {label}"));
    // Scaled to the listed values: the other values (often most of them) would squash them;
    // their bar is cut at the full width.
    let top = values.iter().map(|v| v.count).max().unwrap_or(0).max(1);
    let span = WIDTH - LABEL - 50.0;
    let listed = values
        .iter()
        .map(|v| (short(&v.value, 18), short(&v.value, 200), v.count, ""))
        .chain(other.filter(|o| *o > 0).map(|o| {
            let name = "(other values)".to_owned();
            (name.clone(), name, o, " muted")
        }));
    for (i, (name, full, count, class)) in listed.enumerate() {
        let y = 2.0 + ROW * i as f64;
        let w = (span * count as f64 / top as f64).clamp(1.0, span);
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" class="label{class}">{name}</text><rect class="bar{class}" x="{LABEL}" y="{:.1}" width="{w:.1}" height="{:.1}"><title>{full}: {count}</title></rect><text x="{:.1}" y="{:.1}">{count}</text>"#,
            LABEL - 6.0,
            y + 12.5,
            y + 2.0,
            ROW - 4.0,
            LABEL + w + 4.0,
            y + 12.5,
        );
    }
    out.push_str("</svg>");
    out
}

/// The missing-values matrix: per column a bar of its present share over all rows (a tooltip
/// gives the count), then one line per sample row with its missing fields left blank.
pub(crate) fn missing_matrix(profile: &Profile) -> String {
    const LABELS: f64 = 90.0;
    const BAR: f64 = 30.0;
    const GAP: f64 = 8.0;
    let n = profile.columns.len().max(1);
    let cell = (880.0 / n as f64).clamp(6.0, 48.0);
    let samples = profile.samples.len();
    let row = if samples > 40 { 3.0 } else { 6.0 };
    let matrix_top = LABELS + BAR + GAP;
    let width = cell * n as f64 + 110.0;
    let height = matrix_top + row * samples as f64 + 4.0;
    let mut out = open(width, height, "missing values per column");
    for (j, column) in profile.columns.iter().enumerate() {
        let x = cell * j as f64;
        let rows = column.count + column.nulls;
        let present = if rows == 0 {
            0.0
        } else {
            column.count as f64 / rows as f64
        };
        let _ = write!(
            out,
            r#"<text class="small" transform="translate({:.1} {:.1}) rotate(-60)">{}</text>"#,
            x + cell / 2.0 + 3.0,
            LABELS - 4.0,
            short(&column.name, 16)
        );
        let _ = write!(
            out,
            r#"<rect class="track" x="{x:.1}" y="{LABELS}" width="{:.1}" height="{BAR}"/><rect class="bar" x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}"><title>{}: {} missing ({})</title></rect>"#,
            (cell - 1.0).max(1.0),
            LABELS + BAR * (1.0 - present),
            (cell - 1.0).max(1.0),
            BAR * present,
            short(&column.name, 60),
            column.nulls,
            percent(column.nulls, rows)
        );
    }
    if samples > 0 {
        let _ = write!(
            out,
            r#"<rect class="bar" x="0" y="{matrix_top}" width="{:.1}" height="{:.1}"/>"#,
            cell * n as f64 - 1.0,
            row * samples as f64
        );
        let mut path = String::new();
        for j in 0..profile.columns.len() {
            let x = cell * j as f64;
            let missing = |i: usize| {
                profile.samples[i]
                    .values
                    .get(j)
                    .is_none_or(|v| profile.nulls.is_null(v.as_bytes()))
            };
            let mut i = 0;
            while i < samples {
                if missing(i) {
                    let start = i;
                    while i < samples && missing(i) {
                        i += 1;
                    }
                    let _ = write!(
                        path,
                        "M{x:.1} {:.1}h{cell:.1}v{:.1}h-{cell:.1}z",
                        matrix_top + row * start as f64,
                        row * (i - start) as f64
                    );
                } else {
                    i += 1;
                }
            }
        }
        if !path.is_empty() {
            let _ = write!(out, r#"<path class="gap" d="{path}"/>"#);
        }
        let _ = write!(
            out,
            r#"<text class="small" x="{:.1}" y="{:.1}">all rows</text><text class="small" x="{:.1}" y="{:.1}">{samples} sample rows</text>"#,
            cell * n as f64 + 4.0,
            LABELS + BAR / 2.0 + 4.0,
            cell * n as f64 + 4.0,
            matrix_top + 10.0
        );
    }
    out.push_str("</svg>");
    out
}

/// `<svg ...>` of a fixed size with an accessible name.
fn open(width: f64, height: f64, label: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{}">"#,
        short(label, 80)
    )
}

/// A count with its share: `12 (3.5%)`.
pub(crate) fn count_share(part: u64, whole: u64) -> String {
    format!("{part} ({})", percent(part, whole))
}

/// A statistic rounded for people, or a dash.
pub(crate) fn stat(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), human)
}

#[cfg(test)]
mod tests {
    use autocoder_profile::HistogramBin;
    use autocoder_schema::Scalar;

    use super::*;

    #[test]
    fn histogram_has_a_bar_per_bin_with_rounded_bounds() {
        let h = Histogram {
            bins: vec![
                HistogramBin {
                    lo: Scalar::Float(32.1),
                    hi: Scalar::Float(34.843_333_333_333_33),
                    count: 5,
                },
                HistogramBin {
                    lo: Scalar::Float(34.843_333_333_333_33),
                    hi: Scalar::Float(37.586_666_666_666_67),
                    count: 0,
                },
            ],
            exact: true,
        };
        let svg = histogram(&h, "bill <length>");
        assert_eq!(svg.matches("<rect").count(), 2);
        assert!(svg.contains("<title>32.1 to 34.84: 5</title>"), "{svg}");
        assert!(!svg.contains("34.84333"), "{svg}");
        assert!(svg.contains("aria-label=\"histogram of bill &lt;length&gt;\""));
        assert!(svg.ends_with("</svg>"));
    }

    #[test]
    fn bars_escape_values_and_add_the_other_values() {
        let values = vec![
            ValueCount {
                value: "<b>x</b>".to_owned(),
                count: 4,
            },
            ValueCount {
                value: "y".to_owned(),
                count: 2,
            },
        ];
        let svg = bars(&values, Some(3), "c");
        assert!(svg.contains("&lt;b&gt;x&lt;/b&gt;"), "{svg}");
        assert!(!svg.contains("<b>"), "{svg}");
        assert!(svg.contains("(other values)"));
        assert_eq!(svg.matches("<rect").count(), 3);
        assert_eq!(bars(&values, Some(0), "c").matches("<rect").count(), 2);
    }
}

//! The page in the browser: no console messages, charts in the rendered DOM, nothing from the
//! data turned into markup.

use crate::{browser, csv, real};

/// Writes `html` to a file in `dir` and returns its path.
fn write(dir: &tempfile::TempDir, name: &str, html: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, html).unwrap();
    path
}

#[test]
fn penguins_load_without_console_messages_and_draw_their_charts() {
    let dir = tempfile::tempdir().unwrap();
    let profile = real("penguins.csv");
    let page = write(&dir, "penguins.html", &autocoder_report::html(&profile));
    let run = browser::dom(&page);
    assert!(run.console.is_empty(), "console: {:#?}", run.console);
    // One matrix, and one chart per column: histograms for the measurements, bars for the rest.
    assert_eq!(run.stdout.matches("<svg").count(), 1 + 8, "{}", run.stdout);
    assert_eq!(run.stdout.matches("aria-label=\"histogram of").count(), 4);
    assert_eq!(
        run.stdout
            .matches("aria-label=\"frequent values of")
            .count(),
        4
    );
    // Bars are in the DOM with their tooltips, rounded like the text report.
    assert!(run.stdout.contains("<rect class=\"bar\""));
    assert!(
        run.stdout.contains("<td>43.92</td>"),
        "the mean of bill_length_mm"
    );
    assert!(!run.stdout.contains("43.9219"), "statistics are rounded");
}

#[test]
fn the_console_check_sees_errors_and_blocked_loads() {
    // The same page with a script and a remote image added: the policy blocks both, and the
    // browser reports it on the console, so the check above can fail.
    let dir = tempfile::tempdir().unwrap();
    let html = autocoder_report::html(&real("penguins.csv")).replace(
        "<main>",
        "<main><script>console.log('ran')</script><img src=\"http://127.0.0.1:9/x.png\">",
    );
    let page = write(&dir, "bad.html", &html);
    let run = browser::dom(&page);
    assert!(
        run.console.iter().any(|l| l.contains("script")),
        "{:#?}",
        run.console
    );
    assert!(
        run.console.iter().any(|l| l.contains("img-src")),
        "{:#?}",
        run.console
    );
    assert!(!run.console.iter().any(|l| l.contains("\"ran\"")));
}

#[test]
fn markup_in_names_and_values_stays_text() {
    let dir = tempfile::tempdir().unwrap();
    let text = "\"<script>console.log('name')</script>\",b\n\
                \"<img src=x onerror=console.log('value')>\",1\n\
                \"</td></tr></table><h1>x</h1>\",2\n\
                \"<svg onload=console.log(1)>\",\n";
    let profile = csv(text, "<b>evil</b>.csv");
    let page = write(&dir, "evil.html", &autocoder_report::html(&profile));
    let run = browser::dom(&page);
    assert!(run.console.is_empty(), "console: {:#?}", run.console);
    let dom = &run.stdout;
    assert!(!dom.contains("<script"), "{dom}");
    assert!(!dom.contains("<img"), "{dom}");
    assert!(!dom.contains("<h1>x</h1>"), "{dom}");
    assert!(!dom.contains("<b>evil"), "{dom}");
    assert!(
        dom.contains("&lt;script&gt;console.log('name')&lt;/script&gt;"),
        "{dom}"
    );
    assert!(
        dom.contains("<title>&lt;img src=x onerror=console.log('value')&gt;: 1</title>"),
        "{dom}"
    );
    // Only the charts are SVG: the matrix (with the names as labels) and two bar charts.
    assert_eq!(dom.matches("<svg").count(), 3, "{dom}");
}

#[test]
fn several_datasets_share_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let (iris, stocks) = (real("iris.csv"), real("stocks.csv"));
    let html = autocoder_report::html_many("Samples", &[("iris", &iris), ("stocks", &stocks)]);
    let page = write(&dir, "two.html", &html);
    let run = browser::dom(&page);
    assert!(run.console.is_empty(), "console: {:#?}", run.console);
    assert!(run.stdout.contains("<a href=\"#d1\">stocks</a>"));
    assert!(run.stdout.contains("id=\"d1-c2\""));
    // Neither has missing values: no matrix, one chart per column.
    assert_eq!(run.stdout.matches("none in any column").count(), 2);
    let charts = iris.columns.len() + stocks.columns.len();
    assert_eq!(run.stdout.matches("<svg").count(), charts);
}

#[test]
fn the_page_loads_nothing_from_anywhere() {
    let html = autocoder_report::html(&real("penguins_raw.csv"));
    for needle in [
        "<script",
        "<link",
        "src=",
        "@import",
        "url(",
        "https://",
        "@font-face",
    ] {
        assert!(!html.contains(needle), "{needle}");
    }
    // The only URL is the SVG namespace, which is a name, not a load.
    assert!(
        html.replace("http://www.w3.org/2000/svg", "")
            .find("http://")
            .is_none()
    );
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
}

#[test]
fn odd_tables_render_whole_pages() {
    // A header and no rows, a column with nothing but missing values, a huge value.
    let huge = "x".repeat(20_000);
    for (case, text) in [
        "a,b\n".to_owned(),
        "only\n\n\n".to_owned(),
        "a,gone\n1,\n2,NA\n".to_owned(),
        format!("big,n\n{huge},1\n{huge},2\n"),
    ]
    .iter()
    .enumerate()
    {
        let profile = csv(text, "odd.csv");
        let html = autocoder_report::html(&profile);
        assert!(html.ends_with("</body></html>\n"), "case {case}");
        assert_eq!(
            html.matches("<article").count(),
            profile.columns.len(),
            "case {case}"
        );
        assert!(html.len() < 40_000, "case {case}: {} bytes", html.len());
    }
    let html = autocoder_report::html(&csv("a,gone\n1,\n2,NA\n", "odd.csv"));
    assert!(
        html.contains("gone</a>: all 2 values are missing"),
        "{html}"
    );
}

#[test]
fn a_notebook_gets_the_page_inside_a_sandboxed_frame() {
    let profile = csv("name,note\nann,<b>x</b> & 'y'\n", "notes.csv");
    let cell = autocoder_report::notebook(&profile);
    let srcdoc = cell
        .strip_prefix("<iframe sandbox srcdoc=\"")
        .and_then(|rest| rest.split_once('"'))
        .map(|(srcdoc, _)| srcdoc)
        .unwrap();
    assert!(!srcdoc.contains('<') && !srcdoc.contains('\''), "{srcdoc}");
    let decoded = srcdoc
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    assert_eq!(decoded, autocoder_report::html(&profile));
    assert!(cell.ends_with("></iframe>"));
}

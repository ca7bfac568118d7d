//! Renders a [`Profile`] as one self-contained HTML page: a dataset overview (rows, columns,
//! duplicate rows, missing cells, a missing-values matrix), alerts, a table of the columns,
//! then per column its type, missing and distinct counts, extremes, moments, quantiles, a
//! histogram or bar chart drawn as inline SVG, frequent values, patterns and shapes, and
//! finally sample rows.
//!
//! The page loads nothing: no scripts, fonts, images or style sheets from anywhere, and its
//! content security policy forbids them, so it opens offline and a value from the data cannot
//! run code. Every text from the data is escaped ([`escape`](crate) module); statistics are
//! rounded to four significant digits as in the terminal report
//! ([`autocoder_profile::render::format::human`]). [`alerts`] are computed on their own.
//!
//! ```
//! use autocoder_profile::{ProfileOptions, profile_reader};
//!
//! let csv = "id,price\n1,9.5\n2,12.25\n";
//! let profile = profile_reader(csv.as_bytes(), "prices.csv", &ProfileOptions::default(), &|_, _| {})?;
//! let page = autocoder_report::html(&profile);
//! assert!(page.starts_with("<!DOCTYPE html>"));
//! assert!(page.contains("<svg"));
//! # Ok::<(), autocoder_profile::ProfileError>(())
//! ```

pub mod alerts;
mod column;
mod date_shape;
mod escape;
mod page;
mod svg;

use autocoder_profile::Profile;
use autocoder_profile::render::format::source;

/// The page for one profile, titled by its file.
pub fn html(profile: &Profile) -> String {
    let name = source(profile);
    page::document(&name, &[(name.as_str(), profile)])
}

/// The page for one profile inside an `<iframe>` (its `srcdoc`, sandboxed), for a notebook
/// cell: the page keeps its own styles and content security policy, and the notebook's stay
/// untouched.
pub fn notebook(profile: &Profile) -> String {
    format!(
        "<iframe sandbox srcdoc=\"{}\" style=\"width: 100%; height: 720px; border: 0\" \
         title=\"{}\"></iframe>",
        escape::markup(&html(profile)),
        escape::text(&source(profile))
    )
}

/// One page for several profiles under `title`, each named (a file, or a sample's name), with
/// links between them.
pub fn html_many(title: &str, datasets: &[(&str, &Profile)]) -> String {
    page::document(title, datasets)
}

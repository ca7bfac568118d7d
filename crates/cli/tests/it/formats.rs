//! Every output format, input from stdin and `.gz`, several files, and the reading options.

use std::process::{Command, Stdio};

use autocoder_profile::Profile;
use autocoder_schema::DataType;

use crate::{autocoder, autocoder_with_stdin, stdout_of, testdata};

fn penguins() -> String {
    testdata("real/penguins.csv").display().to_string()
}

fn json_profile(args: &[&str]) -> Profile {
    let mut all = vec!["profile", "--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&stdout_of(&all)).expect("--format json is a Profile")
}

#[test]
fn text_is_the_default_and_names_every_column() {
    let out = autocoder(&["profile", &penguins()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("344 rows, 8 columns"), "{text}");
    for column in [
        "species",
        "island",
        "bill_length_mm",
        "bill_depth_mm",
        "flipper_length_mm",
        "body_mass_g",
        "sex",
        "year",
    ] {
        assert!(text.contains(column), "{column} missing from:\n{text}");
    }
    // Rounded for people: pandas gives mean 43.9219298245614 for bill_length_mm.
    assert!(text.contains("43.92"), "{text}");
    // stderr is not a terminal here: no progress bar, nothing at all.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn json_is_the_documented_profile() {
    let profile = json_profile(&[&penguins()]);
    assert_eq!(profile.format_version, autocoder_profile::FORMAT_VERSION);
    assert_eq!(profile.rows, 344);
    let names: Vec<&str> = profile.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names[0], "species");
    let bill = &profile.columns[2];
    assert_eq!(bill.dtype, DataType::Float);
    assert_eq!(bill.nulls, 2);
    let year = &profile.columns[7];
    assert_eq!(year.dtype, DataType::Integer);
    let flipper = &profile.columns[4];
    // `NA` in an integer column: still integer (pandas Int64), nullable.
    assert_eq!(flipper.dtype, DataType::Integer);
    assert!(flipper.nullable);
    assert_eq!(profile.samples.len(), 100);
}

#[test]
fn sample_rows_and_seed_are_honoured() {
    let a = json_profile(&["--sample-rows", "7", "--seed", "3", &penguins()]);
    let b = json_profile(&[
        "--sample-rows",
        "7",
        "--seed",
        "3",
        "--threads",
        "1",
        &penguins(),
    ]);
    assert_eq!(a.samples.len(), 7);
    assert_eq!(a.samples, b.samples, "same seed, same samples");
}

#[test]
fn context_of_twenty_columns_fits_in_about_1500_tokens() {
    let file = testdata("tricky/wide_20_columns.csv");
    let context = stdout_of(&[
        "profile",
        "--format",
        "context",
        &file.display().to_string(),
    ]);
    assert!(
        context.len() <= 6_000,
        "{} bytes (> 6,000, about 1,500 tokens):\n{context}",
        context.len()
    );
    for column in [
        "order_id",
        "customer_email",
        "warehouse_uuid",
        "notes",
        "is_gift",
    ] {
        assert!(context.contains(column), "{column} missing:\n{context}");
    }
    assert!(context.contains("300 rows, 20 columns"), "{context}");
}

#[test]
fn stdin_reads_the_same_data_as_the_file() {
    let bytes = std::fs::read(testdata("real/penguins.csv")).unwrap();
    let out = autocoder_with_stdin(&["profile", "--format", "json", "-"], Some(&bytes));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_stdin: Profile = serde_json::from_slice(&out.stdout).unwrap();
    let from_file = json_profile(&[&penguins()]);
    assert_eq!(from_stdin.source, "-");
    assert_eq!(from_stdin.rows, from_file.rows);
    assert_eq!(from_stdin.columns, from_file.columns);
}

#[test]
fn gzip_input_is_decompressed() {
    let gz = json_profile(&[&testdata("tricky/na_markers.csv.gz").display().to_string()]);
    let plain = json_profile(&[&testdata("tricky/na_markers.csv").display().to_string()]);
    assert_eq!(gz.rows, 10);
    assert_eq!(gz.columns, plain.columns);
    let nulls: Vec<u64> = gz.columns.iter().map(|c| c.nulls).collect();
    assert_eq!(nulls, [0, 7, 3, 4], "the NA markers count as missing");
    assert_eq!(gz.columns[2].dtype, DataType::Integer);
}

#[test]
fn several_files_give_a_json_array_and_several_sections() {
    let a = penguins();
    let b = testdata("tricky/bom.csv").display().to_string();
    let json = stdout_of(&["profile", "--format", "json", &a, &b]);
    let profiles: Vec<Profile> = serde_json::from_str(&json).unwrap();
    assert_eq!(profiles.len(), 2);
    assert_eq!(
        profiles[1].columns[0].name, "name",
        "the BOM is not part of the name"
    );
    let text = stdout_of(&["profile", &a, &b]);
    assert!(
        text.contains("344 rows") && text.contains("3 rows"),
        "{text}"
    );
}

#[test]
fn delimiter_and_header_options() {
    let semi = json_profile(&[
        "--delimiter",
        ";",
        &testdata("tricky/semicolon.csv").display().to_string(),
    ]);
    assert_eq!(semi.columns.len(), 4);
    assert_eq!(semi.dialect.delimiter, b';');
    let tabs = json_profile(&[&testdata("tricky/tabs.tsv").display().to_string()]);
    assert_eq!(tabs.dialect.delimiter, b'\t', "tab is sniffed");
    let pipes = json_profile(&[&testdata("tricky/pipes.csv").display().to_string()]);
    assert_eq!(pipes.dialect.delimiter, b'|', "pipe is sniffed");
    let headless = json_profile(&[
        "--no-header",
        &testdata("tricky/no_header.csv").display().to_string(),
    ]);
    assert_eq!(headless.rows, 3);
    assert!(!headless.dialect.has_header);
}

#[test]
fn na_values_are_configurable() {
    let file = testdata("tricky/na_markers.csv").display().to_string();
    let strict = json_profile(&["--no-default-na", &file]);
    // Without pandas' defaults, `NA` is text: `score` becomes a string column.
    assert_eq!(strict.columns[1].dtype, DataType::String);
    let extra = json_profile(&["--na-value", "alpha", &file]);
    assert_eq!(extra.columns[3].nulls, 5, "`alpha` is now missing too");
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_autocoder"))
        .args(["profile", "--format", "json", &penguins(), &penguins()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before anything is written
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn help_documents_the_exit_codes() {
    let help = stdout_of(&["profile", "--help"]);
    assert!(help.contains("Exit codes:"), "{help}");
    for flag in [
        "--format",
        "--delimiter",
        "--no-header",
        "--na-value",
        "--no-default-na",
        "--sample-rows",
        "--seed",
        "--threads",
        "--quiet",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

#[test]
fn html_writes_one_self_contained_page() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let page_arg = page.display().to_string();
    let out = autocoder(&["profile", &penguins(), "--html", &page_arg]);
    assert!(out.status.success());
    // The usual output still goes to stdout.
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("344 rows, 8 columns")
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert_eq!(html.matches("<svg").count(), 1 + 8);
    assert!(
        html.contains("<td>43.92</td>"),
        "rounded as the text report"
    );
    // `--format html` prints the same page; two files share one page.
    assert_eq!(
        stdout_of(&["profile", "--format", "html", &penguins()]),
        html
    );
    let iris = testdata("real/iris.csv").display().to_string();
    let both = stdout_of(&["profile", "--format", "html", &penguins(), &iris]);
    assert!(both.contains("<title>2 files</title>"), "{both}");
    assert!(both.contains("id=\"d1-c0\""));
    // A directory that does not exist is a clear error.
    let out = autocoder(&["profile", &penguins(), "--html", "/nonexistent/dir/r.html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write /nonexistent/dir/r.html"));
}

#[test]
fn json_lines_are_recognised_and_input_format_forces_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.log");
    std::fs::write(
        &path,
        "{\"id\":1,\"user\":{\"name\":\"a\"},\"tags\":[1,2]}\n{\"id\":2,\"user\":null,\"tags\":[]}\n",
    )
    .unwrap();
    let file = path.display().to_string();
    let p = json_profile(&[&file]);
    assert_eq!(p.format, autocoder_profile::FileFormat::Jsonl);
    let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "user.name", "tags", "user"]);
    // `-f` is the output's format, `--input-format` the file's: CSV text named `.json` fails
    // as JSON, naming the flag, and is read with it.
    let text = dir.path().join("table.json");
    std::fs::write(&text, "a,b\n1,2\n").unwrap();
    let text = text.display().to_string();
    let out = autocoder(&["profile", "-f", "json", &text]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--input-format"));
    let forced = json_profile(&["--input-format", "csv", &text]);
    assert_eq!(forced.format, autocoder_profile::FileFormat::Csv);
    assert_eq!(forced.rows, 1);
    let out = autocoder(&["profile", "--input-format", "orc", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an input format"));
    // The Pandera module reads the file as the profile did and says what it cannot check.
    let module = stdout_of(&["schema", &file]);
    assert!(module.contains("pd.json_normalize(records)"), "{module}");
    assert!(
        module.contains("# not checked: a JSON array, profiled by its length"),
        "{module}"
    );
}

/// Writes a minimal `.xlsx` workbook of `rows` data rows (a store number, a price, a region, each
/// with few distinct values, so the statistics need the same memory at any length) with
/// Python's `zipfile` (fast at any size), profiles it with `autocoder profile` from a Python
/// parent and returns (the profile, the profiler's peak RSS in KiB from `getrusage`).
fn profile_generated_sheet(dir: &std::path::Path, rows: u64) -> (Profile, u64) {
    const WRITE_AND_PROFILE: &str = r#"
import resource, subprocess, sys, zipfile
path, rows, binary = sys.argv[1], int(sys.argv[2]), sys.argv[3]
main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
    z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>')
    z.writestr("_rels/.rels", f'<?xml version="1.0"?><Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>')
    z.writestr("xl/workbook.xml", f'<?xml version="1.0"?><workbook xmlns="{main}" xmlns:r="{rel}"><sheets><sheet name="data" sheetId="1" r:id="rId1"/></sheets></workbook>')
    z.writestr("xl/_rels/workbook.xml.rels", f'<?xml version="1.0"?><Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')
    with z.open("xl/worksheets/sheet1.xml", "w") as sheet:
        sheet.write(f'<?xml version="1.0"?><worksheet xmlns="{main}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>store</t></is></c><c r="B1" t="inlineStr"><is><t>price</t></is></c><c r="C1" t="inlineStr"><is><t>region</t></is></c></row>'.encode())
        regions = ["north", "south", "east", "west"]
        for i in range(1, rows + 1):
            r = i + 1
            sheet.write(f'<row r="{r}"><c r="A{r}"><v>{i % 50}</v></c><c r="B{r}"><v>{i % 1000 / 4}</v></c><c r="C{r}" t="inlineStr"><is><t>{regions[i % 4]}</t></is></c></row>'.encode())
        sheet.write(b"</sheetData></worksheet>")
out = subprocess.run([binary, "profile", "--format", "json", path], capture_output=True, text=True)
if out.returncode != 0:
    sys.exit(out.stderr)
sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) + "\n" + out.stdout)
"#;
    let path = dir.join(format!("rows_{rows}.xlsx"));
    let out = Command::new(crate::python())
        .args(["-c", WRITE_AND_PROFILE])
        .arg(&path)
        .arg(rows.to_string())
        .arg(env!("CARGO_BIN_EXE_autocoder"))
        .output()
        .expect("the test Python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (rss, json) = text.split_once('\n').unwrap();
    (serde_json::from_str(json).unwrap(), rss.parse().unwrap())
}

/// An Excel sheet is streamed: 40 times the rows cost no more memory (with the whole sheet's
/// cells held at once, 400,000 rows took 91 MiB more than 10,000).
#[test]
fn a_long_excel_sheet_is_profiled_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (short, short_rss) = profile_generated_sheet(dir.path(), 10_000);
    let (long, long_rss) = profile_generated_sheet(dir.path(), 400_000);
    for (p, rows) in [(&short, 10_000), (&long, 400_000)] {
        assert_eq!(p.format, autocoder_profile::FileFormat::Xlsx);
        assert_eq!(p.rows, rows);
        let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["store", "price", "region"]);
        assert_eq!(p.columns[0].dtype, DataType::Integer);
        let mean = p.columns[0].numeric.as_ref().unwrap().mean;
        assert!((mean - 24.5).abs() < 1e-9, "{mean}");
        assert_eq!(p.columns[2].distinct, 4);
    }
    assert!(
        long_rss < short_rss + 8 * 1024,
        "peak RSS {short_rss} KiB for 10,000 rows, {long_rss} KiB for 400,000"
    );
}

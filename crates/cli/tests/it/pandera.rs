//! The Pandera module `autocoder schema` prints, run by real pandera on the file it came from,
//! read by pandas through the module's own `read_<name>` function; and the profile's numbers
//! checked against pandas on the same frame.

use std::ffi::OsStr;
use std::path::Path;

use crate::{run_python, stdout_of, testdata};

/// Testdata files that pandas can read, with their row counts.
const VALID: [(&str, usize); 18] = [
    ("real/penguins.csv", 344),
    ("real/penguins_raw.csv", 344),
    ("tricky/mixed_types.csv", 5),
    ("tricky/wide_20_columns.csv", 300),
    ("tricky/zip_codes.csv", 5),
    ("tricky/quoted_newlines.csv", 7),
    ("tricky/bom.csv", 3),
    ("tricky/semicolon.csv", 4),
    ("tricky/tabs.tsv", 4),
    ("tricky/pipes.csv", 4),
    ("tricky/booleans.csv", 6),
    ("tricky/dates.csv", 4),
    ("tricky/currency.csv", 5),
    ("tricky/contacts.csv", 12),
    ("tricky/crlf.csv", 3),
    ("tricky/unicode.csv", 4),
    ("tricky/duplicates.csv", 6),
    ("tricky/header_only.csv", 0),
];

/// Files whose emitted schema pandera rejects today: the profile marks a column `unique` when
/// no non-missing value repeats, but pandera's `unique=True` counts repeated nulls (`NaN`,
/// `<NA>`) as duplicates.
const BLOCKED_BY_UNIQUE: [(&str, usize); 3] = [
    ("tricky/na_markers.csv", 10),
    ("tricky/na_markers.csv.gz", 10),
    ("tricky/int64_nulls.csv", 6),
];

/// Writes `module` to a temporary file and runs it on `data`; returns (success, output).
fn validate(module: &str, data: &Path) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("schema.py");
    std::fs::write(&script, module).unwrap();
    run_python(&[script.as_os_str(), data.as_os_str()])
}

/// Runs `autocoder schema` on each file and validates the file with the module; returns the
/// failures.
fn failures_of(files: &[(&str, usize)]) -> Vec<String> {
    let mut failures = Vec::new();
    for &(rel, rows) in files {
        let file = testdata(rel);
        let module = stdout_of(&["schema", &file.display().to_string()]);
        let (ok, output) = validate(&module, &file);
        if !ok || !output.contains(&format!("valid: {rows} rows")) {
            failures.push(format!("--- {rel}:\n{output}\n{module}"));
        }
    }
    failures
}

#[test]
fn emitted_schemas_validate_their_source_files_with_real_pandera() {
    let failures = failures_of(&VALID);
    assert!(
        failures.is_empty(),
        "{} of {} schemas failed:\n{}",
        failures.len(),
        VALID.len(),
        failures.join("\n")
    );
}

#[test]
fn schemas_of_columns_with_repeated_nulls_validate_too() {
    let failures = failures_of(&BLOCKED_BY_UNIQUE);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn profile_format_pandera_is_the_schema_module() {
    let file = testdata("real/penguins.csv").display().to_string();
    assert_eq!(
        stdout_of(&["profile", "--format", "pandera", &file]),
        stdout_of(&["schema", &file])
    );
}

#[test]
fn range_and_category_checks_only_where_asked() {
    let file = testdata("real/penguins.csv");
    let plain = stdout_of(&["schema", &file.display().to_string()]);
    assert!(
        !plain.contains("in_range") && !plain.contains("isin"),
        "{plain}"
    );
    let checked = stdout_of(&[
        "schema",
        "--ranges",
        "--categories",
        "--name",
        "birds",
        &file.display().to_string(),
    ]);
    assert!(checked.contains("pa.Check.in_range("), "{checked}");
    assert!(
        checked.contains(r#"pa.Check.isin(["Adelie", "Chinstrap", "Gentoo"])"#),
        "{checked}"
    );
    assert!(checked.contains("def read_birds("), "{checked}");
    let (ok, output) = validate(&checked, &file);
    assert!(
        ok && output.contains("valid: 344 rows"),
        "{output}\n{checked}"
    );
}

/// Compares the JSON profile with pandas on the frame the emitted module reads: null counts
/// exactly, count/mean/std/min/max/quantiles to 1e-9 relative.
const AGREEMENT: &str = r#"
import importlib.util, json, math, sys
spec = importlib.util.spec_from_file_location("schema", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
reader = next(getattr(module, n) for n in dir(module) if n.startswith("read_"))
frame = reader(sys.argv[2])
profile = json.load(open(sys.argv[3]))
problems = []
def close(a, b):
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
for col in profile["columns"]:
    s = frame[col["name"]]
    if int(s.isna().sum()) != col["nulls"]:
        problems.append(f"{col['name']}: nulls {col['nulls']} vs pandas {int(s.isna().sum())}")
    if col["dtype"] in ("integer", "float"):
        d = s.astype("float64").describe()
        n = col["numeric"]
        pairs = [("count", col["count"], d["count"]), ("mean", n["mean"], d["mean"]),
                 ("min", col["min"], d["min"]), ("max", col["max"], d["max"])]
        if n.get("std") is not None:
            pairs.append(("std", n["std"], d["std"]))
        if col.get("quantiles_exact"):
            for q in col["quantiles"]:
                pairs.append((f"p{q['q']}", q["value"], s.astype("float64").quantile(q["q"])))
        for name, ours, theirs in pairs:
            if not close(float(ours), float(theirs)):
                problems.append(f"{col['name']}: {name} {ours!r} vs pandas {theirs!r}")
print("\n".join(problems) or "agree")
sys.exit(1 if problems else 0)
"#;

#[test]
fn numbers_agree_with_pandas_on_the_frame_the_module_reads() {
    for rel in [
        "real/penguins.csv",
        "real/penguins_raw.csv",
        "tricky/na_markers.csv",
        "tricky/wide_20_columns.csv",
        "tricky/semicolon.csv",
    ] {
        let file = testdata(rel);
        let shown = file.display().to_string();
        let dir = tempfile::tempdir().unwrap();
        let module = dir.path().join("schema.py");
        let json = dir.path().join("profile.json");
        std::fs::write(&module, stdout_of(&["schema", &shown])).unwrap();
        std::fs::write(&json, stdout_of(&["profile", "--format", "json", &shown])).unwrap();
        let (ok, output) = run_python(&[
            OsStr::new("-c"),
            OsStr::new(AGREEMENT),
            module.as_os_str(),
            file.as_os_str(),
            json.as_os_str(),
        ]);
        assert!(ok, "{rel}:\n{output}");
    }
}

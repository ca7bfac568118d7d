//! The query skeleton (`--queries`): each CSV sample becomes a `DuckDB` table read with the
//! sample's dialect and, when the file has no rows, its profiled types; each table and scalar
//! output is one query. The code prompt shows the skeleton built from the real profile, and the
//! skeleton filled in as a model would runs in the real sandbox: on the sample, and on a file
//! with only a header.

use std::collections::BTreeMap;

use autocoder_loop::data::{DataOptions, build};
use autocoder_loop::harness::task_view;
use autocoder_loop::prompt::render;
use autocoder_loop::request::Declaration;
use autocoder_loop::run::{RunOptions, run};
use autocoder_loop::{GenerateOptions, SandboxOptions};
use autocoder_prompts::Prompts;
use autocoder_sandbox::Value;
use serde_json::json;

use crate::generate::{fixture, plan};

/// Semicolon-separated, with a column named after an SQL keyword.
const SALES: &str = "region;qty;price;end\nnorth;3;2.5;2024-01-02\nsouth;2;4.0;2024-01-03\nnorth;1;10.0;2024-01-04\n";

const TESTS: &str = r#"import pytest


def test_total_and_regions(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(25.5)
    assert result.outputs["by_region.csv"].read_text().splitlines() == [
        "region,revenue",
        "north,17.5",
        "south,8.0",
    ]
"#;

fn options(f: &crate::generate::Fixture) -> GenerateOptions {
    let mut options = f.options();
    options.prompt = "Revenue (qty * price) per region as by_region.csv with the columns region \
                      and revenue, and in all as total."
        .into();
    options.outputs = ["by_region.csv:file", "total:float"]
        .iter()
        .map(|d| d.parse::<Declaration>().unwrap())
        .collect();
    // Two inputs whose names share a beginning: a query using `$min_qty` takes that one only.
    options.inputs = ["min:int", "min_qty:int"]
        .iter()
        .map(|d| d.parse::<Declaration>().unwrap())
        .collect();
    options.sample_args =
        BTreeMap::from([("min".into(), "5".into()), ("min_qty".into(), "1".into())]);
    options.prompting.queries = Some(true);
    options
}

/// The code prompt `options` gets, built from its real samples.
async fn code_prompt(options: &GenerateOptions) -> String {
    let contract = options.check().unwrap();
    let data = build(&contract, &[], DataOptions::default(), None)
        .await
        .unwrap();
    let view = task_view(options, &contract, &data);
    let plan = json!({"summary": "", "approach": [], "edge_cases": []});
    render(
        &Prompts::embedded().unwrap(),
        "loop/code.j2",
        &view,
        json!({"plan": plan, "notes": []}),
    )
    .unwrap()
}

/// The skeleton of `prompt` with the query of each named constant filled in.
fn filled(prompt: &str, queries: &[(&str, &str)]) -> String {
    let mut script = prompt
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the code prompt shows a skeleton")
        .to_owned();
    for (constant, query) in queries {
        let start = script
            .find(&format!("{constant} = \"\"\""))
            .unwrap_or_else(|| panic!("no query {constant} in\n{script}"));
        let at = start + script[start..].find("SELECT ...").unwrap();
        script.replace_range(at..at + "SELECT ...".len(), query);
    }
    script
}

#[tokio::test]
async fn the_query_skeleton_reads_each_sample_as_a_typed_table_and_runs_when_filled_in() {
    let mut f = fixture(Vec::new()).await;
    std::fs::write(f.dir.path().join("sales.csv"), SALES).unwrap();
    let options = options(&f);
    let prompt = code_prompt(&options).await;
    for part in [
        "Replace each `SELECT ...` with the DuckDB SQL query",
        // The keyword column quoted as a query must write it; dates stay text.
        "#   sales(region VARCHAR, qty BIGINT, price DOUBLE, \"end\" DATE)",
        "-- the query whose rows are by_region.csv (columns region, revenue)",
        "-- the query whose one row and one column is total, a float, never NULL",
        "# An input's value is written $name: $min (int), $min_qty (int).",
        // The sample's dialect, and the types a file with no rows gets.
        "read_table(\n        args.sales,\n        {\"region\": \"str\", \"qty\": \"Int64\", \"price\": \"float64\"},\n        {\"end\": \"%Y-%m-%d\"},\n        {},\n        sep=\";\",\n    ))",
    ] {
        assert!(prompt.contains(part), "{part:?} missing from\n{prompt}");
    }
    assert!(!prompt.contains("def compute("), "{prompt}");

    let script = filled(
        &prompt,
        &[
            (
                "BY_REGION_CSV",
                "SELECT region, SUM(qty * price) AS revenue FROM sales GROUP BY region ORDER BY region",
            ),
            // The keyword column, a date: compared as one.
            (
                "TOTAL",
                "SELECT COALESCE(SUM(qty * price), 0.0) FROM sales \
                 WHERE \"end\" >= DATE '2024-01-01' AND qty >= $min_qty",
            ),
        ],
    );
    f.server = autocoder_testkit::ScriptedServer::start(autocoder_testkit::Script::new(vec![
        plan(),
        crate::generate::code(&script),
        crate::generate::test_file(TESTS),
    ]))
    .await
    .unwrap();
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    let run_dir = f.dir.path().join("run");
    let requirements = std::fs::read_to_string(run_dir.join("requirements.txt")).unwrap();
    assert!(
        requirements.contains("duckdb==") && requirements.contains("pandas=="),
        "{requirements}"
    );

    // A file with only the header: without the sample's types every column would be text and
    // `SUM(qty * price)` an error.
    let empty = f.dir.path().join("empty.csv");
    std::fs::write(&empty, "region;qty;price;end\n").unwrap();
    let run_options = RunOptions {
        overrides: BTreeMap::from([
            ("sales".to_owned(), empty.display().to_string()),
            ("min".to_owned(), "5".to_owned()),
            ("min_qty".to_owned(), "1".to_owned()),
        ]),
        sandbox: SandboxOptions {
            cache_dir: options.sandbox.cache_dir.clone(),
            ..SandboxOptions::default()
        },
        ..RunOptions::default()
    };
    let (_, outcome) = run(&run_dir, &run_options).await.unwrap();
    let outputs = outcome.outputs.unwrap();
    assert_eq!(outputs["total"], Value::Float(0.0));
    let Value::File(table) = &outputs["by_region.csv"] else {
        panic!("{outputs:?}")
    };
    assert_eq!(
        std::fs::read_to_string(table).unwrap().trim(),
        "region,revenue"
    );
}

#[tokio::test]
async fn without_a_csv_sample_for_every_file_the_skeleton_is_not_the_query_one() {
    let f = fixture(Vec::new()).await;
    let mut options = options(&f);
    options
        .inputs
        .push("log:file".parse::<Declaration>().unwrap());
    let prompt = code_prompt(&options).await;
    assert!(!prompt.contains("SELECT ..."), "{prompt}");
    assert!(prompt.contains("def compute("), "{prompt}");
}

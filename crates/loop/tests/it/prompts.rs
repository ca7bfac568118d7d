//! Every loop prompt, rendered from one realistic request and snapshotted: a change to a template
//! or to the data it receives shows up as a reviewable diff.

use autocoder_loop::prompt::{CheckView, ColumnView, DatasetView, RuleView, TaskView, render};
use autocoder_loop::protocol::Plan;
use autocoder_loop::request::{Contract, Declaration, Sample};
use autocoder_prompts::Prompts;
use serde_json::json;

/// The `run` a diagnosis and its fixes are shown: `failures` over a one-line script and test.
fn run_of(failures: &[&serde_json::Value], passing: &[&str]) -> serde_json::Value {
    json!({
        "code": "print('hi')",
        "tests": "def test_total(run_solution):\n    pass",
        "packages": [],
        "failures": failures,
        "passing": passing,
    })
}

/// A failure of `test_total` as the report shows it, with `output` and no trace; `more` adds the
/// diagnosis' fields or replaces these.
fn failure(output: &str, more: serde_json::Value) -> serde_json::Value {
    let mut failure = json!({
        "test_id": "test_solution.py::test_total",
        "outcome": "failed",
        "output": output,
        "trace": null,
        "input_notes": [],
    });
    if let (Some(fields), serde_json::Value::Object(more)) = (failure.as_object_mut(), more) {
        fields.extend(more);
    }
    failure
}

/// The code fixer's prompt (whole script) for one failure, the run's only one.
fn whole_script_fix_of(prompts: &Prompts, view: &TaskView, failure: &serde_json::Value) -> String {
    render(
        prompts,
        "loop/fix_code.j2",
        view,
        json!({
            "run": run_of(&[failure], &[]), "failures": [failure], "rejected": [],
            "whole_script": true,
        }),
    )
    .unwrap()
}

fn task() -> TaskView {
    let dir = tempfile::tempdir().unwrap();
    let sample = dir.path().join("sales.csv");
    std::fs::write(&sample, "region,qty,price\nnorth,3,2.5\n").unwrap();
    let inputs: Vec<Declaration> = vec![
        "min_qty:int".parse().unwrap(),
        "strict:bool".parse().unwrap(),
    ];
    let outputs: Vec<Declaration> = vec![
        "total:float".parse().unwrap(),
        "by_region.csv:file".parse().unwrap(),
    ];
    let samples = vec![Sample {
        name: "sales".into(),
        path: sample,
    }];
    let contract = Contract::new(&inputs, &outputs, &samples).unwrap();
    let mut inputs = contract.inputs;
    for input in &mut inputs {
        input.sample = input.sample.as_ref().map(|_| "sales.csv".into());
    }
    TaskView {
        task: "Compute total revenue (qty * price) over rows with qty >= min_qty, and revenue per region.".into(),
        system_override: None,
        schema_text: None,
        schema_keys: Vec::new(),
        inputs,
        outputs: contract.outputs,
        datasets: vec![DatasetView {
            name: "sales".into(),
            path: "/var/inputs/sales.csv".into(),
            context: "1 row x 3 columns\nregion: string, 1 distinct\nqty: integer, min 3 max 3\nprice: float, min 2.5 max 2.5".into(),
            checks: vec![
                CheckView { text: "qty must be positive -> qty > 0".into(), violations: 0 },
                CheckView { text: "price at most 100 -> price <= 100".into(), violations: 2 },
            ],
            file_name: "sales.csv".into(),
            first_lines: vec!["region,qty,price".into(), "north,3,2.5".into(), "south,2,4.0".into()],
            numeric_columns: vec!["qty".into(), "price".into()],
            medians: [("qty".to_owned(), 3.0), ("price".to_owned(), 2.5)].into(),
            columns: [("region", "string", Some("str")), ("qty", "integer", Some("Int64")), ("price", "float", Some("float64"))]
                .into_iter()
                .map(|(name, dtype, pandas)| ColumnView {
                    name: name.into(),
                    sql: name.into(),
                    dtype: dtype.into(),
                    pandas: pandas.map(Into::into),
                    format: None,
                    utc: false,
                })
                .collect(),
            delimiter: ",".into(),
            csv_read_args: Some(String::new()),
        }],
        rules: vec![RuleView {
            text: "revenue is rounded to cents".into(),
            reason: Some("not a check on one column".into()),
        }],
        row_keys: Vec::new(),
        code_in_fences: false,
        skeleton: true,
        units: false,
        queries: false,
        output_columns: Vec::new(),
    }
}

fn plan() -> Plan {
    Plan {
        summary: "Filter rows, multiply, sum overall and per region.".into(),
        approach: vec![
            "read the CSV with pandas".into(),
            "filter qty >= min_qty".into(),
        ],
        edge_cases: vec!["empty result after filtering".into()],
    }
}

#[test]
fn the_system_prompt_keeps_its_ground_rules_under_an_override() {
    let prompts = Prompts::embedded().unwrap();
    let mut view = task();
    insta::assert_snapshot!(
        "system",
        render(&prompts, "loop/system.j2", &view, json!({})).unwrap()
    );
    view.system_override = Some("You are a terse pandas expert.".into());
    let text = render(&prompts, "loop/system.j2", &view, json!({})).unwrap();
    assert!(text.starts_with("You are a terse pandas expert."));
    assert!(text.contains("no network access"));
}

#[test]
fn plan_code_and_tests_prompts() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let plan_text = render(&prompts, "loop/plan.j2", &view, json!({})).unwrap();
    assert!(plan_text.contains("`--strict` (bool): the text `true` or `false`"));
    assert!(plan_text.contains(
        "`--sales` (file): the path of a file (the sample is `/var/inputs/sales.csv`); open it directly. Required."
    ));
    assert!(plan_text.contains("write the file `<outputs dir>/by_region.csv` itself"));
    assert!(plan_text.contains("--outputs-dir <dir>`"));
    assert!(plan_text.contains("`--min_qty` (int): an integer (`type=int`). Required."));
    assert!(plan_text.contains("(2 sample rows violate it"));
    assert!(plan_text.contains("not turned into a check: not a check on one column"));
    insta::assert_snapshot!("plan", plan_text);
    insta::assert_snapshot!(
        "code",
        render(&prompts, "loop/code.j2", &view, json!({"plan": plan(), "notes": ["the package `sklearn` does not exist and has no replacement: write the script without it"]})).unwrap()
    );
    let tests_text = render(
        &prompts,
        "loop/tests.j2",
        &view,
        json!({"notes": [], "code": null}),
    )
    .unwrap();
    assert!(tests_text.contains("`total` as a Python float, `by_region.csv` as a `pathlib.Path`"));
    assert!(
        tests_text.contains("You will not see the script")
            && !tests_text.contains("The script under test"),
        "the test writer must not see code"
    );
    insta::assert_snapshot!("tests", tests_text);
    let shown = render(
        &prompts,
        "loop/tests.j2",
        &view,
        json!({"notes": [], "code": "def total(rows):\n    return 1\n"}),
    )
    .unwrap();
    assert!(
        shown.contains("```python\ndef total(rows):\n    return 1\n"),
        "with --tests-see-code the test writer sees the script: {shown}"
    );
    assert!(!shown.contains("You will not see the script"));
}

#[test]
fn code_in_fences_asks_for_code_blocks_not_json() {
    let prompts = Prompts::embedded().unwrap();
    let view = TaskView {
        code_in_fences: true,
        ..task()
    };
    let system = render(&prompts, "loop/system.j2", &view, json!({})).unwrap();
    assert!(system.contains("one Markdown code block that starts with ```python"));
    assert!(!system.contains("single quotes"), "{system}");
    let code = render(
        &prompts,
        "loop/code.j2",
        &view,
        json!({"plan": plan(), "notes": []}),
    )
    .unwrap();
    assert!(!code.contains("Answer with JSON"), "{code}");
    insta::assert_snapshot!("code_fenced", code);
    let tests = render(
        &prompts,
        "loop/tests.j2",
        &view,
        json!({"notes": [], "code": null}),
    )
    .unwrap();
    assert!(tests.contains(
        "Answer with the full test file (we save it as `test_solution.py`) in one ```python block"
    ));
    assert!(!tests.contains("Answer with JSON"));
    let fix = render(
        &prompts,
        "loop/fix_code.j2",
        &view,
        json!({
            "run": run_of(&[], &[]), "failures": [], "rejected": [], "whole_script": false,
        }),
    )
    .unwrap();
    assert!(
        fix.contains("the wrong lines copied exactly in one block, then their corrected version"),
        "{fix}"
    );
    assert!(!fix.contains("Answer with JSON"));
    let failure = failure(
        "E   assert 6.0 == 7",
        json!({
            "kind": "test_error",
            "evidence": "the test expects 7 where its rows give 6",
            "fix": "compute the expected total from the rows",
            "source": "@pytest.mark.slow\ndef test_total(run_solution, tmp_path):\n    assert run_solution({}).outputs['total'] == 7\n",
            "reclassified": false,
        }),
    );
    let fix_tests = render(
        &prompts,
        "loop/fix_tests.j2",
        &view,
        json!({"run": run_of(&[&failure], &[]), "failures": [failure], "rejected": []}),
    )
    .unwrap();
    assert!(!fix_tests.contains("Answer with JSON"), "{fix_tests}");
    insta::assert_snapshot!("fix_tests_fenced", fix_tests);
}

#[test]
fn a_reclassified_failure_tells_the_other_fixer_the_first_diagnosis_was_wrong() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let failure = failure(
        "E       AssertionError: assert 0 != 0",
        json!({
            "test_id": "test_solution.py::test_missing_file_fails",
            "evidence": "the test calls the fixture wrongly",
            "fix": "replace solution.run_solution with solution.main in the test",
            "reclassified": true,
            "source": "def test_missing_file_fails(run_solution):\n    assert run_solution().returncode != 0\n",
        }),
    );
    let fix_code = render(
        &prompts,
        "loop/fix_code.j2",
        &view,
        json!({
            "run": run_of(&[&failure], &[]), "failures": [failure.clone()], "rejected": [],
            "whole_script": true,
        }),
    )
    .unwrap();
    assert!(
        fix_code.contains("The test stands as written: the script is wrong here"),
        "{fix_code}"
    );
    assert!(fix_code.contains("(\"the test calls the fixture wrongly\")"));
    // The fix was meant for the test fixer: the code fixer is not asked to make it.
    assert!(!fix_code.contains("Fix asked for"), "{fix_code}");
    let fix_tests = render(
        &prompts,
        "loop/fix_tests.j2",
        &view,
        json!({
            "run": run_of(&[&failure], &[]), "failures": [failure], "rejected": [],
        }),
    )
    .unwrap();
    assert!(
        fix_tests.contains("The script stands: this test expects something"),
        "{fix_tests}"
    );
    assert!(!fix_tests.contains("Fix asked for"));
}

#[test]
fn an_environment_verdict_with_nothing_missing_goes_to_the_code_fixer_without_its_fix() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let failure = failure(
        "E   AttributeError: Can only use .dt accessor with datetimelike values",
        json!({
            "test_id": "test_solution.py::test_minutes",
            "evidence": "pandas is too new for .dt here",
            "fix": "pin pandas==1.4.3",
            "reclassified": false,
            "not_environment": true,
        }),
    );
    let fix_code = whole_script_fix_of(&prompts, &view, &failure);
    assert!(
        fix_code.contains("put down to the environment (\"pandas is too new for .dt here\")"),
        "{fix_code}"
    );
    assert!(fix_code.contains("The script is at fault"), "{fix_code}");
    // Neither the pin nor "first put down to the test" reaches the code fixer.
    assert!(!fix_code.contains("pandas==1.4.3"), "{fix_code}");
    assert!(
        !fix_code.contains("first put down to the test"),
        "{fix_code}"
    );
}

#[test]
fn a_traced_failure_shows_what_the_script_computed_to_the_diagnosis_and_the_fix() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let trace =
        "line 6 (total_revenue): total = Series of 3 float64 values named 'qty', first {0: 7.5}";
    let failure = failure(
        "E   TypeError: float() argument must be a string or a real number, not 'Series'",
        json!({
            "evidence": "total is a Series",
            "fix": "sum the products",
            "reclassified": false,
            "trace": trace,
        }),
    );
    let diagnose = render(
        &prompts,
        "loop/diagnose.j2",
        &view,
        json!({
            "run": run_of(&[&failure], &[]), "history": [], "disagreement": null,
        }),
    )
    .unwrap();
    let fix_code = whole_script_fix_of(&prompts, &view, &failure);
    for prompt in [diagnose, fix_code] {
        let at = prompt
            .find(trace)
            .unwrap_or_else(|| panic!("no trace in {prompt}"));
        // Under the failure it explains, after its error, and announced as the script's values.
        assert!(prompt[..at].contains("not 'Series'"), "{prompt}");
        assert!(
            prompt[..at].contains("What `solution.py` computed during this test"),
            "{prompt}"
        );
    }
}

#[test]
fn diagnosis_and_fix_prompts() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let failure = failure(
        "E   AssertionError: assert 7.5 == 8.0",
        json!({
            "evidence": "3 * 2.5 = 7.5; the test expects 8.0, which no row gives",
            "fix": "expect 7.5",
            "reclassified": false,
            "source": "def test_total(run_solution):\n    assert run_solution({\"min_qty\": 1}).outputs[\"total\"] == 8.0\n",
        }),
    );
    let mut run_with_pandas = run_of(&[&failure], &["test_solution.py::test_region"]);
    run_with_pandas["packages"] = json!(["pandas"]);
    insta::assert_snapshot!(
        "diagnose",
        render(&prompts, "loop/diagnose.j2", &view, json!({
            "run": run_with_pandas.clone(),
            "history": [{"test_id": "test_solution.py::test_total", "kind": "logic", "fixed_by": "a code edit", "times": 2}],
            "disagreement": null,
        })).unwrap()
    );
    insta::assert_snapshot!(
        "fix_code",
        render(
            &prompts,
            "loop/fix_code.j2",
            &view,
            json!({
                "run": run_with_pandas.clone(),
                "failures": [failure.clone()],
                "rejected": ["the excerpt starting `x = 1` is not in the script; copy it exactly"],
                "whole_script": false,
            })
        )
        .unwrap()
    );
    insta::assert_snapshot!(
        "fix_code_whole_script",
        render(
            &prompts,
            "loop/fix_code.j2",
            &view,
            json!({
                "run": run_with_pandas.clone(),
                "failures": [failure.clone()],
                "rejected": [],
                "whole_script": true,
            })
        )
        .unwrap()
    );
    insta::assert_snapshot!(
        "fix_tests",
        render(
            &prompts,
            "loop/fix_tests.j2",
            &view,
            json!({"run": run_with_pandas, "failures": [failure], "rejected": []})
        )
        .unwrap()
    );
    insta::assert_snapshot!(
        "replace_package",
        render(&prompts, "loop/replace_package.j2", &view, json!({
            "package": "sklearn",
            "error": "No solution found when resolving dependencies: sklearn was not found in the package registry",
            "imports": ["sklearn.linear_model", "pandas"],
        })).unwrap()
    );
    insta::assert_snapshot!(
        "replace_system_package",
        render(
            &prompts,
            "loop/replace_system_package.j2",
            &view,
            json!({
                "package": "libgdal",
                "why": "apt does not know it in the sandbox image",
                "message": "E: Unable to locate package libgdal",
                "code": "import argparse\nfrom osgeo import gdal\n",
            })
        )
        .unwrap()
    );
}

/// The skeleton the code prompt shows for `view`.
fn code_skeleton(prompts: &Prompts, view: &TaskView) -> String {
    let prompt = render(
        prompts,
        "loop/code.j2",
        view,
        json!({"plan": plan(), "notes": []}),
    )
    .unwrap();
    prompt
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the code prompt shows a skeleton")
        .to_owned()
}

/// The Python interpreter the suite runs with (`scripts/test` sets it up).
fn test_python() -> std::path::PathBuf {
    std::env::var_os("AUTOCODER_TEST_PYTHON")
        .expect("AUTOCODER_TEST_PYTHON must name the test interpreter (scripts/test sets it up)")
        .into()
}

/// Writes `script` as `solution.py` in `dir` and runs it there with `args` (split on spaces)
/// under the test interpreter; fails, showing the script and its stderr, unless it exits 0.
#[allow(clippy::disallowed_methods)] // the script runs under the real Python interpreter
fn run_script(dir: &std::path::Path, script: &str, args: &str) {
    std::fs::write(dir.join("solution.py"), script).unwrap();
    let ran = std::process::Command::new(test_python())
        .arg("solution.py")
        .args(args.split(' '))
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
}

#[test]
#[allow(clippy::disallowed_methods)] // the skeleton runs under the real Python interpreter
fn the_code_prompts_skeleton_runs_and_follows_the_contract() {
    let prompts = Prompts::embedded().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<Declaration> = [
        "limit:int",
        "ratio:float",
        "strict:bool",
        "since:datetime",
        "window:timedelta",
        "label:str",
    ]
    .iter()
    .map(|d| d.parse().unwrap())
    .collect();
    let outputs: Vec<Declaration> = ["done:bool", "count:int", "summary:str", "report.csv:file"]
        .iter()
        .map(|d| d.parse().unwrap())
        .collect();
    let contract = Contract::new(&inputs, &outputs, &[]).unwrap();
    let view = TaskView {
        inputs: contract.inputs,
        outputs: contract.outputs,
        datasets: Vec::new(),
        rules: Vec::new(),
        code_in_fences: true,
        ..task()
    };
    let skeleton = code_skeleton(&prompts, &view);
    let out = dir.path().join("elsewhere");
    // Fill in `compute` the way a model would; the outputs go where `--outputs-dir` says.
    let body = "    assert isinstance(limit, int) and isinstance(ratio, float)\n    \
                assert strict is False and since.year == 2024 and window.total_seconds() == 90.5\n    \
                open(os.path.join(outputs_dir, 'report.csv'), 'w').write(label)\n    \
                return limit > 2, limit * 2, {'levels': {'ERROR': 1}}\n";
    let script = skeleton.replace("    ...  # the task\n", body);
    let path = dir.path().join("solution.py");
    std::fs::write(&path, &script).unwrap();
    let run = |strict: &str| {
        std::process::Command::new(test_python())
            .arg(&path)
            .arg("--outputs-dir")
            .arg(&out)
            .args(["--limit", "3", "--ratio", "0.5", "--strict", strict])
            .args([
                "--since",
                "2024-03-01T12:00:00",
                "--window",
                "90.5",
                "--label",
                "hi",
            ])
            .output()
            .unwrap()
    };
    let ran = run("false");
    assert!(
        ran.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    assert_eq!(read("done"), "true");
    assert_eq!(read("count"), "6");
    // A dict returned for a text output is written as JSON, not as its Python repr.
    assert_eq!(read("summary"), r#"{"levels": {"ERROR": 1}}"#);
    assert_eq!(read("report.csv"), "hi");
    // `--strict yes-ish` is refused by argparse with a non-zero exit, not read as True.
    let refused = run("maybe");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("expected true or false"));
}

#[test]
#[allow(clippy::disallowed_methods)] // the skeleton runs under the real Python interpreter
fn the_skeleton_runs_on_its_own_every_input_required_outputs_in_outputs() {
    let prompts = Prompts::embedded().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let skeleton = code_skeleton(
        &prompts,
        &TaskView {
            task: "Read the sales with csv.DictReader and count rows.".into(),
            code_in_fences: true,
            ..task()
        },
    );
    assert!(
        !skeleton.contains("/var/inputs"),
        "samples are no defaults: {skeleton}"
    );
    let script = skeleton
        .replace(
            "    ...  # the task\n",
            "    total = float(len(sales_rows))\n",
        )
        .replace(
            "        ...  # the header row, then the rows\n",
            "        writer.writerow(['region'])\n",
        );
    std::fs::write(dir.path().join("solution.py"), &script).unwrap();
    std::fs::write(dir.path().join("s.csv"), "region,qty\nnorth,3\n").unwrap();
    let python = |args: &[&str]| {
        std::process::Command::new(test_python())
            .arg("solution.py")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    // An input left out is a usage error naming it.
    let missing = python(&["--min_qty", "1", "--strict", "true"]);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("usage:") && stderr.contains("--sales"),
        "{stderr}"
    );
    // With no `--outputs-dir` and no `/var/outputs` (as on a laptop), `./outputs`, created.
    assert!(!std::path::Path::new("/var/outputs").exists());
    let ran = python(&["--sales", "s.csv", "--min_qty", "1", "--strict", "true"]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let written = std::fs::read_to_string(dir.path().join("outputs/total")).unwrap();
    assert_eq!(written, "1.0");
    assert!(dir.path().join("outputs/by_region.csv").is_file());
}

#[test]
fn a_task_asking_for_csv_dictreader_gets_a_skeleton_reading_its_samples_that_way() {
    let prompts = Prompts::embedded().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let view = TaskView {
        task: "Read the sales with csv.DictReader and sum qty * price per region.".into(),
        code_in_fences: true,
        ..task()
    };
    let skeleton = code_skeleton(&prompts, &view);
    assert!(
        skeleton.contains("sales_rows = list(csv.DictReader(f))"),
        "{skeleton}"
    );
    // Without the words, the skeleton leaves the reading to the model.
    let plain = code_skeleton(
        &prompts,
        &TaskView {
            code_in_fences: true,
            ..task()
        },
    );
    assert!(!plain.contains("csv.DictReader(f)"), "{plain}");
    let out = dir.path().join("outputs");
    let script = skeleton
        .replace(
            "    ...  # the task\n",
            "    total = sum(int(r['qty']) * float(r['price']) for r in sales_rows)\n",
        )
        .replace(
            "        ...  # the header row, then the rows\n",
            "        writer.writerow(['region'])\n        writer.writerows([r['region']] for r in sales_rows)\n",
        );
    std::fs::write(
        dir.path().join("sales.csv"),
        "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\n",
    )
    .unwrap();
    let args = "--min_qty 1 --strict true --sales sales.csv --outputs-dir outputs";
    run_script(dir.path(), &script, args);
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    assert_eq!(read("total"), "15.5");
    assert_eq!(read("by_region.csv"), "region\r\nnorth\r\nsouth\r\n");
}

#[test]
fn a_text_output_described_by_a_json_schema_is_compared_parsed() {
    let prompts = Prompts::embedded().unwrap();
    let outputs: Vec<Declaration> = ["summary:str", "errors:int"]
        .iter()
        .map(|d| d.parse().unwrap())
        .collect();
    let contract = Contract::new(&[], &outputs, &[]).unwrap();
    let view = |schema_text: Option<&str>| TaskView {
        schema_text: schema_text.map(str::to_owned),
        outputs: contract.outputs.clone(),
        code_in_fences: true,
        ..task()
    };
    let render_tests = |view: &TaskView| {
        render(
            &prompts,
            "loop/tests.j2",
            view,
            json!({"notes": [], "code": null}),
        )
        .unwrap()
    };
    let parsed = render_tests(&view(Some(r#" {"levels": {"<LEVEL>": <count>}}"#)));
    assert!(parsed.contains("\nimport json\n"), "{parsed}");
    // With the schema's top-level keys, the expected report is spelled with them.
    let keyed = render_tests(&TaskView {
        schema_keys: vec!["levels".into(), "error_rate".into()],
        ..view(Some(
            r#"{"levels": {"<LEVEL>": <count>}, "error_rate": <float>}"#,
        ))
    });
    assert!(
        keyed.contains(r#"    expected_summary = {"levels": ..., "error_rate": ...}  # the schema's keys; each value"#),
        "{keyed}"
    );
    assert!(
        parsed.contains("summary = json.loads(result.outputs['summary'])"),
        "{parsed}"
    );
    assert!(parsed.contains("assert result.outputs['errors'] == expected_errors"));
    // A file input without sample rows is written from a list of lines, and the expected
    // values are computed from that list.
    let with_log = Contract::new(&["log_file:file".parse().unwrap()], &outputs, &[]).unwrap();
    let logged = render_tests(&TaskView {
        inputs: with_log.inputs.clone(),
        datasets: Vec::new(),
        ..view(None)
    });
    assert!(logged.contains("    log_file_lines = [\n"), "{logged}");
    assert!(
        logged.contains("log_file.write_text('\\n'.join(log_file_lines) + '\\n')"),
        "{logged}"
    );
    assert!(
        logged.contains("computed in Python from `log_file_lines`"),
        "{logged}"
    );
    for text in [None, Some("a line of text per sensor")] {
        let plain = render_tests(&view(text));
        assert!(!plain.contains("json.loads"), "{plain}");
        assert!(plain.contains("assert result.outputs['summary'] == expected_summary"));
    }
}

#[test]
fn a_capable_model_gets_no_skeleton_only_the_contract() {
    let prompts = Prompts::embedded().unwrap();
    let with = render(
        &prompts,
        "loop/code.j2",
        &task(),
        json!({"plan": plan(), "notes": []}),
    )
    .unwrap();
    let without = render(
        &prompts,
        "loop/code.j2",
        &TaskView {
            skeleton: false,
            ..task()
        },
        json!({"plan": plan(), "notes": []}),
    )
    .unwrap();
    assert!(with.contains("Start from this skeleton") && with.contains("def compute("));
    assert!(
        !without.contains("skeleton") && !without.contains("def compute("),
        "{without}"
    );
    // What the skeleton spelled out in code, the contract still says in words.
    assert!(without.contains("Command-line arguments (parse them with argparse"));
    assert!(without.contains("into the directory `--outputs-dir` names"));
    assert!(without.contains("Write the complete script"));
}

/// Every "answer again" note, rendered as the model reads it.
#[test]
fn notes_sent_back_with_an_answer() {
    let prompts = Prompts::embedded().unwrap();
    let note = |name: &str, context: serde_json::Value| {
        prompts
            .render(&format!("loop/notes/{name}.j2"), context)
            .unwrap()
            .trim_matches('\n')
            .to_owned()
    };
    let imports = json!(["from solution import total", "import solution as s"]);
    let numbers = json!(["expected_total = 12.5", "assert len(written) == 4"]);
    let notes = [
        note(
            "unusable",
            json!({"error": "EOF while parsing a string at line 1"}),
        ),
        note(
            "code_not_compiled",
            json!({"error": "line 3: invalid syntax"}),
        ),
        note(
            "tests_not_compiled",
            json!({"error": "line 3: invalid syntax"}),
        ),
        note(
            "fix_not_compiled",
            json!({"error": "line 3: invalid syntax"}),
        ),
        note(
            "fix_not_merged",
            json!({"problem": "no block names a function of the script"}),
        ),
        note("fix_not_whole", json!({"imports_itself": true})),
        note(
            "fix_not_whole",
            json!({"imports_itself": false, "lines": 2, "script_lines": 40}),
        ),
        note("tests_import_solution", json!({"lines": imports})),
        note(
            "tests_hand_written",
            json!({"sources": ["sales_rows", "log_lines"], "lines": numbers}),
        ),
    ];
    for text in &notes {
        assert!(!text.contains('\n'), "a note is one line: {text}");
    }
    insta::assert_snapshot!("notes", notes.join("\n"));
}

#[test]
fn a_diagnosis_sees_what_the_other_candidates_computed() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let failure = failure("E   AssertionError: assert 7.5 == 8.0", json!({}));
    let other_code = "def total(rows):\n    return sum(r.qty * r.price for r in rows)\n";
    let prompt = render(
        &prompts,
        "loop/diagnose.j2",
        &view,
        json!({
            "run": run_of(&[&failure], &[]), "history": [],
            "disagreement": {
                "written": 3, "agreeing": 1, "tested": "total = 7.5",
                "others": [{"count": 2, "outputs": "total = 8.0", "code": other_code,
                            "passed": 1, "tests": 2}],
            },
        }),
    )
    .unwrap();
    let tested = prompt
        .find("total = 7.5")
        .expect("the tested script's outputs");
    let other = prompt
        .find("total = 8.0")
        .expect("the other group's outputs");
    let code = prompt.find(other_code).expect("the other group's code");
    assert!(tested < other && other < code, "{prompt}");
    assert!(prompt.contains("3 scripts were written"), "{prompt}");
    assert!(
        prompt.contains("2 other scripts computed instead (passing 1 of these 2 tests)"),
        "{prompt}"
    );
    // After the failures, before the instructions.
    assert!(
        prompt.find("assert 7.5 == 8.0").unwrap() < tested,
        "{prompt}"
    );
    assert!(
        code < prompt.find("Diagnose every failing test").unwrap(),
        "{prompt}"
    );
}

/// A script or test file asked for again after an answer was dropped reads back, from a prompt
/// cache, everything the first request said before its answer's form: the notes come after it
/// (they used to follow the task, so the skeleton and the rules were read again).
#[test]
fn a_request_asked_again_begins_with_the_first_up_to_its_answer_form() {
    let prompts = Prompts::embedded().unwrap();
    let note = "the tests used `total` from `solution`, which does not define it";
    for (template, answer_form, extra) in [
        (
            "loop/code.j2",
            "Write the complete script",
            json!({"plan": plan()}),
        ),
        (
            "loop/tests.j2",
            "Answer with the full test file",
            json!({"code": null}),
        ),
    ] {
        let mut view = task();
        view.code_in_fences = true;
        let with = |notes: Vec<&str>| {
            let mut context = extra.clone();
            context["notes"] = json!(notes);
            render(&prompts, template, &view, context).unwrap()
        };
        let first = with(vec![]);
        let again = with(vec![note]);
        let shared = first.rfind(answer_form).unwrap();
        assert!(
            again.starts_with(&first[..shared]),
            "{template}: the request asked again differs before its answer form"
        );
        let noted = again.find(note).unwrap();
        assert!(
            noted >= shared && noted < again.rfind(answer_form).unwrap(),
            "{template}: the note is not just before the answer form"
        );
    }
}

#[test]
fn the_diagnosis_and_both_fixes_begin_with_the_same_report_of_the_run() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let failure = failure(
        "E   AssertionError: assert 7.5 == 8.0",
        json!({
            "trace": "line 3 (total): total = 7.5",
            "evidence": "3 * 2.5 = 7.5",
            "fix": "expect 7.5",
            "reclassified": false,
            "source": "def test_total(run_solution):\n    pass\n",
        }),
    );
    let run = run_of(&[&failure], &["test_solution.py::test_region"]);
    let report = render(&prompts, "loop/_report.j2", &view, json!({"run": run})).unwrap();
    // The report is the long part: the task, the tests, the script and every failure.
    for part in [
        "def test_total(run_solution)",
        "print('hi')",
        "assert 7.5 == 8.0",
        "total = 7.5",
        "`test_solution.py::test_region`",
    ] {
        assert!(report.contains(part), "{part} missing from {report}");
    }
    let diagnose = json!({"run": run, "history": [], "disagreement": null});
    let fix_code = json!({"run": run, "failures": [failure], "rejected": [], "whole_script": true});
    let fix_tests = json!({"run": run, "failures": [failure], "rejected": []});
    for (template, context) in [
        ("loop/diagnose.j2", diagnose),
        ("loop/fix_code.j2", fix_code),
        ("loop/fix_tests.j2", fix_tests),
    ] {
        let prompt = render(&prompts, template, &view, context).unwrap();
        assert!(
            prompt.starts_with(&report),
            "{template} does not begin with the report"
        );
        assert!(
            prompt.len() > report.len() + 200,
            "{template} adds its own request"
        );
    }
}

/// `--sample-fixes`: the fix of a script that failed on the samples before any test was
/// written shows the run's output under "What failed", no tests block and no diagnosis.
#[test]
fn the_fix_of_a_failure_on_the_samples_shows_no_tests_and_no_diagnosis() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let failure = json!({
        "test_id": autocoder_loop::session::SAMPLE_RUN_ID,
        "outcome": "failed",
        "output": "it exited with 1:\nKeyError: 'revenue'",
        "trace": null,
        "input_notes": [],
        "evidence": "",
        "fix": "",
        "reclassified": false,
        "sample_run": true,
    });
    let mut run = run_of(&[&failure], &[]);
    run["tests"] = json!("");
    let context = json!({"run": run, "failures": [failure], "rejected": [], "whole_script": true});
    let prompt = render(&prompts, "loop/fix_code.j2", &view, context).unwrap();
    for part in [
        "What failed:",
        "KeyError: 'revenue'",
        "No test has been written yet",
        "print('hi')",
    ] {
        assert!(prompt.contains(part), "{part} missing from {prompt}");
    }
    for absent in ["test_solution.py", "These tests did not pass", "Diagnosis:"] {
        assert!(!prompt.contains(absent), "{absent} in {prompt}");
    }
}

/// A task with a file and an int input and an output of every kind, its units skeleton asked
/// for; `empty.csv` has the columns the task lists.
fn units_view() -> TaskView {
    let inputs: Vec<Declaration> = ["sales:file", "limit:int"]
        .iter()
        .map(|d| d.parse().unwrap())
        .collect();
    let outputs: Vec<Declaration> = [
        "by_region.csv:file",
        "empty.csv:file",
        "frame.csv:file",
        "summary.json:file",
        "notes.txt:file",
        "chart.svg:file",
        "by_team:dir",
        "total:float",
        "done:bool",
        "label:str",
    ]
    .iter()
    .map(|d| d.parse().unwrap())
    .collect();
    let contract = Contract::new(&inputs, &outputs, &[]).unwrap();
    TaskView {
        task: "Read the sales with csv.DictReader. Write empty.csv with the columns a and b."
            .into(),
        inputs: contract.inputs,
        outputs: contract.outputs,
        rules: Vec::new(),
        code_in_fences: true,
        units: true,
        output_columns: vec![autocoder_loop::OutputColumns {
            output: "empty.csv".into(),
            columns: vec!["a".into(), "b".into()],
            phrase: "empty.csv with the columns a and b".into(),
        }],
        ..task()
    }
}

#[test]
fn the_units_skeleton_has_a_function_per_output_and_writes_what_each_returns() {
    let prompts = Prompts::embedded().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let view = units_view();
    let prompt = render(
        &prompts,
        "loop/code.j2",
        &view,
        json!({"plan": plan(), "notes": []}),
    )
    .unwrap();
    assert!(prompt.contains("one\nfunction for each output"), "{prompt}");
    let skeleton = code_skeleton(&prompts, &view);
    assert!(!skeleton.contains("def compute("), "{skeleton}");
    // Its own functions are the ones a failure is not fixed in alone (`fixing_units`).
    for line in skeleton.lines() {
        if let Some(name) = line.strip_prefix("def ").and_then(|l| l.split('(').next()) {
            assert!(
                name.starts_with("compute_")
                    || autocoder_loop::session::SKELETON_FUNCTIONS.contains(&name),
                "{name} is neither a unit nor in SKELETON_FUNCTIONS"
            );
        }
    }
    // Each output's function, filled in the way a model would (the tables come read).
    let bodies = [
        (
            "by_region.csv",
            "    return [{'region': r['region'], 'n': limit} for r in sales_rows]",
        ),
        ("empty.csv", "    return []"),
        (
            "frame.csv",
            "    import pandas\n    return pandas.DataFrame({'a': [1, 2]})",
        ),
        ("summary.json", "    return {'rows': len(sales_rows)}"),
        ("notes.txt", "    return 'two rows'"),
        ("chart.svg", "    open(path, 'w').write('<svg/>')"),
        (
            "by_team",
            "    open(os.path.join(directory, 'a.csv'), 'w').write('x')",
        ),
        ("total", "    return 2.5"),
        ("done", "    return limit > 2"),
        ("label", "    return {'levels': {'ERROR': 1}}"),
    ];
    let mut script = skeleton.clone();
    for (name, body) in bodies {
        let stub = format!("    ...  # {name}\n");
        assert!(
            script.contains(&stub),
            "no function for {name}:\n{skeleton}"
        );
        script = script.replace(&stub, &format!("{body}\n"));
    }
    std::fs::write(dir.path().join("s.csv"), "region,qty\nnorth,3\nsouth,1\n").unwrap();
    let out = dir.path().join("out");
    run_script(
        dir.path(),
        &script,
        "--sales s.csv --limit 3 --outputs-dir out",
    );
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    assert_eq!(read("by_region.csv"), "region,n\r\nnorth,3\r\nsouth,3\r\n");
    assert_eq!(
        read("empty.csv"),
        "a,b\r\n",
        "the header the task lists, with no rows"
    );
    assert_eq!(read("frame.csv"), "a\n1\n2\n");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&read("summary.json")).unwrap(),
        json!({"rows": 2})
    );
    assert_eq!(read("notes.txt"), "two rows");
    assert_eq!(read("chart.svg"), "<svg/>");
    assert_eq!(read("by_team/a.csv"), "x");
    assert_eq!(read("total"), "2.5");
    assert_eq!(read("done"), "true");
    assert_eq!(read("label"), r#"{"levels": {"ERROR": 1}}"#);
}

/// `--no-plan`: the code prompt of a session that never planned (its plan is the empty default)
/// is the planned one without the plan's lines, byte for byte otherwise.
#[test]
fn without_a_plan_the_code_prompt_drops_the_plan_and_nothing_else() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let code = |plan: Plan| {
        render(
            &prompts,
            "loop/code.j2",
            &view,
            json!({"plan": plan, "notes": []}),
        )
        .unwrap()
    };
    let planned = code(plan());
    let unplanned = code(Plan::default());
    let start = planned.find("Plan to follow:").unwrap();
    let end = planned.find("Start from this skeleton").unwrap();
    assert!(start < end, "{planned}");
    assert_eq!(
        unplanned,
        format!("{}{}", &planned[..start], &planned[end..])
    );
}

/// A sample separated by `;`: the tests' example and a skeleton that reads rows with
/// `csv.DictReader` pass its delimiter (with a comma, the prompts are as they were).
#[test]
fn rows_of_a_semicolon_sample_are_read_with_its_delimiter() {
    let prompts = Prompts::embedded().unwrap();
    let mut view = task();
    view.datasets[0].delimiter = ";".into();
    view.datasets[0].first_lines = vec!["region;qty;price".into(), "north;3;2.5".into()];
    let tests = render(
        &prompts,
        "loop/tests.j2",
        &view,
        json!({"notes": [], "code": null}),
    )
    .unwrap();
    assert!(
        tests.contains("csv.DictReader(io.StringIO(sales_text), delimiter=\";\")"),
        "{tests}"
    );
    view.task = "Read the sales with csv.DictReader.".into();
    let skeleton = code_skeleton(&prompts, &view);
    assert!(
        skeleton.contains("csv.DictReader(f, delimiter=\";\")"),
        "{skeleton}"
    );
}

/// A failure on files the test wrote off the task's data: the report shows what the harness
/// found to the diagnosis, and the test fixer is told the script stands and why (not that the
/// failure survived fixes of the script).
#[test]
fn a_test_input_off_the_samples_is_shown_to_the_diagnosis_and_the_test_fixer() {
    let prompts = Prompts::embedded().unwrap();
    let view = task();
    let note = "the test's `sales` file has the columns ['region', 'qty'], without ['price'] of the task's `sales` (its sample has ['region', 'qty', 'price'])";
    let failure = failure(
        "E   AssertionError: KeyError: 'price'\nE   assert 1 == 0",
        json!({
            "kind": "test_error",
            "evidence": "the script does not handle a missing price",
            "fix": "default the price to 1",
            "source": "def test_total(run_solution, tmp_path):\n    pass\n",
            "reclassified": false,
            "input_notes": [note],
        }),
    );
    let run = run_of(&[&failure], &[]);
    let diagnose = render(
        &prompts,
        "loop/diagnose.j2",
        &view,
        json!({"run": run, "history": [], "disagreement": null}),
    )
    .unwrap();
    assert!(
        diagnose.contains(&format!(
            "The harness checked the files this test gave the script against the task's samples:\n- {note}\n"
        )),
        "{diagnose}"
    );
    let fix_tests = render(
        &prompts,
        "loop/fix_tests.j2",
        &view,
        json!({"run": run, "failures": [failure], "rejected": []}),
    )
    .unwrap();
    let request = &fix_tests[fix_tests
        .find("The diagnosis found these tests wrong")
        .unwrap()..];
    insta::assert_snapshot!("fix_tests_input_off_the_samples", request);
    assert!(
        !request.contains("Diagnosis: the script does not handle"),
        "{request}"
    );
    assert!(!request.contains("survived"), "{request}");
}

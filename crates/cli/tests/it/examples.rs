//! The examples in `examples/`, replayed offline from the cassettes recorded from a real model:
//! each `run.sh` generates a script (the model's answers from `cassette.jsonl`, the sandbox,
//! environments and tests real) and runs it; the outputs are checked against values computed
//! here, independently, from the same data files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn example_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// What one replayed example left: its directory (file outputs are under `run/outputs/`) and
/// what `autocoder run --json` printed.
struct Replayed {
    _dir: tempfile::TempDir,
    outputs: Value,
    /// The generation's `result.json`.
    result: Value,
}

/// Runs an example's `run.sh` (replay; `agent`: `AGENT=1`) with the built binary into `run_dir`,
/// with no model named in the environment.
fn run_sh(dir: &Path, run_dir: &Path, agent: bool) -> std::process::Output {
    Command::new("bash")
        .arg(dir.join("run.sh"))
        .env("AGENT", if agent { "1" } else { "" })
        .env("AUTOCODER", env!("CARGO_BIN_EXE_autocoder"))
        .env("OUT", run_dir)
        .env(
            "AUTOCODER_ENV_CACHE",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("autocoder-envs"),
        )
        .env_remove("RUST_LOG")
        .env_remove("AUTOCODER_MODEL")
        .env_remove("AUTOCODER_API_BASE")
        .output()
        .unwrap()
}

/// Runs `examples/NAME/run.sh` (replay) with the built binary and checks that the generation
/// succeeded, and that the script runs on its own as `autocoder run` ran it (see
/// [`standalone`]); `run_args` are run.sh's `RUN` arguments.
fn replay(name: &str, run_args: &[&str]) -> Replayed {
    let dir = example_dir(name);
    assert!(
        dir.join("cassette.jsonl").is_file(),
        "examples/{name}/cassette.jsonl is missing: record it with `examples/{name}/run.sh --record`"
    );
    let out = tempfile::tempdir().unwrap();
    let run_dir = out.path().join("run");
    let output = run_sh(&dir, &run_dir, false);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "examples/{name}/run.sh failed ({}):\n{stderr}",
        output.status
    );
    let result: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["success"], true, "{stderr}");
    assert_eq!(
        result["tokens"]["cached_input_tokens"],
        cassette_cached_tokens(&dir.join("cassette.jsonl")),
        "result.json counts the prompt tokens llama.cpp served from its cache"
    );
    let outputs: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("run --json printed no JSON ({e}):\n{stderr}"));
    standalone(&dir, &run_dir, &result, run_args, &outputs);
    Replayed {
        _dir: out,
        outputs,
        result,
    }
}

/// The generated script run as a user runs it outside autocoder: plain `python solution.py`
/// with the samples and `run_args` as arguments, from a fresh directory with no `--outputs-dir`
/// (so into `./outputs`, as there is no `/var/outputs` here), writes what `autocoder run`
/// printed: the same scalars, file outputs with the same bytes. Leaving an input out is a usage
/// error naming it.
#[allow(clippy::disallowed_methods)] // the script runs under plain Python, as a user runs it
fn standalone(dir: &Path, run_dir: &Path, result: &Value, run_args: &[&str], expected: &Value) {
    assert!(
        !Path::new("/var/outputs").exists(),
        "this check needs a host without /var/outputs"
    );
    let python = std::env::var_os("AUTOCODER_TEST_PYTHON")
        .expect("AUTOCODER_TEST_PYTHON must name the test interpreter (scripts/test sets it up)");
    let cwd = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = Vec::new();
    for input in result["inputs"].as_array().unwrap() {
        if let Some(sample) = input["sample"].as_str() {
            args.push(format!("--{}", input["name"].as_str().unwrap()));
            args.push(dir.join(sample).to_string_lossy().into_owned());
        }
    }
    // run.sh's relative paths are relative to the example's directory.
    args.extend(run_args.iter().map(|a| {
        let path = dir.join(a);
        if path.is_file() {
            path.to_string_lossy().into_owned()
        } else {
            (*a).to_owned()
        }
    }));
    let script = run_dir.join("solution.py");
    let ran = Command::new(&python)
        .arg(&script)
        .args(&args)
        .current_dir(cwd.path())
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "python solution.py {args:?} failed:\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    for output in result["outputs"].as_array().unwrap() {
        let name = output["name"].as_str().unwrap();
        let written = cwd.path().join("outputs").join(name);
        let ty = output["type"].as_str().unwrap();
        if ty == "dir" {
            assert!(written.is_dir(), "{name} not written to ./outputs");
        } else if ty == "file" {
            let by_run = Path::new(expected[name].as_str().unwrap());
            assert_eq!(
                std::fs::read(&written).unwrap(),
                std::fs::read(by_run).unwrap(),
                "{name}: written on its own and by autocoder run"
            );
        } else {
            let text = std::fs::read_to_string(&written)
                .unwrap_or_else(|e| panic!("{name} not written to ./outputs: {e}"));
            let same = match &expected[name] {
                Value::String(s) => text == *s,
                other => {
                    text.trim().parse::<f64>().ok() == other.as_f64()
                        || serde_json::from_str::<Value>(text.trim()).ok().as_ref() == Some(other)
                }
            };
            assert!(
                same,
                "{name}: {text:?} on its own, {} by autocoder run",
                expected[name]
            );
        }
    }
    // Every input is required: without the first one argparse prints its usage.
    let without_first = Command::new(&python)
        .arg(&script)
        .args(&args[2..])
        .current_dir(cwd.path())
        .output()
        .unwrap();
    assert_eq!(without_first.status.code(), Some(2), "{args:?}");
    assert!(
        String::from_utf8_lossy(&without_first.stderr).contains(&args[0]),
        "the usage error names {}",
        args[0]
    );
}

/// The prompt tokens the recorded server said it served from its prompt cache, over every
/// answer in the cassette (a replay answers each recorded request once).
fn cassette_cached_tokens(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            entry["response"]
                .pointer("/usage/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0)
        })
        .sum()
}

fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    csv::Reader::from_path(path)
        .unwrap()
        .deserialize()
        .map(Result::unwrap)
        .collect()
}

fn number(value: &str) -> Option<f64> {
    value.trim().parse().ok()
}

fn close(actual: &Value, expected: f64) -> bool {
    actual
        .as_f64()
        .is_some_and(|a| (a - expected).abs() <= 1e-6 * expected.abs().max(1.0))
}

#[test]
fn sales_totals() {
    let Replayed { outputs, .. } = &replay("sales-totals", &[]);
    let sales = rows(&example_dir("sales-totals").join("sales.csv"));
    let revenue: f64 = sales
        .iter()
        .map(|r| number(&r["units"]).unwrap() * number(&r["unit_price"]).unwrap())
        .sum();
    let units: f64 = sales.iter().map(|r| number(&r["units"]).unwrap()).sum();
    assert!(close(&outputs["total_revenue"], revenue), "{outputs}");
    assert!(close(&outputs["total_units"], units), "{outputs}");
    assert_eq!(outputs["row_count"], sales.len(), "{outputs}");
}

/// How many of a cassette's entries `name` gives each name.
fn cassette_counts(path: &Path, name: impl Fn(&Value) -> String) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        *counts.entry(name(&entry)).or_default() += 1;
    }
    counts
}

/// The tool an agent cassette's answer calls (JSON protocol: each answer is an action object
/// naming its tool).
fn tool_called(entry: &Value) -> String {
    let content = entry["response"]["choices"][0]["message"]["content"]
        .as_str()
        .unwrap();
    let action: Value = serde_json::from_str(content).unwrap();
    action["tool_call"]["name"].as_str().unwrap().to_owned()
}

/// The step a pipeline cassette's answer was for (`fix_code/repair` counts as `fix_code`).
fn step_answered(entry: &Value) -> String {
    let step = entry["step"].as_str().unwrap();
    step.split('/').next().unwrap_or(step).to_owned()
}

/// Replays an example's recorded run that did not finish and checks that it ended as recorded
/// (`reason`), counting the prompt tokens the recorded server served from its cache. Returns
/// `result.json` and the run's directory (kept while the `TempDir` lives).
fn replay_unfinished(
    name: &str,
    cassette: &Path,
    agent: bool,
    reason: &str,
) -> (Value, tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let run_dir = out.path().join("run");
    let output = run_sh(&example_dir(name), &run_dir, agent);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "the recorded run did not finish:\n{stderr}"
    );
    let result: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["success"], false, "{stderr}");
    assert_eq!(result["reason"], reason, "{stderr}");
    assert_eq!(
        result["tokens"]["cached_input_tokens"],
        cassette_cached_tokens(cassette),
        "result.json counts the prompt tokens llama.cpp served from its cache"
    );
    (result, out, run_dir)
}

/// The agent on the sales example, replayed from the local model's recorded run. That run did
/// not finish (the 1.5B model wrote tests but passed the script's arguments to pytest until its
/// 16 turns were spent: examples/README.md), so the replay is checked to be that run: every
/// recorded answer used once, the same calls, the same end, the script left as it was.
#[test]
fn sales_totals_by_the_agent_replays_the_recorded_run() {
    let cassette = example_dir("sales-totals").join("cassette-agent.jsonl");
    let (result, _out, run_dir) = replay_unfinished(
        "sales-totals",
        &cassette,
        true,
        "reached --max-turns (16) without finishing",
    );
    let recorded = cassette_counts(&cassette, tool_called);
    let calls = &result["tool_calls"];
    assert_eq!(calls["turns"], recorded.values().sum::<u64>(), "{calls}");
    let replayed: BTreeMap<String, u64> = serde_json::from_value(calls["counts"].clone()).unwrap();
    assert_eq!(replayed, recorded, "the replay made the recorded calls");
    assert!(
        recorded.get("run_tests").copied().unwrap_or(0) >= 1,
        "the recorded run ran the tests: {recorded:?}"
    );
    // The workspace's script is the one the run left: the skeleton the profile asked for.
    let script = std::fs::read_to_string(run_dir.join("work/solution.py")).unwrap();
    assert!(
        script.contains("def compute(sales, outputs_dir):"),
        "{script}"
    );
}

#[test]
fn sensor_analysis() {
    let Replayed { outputs, .. } = &replay("sensor-analysis", &[]);
    let readings = rows(&example_dir("sensor-analysis").join("readings.csv"));
    let out_of_range = |value: &str, low: f64, high: f64| {
        number(value).is_some_and(|v| !(low..=high).contains(&v))
    };
    let anomalies = readings
        .iter()
        .filter(|r| {
            out_of_range(&r["temperature"], -40.0, 60.0) || out_of_range(&r["humidity"], 0.0, 100.0)
        })
        .count();
    assert_eq!(outputs["total_anomalies"], anomalies, "{outputs}");
    let report = rows(Path::new(outputs["report.csv"].as_str().unwrap()));
    let mut sensors: BTreeMap<&str, Vec<&BTreeMap<String, String>>> = BTreeMap::new();
    for r in &readings {
        sensors.entry(r["sensor_id"].as_str()).or_default().push(r);
    }
    assert_eq!(
        report.len(),
        sensors.len(),
        "one row per sensor: {report:?}"
    );
    let order: Vec<&str> = report.iter().map(|r| r["sensor_id"].as_str()).collect();
    assert!(
        order.is_sorted(),
        "the task asks for the rows sorted by sensor_id: {order:?}"
    );
    let mean = |values: Vec<f64>| values.iter().sum::<f64>() / values.len() as f64;
    for row in &report {
        let group = &sensors[row["sensor_id"].as_str()];
        let temps: Vec<f64> = group
            .iter()
            .filter_map(|r| number(&r["temperature"]))
            .collect();
        let humidity: Vec<f64> = group
            .iter()
            .filter_map(|r| number(&r["humidity"]))
            .collect();
        let warnings = group.iter().filter(|r| r["status"] == "warning").count();
        let expect = [
            ("avg_temp", mean(temps.clone())),
            (
                "min_temp",
                temps.iter().copied().fold(f64::INFINITY, f64::min),
            ),
            (
                "max_temp",
                temps.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ),
            ("avg_humidity", mean(humidity)),
            ("warnings", warnings as f64),
        ];
        for (column, value) in expect {
            let got = number(&row[column]).unwrap();
            assert!(
                (got - value).abs() <= 0.01,
                "{} {column}: {got} != {value}",
                row["sensor_id"]
            );
        }
    }
}

#[test]
fn log_analysis() {
    let Replayed {
        outputs, result, ..
    } = &replay("log-analysis", &["--log_file", "app.log"]);
    // Every recorded answer is used, once, by the step it was for (an answer asked again,
    // `diagnose/repair`, counts as its step's, as in `step_answered`).
    let mut replayed: BTreeMap<String, u64> = BTreeMap::new();
    for (step, spent) in result["steps"].as_object().unwrap() {
        let step = step.split('/').next().unwrap_or(step).to_owned();
        *replayed.entry(step).or_default() += spent["calls"].as_u64().unwrap();
    }
    assert_eq!(
        replayed,
        cassette_counts(
            &example_dir("log-analysis").join("cassette.jsonl"),
            step_answered
        ),
        "the replay made the recorded calls"
    );
    let log = std::fs::read_to_string(example_dir("log-analysis").join("app.log")).unwrap();
    let mut levels: BTreeMap<&str, u64> = BTreeMap::new();
    let mut components: BTreeMap<&str, u64> = BTreeMap::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        *levels.entry(fields[2]).or_default() += 1;
        *components
            .entry(fields[3].trim_matches(['[', ']']))
            .or_default() += 1;
    }
    let lines: u64 = levels.values().sum();
    let errors = levels.get("ERROR").copied().unwrap_or(0);
    assert_eq!(outputs["error_count"], errors, "{outputs}");
    // The summary follows the schema text given to `generate`.
    let summary: Value = serde_json::from_str(outputs["summary"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("summary is not JSON ({e}): {outputs}"));
    for (name, count) in &levels {
        assert_eq!(summary["levels"][name], *count, "level {name}: {summary}");
    }
    for (name, count) in &components {
        assert_eq!(
            summary["components"][name], *count,
            "component {name}: {summary}"
        );
    }
    assert!(
        close(&summary["error_rate"], errors as f64 / lines as f64),
        "{summary}"
    );
}

#[test]
fn join_orders() {
    let Replayed {
        outputs, result, ..
    } = &replay(
        "join-orders",
        &["--min_total", "100", "--include_inactive", "false"],
    );
    // The recorded first script wrote one customer's name and country on every row, and its
    // tests (row counts) passed it: the harness's lookup check failed it and the code fixer
    // fixed it, the second run passing.
    let runs = result["iterations"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{result}");
    assert_eq!(
        runs[0]["error_types"],
        json!({"test_contract.py::test_joined_csv_takes_each_looked_up_value_from_its_keys_row": "logic"}),
    );
    assert_eq!(runs[1]["failed"], 0);
    let dir = example_dir("join-orders");
    let active: BTreeMap<String, bool> = rows(&dir.join("customers.csv"))
        .into_iter()
        .map(|r| (r["customer_id"].clone(), r["active"] == "true"))
        .collect();
    // run.sh runs it with --min_total 100 --include_inactive false.
    let mut expected: Vec<String> = rows(&dir.join("orders.csv"))
        .into_iter()
        .filter(|r| number(&r["total"]).is_some_and(|t| t >= 100.0))
        .filter(|r| active.get(&r["customer_id"]).copied().unwrap_or(false))
        .map(|r| r["order_id"].clone())
        .collect();
    expected.sort();
    assert_eq!(outputs["count"], expected.len(), "{outputs}");
    let path = Path::new(outputs["joined.csv"].as_str().unwrap());
    let header = csv::Reader::from_path(path)
        .unwrap()
        .headers()
        .unwrap()
        .clone();
    assert_eq!(
        header.iter().collect::<Vec<_>>(),
        ["order_id", "customer_id", "name", "country", "total"],
        "the columns the task asks for"
    );
    let joined = rows(path);
    let ids: Vec<&str> = joined.iter().map(|r| r["order_id"].as_str()).collect();
    assert_eq!(ids, expected);
    // Each row carries its own order's total and its own customer's name and country.
    let orders: BTreeMap<String, BTreeMap<String, String>> = rows(&dir.join("orders.csv"))
        .into_iter()
        .map(|r| (r["order_id"].clone(), r))
        .collect();
    let customers: BTreeMap<String, BTreeMap<String, String>> = rows(&dir.join("customers.csv"))
        .into_iter()
        .map(|r| (r["customer_id"].clone(), r))
        .collect();
    for row in &joined {
        let order = &orders[&row["order_id"]];
        let customer = &customers[&order["customer_id"]];
        assert_eq!(row["customer_id"], order["customer_id"], "{row:?}");
        assert_eq!(row["name"], customer["name"], "{row:?}");
        assert_eq!(row["country"], customer["country"], "{row:?}");
        let (written, total) = (number(&row["total"]), number(&order["total"]));
        assert!(
            written
                .zip(total)
                .is_some_and(|(w, t)| (w - t).abs() < 1e-6),
            "{row:?}"
        );
    }
}

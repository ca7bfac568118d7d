//! `autocoder export`: a run generated against the scripted LLM server, exported, and the
//! export run without autocoder; its outputs must equal `autocoder run`'s.

use std::path::Path;
use std::process::Command;

use autocoder_testkit::{Script, ScriptedServer};
use serde_json::{Value, json};

use crate::scripted::{autocoder_in, pipeline};

/// A script in the standalone form: outputs under `--outputs-dir`, a file output beside a
/// scalar.
const SCRIPT: &str = r#"import argparse
import csv
import os


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    parser.add_argument("--min_qty", type=int, required=True)
    parser.add_argument(
        "--outputs-dir", default="/var/outputs" if os.path.isdir("/var/outputs") else "outputs"
    )
    args = parser.parse_args()
    os.makedirs(args.outputs_dir, exist_ok=True)
    with open(args.sales, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if int(r["qty"]) >= args.min_qty]
    with open(os.path.join(args.outputs_dir, "total"), "w") as handle:
        handle.write(str(sum(int(r["qty"]) * float(r["price"]) for r in rows)))
    with open(os.path.join(args.outputs_dir, "by_region.csv"), "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["region", "revenue"])
        for r in rows:
            writer.writerow([r["region"], int(r["qty"]) * float(r["price"])])


if __name__ == "__main__":
    main()
"#;

const TESTS: &str = r#"import csv

import pytest


def test_total_and_regions(run_solution):
    result = run_solution({"min_qty": 0})
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(3 * 2.5 + 2 * 4.0)
    with open(result.outputs["by_region.csv"], newline="") as handle:
        assert [r["region"] for r in csv.DictReader(handle)] == ["north", "south"]
"#;

/// Generates [`SCRIPT`] as the run `run` named `sales-totals` in `dir` (with `sales.csv` and
/// `more.csv` beside it).
pub(crate) async fn generated(dir: &Path) {
    let server = ScriptedServer::start(Script::new(pipeline(SCRIPT, TESTS)))
        .await
        .unwrap();
    std::fs::write(
        dir.join("sales.csv"),
        "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("more.csv"),
        "region,qty,price\neast,10,1.5\nwest,1,100\n",
    )
    .unwrap();
    let (base, workdir) = (server.base_url(), dir.to_owned());
    let out = tokio::task::spawn_blocking(move || {
        autocoder_in(
            &workdir,
            &[
                "generate",
                "--name",
                "sales-totals",
                "--prompt",
                "Total revenue of the rows with qty >= min_qty, and per region.",
                "--sample",
                "sales=sales.csv",
                "--input",
                "min_qty:int",
                "--output",
                "total:float",
                "--output",
                "by_region.csv:file",
                "--model",
                "openai/scripted",
                "--api-base",
                &base,
                "--api-key-env",
                "SCRIPTED_KEY",
                "--out",
                "run",
            ],
            &[],
        )
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `autocoder run run --json -- --sales more.csv --min_qty 2`'s outputs, the file's content in
/// place of its path.
pub(crate) fn run_outputs(dir: &Path) -> Value {
    let out = autocoder_in(
        dir,
        &[
            "run",
            "run",
            "--json",
            "--",
            "--sales",
            "more.csv",
            "--min_qty",
            "2",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut outputs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = dir.join(outputs["by_region.csv"].as_str().unwrap());
    outputs["by_region.csv"] = json!(std::fs::read_to_string(path).unwrap());
    outputs
}

fn python_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(crate::python())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_export_runs_and_tests_without_autocoder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    generated(dir).await;
    let out = autocoder_in(dir, &["export", "run", "--to", "exported"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let folder = dir.join("exported");
    for file in [
        "README.md",
        "solution.py",
        "test_solution.py",
        "conftest.py",
        "requirements.txt",
        "requirements-test.txt",
        "samples/sales.csv",
    ] {
        assert!(folder.join(file).is_file(), "{file} is missing");
    }
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(readme.starts_with("# sales-totals\n"), "{readme}");
    assert!(
        readme.contains(
            "solution.py --min_qty <int> --sales samples/sales.csv --outputs-dir outputs\n"
        ),
        "{readme}"
    );
    assert!(
        readme.contains("| `--min_qty` | `int`: an integer |")
            && readme.contains("| `outputs/by_region.csv` | `file`: a file |"),
        "{readme}"
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("requirements.txt")).unwrap(),
        "# solution.py needs only the Python standard library.\n"
    );

    // The README's command, with the new data: the outputs `autocoder run` gives.
    std::fs::copy(dir.join("more.csv"), folder.join("more.csv")).unwrap();
    let ran = python_in(
        &folder,
        &[
            "solution.py",
            "--sales",
            "more.csv",
            "--min_qty",
            "2",
            "--outputs-dir",
            "outputs",
        ],
    );
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let expected = run_outputs(dir);
    let total: f64 = std::fs::read_to_string(folder.join("outputs/total"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(json!(total), expected["total"]);
    assert_eq!(
        json!(std::fs::read_to_string(folder.join("outputs/by_region.csv")).unwrap()),
        expected["by_region.csv"]
    );

    // Its tests pass with plain pytest, the samples read from the folder.
    let tested = python_in(&folder, &["-m", "pytest", "-q", "-p", "no:cacheprovider"]);
    let text = String::from_utf8_lossy(&tested.stdout);
    assert!(tested.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");

    // A second export into the same folder is refused.
    let again = autocoder_in(dir, &["export", "run", "--to", "exported"], &[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not empty"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_with_hard_wired_outputs_is_refused_with_the_way_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    generated(dir).await;
    // The run as scripts were generated before --outputs-dir.
    let path = dir.join("run/result.json");
    let mut result: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    result["solution"] = json!(SCRIPT.replace("--outputs-dir", "--out-dir"));
    std::fs::write(&path, serde_json::to_vec(&result).unwrap()).unwrap();
    let out = autocoder_in(dir, &["export", "run", "--to", "exported"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("hard-wired /var/outputs") && stderr.contains("--image"),
        "{stderr}"
    );
    assert!(!dir.join("exported").exists());
}

/// The Python with the Flyte SDK, as set up by `scripts/test`.
fn flyte_python() -> std::path::PathBuf {
    std::env::var_os("AUTOCODER_FLYTE_PYTHON")
        .expect("AUTOCODER_FLYTE_PYTHON must name a Python with the Flyte SDK: run scripts/test")
        .into()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_flyte_task_runs_locally_with_the_outputs_of_autocoder_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    generated(dir).await;
    let out = autocoder_in(dir, &["export", "run", "--flyte", "flyte"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let folder = dir.join("flyte");
    for file in [
        "task.py",
        "solution.py",
        "requirements.txt",
        "README.md",
        "samples/sales.csv",
    ] {
        assert!(folder.join(file).is_file(), "{file} is missing");
    }
    // Flyte's local mode, through the module's own command line; it keeps its run records
    // under HOME.
    let ran = Command::new(flyte_python())
        .args(["task.py", "--sales"])
        .arg(dir.join("more.csv"))
        .args(["--min_qty", "2"])
        .current_dir(&folder)
        .env("HOME", dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let json_start = stdout
        .find("{\n")
        .unwrap_or_else(|| panic!("no JSON in {stdout}"));
    let mut outputs: Value = serde_json::from_str(&stdout[json_start..]).unwrap();
    let path = outputs["by_region.csv"].as_str().unwrap().to_owned();
    outputs["by_region.csv"] = json!(std::fs::read_to_string(path).unwrap());
    assert_eq!(outputs, run_outputs(dir));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_flyte_module_names_the_runs_packages_limits_and_types() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    generated(dir).await;
    // As if the script needed pandas and jq: what the image must then hold.
    let path = dir.join("run/result.json");
    let mut result: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    result["packages"] = json!(["pandas"]);
    result["system_packages"] = json!(["jq"]);
    result["environment"]["resolved"] =
        json!([["numpy", "2.3.0"], ["pandas", "3.1.1"], ["pytest", "9.2.0"]]);
    std::fs::write(&path, serde_json::to_vec(&result).unwrap()).unwrap();
    let out = autocoder_in(dir, &["export", "run", "--flyte", "flyte"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let probe = r#"
import inspect, json, sys
sys.path.insert(0, ".")
import task
layers = task.env.image._layers
print(json.dumps({
    "env": task.env.name,
    "cpu": task.env.resources.cpu,
    "memory": task.env.resources.memory,
    "apt": [p for layer in layers if type(layer).__name__ == "AptPackages" for p in layer.packages],
    "pip": [p for layer in layers if type(layer).__name__ == "PipPackages" for p in layer.packages],
    "python": list(task.env.image.python_version or []) if hasattr(task.env.image, "python_version") else None,
    "inputs": {k: str(v.annotation) for k, v in inspect.signature(task.sales_totals.func).parameters.items()},
    "outputs": {k: str(v) for k, v in task.Outputs.__annotations__.items()},
}))
"#;
    let probed = Command::new(flyte_python())
        .args(["-c", probe])
        .current_dir(dir.join("flyte"))
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        probed.status.success(),
        "{}",
        String::from_utf8_lossy(&probed.stderr)
    );
    let spec: Value = serde_json::from_slice(&probed.stdout).unwrap();
    assert_eq!(spec["env"], "sales_totals");
    assert_eq!(spec["cpu"], 1.0);
    assert_eq!(spec["memory"], "4Gi");
    assert_eq!(spec["apt"], json!(["jq"]));
    assert_eq!(spec["pip"], json!(["pandas==3.1.1"]));
    assert_eq!(
        spec["inputs"],
        json!({"sales": "<class 'flyte.io._file.File'>", "min_qty": "<class 'int'>"})
    );
    assert_eq!(
        spec["outputs"],
        json!({"total": "<class 'float'>", "by_region_csv": "<class 'flyte.io._file.File'>"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_image_runs_the_script_on_mounted_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    generated(dir).await;
    let tag = format!("autocoder-test/export:{}", std::process::id());
    let out = autocoder_in(dir, &["export", "run", "--image", &tag], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docker = |args: &[&str]| {
        let out = Command::new("docker").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "docker {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let label = docker(&[
        "image",
        "inspect",
        "--format",
        "{{ index .Config.Labels \"autocoder.run-name\" }}",
        &tag,
    ]);
    assert_eq!(label.trim(), "sales-totals");
    let outputs_dir = dir.join("out");
    std::fs::create_dir(&outputs_dir).unwrap();
    let data = format!("{}:/data:ro", dir.display());
    let outputs = format!("{}:/var/outputs", outputs_dir.display());
    docker(&[
        "run",
        "--rm",
        "--network",
        "none",
        "-v",
        &data,
        "-v",
        &outputs,
        &tag,
        "--sales",
        "/data/more.csv",
        "--min_qty",
        "2",
    ]);
    docker(&["image", "rm", &tag]);
    let expected = run_outputs(dir);
    let total: f64 = std::fs::read_to_string(outputs_dir.join("total"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(json!(total), expected["total"]);
    assert_eq!(
        json!(std::fs::read_to_string(outputs_dir.join("by_region.csv")).unwrap()),
        expected["by_region.csv"]
    );
}

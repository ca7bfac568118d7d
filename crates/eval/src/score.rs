//! Scoring one script on a task's cases: run it in the sandbox with each case's inputs, compare
//! every declared output with the expected one. The generated script runs the way
//! `autocoder run` runs it (its own environment); the reference runs in a pandas environment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use autocoder_loop::SandboxOptions;
use autocoder_loop::request::IoType;
use autocoder_loop::run::{RunOptions, run};
use autocoder_sandbox::{
    Env, EnvCache, EnvSpec, RunOutcome, RunSpec, Sandbox, Value, parse_output,
};
use serde::{Deserialize, Serialize};

use crate::error::EvalError;
use crate::suite::{Case, SAMPLE_CASE, Task};

/// The packages every reference solution may import.
pub const REFERENCE_PACKAGES: &[&str] = &["pandas"];

/// How one case went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case (`sample` for the samples).
    pub name: String,
    /// Every output matched.
    pub correct: bool,
    /// Why not: the first mismatch, or how the run failed.
    pub detail: Option<String>,
}

impl CaseResult {
    fn wrong(name: &str, detail: String) -> Self {
        CaseResult {
            name: name.to_owned(),
            correct: false,
            detail: Some(detail),
        }
    }
}

/// Runs the generated script in `run_dir` on every case of `task` (the sample case first).
pub async fn score_generated(
    task: &Task,
    run_dir: &Path,
    sandbox: &SandboxOptions,
) -> Result<Vec<CaseResult>, EvalError> {
    let mut results = Vec::new();
    for case in task.all_cases() {
        let out = tempfile::tempdir().map_err(EvalError::io(std::env::temp_dir()))?;
        let options = RunOptions {
            overrides: task.resolve_args(&case),
            force: true,
            sandbox: sandbox.clone(),
            out_dir: Some(out.path().to_path_buf()),
        };
        let result = match run(run_dir, &options).await {
            Ok((_, outcome)) => judge(task, &case, &outcome)?,
            Err(err) => CaseResult::wrong(&case.name, format!("cannot run: {err}")),
        };
        results.push(result);
    }
    Ok(results)
}

/// A script the loop wrote or tested on its way (a candidate, a test run's, a candidate group's;
/// the kept one is among them), scored like the kept one: whether the loop kept the right script
/// when it had one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriedScript {
    /// Its path in the run directory (`candidates/1/3/solution.py`, `iterations/2/solution.py`,
    /// `iterations/1/group-2/solution.py`).
    pub script: String,
    /// Every case, the sample case first.
    pub cases: Vec<CaseResult>,
}

impl TriedScript {
    /// Right on every held-out case.
    pub fn heldout_correct(&self) -> bool {
        all_heldout_right(&self.cases)
    }
}

/// Scores every script the loop wrote or tested in `run_dir` (each round of candidates'
/// `candidates/<n>/<k>/solution.py`, then `iterations/<n>/solution.py` and
/// `iterations/<n>/group-<k>/solution.py`, in run order). Each runs from a scratch copy of the
/// run's `result.json` (its environment and contract) with the script in place of the kept one;
/// a script with the kept one's text takes `kept`'s cases, and a text seen before its cases.
pub async fn score_tried(
    task: &Task,
    run_dir: &Path,
    kept: &[CaseResult],
    sandbox: &SandboxOptions,
) -> Result<Vec<TriedScript>, EvalError> {
    let solution = run_dir.join("solution.py");
    let mut seen: BTreeMap<String, Vec<CaseResult>> = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string(&solution) {
        seen.insert(text, kept.to_vec());
    }
    let mut tried = Vec::new();
    for script in written_scripts(run_dir)? {
        let path = run_dir.join(&script);
        let text = std::fs::read_to_string(&path).map_err(EvalError::io(&path))?;
        let cases = if let Some(cases) = seen.get(&text) {
            cases.clone()
        } else {
            let cases = score_script(task, run_dir, &text, sandbox).await?;
            seen.insert(text, cases.clone());
            cases
        };
        tried.push(TriedScript { script, cases });
    }
    Ok(tried)
}

/// Scores `text` as the script of `run_dir`'s generation, from a scratch copy of its
/// `result.json`.
async fn score_script(
    task: &Task,
    run_dir: &Path,
    text: &str,
    sandbox: &SandboxOptions,
) -> Result<Vec<CaseResult>, EvalError> {
    let scratch = tempfile::tempdir().map_err(EvalError::io(std::env::temp_dir()))?;
    let result = run_dir.join("result.json");
    std::fs::copy(&result, scratch.path().join("result.json")).map_err(EvalError::io(&result))?;
    let copy = scratch.path().join("solution.py");
    std::fs::write(&copy, text).map_err(EvalError::io(&copy))?;
    score_generated(task, scratch.path(), sandbox).await
}

/// The scripts under `run_dir/candidates/` (by round, then candidate) and `run_dir/iterations/`
/// (by iteration, then group), relative to `run_dir`.
fn written_scripts(run_dir: &Path) -> Result<Vec<String>, EvalError> {
    let mut scripts = Vec::new();
    let mut add = |script: String| {
        if run_dir.join(&script).is_file() {
            scripts.push(script);
        }
    };
    for round in numbered(&run_dir.join("candidates"), "")? {
        for candidate in numbered(&run_dir.join(format!("candidates/{round}")), "")? {
            add(format!("candidates/{round}/{candidate}/solution.py"));
        }
    }
    for number in numbered(&run_dir.join("iterations"), "")? {
        add(format!("iterations/{number}/solution.py"));
        for group in numbered(&run_dir.join(format!("iterations/{number}")), "group-")? {
            add(format!("iterations/{number}/group-{group}/solution.py"));
        }
    }
    Ok(scripts)
}

/// The numbers `n` of the entries `<prefix><n>` in `dir`, in order (none when `dir` is missing).
pub(crate) fn numbered(dir: &Path, prefix: &str) -> Result<Vec<u32>, EvalError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(EvalError::io(dir)(err)),
    };
    let mut numbers: Vec<u32> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
        .collect();
    numbers.sort_unstable();
    Ok(numbers)
}

/// The environment every reference solution runs in ([`REFERENCE_PACKAGES`] and pytest), from
/// the sandbox's environment cache.
pub(crate) async fn reference_env(sandbox: &SandboxOptions) -> Result<Env, EvalError> {
    let cache = EnvCache::new(
        sandbox
            .cache_dir
            .clone()
            .unwrap_or_else(EnvCache::default_dir),
    );
    Ok(cache.ensure(&EnvSpec::new(REFERENCE_PACKAGES)?).await?)
}

/// Runs the reference solution on `case` and returns its outcome and the directory its outputs
/// were written to (kept alive by the returned guard).
pub async fn run_reference(
    task: &Task,
    case: &Case,
    sandbox: &SandboxOptions,
) -> Result<(RunOutcome, tempfile::TempDir), EvalError> {
    let box_ = Sandbox::new(sandbox.backend);
    let env = reference_env(sandbox).await?;
    let work = tempfile::tempdir().map_err(EvalError::io(std::env::temp_dir()))?;
    let mut spec = RunSpec::new(env, task.reference(), work.path())?;
    spec.limits = sandbox.limits;
    let args = task.resolve_args(case);
    for sample in task.samples() {
        let value = match args.get(&sample.name) {
            Some(path) => Value::File(PathBuf::from(path)),
            None => Value::File(sample.path.clone()),
        };
        spec = spec.input(&sample.name, value);
    }
    for input in &task.inputs {
        if task.spec.samples.contains_key(&input.name) {
            continue;
        }
        let Some(text) = args.get(&input.name) else {
            return Err(EvalError::suite(
                task.dir.join("task.json"),
                format!(
                    "case `{}` gives no value for input `{}`",
                    case.name, input.name
                ),
            ));
        };
        let value = match input.ty {
            IoType::File => Value::File(PathBuf::from(text)),
            IoType::Dir => Value::Dir(PathBuf::from(text)),
            ty => parse_output(&input.name, ty, text)?,
        };
        spec = spec.input(&input.name, value);
    }
    for output in &task.outputs {
        spec = spec.output(&output.name, output.ty);
    }
    let outcome = box_.run(&spec).await?;
    Ok((outcome, work))
}

/// Compares a run's outputs with `task`'s expected ones for `case`.
pub fn judge(task: &Task, case: &Case, outcome: &RunOutcome) -> Result<CaseResult, EvalError> {
    if !outcome.success() {
        let why = if outcome.timed_out {
            "timed out".to_owned()
        } else {
            format!("exit code {:?}", outcome.exit_code)
        };
        return Ok(CaseResult::wrong(
            &case.name,
            format!("the script failed ({why}): {}", tail(&outcome.stderr, 400)),
        ));
    }
    let actual = match &outcome.outputs {
        Ok(outputs) => outputs,
        Err(err) => return Ok(CaseResult::wrong(&case.name, err.to_string())),
    };
    let expected = expected_outputs(task, &case.name)?;
    for output in &task.outputs {
        let Some(got) = actual.get(&output.name) else {
            return Ok(CaseResult::wrong(
                &case.name,
                format!("{}: not written", output.name),
            ));
        };
        if let Err(diff) = task.rule(output).check(&expected[&output.name], got) {
            return Ok(CaseResult::wrong(
                &case.name,
                format!("{}: {diff}", output.name),
            ));
        }
    }
    Ok(CaseResult {
        name: case.name.clone(),
        correct: true,
        detail: None,
    })
}

/// The expected value of every declared output of `case`, read from `expected/<case>/`.
pub fn expected_outputs(task: &Task, case: &str) -> Result<BTreeMap<String, Value>, EvalError> {
    let dir = task.expected_dir(case);
    let mut values = BTreeMap::new();
    for output in &task.outputs {
        let path = dir.join(&output.name);
        let missing = || {
            EvalError::suite(
                &path,
                format!(
                    "no expected `{}` for case `{case}`: run the reference to write it (see evals/README.md)",
                    output.name
                ),
            )
        };
        let value = match output.ty {
            IoType::File if path.is_file() => Value::File(path.clone()),
            IoType::Dir if path.is_dir() => Value::Dir(path.clone()),
            IoType::File | IoType::Dir => return Err(missing()),
            ty => {
                let text = std::fs::read_to_string(&path).map_err(|_| missing())?;
                parse_output(&output.name, ty, &text)?
            }
        };
        values.insert(output.name.clone(), value);
    }
    Ok(values)
}

/// Copies what the reference wrote for `case` into `expected/<case>/`, replacing what was there.
pub fn write_expected(task: &Task, case: &str, outputs_dir: &Path) -> Result<(), EvalError> {
    let dir = task.expected_dir(case);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(EvalError::io(&dir))?;
    }
    copy_tree(outputs_dir, &dir).map_err(EvalError::io(&dir))
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn tail(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &text[start..])
}

/// `cases` has held-out cases and every one of them is right.
pub fn all_heldout_right(cases: &[CaseResult]) -> bool {
    let mut heldout = cases.iter().filter(|c| is_heldout(c)).peekable();
    heldout.peek().is_some() && heldout.all(|c| c.correct)
}

/// Whether `case` is one of the held-out ones (not the samples).
pub fn is_heldout(case: &CaseResult) -> bool {
    case.name != SAMPLE_CASE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_scripts_are_listed_candidates_first_then_by_iteration_then_group() {
        let dir = tempfile::tempdir().unwrap();
        for path in [
            "candidates/1/10/solution.py",
            "candidates/1/2/solution.py",
            "candidates/2/1/solution.py",
            "iterations/10/solution.py",
            "iterations/2/solution.py",
            "iterations/1/group-2/solution.py",
            "iterations/1/group-10/solution.py",
            "iterations/1/group-1/solution.py",
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "print(1)\n").unwrap();
        }
        std::fs::create_dir_all(dir.path().join("iterations/3/sandbox")).unwrap();
        std::fs::create_dir_all(dir.path().join("candidates/1/3/work")).unwrap();
        assert_eq!(
            written_scripts(dir.path()).unwrap(),
            [
                "candidates/1/2/solution.py",
                "candidates/1/10/solution.py",
                "candidates/2/1/solution.py",
                "iterations/1/group-1/solution.py",
                "iterations/1/group-2/solution.py",
                "iterations/1/group-10/solution.py",
                "iterations/2/solution.py",
                "iterations/10/solution.py",
            ]
        );
        assert!(
            written_scripts(&dir.path().join("missing"))
                .unwrap()
                .is_empty()
        );
    }
}

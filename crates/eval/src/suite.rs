//! A suite on disk: `suite.json` names the tasks and their split; each task is a directory.
//!
//! ```text
//! SUITE_DIR/
//!   suite.json                {"tasks": [{"name": "sales-by-region", "split": "dev"}, ...]}
//!   tasks/<name>/
//!     task.json               the request, the held-out cases and the comparison rules
//!     reference.py            a solution written independently of the loop, same contract
//!     sample/...              the samples the loop sees
//!     heldout/...             the data it never sees
//!     expected/<case>/<out>   what the reference writes for each case (`sample` included)
//! ```
//!
//! `task.json`:
//!
//! ```json
//! {"prompt": "Total revenue per region ...",
//!  "samples": {"sales": "sample/sales.csv"},
//!  "inputs": ["min_qty:int"], "outputs": ["total:float", "by_region.csv:file"],
//!  "constraints": ["qty must be positive"],
//!  "compare": {"by_region.csv": {"kind": "csv", "keys": ["region"], "abs": 0.01}},
//!  "cases": [{"name": "quoted", "args": {"sales": "heldout/quoted.csv", "min_qty": "2"}}]}
//! ```
//!
//! A case's `args` are the script's inputs as a user would type them (file paths relative to the
//! task directory); inputs a case leaves out take their defaults (the samples). The case
//! `sample` (no arguments) is implicit: it checks the script on the data the loop saw.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use autocoder_loop::request::{Declaration, IoType, Sample};
use serde::{Deserialize, Serialize};

use crate::compare::Compare;
use crate::error::EvalError;

/// The implicit case that runs the script with its defaults (the samples).
pub const SAMPLE_CASE: &str = "sample";

/// Which half of the suite a task belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// Looked at and tuned on.
    Dev,
    /// Only scored: its failures are never read to change prompts.
    Test,
}

impl Split {
    /// `dev` or `test`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dev => "dev",
            Self::Test => "test",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    tasks: Vec<ManifestEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestEntry {
    name: String,
    split: Split,
}

/// One held-out case: the inputs as typed, the outputs expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The case's name; its expected outputs are in `expected/<name>/`.
    pub name: String,
    /// `input name -> value` as typed on the command line; files relative to the task.
    #[serde(default)]
    pub args: BTreeMap<String, String>,
}

/// `task.json`, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// The task in plain words.
    pub prompt: String,
    /// Schema text shown verbatim.
    #[serde(default)]
    pub schema: Option<String>,
    /// `name -> path` of each sample, relative to the task directory.
    #[serde(default)]
    pub samples: BTreeMap<String, String>,
    /// `NAME:TYPE` inputs.
    #[serde(default)]
    pub inputs: Vec<String>,
    /// `NAME:TYPE` outputs.
    pub outputs: Vec<String>,
    /// Business rules in words.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// `output name -> rule`; outputs not named use their type's default rule.
    #[serde(default)]
    pub compare: BTreeMap<String, Compare>,
    /// The held-out cases (at least one).
    pub cases: Vec<Case>,
    /// Arguments of the implicit `sample` case, for inputs that have no default.
    #[serde(default)]
    pub sample_args: BTreeMap<String, String>,
}

/// A loaded, validated task.
#[derive(Debug, Clone)]
pub struct Task {
    /// Its directory name.
    pub name: String,
    /// Its half.
    pub split: Split,
    /// Its directory (absolute).
    pub dir: PathBuf,
    /// What `task.json` says.
    pub spec: TaskSpec,
    /// The declared inputs, parsed.
    pub inputs: Vec<Declaration>,
    /// The declared outputs, parsed.
    pub outputs: Vec<Declaration>,
}

impl Task {
    /// The samples, with absolute paths.
    pub fn samples(&self) -> Vec<Sample> {
        self.spec
            .samples
            .iter()
            .map(|(name, path)| Sample {
                name: name.clone(),
                path: self.dir.join(path),
            })
            .collect()
    }

    /// The cases to score: the implicit sample case first (for a task with samples), then the
    /// held-out ones.
    pub fn all_cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        if !self.spec.samples.is_empty() {
            cases.push(Case {
                name: SAMPLE_CASE.to_owned(),
                args: self.spec.sample_args.clone(),
            });
        }
        cases.extend(self.spec.cases.iter().cloned());
        cases
    }

    /// `args` with file and directory inputs made absolute, ready for `autocoder run`.
    pub fn resolve_args(&self, case: &Case) -> BTreeMap<String, String> {
        case.args
            .iter()
            .map(|(name, value)| {
                let value = if self.is_path_input(name) {
                    self.dir.join(value).display().to_string()
                } else {
                    value.clone()
                };
                (name.clone(), value)
            })
            .collect()
    }

    fn is_path_input(&self, name: &str) -> bool {
        self.spec.samples.contains_key(name)
            || self
                .inputs
                .iter()
                .any(|d| d.name == name && matches!(d.ty, IoType::File | IoType::Dir))
    }

    /// The comparison rule of `output`: the task's, else its type's default.
    pub fn rule(&self, output: &Declaration) -> Compare {
        self.spec
            .compare
            .get(&output.name)
            .cloned()
            .unwrap_or_else(|| Compare::default_for(&output.name, output.ty))
    }

    /// Where the expected outputs of `case` are.
    pub fn expected_dir(&self, case: &str) -> PathBuf {
        self.dir.join("expected").join(case)
    }

    /// The reference solution.
    pub fn reference(&self) -> PathBuf {
        self.dir.join("reference.py")
    }
}

/// A suite: its tasks in manifest order.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The suite directory (absolute).
    pub dir: PathBuf,
    /// Every task.
    pub tasks: Vec<Task>,
}

impl Suite {
    /// Reads `dir/suite.json` and every task it names; any error names the file and field.
    pub fn load(dir: &Path) -> Result<Self, EvalError> {
        let dir = std::path::absolute(dir).map_err(EvalError::io(dir))?;
        let manifest_path = dir.join("suite.json");
        let text =
            std::fs::read_to_string(&manifest_path).map_err(EvalError::io(&manifest_path))?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|err| {
            EvalError::suite(&manifest_path, format!("not a suite manifest: {err}"))
        })?;
        let mut tasks = Vec::new();
        for entry in manifest.tasks {
            if tasks.iter().any(|t: &Task| t.name == entry.name) {
                return Err(EvalError::suite(
                    &manifest_path,
                    format!("task `{}` is listed twice", entry.name),
                ));
            }
            tasks.push(load_task(&dir.join("tasks").join(&entry.name), &entry)?);
        }
        if tasks.is_empty() {
            return Err(EvalError::suite(&manifest_path, "lists no tasks"));
        }
        Ok(Suite { dir, tasks })
    }

    /// The tasks named in `names` (all when empty), in suite order; an unknown name is an error
    /// listing the known ones.
    pub fn select(&self, names: &[String]) -> Result<Vec<&Task>, EvalError> {
        if let Some(unknown) = names
            .iter()
            .find(|n| !self.tasks.iter().any(|t| &t.name == *n))
        {
            let known: Vec<&str> = self.tasks.iter().map(|t| t.name.as_str()).collect();
            return Err(EvalError::suite(
                self.dir.join("suite.json"),
                format!("no task `{unknown}`; the suite has: {}", known.join(", ")),
            ));
        }
        Ok(self
            .tasks
            .iter()
            .filter(|t| names.is_empty() || names.contains(&t.name))
            .collect())
    }
}

fn load_task(dir: &Path, entry: &ManifestEntry) -> Result<Task, EvalError> {
    let path = dir.join("task.json");
    let text = std::fs::read_to_string(&path).map_err(EvalError::io(&path))?;
    let spec: TaskSpec = serde_json::from_str(&text)
        .map_err(|err| EvalError::suite(&path, format!("not a task: {err}")))?;
    let bad = |message: String| EvalError::suite(&path, message);
    let parse = |field: &str, items: &[String]| -> Result<Vec<Declaration>, EvalError> {
        items
            .iter()
            .map(|item| {
                item.parse::<Declaration>()
                    .map_err(|err| bad(format!("{field}: {err}")))
            })
            .collect()
    };
    let inputs = parse("inputs", &spec.inputs)?;
    let outputs = parse("outputs", &spec.outputs)?;
    if outputs.is_empty() {
        return Err(bad("outputs: declare at least one output to score".into()));
    }
    for (name, sample) in &spec.samples {
        if !dir.join(sample).is_file() {
            return Err(bad(format!(
                "samples.{name}: no file {sample} in {}",
                dir.display()
            )));
        }
    }
    for name in spec.compare.keys() {
        if !outputs.iter().any(|o| &o.name == name) {
            return Err(bad(format!("compare.{name}: no such output")));
        }
    }
    if spec.cases.is_empty() {
        return Err(bad("cases: give at least one held-out case".into()));
    }
    let task = Task {
        name: entry.name.clone(),
        split: entry.split,
        dir: dir.to_path_buf(),
        spec,
        inputs,
        outputs,
    };
    if task.spec.cases.iter().any(|c| c.name == SAMPLE_CASE) {
        return Err(bad(format!(
            "cases: `{SAMPLE_CASE}` is implicit (its arguments are `sample_args`); rename that case"
        )));
    }
    for case in task.all_cases() {
        if task
            .spec
            .cases
            .iter()
            .filter(|c| c.name == case.name)
            .count()
            > 1
        {
            return Err(bad(format!("cases: `{}` is given twice", case.name)));
        }
        for (name, value) in &case.args {
            let known =
                task.inputs.iter().any(|d| &d.name == name) || task.spec.samples.contains_key(name);
            if !known {
                return Err(bad(format!("cases.{}.args: no input `{name}`", case.name)));
            }
            if task.is_path_input(name) && !task.dir.join(value).exists() {
                return Err(bad(format!(
                    "cases.{}.args.{name}: no file {value}",
                    case.name
                )));
            }
        }
    }
    if !task.reference().is_file() {
        return Err(bad("no reference.py beside it".into()));
    }
    Ok(task)
}

//! A run directory as the exporters read it: its result, the task and limits its journal
//! recorded, and the view of its contract the templates render.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use autocoder_loop::rundir::{GenerationResult, RunDir, script_requirements};
use autocoder_sandbox::Limits;
use serde::Serialize;

use crate::error::ExportError;

/// Where the exported folders keep the samples, relative to the folder.
pub(crate) const SAMPLES_DIR: &str = "samples";
/// Where the exported folders' commands write the outputs, relative to the folder.
pub(crate) const OUTPUTS_DIR: &str = "outputs";

/// A generated script with everything its run directory says about it.
#[derive(Debug, Clone)]
pub struct Run {
    /// The run directory.
    pub dir: PathBuf,
    /// Its `result.json`.
    pub result: GenerationResult,
    /// The task as the user gave it (from the journal; `None` without one).
    pub task: Option<String>,
    /// The sandbox limits the script was generated under (the defaults without a journal).
    pub limits: Limits,
    /// The directory the generation ran in, which relative sample paths are relative to (the
    /// current one without a journal).
    pub cwd: Option<PathBuf>,
}

impl Run {
    /// Reads the run in `dir`; a failed generation is refused unless `force`.
    pub fn open(dir: &Path, force: bool) -> Result<Self, ExportError> {
        let result = RunDir::open(dir).read_result()?;
        if !result.success && !force {
            return Err(ExportError::Failed {
                run_dir: dir.to_owned(),
                reason: result.reason,
            });
        }
        let request = autocoder_loop::journal::read(dir).ok().map(|j| j.request);
        let mut limits = Limits::default();
        if let Some(sandbox) = request.as_ref().map(|r| &r.sandbox) {
            limits.memory_bytes = sandbox.memory_bytes;
            limits.cpu_millis = sandbox.cpu_millis;
            limits.wall_timeout =
                std::time::Duration::from_secs_f64(sandbox.wall_timeout_seconds.max(1.0));
        }
        Ok(Self {
            dir: dir.to_owned(),
            result,
            cwd: request.as_ref().map(|r| r.cwd.clone()),
            task: request.map(|r| r.prompt),
            limits,
        })
    }

    /// The script, `RUN_DIR/solution.py`.
    pub fn script(&self) -> PathBuf {
        self.dir.join("solution.py")
    }

    /// The run's name: `--name`, else the run directory's.
    pub fn name(&self) -> String {
        self.result.name.clone().unwrap_or_else(|| {
            std::fs::canonicalize(&self.dir)
                .unwrap_or_else(|_| self.dir.clone())
                .file_name()
                .map_or_else(
                    || "solution".to_owned(),
                    |n| n.to_string_lossy().into_owned(),
                )
        })
    }

    /// Refuses a script that writes to the hard-wired `/var/outputs`, which only a container
    /// has; the exports that run it elsewhere need `--outputs-dir`.
    pub(crate) fn require_outputs_dir(&self) -> Result<(), ExportError> {
        if autocoder_loop::run::takes_outputs_dir(&self.result.solution) {
            Ok(())
        } else {
            Err(ExportError::HardWiredOutputs {
                script: self.script(),
            })
        }
    }

    /// Each sample input's file name in the export's `samples/`, by input name.
    pub(crate) fn sample_files(&self) -> BTreeMap<&str, (PathBuf, String)> {
        self.result
            .inputs
            .iter()
            .filter_map(|i| {
                let sample = i.sample.as_ref()?;
                let file = i
                    .mount
                    .as_deref()
                    .and_then(|m| Path::new(m).file_name())
                    .map_or_else(|| i.name.clone(), |f| f.to_string_lossy().into_owned());
                let sample = match &self.cwd {
                    Some(cwd) if sample.is_relative() => cwd.join(sample),
                    _ => sample.clone(),
                };
                Some((i.name.as_str(), (sample, file)))
            })
            .collect()
    }

    /// What the templates see.
    pub(crate) fn view(&self) -> Result<View, ExportError> {
        let name = self.name();
        let samples = self.sample_files();
        let inputs = self
            .result
            .inputs
            .iter()
            .map(|i| Field {
                name: i.name.clone(),
                ident: i.name.clone(),
                ty: i.ty.name(),
                sample: samples
                    .get(i.name.as_str())
                    .map(|(_, file)| format!("{SAMPLES_DIR}/{file}")),
            })
            .collect();
        let mut outputs: Vec<Field> = Vec::new();
        for o in &self.result.outputs {
            let ident = identifier(&o.name);
            if let Some(other) = outputs.iter().find(|f| f.ident == ident) {
                return Err(ExportError::NameClash {
                    first: other.name.clone(),
                    second: o.name.clone(),
                    ident,
                });
            }
            outputs.push(Field {
                name: o.name.clone(),
                ident,
                ty: o.ty.name(),
                sample: None,
            });
        }
        Ok(View {
            ident: identifier(&name),
            name,
            task: self.task.clone(),
            python_version: python_version(self.result.environment.id.as_deref()),
            requirements: script_requirements(&self.result),
            system_packages: self.result.system_packages.clone(),
            inputs,
            outputs,
            samples_dir: SAMPLES_DIR,
            outputs_dir: OUTPUTS_DIR,
            cpus: f64::from(self.limits.cpu_millis) / 1000.0,
            memory: memory_quantity(self.limits.memory_bytes),
            timeout_seconds: self.limits.wall_timeout.as_secs(),
        })
    }
}

/// The run as the export templates see it.
#[derive(Debug, Serialize)]
pub(crate) struct View {
    /// The run's name.
    pub(crate) name: String,
    /// The name as a Python identifier (the Flyte task's and environment's name).
    pub(crate) ident: String,
    /// The task, when the journal has it.
    pub(crate) task: Option<String>,
    /// `3.11`, from the environment's id.
    pub(crate) python_version: Option<String>,
    /// The script's packages, `name==version`.
    pub(crate) requirements: Vec<String>,
    /// Debian packages.
    pub(crate) system_packages: Vec<String>,
    pub(crate) inputs: Vec<Field>,
    pub(crate) outputs: Vec<Field>,
    pub(crate) samples_dir: &'static str,
    pub(crate) outputs_dir: &'static str,
    /// CPU cores.
    pub(crate) cpus: f64,
    /// Memory as a Kubernetes quantity (`4Gi`).
    pub(crate) memory: String,
    pub(crate) timeout_seconds: u64,
}

/// An input or output.
#[derive(Debug, Serialize)]
pub(crate) struct Field {
    /// As declared (`by_region.csv`).
    pub(crate) name: String,
    /// As a Python identifier (`by_region_csv`).
    pub(crate) ident: String,
    /// `file`, `int` ...
    #[serde(rename = "type")]
    pub(crate) ty: &'static str,
    /// The sample's path in the export, for inputs made from samples.
    pub(crate) sample: Option<String>,
}

/// `name` as a Python identifier: other characters become `_`, a leading digit gets one before.
pub(crate) fn identifier(name: &str) -> String {
    let mut ident: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert(0, '_');
    }
    ident
}

/// `3.11` from an environment id `py3.11-<hash>`.
fn python_version(env_id: Option<&str>) -> Option<String> {
    let version = env_id?.strip_prefix("py")?.split('-').next()?;
    let mut parts = version.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    (digits(major) && digits(minor)).then(|| format!("{major}.{minor}"))
}

/// Bytes as a Kubernetes quantity: whole GiB as `Gi`, else whole MiB as `Mi`.
fn memory_quantity(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 30) {
        format!("{}Gi", bytes >> 30)
    } else {
        format!("{}Mi", bytes.div_ceil(1 << 20))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_python_identifiers() {
        assert_eq!(identifier("by_region.csv"), "by_region_csv");
        assert_eq!(identifier("sales-totals"), "sales_totals");
        assert_eq!(identifier("2024 report"), "_2024_report");
        assert_eq!(identifier(""), "_");
    }

    #[test]
    fn environment_ids_give_the_python_version() {
        assert_eq!(
            python_version(Some("py3.11-00000000000000ff")).as_deref(),
            Some("3.11")
        );
        assert_eq!(python_version(Some("py3.14.0-ff")).as_deref(), Some("3.14"));
        assert_eq!(python_version(Some("custom")), None);
        assert_eq!(python_version(None), None);
    }

    #[test]
    fn memory_is_a_kubernetes_quantity() {
        assert_eq!(memory_quantity(4 << 30), "4Gi");
        assert_eq!(memory_quantity(1536 << 20), "1536Mi");
        assert_eq!(memory_quantity(1000), "1Mi");
    }
}

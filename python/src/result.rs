//! What `autocoder.generate` returns: the run's `result.json` as typed attributes, `.run()` on
//! new data (a data frame for a file input is written as Parquet, outputs come back typed as
//! the contract declares them), and `.export()`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use autocoder_loop::SandboxOptions;
use autocoder_loop::request::IoType;
use autocoder_loop::run::RunOptions;
use autocoder_loop::rundir::GenerationResult;
use autocoder_sandbox::{Backend, Value};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::block::block_on;
use crate::error::Error;
use crate::frames::{Data, is_frame};

/// A finished generation and its run directory.
#[pyclass(name = "Result", module = "autocoder._native", frozen)]
pub(crate) struct GenerateResult {
    inner: GenerationResult,
    run_dir: PathBuf,
}

impl GenerateResult {
    pub(crate) fn new(inner: GenerationResult, run_dir: PathBuf) -> Self {
        Self { inner, run_dir }
    }
}

#[pymethods]
impl GenerateResult {
    /// Whether the tests pass.
    #[getter]
    fn success(&self) -> bool {
        self.inner.success
    }

    /// Why the loop stopped.
    #[getter]
    fn reason(&self) -> &str {
        &self.inner.reason
    }

    /// The last error (test output or sandbox failure), if the generation failed.
    #[getter]
    fn error(&self) -> Option<&str> {
        self.inner.error.as_deref()
    }

    /// The script (`solution.py`).
    #[getter]
    fn solution(&self) -> &str {
        &self.inner.solution
    }

    /// The tests (`test_solution.py`).
    #[getter]
    fn tests(&self) -> &str {
        &self.inner.tests
    }

    /// The model's plan: `summary`, `approach`, `edge_cases`; `None` in agent mode.
    #[getter]
    fn plan<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json::to_python(py, &self.inner.plan)
    }

    /// Test runs made.
    #[getter]
    fn attempts(&self) -> u32 {
        self.inner.attempts
    }

    /// Tokens of all calls: `input_tokens`, `output_tokens`, `cached_input_tokens`.
    #[getter]
    fn tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json::to_python(py, &self.inner.tokens)
    }

    /// The script's packages, at their resolved versions.
    #[getter]
    fn packages(&self) -> Vec<String> {
        self.inner.packages.clone()
    }

    /// The run directory, as a `pathlib.Path`.
    #[getter]
    fn run_dir<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        path(py, &self.run_dir)
    }

    /// The whole `result.json` as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json::to_python(py, &self.inner)
    }

    /// Runs the script in the sandbox it was tested in, with the samples as defaults and
    /// `inputs` on top (a path or a data frame for a file input), and returns the declared
    /// outputs in their order, typed as declared (files as `pathlib.Path` under
    /// `run_dir/outputs`).
    #[pyo3(signature = (**inputs))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let frames = tempfile::tempdir().map_err(|source| Error::Io {
            action: "create a temporary directory in",
            path: std::env::temp_dir(),
            source,
        })?;
        let mut overrides = BTreeMap::new();
        if let Some(inputs) = inputs {
            for (key, value) in inputs.iter() {
                let name: String = key.extract()?;
                let text = self.input_text(&name, &value, frames.path())?;
                overrides.insert(name, text);
            }
        }
        let options = RunOptions {
            overrides,
            force: false,
            sandbox: SandboxOptions {
                // The backend the tests passed in; like `autocoder run`, no `--env` values.
                backend: Backend::from_name(&self.inner.environment.backend).unwrap_or_default(),
                ..SandboxOptions::default()
            },
            out_dir: None,
        };
        let run_dir = self.run_dir.clone();
        let (result, outcome) = block_on(py, None, || async move {
            autocoder_loop::run::run(&run_dir, &options)
                .await
                .map_err(Error::from)
        })?;
        drop(frames);
        if let Some(why) = outcome.failure() {
            let stderr = outcome.stderr.trim_end().to_owned();
            return Err(Error::Script { why, stderr }.into());
        }
        let values = outcome.outputs.map_err(Error::from)?;
        let typed = PyDict::new(py);
        for output in &result.outputs {
            if let Some(value) = values.get(&output.name) {
                typed.set_item(&output.name, to_python(py, value)?)?;
            }
        }
        Ok(typed)
    }

    /// Writes a self-contained folder (script, tests, requirements, samples, README) to `dir`
    /// (new or empty), as `autocoder export RUN_DIR --to DIR`.
    #[allow(
        clippy::needless_pass_by_value,
        reason = "pyo3 hands arguments over by value"
    )]
    fn export(&self, dir: PathBuf) -> PyResult<()> {
        let run = autocoder_export::Run::open(&self.run_dir, false).map_err(Error::from)?;
        autocoder_export::to_folder(&run, &dir).map_err(Error::from)?;
        Ok(())
    }

    fn __repr__(&self) -> String {
        let verdict = if self.inner.success {
            "tests pass"
        } else {
            "failed"
        };
        format!(
            "<autocoder.Result {verdict} after {} test run(s): {}>",
            self.inner.attempts,
            self.run_dir.display()
        )
    }
}

impl GenerateResult {
    /// The command-line text of `value` for the input `name`. A data frame is written as
    /// Parquet into `frames`, when the script was generated on a Parquet sample.
    fn input_text(
        &self,
        name: &str,
        value: &Bound<'_, PyAny>,
        frames: &std::path::Path,
    ) -> PyResult<String> {
        let declared = self.inner.inputs.iter().find(|i| i.name == name);
        if is_frame(value)? {
            let sample = declared.and_then(|i| i.sample.as_deref());
            let parquet = sample
                .and_then(|s| s.extension())
                .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
            if !parquet {
                let made_on = sample.map_or_else(
                    || "no Parquet sample".to_owned(),
                    |s| s.display().to_string(),
                );
                return Err(Error::Invalid(format!(
                    "input `{name}`: the script was generated on {made_on}, so it may not read \
                     Parquet; pass a file in that format instead of a data frame"
                ))
                .into());
            }
            let file = frames.join(format!("{name}.parquet"));
            let path = Data::extract(name, value)?.into_file(name, &file)?;
            return Ok(path.display().to_string());
        }
        if declared.is_some_and(|i| matches!(i.ty, IoType::File | IoType::Dir)) {
            let path: PathBuf = value.extract().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "input `{name}`: expected a path (str or os.PathLike) or a data frame"
                ))
            })?;
            return Ok(path.display().to_string());
        }
        if let Ok(flag) = value.extract::<bool>() {
            return Ok(flag.to_string());
        }
        let datetime = value.py().import("datetime")?.getattr("datetime")?;
        if value.is_instance(&datetime)? {
            return value.call_method0("isoformat")?.extract();
        }
        if let Ok(text) = value.cast::<PyString>() {
            return Ok(text.to_string());
        }
        // int, float, timedelta (`str` gives `1 day, 2:03:04`, which the parser reads), ...
        Ok(value.str()?.to_string())
    }
}

/// A sandbox value as the Python object of its type.
fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Str(text) => text.into_pyobject(py)?.into_any(),
        Value::Int(n) => n.into_pyobject(py)?.into_any(),
        Value::Float(x) => x.into_pyobject(py)?.into_any(),
        Value::Bool(flag) => flag.into_pyobject(py)?.to_owned().into_any(),
        Value::Datetime(text) => py
            .import("datetime")?
            .getattr("datetime")?
            .call_method1("fromisoformat", (text,))?,
        Value::Timedelta(micros) => {
            let kwargs = PyDict::new(py);
            kwargs.set_item("microseconds", micros)?;
            py.import("datetime")?
                .getattr("timedelta")?
                .call((), Some(&kwargs))?
        }
        Value::File(file) | Value::Dir(file) => path(py, file)?,
    })
}

/// `file` as a `pathlib.Path`.
fn path<'py>(py: Python<'py>, file: &std::path::Path) -> PyResult<Bound<'py, PyAny>> {
    py.import("pathlib")?.getattr("Path")?.call1((file,))
}

//! `autocoder.profile(path_or_frame)`: the profiler on a file or on a data frame's Arrow
//! batches, and the [`Profile`] it gives: its JSON document as a dict, a live Pandera schema,
//! and the HTML report (also a notebook's view of it).

use std::ffi::CString;

use autocoder_profile::{ProfileOptions, SchemaOptions};
use autocoder_schema::{python_identifier, render_pandera};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::Error;
use crate::frames::Data;

/// The profile of one table.
#[pyclass(module = "autocoder._native", frozen)]
pub(crate) struct Profile {
    inner: autocoder_profile::Profile,
}

#[pymethods]
impl Profile {
    /// The table's name: the file, or the name a data frame was given.
    #[getter]
    fn source(&self) -> &str {
        &self.inner.source
    }

    /// Rows, header excluded.
    #[getter]
    fn rows(&self) -> u64 {
        self.inner.rows
    }

    /// Column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.inner.columns.iter().map(|c| c.name.clone()).collect()
    }

    /// The profile document (`autocoder profile --format json`) as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json::to_python(py, &self.inner)
    }

    /// The Pandera module that validates this table (`autocoder schema`), as text.
    fn pandera_module(&self) -> String {
        render_pandera(&self.inner.schema(&SchemaOptions::default()))
    }

    /// The table's `pandera.DataFrameSchema`, made by running [`Profile::pandera_module`].
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let table = self.inner.schema(&SchemaOptions::default());
        let ident = python_identifier(&table.name);
        let code = CString::new(render_pandera(&table))
            .map_err(|_| Error::Invalid("the schema module holds a NUL byte".to_owned()))?;
        let globals = PyDict::new(py);
        globals.set_item("__name__", format!("autocoder_schema_{ident}"))?;
        py.run(&code, Some(&globals), None)?;
        let name = format!("{}_SCHEMA", ident.to_ascii_uppercase());
        globals
            .get_item(&name)?
            .ok_or_else(|| Error::Invalid(format!("the schema module defines no {name}")).into())
    }

    /// The HTML report (`autocoder profile --html`): one self-contained page.
    fn html(&self) -> String {
        autocoder_report::html(&self.inner)
    }

    /// The report in a notebook: the page inside a sandboxed frame, so its styles and its
    /// content security policy stay its own.
    fn _repr_html_(&self) -> String {
        autocoder_report::notebook(&self.inner)
    }

    fn __repr__(&self) -> String {
        format!(
            "<autocoder.Profile of {:?}: {} rows, {} columns>",
            self.inner.source,
            self.inner.rows,
            self.inner.columns.len()
        )
    }
}

/// Profiles `data`, a path or a data frame; `name` names a frame (default `frame`).
#[pyfunction]
#[pyo3(signature = (data, /, *, name = None))]
pub(crate) fn profile(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    name: Option<String>,
) -> PyResult<Profile> {
    let name = name.unwrap_or_else(|| "frame".to_owned());
    let data = Data::extract(&name, data)?;
    let options = ProfileOptions::default();
    let inner = py.detach(|| match data {
        Data::Path(path) => autocoder_profile::profile_path(&path, &options, &|_, _| {}),
        Data::Frame { schema, batches } => autocoder_profile::profile_batches(
            &schema,
            batches.into_iter().map(Ok),
            &name,
            &options,
        ),
    });
    Ok(Profile {
        inner: inner.map_err(Error::from)?,
    })
}

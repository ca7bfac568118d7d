//! Rust documents as Python objects: serialized once, read with Python's `json` module, so a
//! dict has exactly the keys and values of the JSON the command line prints.

use pyo3::prelude::*;
use serde::Serialize;

use crate::error::Error;

/// `value` as the Python object its JSON makes (dicts, lists, str, int, float, bool, None).
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    value: &impl Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|err| Error::Invalid(format!("cannot serialize the document: {err}")))?;
    py.import("json")?.call_method1("loads", (text,))
}

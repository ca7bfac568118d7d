//! The native module of the `autocoder` Python package (`autocoder._native`): profiles of
//! files and data frames (handed over through the Arrow C stream interface, no CSV round
//! trip), their Pandera schemas and HTML reports, and generation and runs of scripts, all done
//! by the Rust crates. Long calls release the GIL and turn Ctrl-C into a clean cancel; errors
//! become `autocoder.AutocoderError` with the command line's messages. The Python layer
//! (`python/autocoder/`) re-exports it, adds `generate_async`, and carries the type stubs.
//!
//! ```python
//! import autocoder, pandas as pd
//!
//! profile = autocoder.profile(pd.read_csv("sales.csv"), name="sales")
//! schema = profile.schema()            # a pandera.DataFrameSchema
//! result = autocoder.generate(prompt="Total revenue", samples={"sales": "sales.csv"},
//!                             outputs={"total": float}, model="openai/gpt-4.1")
//! print(result.run(sales="new.csv")["total"])
//! ```

use pyo3::prelude::*;

mod block;
mod error;
mod frames;
mod generate;
mod json;
mod profile;
mod result;

/// The module `autocoder._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("AutocoderError", m.py().get_type::<error::AutocoderError>())?;
    m.add_class::<block::Cancel>()?;
    m.add_class::<profile::Profile>()?;
    m.add_class::<result::GenerateResult>()?;
    m.add_function(wrap_pyfunction!(profile::profile, m)?)?;
    m.add_function(wrap_pyfunction!(generate::generate, m)?)?;
    Ok(())
}

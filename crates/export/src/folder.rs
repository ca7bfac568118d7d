//! `autocoder export RUN_DIR --to DIR`: a folder that runs and tests the script without
//! autocoder: the script, its tests with a harness for plain `pytest`, both requirement files,
//! the samples and a README generated from the contract.

use std::collections::BTreeMap;
use std::path::Path;

use autocoder_loop::harness;
use autocoder_loop::request::Contract;
use autocoder_loop::rundir::requirement_files;
use autocoder_prompts::Prompts;
use autocoder_sandbox::INPUTS_DIR;

use crate::error::ExportError;
use crate::run::{OUTPUTS_DIR, Run, SAMPLES_DIR};

/// Writes the folder export of `run` into `dir` (created; refused when it holds files).
pub fn to_folder(run: &Run, dir: &Path) -> Result<(), ExportError> {
    run.require_outputs_dir()?;
    let prompts = Prompts::embedded()?;
    let view = run.view()?;
    let out = Destination::create(dir)?;
    out.script(run)?;
    if !run.result.tests.is_empty() {
        out.write("test_solution.py", &local_paths(&run.result.tests))?;
    }
    let contract_test = run.dir.join(harness::CONTRACT_TEST_FILE);
    if contract_test.is_file() {
        let text = std::fs::read_to_string(&contract_test)
            .map_err(ExportError::io("reading", &contract_test))?;
        out.write(harness::CONTRACT_TEST_FILE, &local_paths(&text))?;
    }
    let contract = Contract {
        inputs: run.result.inputs.clone(),
        outputs: run.result.outputs.clone(),
    };
    let defaults: BTreeMap<&str, String> = run
        .sample_files()
        .into_iter()
        .map(|(name, (_, file))| (name, format!("{SAMPLES_DIR}/{file}")))
        .collect();
    let defaults = defaults.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let conftest = harness::conftest_at(
        &prompts,
        &contract,
        run.limits.wall_timeout.as_secs().max(1),
        OUTPUTS_DIR,
        &defaults,
    )
    .map_err(ExportError::Loop)?;
    out.write("conftest.py", &conftest)?;
    let (script, tests) = requirement_files(&run.result);
    out.write("requirements-test.txt", &tests)?;
    out.write("requirements.txt", &script)?;
    out.samples(run)?;
    out.write("README.md", &prompts.render("export/README.md.j2", &view)?)?;
    Ok(())
}

/// The tests with the sandbox's input paths (`/var/inputs/sales.csv`) turned into the folder's
/// (`samples/sales.csv`).
fn local_paths(text: &str) -> String {
    text.replace(&format!("{INPUTS_DIR}/"), &format!("{SAMPLES_DIR}/"))
}

/// A new export directory.
pub(crate) struct Destination<'a> {
    dir: &'a Path,
}

impl<'a> Destination<'a> {
    /// Creates `dir`, or takes an empty one.
    pub(crate) fn create(dir: &'a Path) -> Result<Self, ExportError> {
        if let Ok(mut entries) = std::fs::read_dir(dir)
            && entries.next().is_some()
        {
            return Err(ExportError::NotEmpty {
                path: dir.to_owned(),
            });
        }
        std::fs::create_dir_all(dir).map_err(ExportError::io("creating", dir))?;
        Ok(Self { dir })
    }

    /// Writes `relative` with `text`.
    pub(crate) fn write(&self, relative: &str, text: &str) -> Result<(), ExportError> {
        let path = self.dir.join(relative);
        std::fs::write(&path, text).map_err(ExportError::io("writing", &path))
    }

    /// `solution.py`.
    pub(crate) fn script(&self, run: &Run) -> Result<(), ExportError> {
        self.write("solution.py", &run.result.solution)
    }

    /// Copies each sample into `samples/`, named as the sandbox mounts it.
    pub(crate) fn samples(&self, run: &Run) -> Result<(), ExportError> {
        let files = run.sample_files();
        if files.is_empty() {
            return Ok(());
        }
        let samples = self.dir.join(SAMPLES_DIR);
        std::fs::create_dir_all(&samples).map_err(ExportError::io("creating", &samples))?;
        for (from, file) in files.values() {
            std::fs::copy(from, samples.join(file))
                .map_err(ExportError::io("copying the sample", from))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_input_paths_become_the_folders() {
        assert_eq!(
            local_paths("open('/var/inputs/sales.csv')\nx = '/var/outputs/total'"),
            "open('samples/sales.csv')\nx = '/var/outputs/total'"
        );
    }

    #[test]
    fn a_destination_with_files_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
        assert!(matches!(
            Destination::create(dir.path()),
            Err(ExportError::NotEmpty { .. })
        ));
        assert!(Destination::create(&dir.path().join("new/nested")).is_ok());
    }
}

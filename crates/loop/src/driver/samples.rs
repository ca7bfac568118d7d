//! The script tried on the samples before any test is written (`--sample-fixes`): whether it
//! runs and writes its outputs as declared. Whether to fix it is the session's decision.

use super::Driver;
use crate::LoopError;
use crate::protocol::Event;
use crate::session::Session;

impl Driver<'_> {
    /// Runs the current script on the samples before any test is written (in
    /// `samples/<k>/`, one directory per try), under the runner that shows where a caught
    /// exception was raised ([`crate::harness::where_runner`]).
    pub(super) async fn try_samples(
        &mut self,
        session: &Session,
        script: &str,
    ) -> Result<Event, LoopError> {
        let Some(env) = self.env.clone() else {
            return Err(LoopError::InvalidRequest(
                "the script was to run on the samples before the environment was built".to_owned(),
            ));
        };
        let dir = format!("samples/{}", session.sample_tries() + 1);
        self.run_dir
            .write(&format!("{dir}/solution.py"), script.as_bytes())?;
        let runner = crate::harness::where_runner(self.steps.prompts)?;
        self.run_dir.write(
            &format!("{dir}/{}", crate::harness::WHERE_RUNNER_FILE),
            runner.as_bytes(),
        )?;
        let root = self.work_dir(&dir)?;
        let runner_path = root.join(crate::harness::WHERE_RUNNER_FILE);
        let key = crate::journal::digest(&[script, &env.id.0, &runner]);
        let output = self
            .journal
            .memo("sample_run", &key, async {
                Box::pin(self.run_on_samples(env.clone(), &root, Some(&runner_path))).await
            })
            .await?;
        Ok(Event::SamplesTried { output })
    }
}

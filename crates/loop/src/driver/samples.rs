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
        let env = self.built_env("the script was to run on the samples")?;
        let dir = format!("samples/{}", session.sample_tries() + 1);
        let output = self
            .run_once(&env, &dir, script, Some(&self.where_runner))
            .await?;
        Ok(Event::SamplesTried { output })
    }
}

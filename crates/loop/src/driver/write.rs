//! The writing steps: the script, the test file and code fixes, each answer vetted before the
//! session hears of it.

use std::collections::BTreeSet;

use autocoder_llm::{CallParams, LlmError};
use autocoder_prompts::Prompts;
use serde_json::json;

use super::run_report::run_report;
use super::{Driver, routed_json};
use crate::LoopError;
use crate::answers::strip_code_fence;
use crate::prompt::TaskView;
use crate::protocol::{Candidate, Edit, Event, RoutedFailure, Usage};
use crate::pysrc::edit::apply_edits;
use crate::request::IoType;
use crate::session::Session;
use crate::vet::code::FixAnswer;
use crate::vet::test_file::TestFileContext;
use crate::vet::{self, SentBack, Verdict};

/// Scripts up to this many lines are fixed by asking for the whole script rather than edits.
const WHOLE_SCRIPT_LINES: usize = 80;

/// What a test computes its expected values from, as the test shape (`templates/loop/tests.j2`)
/// names them: the rows of each sample with rows (`orders_rows`), then the lines of each file
/// input without (`log_lines`).
fn expected_value_sources(task: &TaskView) -> Vec<String> {
    let tabular: Vec<&str> = task
        .datasets
        .iter()
        .filter(|d| !d.first_lines.is_empty())
        .map(|d| d.name.as_str())
        .collect();
    let line_files = task
        .inputs
        .iter()
        .filter(|i| i.ty == IoType::File && !tabular.contains(&i.name.as_str()))
        .map(|i| format!("{}_lines", i.name));
    tabular
        .iter()
        .map(|name| format!("{name}_rows"))
        .chain(line_files)
        .collect()
}

/// An answer to a writing step that stayed unusable after the client's repair (cut off at the
/// token limit, not JSON) is asked for once more with the reason ([`vet::unusable`]); `None`
/// means "ask again".
fn again_if_unusable<T>(
    answer: Result<T, LoopError>,
    prompts: &Prompts,
    sent_back: &mut SentBack,
    notes: &mut Vec<String>,
) -> Result<Option<T>, LoopError> {
    let err = match answer {
        Ok(answer) => return Ok(Some(answer)),
        Err(err) => err,
    };
    let LoopError::Model(LlmError::InvalidStructuredOutput { error, .. }) = &err else {
        return Err(err);
    };
    match vet::unusable(error, sent_back) {
        Verdict::AskAgain(note) => {
            tracing::info!(%error, "the answer was unusable; asking once more");
            notes.push(note.render(prompts)?);
            Ok(None)
        }
        Verdict::Accept(()) => Err(err),
    }
}

impl Driver<'_> {
    /// The script, asked for once more (quoting the error) when it does not compile: a script
    /// that cannot even be parsed is not worth a test run and a diagnosis.
    pub(super) async fn write_code(
        &mut self,
        session: &Session,
        notes: Vec<String>,
    ) -> Result<Event, LoopError> {
        let (candidate, usage) = self
            .write_script(session, notes, &CallParams::default())
            .await?;
        Ok(Event::CodeWritten {
            code: candidate.code,
            packages: candidate.packages,
            system_packages: candidate.system_packages,
            usage,
        })
    }

    /// One script, asked with `params`, vetted as [`Driver::write_code`] says.
    pub(super) async fn write_script(
        &mut self,
        session: &Session,
        mut notes: Vec<String>,
        params: &CallParams,
    ) -> Result<(Candidate, Usage), LoopError> {
        let plan = session.plan().cloned().unwrap_or_default();
        let prompts = self.steps.prompts;
        let mut sent_back = SentBack::default();
        let mut spent = Usage::default();
        loop {
            let answer = self.steps.code(&plan, &notes, params).await;
            let Some((answer, usage)) =
                again_if_unusable(answer, prompts, &mut sent_back, &mut notes)?
            else {
                continue;
            };
            spent += usage;
            let mut answer = answer;
            answer.code = self.repairs.script(answer.code);
            let analysis = self.imports(&answer.code, &["solution"]).await?;
            self.imports = analysis.distributions.iter().cloned().collect();
            if let Verdict::AskAgain(note) =
                vet::code::script(analysis.syntax_error.as_deref(), &mut sent_back)
            {
                tracing::info!(error = ?analysis.syntax_error, "the script does not compile; asking again");
                notes.push(note.render(prompts)?);
                continue;
            }
            let packages = if analysis.syntax_error.is_some() {
                // The parse could not settle the imports: the model's list is all there is.
                answer.packages.clone()
            } else {
                analysis.distributions.into_iter().collect()
            };
            let candidate = Candidate {
                code: answer.code,
                packages,
                system_packages: answer.system_packages,
            };
            return Ok((candidate, spent));
        }
    }

    /// The test file, asked for once more when [`vet::test_file`] sends it back (it does not
    /// compile, blind tests import from `solution`, expected values are typed by hand).
    pub(super) async fn write_tests(
        &mut self,
        session: &Session,
        mut notes: Vec<String>,
    ) -> Result<Event, LoopError> {
        let code = session
            .code()
            .filter(|_| self.options.prompting.tests_see_code);
        let sources = expected_value_sources(self.steps.task);
        let prompts = self.steps.prompts;
        let mut sent_back = SentBack::default();
        let mut spent = Usage::default();
        loop {
            let answer = self.steps.tests(&notes, code).await;
            let Some(event) = again_if_unusable(answer, prompts, &mut sent_back, &mut notes)?
            else {
                continue;
            };
            let Event::TestsWritten { tests, usage } = event else {
                return Ok(event);
            };
            let tests = self.repairs.tests(tests);
            spent += usage;
            let analysis = self.imports(&tests, &["solution", "conftest"]).await?;
            let context = TestFileContext {
                syntax_error: analysis.syntax_error.as_deref(),
                blind: code.is_none(),
                sources: &sources,
                hand_written_checks: self.profile.hand_written_checks,
            };
            match vet::test_file::test_file(&tests, context, &mut sent_back) {
                Verdict::AskAgain(note) => {
                    tracing::info!(
                        template = note.template,
                        "the tests were sent back; asking again"
                    );
                    notes.push(note.render(prompts)?);
                }
                Verdict::Accept(()) => {
                    return Ok(Event::TestsWritten {
                        tests,
                        usage: spent,
                    });
                }
            }
        }
    }

    /// A code fix: the whole script when it is short, exact edits otherwise. A fix that leaves
    /// the script unparseable goes back once with the error before a test run is spent on it;
    /// imports the fix adds are read from the fixed script, like the first version's.
    pub(super) async fn fix_code(
        &mut self,
        session: &Session,
        failures: &[RoutedFailure],
        passing: Vec<String>,
        mut rejected: Vec<String>,
    ) -> Result<Event, LoopError> {
        let current = session.code().unwrap_or_default().to_owned();
        let fences = self.steps.task.code_in_fences;
        let whole_script = fences || current.lines().count() <= WHOLE_SCRIPT_LINES;
        // The one function a failure lets the fix change (a unit that failed on the samples).
        let scope = failures.iter().find_map(|f| f.function.as_deref());
        let failures: Vec<_> = failures.iter().map(routed_json).collect();
        let run = run_report(
            session,
            session.diagnosed(),
            &passing,
            self.profile.plain_tracebacks,
        );
        let prompts = self.steps.prompts;
        let mut sent_back = SentBack::default();
        let mut spent = Usage::default();
        loop {
            let context = json!({
                "run": run,
                "failures": failures,
                "rejected": rejected,
                "whole_script": whole_script,
            });
            let (answer, usage) = self.steps.fix_code(context, !rejected.is_empty()).await?;
            spent += usage;
            let mut packages = answer.packages;
            let whole = answer.code.as_deref().map(strip_code_fence);
            let form = match &whole {
                _ if fences => FixAnswer::Blocks(&answer.blocks),
                Some(code) if !code.trim().is_empty() => FixAnswer::WholeScript(code),
                _ => FixAnswer::Edits(&answer.edits),
            };
            let mut edits = match vet::code::fix_edits(&current, form, &mut sent_back) {
                Verdict::Accept(edits) => edits,
                Verdict::AskAgain(note) => {
                    rejected.push(note.render(prompts)?);
                    continue;
                }
            };
            if let Some(function) = scope {
                edits = vet::code::kept_to(&current, edits, function);
            }
            let edits: Vec<Edit> = edits
                .into_iter()
                .map(|e| Edit {
                    replace: self.repairs.fragment(e.replace),
                    ..e
                })
                .collect();
            let mut fixed = apply_edits(&current, &edits);
            fixed.code = self.repairs.script(fixed.code);
            if fixed.changed(&current) {
                let analysis = self.imports(&fixed.code, &["solution"]).await?;
                let syntax_error = analysis.syntax_error.as_deref();
                if let Verdict::AskAgain(note) =
                    vet::code::fixed_script(syntax_error, &mut sent_back)
                {
                    tracing::info!(error = ?syntax_error, "the fixed script does not compile; asking again");
                    rejected.push(note.render(prompts)?);
                    continue;
                }
                if syntax_error.is_none() {
                    // The imports of the script being fixed (with candidates, the driver's
                    // last analysis may be of another script).
                    let before: BTreeSet<_> = self
                        .imports(&current, &["solution"])
                        .await?
                        .distributions
                        .into_iter()
                        .collect();
                    packages.extend(
                        analysis
                            .distributions
                            .iter()
                            .filter(|d| !before.contains(*d))
                            .cloned(),
                    );
                    self.imports = analysis.distributions.into_iter().collect();
                }
            }
            return Ok(Event::CodeEdited {
                edits,
                packages,
                usage: spent,
            });
        }
    }
}

//! One function per model step: render the step's template, ask for its answer type, and turn
//! the answer into the session's [`Event`]. Prompt words stay in `templates/loop/`.

use autocoder_llm::{CallParams, LlmClient, LlmError};
use autocoder_prompts::Prompts;
use serde_json::{Value, json};

use crate::LoopError;
use crate::answers::{
    CodeAnswer, CodeEditsAnswer, DiagnosisAnswer, ReplacementAnswer, SystemReplacementAnswer,
    TestPatchesAnswer, TestsAnswer, strip_code_fence,
};
use crate::prompt::{TaskView, render};
use crate::protocol::FunctionPatch;
use crate::protocol::Plan;
use crate::protocol::{Diagnosis, Event, Usage};
use crate::pysrc::merge::definitions_and_imports;

mod ask;

use ask::usage;

/// The temperature of a code fix asked again after an answer was sent back.
const WIDER_TEMPERATURE: f64 = 0.8;

/// The lowest temperature of the candidate scripts after the first (`--candidates`): at the
/// low temperatures small models are run at, the same prompt gives nearly the same script.
const CANDIDATE_TEMPERATURE: f64 = 0.7;

/// Bytes of one test's report shown in a prompt.
pub(crate) const FAILURE_OUTPUT_LIMIT: usize = 3_000;

/// The model, the templates and the task: what every step needs.
pub(crate) struct Steps<'a> {
    pub(crate) client: &'a LlmClient,
    pub(crate) prompts: &'a Prompts,
    pub(crate) task: &'a TaskView,
    pub(crate) system: String,
    /// Hashes of the fix requests sent so far (see [`Steps::repeats`]).
    pub(crate) asked: std::sync::Mutex<std::collections::HashSet<u64>>,
}

impl Steps<'_> {
    pub(crate) async fn plan(&self) -> Result<Event, LoopError> {
        let (plan, usage) = self.ask::<Plan>("plan", "loop/plan.j2", json!({})).await?;
        Ok(Event::Planned { plan, usage })
    }

    /// The script and the distributions the model says it needs (the driver settles them).
    pub(crate) async fn code(
        &self,
        plan: &Plan,
        notes: &[String],
        params: &CallParams,
    ) -> Result<(CodeAnswer, Usage), LoopError> {
        let context = json!({"plan": plan, "notes": notes});
        if self.task.code_in_fences {
            let (code, usage) = self
                .ask_fenced("code", "loop/code.j2", context, params, |_| Ok(()))
                .await?;
            let answer = CodeAnswer {
                code,
                ..CodeAnswer::default()
            };
            return Ok((answer, usage));
        }
        let text = render(self.prompts, "loop/code.j2", self.task, context.clone())?;
        let messages = self.messages(text, &context)?;
        let answer = self
            .client
            .structured_with::<CodeAnswer>("code", &messages, params)
            .await?;
        let mut code = answer.value;
        code.code = strip_code_fence(&code.code);
        Ok((code, usage(answer.usage)))
    }

    /// The test file; `code` is the script when the test writer may see it.
    pub(crate) async fn tests(
        &self,
        notes: &[String],
        code: Option<&str>,
    ) -> Result<Event, LoopError> {
        let context = json!({"notes": notes, "code": code});
        if self.task.code_in_fences {
            let (tests, usage) = self
                .ask_fenced(
                    "tests",
                    "loop/tests.j2",
                    context,
                    &CallParams::default(),
                    |source| looks_like_python(source, "tests", "the whole test file", "def test"),
                )
                .await?;
            return Ok(Event::TestsWritten { tests, usage });
        }
        let (answer, usage) = self
            .ask_checked::<TestsAnswer>("tests", "loop/tests.j2", context, |a| {
                looks_like_python(&a.tests, "tests", "the whole test file", "def test")
            })
            .await?;
        Ok(Event::TestsWritten {
            tests: strip_code_fence(&answer.tests),
            usage,
        })
    }

    /// A diagnosis; a model error degrades to no verdicts (each failure then counts as `logic`).
    pub(crate) async fn diagnose(&self, context: Value) -> Result<Event, LoopError> {
        match self
            .ask::<DiagnosisAnswer>("diagnose", "loop/diagnose.j2", context)
            .await
        {
            Ok((answer, usage)) => Ok(Event::Diagnosed {
                diagnoses: answer
                    .failures
                    .into_iter()
                    .map(|f| Diagnosis {
                        test_id: f.test_id,
                        kind: f.kind,
                        evidence: f.evidence,
                        fix: f.fix,
                        packages: f.packages,
                    })
                    .collect(),
                usage,
            }),
            Err(err) => degrade(err, "diagnose").map(|()| Event::Diagnosed {
                diagnoses: Vec::new(),
                usage: Usage::default(),
            }),
        }
    }

    /// Code edits; a model error degrades to no edits (the session retries once, then escalates).
    ///
    /// `widen` asks at a higher temperature: the previous answer was sent back, and the same
    /// prompt at a low temperature tends to give the same answer again (the 1.5B model copied
    /// the script unchanged twice in a row).
    pub(crate) async fn fix_code(
        &self,
        context: Value,
        widen: bool,
    ) -> Result<(CodeEditsAnswer, Usage), LoopError> {
        let params = if widen {
            self.widened_params()
        } else {
            CallParams::default()
        };
        if self.task.code_in_fences {
            return match self
                .ask_fenced_blocks("fix_code", "loop/fix_code.j2", context, &params)
                .await
            {
                Ok(Some((blocks, usage))) => {
                    let answer = CodeEditsAnswer {
                        blocks,
                        ..CodeEditsAnswer::default()
                    };
                    Ok((answer, usage))
                }
                Ok(None) => Ok(Default::default()),
                Err(err) => degrade(err, "fix_code").map(|()| Default::default()),
            };
        }
        let text = render(self.prompts, "loop/fix_code.j2", self.task, context.clone())?;
        if self.repeats("fix_code", &text, &params) {
            return Ok(Default::default());
        }
        let messages = self.messages(text, &context)?;
        match self
            .client
            .structured_validated_with::<CodeEditsAnswer>(
                "fix_code",
                &messages,
                &params,
                |_| Ok(()),
            )
            .await
        {
            Ok(answer) => Ok((answer.value, usage(answer.usage))),
            Err(err) => degrade(LoopError::Model(err), "fix_code").map(|()| Default::default()),
        }
    }

    /// New test functions; a model error degrades to none.
    pub(crate) async fn fix_tests(&self, context: Value) -> Result<Event, LoopError> {
        let nothing = || Event::TestsPatched {
            functions: Vec::new(),
            imports: Vec::new(),
            usage: Usage::default(),
        };
        if self.task.code_in_fences {
            // The 1.5B model answered the JSON form with the script's functions; in a code
            // block that starts from the test's own `def` line it writes test functions.
            return match self
                .ask_fenced_blocks(
                    "fix_tests",
                    "loop/fix_tests.j2",
                    context,
                    &CallParams::default(),
                )
                .await
            {
                Ok(Some((blocks, usage))) => {
                    let (functions, imports) = definitions_and_imports(&blocks.join("\n\n"));
                    Ok(Event::TestsPatched {
                        functions,
                        imports,
                        usage,
                    })
                }
                Ok(None) => Ok(nothing()),
                Err(err) => degrade(err, "fix_tests").map(|()| nothing()),
            };
        }
        let text = render(
            self.prompts,
            "loop/fix_tests.j2",
            self.task,
            context.clone(),
        )?;
        if self.repeats("fix_tests", &text, &CallParams::default()) {
            return Ok(nothing());
        }
        let messages = self.messages(text, &context)?;
        match self
            .client
            .structured::<TestPatchesAnswer>("fix_tests", &messages)
            .await
            .map(|answer| (answer.value, usage(answer.usage)))
            .map_err(LoopError::Model)
        {
            Ok((answer, usage)) => Ok(Event::TestsPatched {
                functions: answer
                    .functions
                    .into_iter()
                    .map(|f| FunctionPatch {
                        name: f.name,
                        source: strip_code_fence(&f.source),
                    })
                    .collect(),
                imports: answer.imports,
                usage,
            }),
            Err(err) => degrade(err, "fix_tests").map(|()| nothing()),
        }
    }

    pub(crate) async fn replace_package(
        &self,
        package: &str,
        error: &str,
        imports: &[String],
    ) -> Result<Event, LoopError> {
        let context = json!({"package": package, "error": error, "imports": imports});
        let (answer, usage) = self
            .ask::<ReplacementAnswer>("replace_package", "loop/replace_package.j2", context)
            .await?;
        let replacement = answer
            .replacement
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty());
        Ok(Event::PackageReplaced {
            package: package.to_owned(),
            replacement,
            usage,
        })
    }
}

impl Steps<'_> {
    /// The model's Debian package in place of `package`, which cannot be installed (`why`,
    /// with apt's `message` if any); `None` when it says none is needed. `code` is the head of
    /// the script, for what the package was wanted for.
    pub(crate) async fn replace_system_package(
        &self,
        package: &str,
        why: &str,
        message: &str,
        code: &str,
    ) -> Result<(Option<String>, Usage), LoopError> {
        let context = json!({"package": package, "why": why, "message": message, "code": code});
        let (answer, usage) = self
            .ask::<SystemReplacementAnswer>(
                "replace_system_package",
                "loop/replace_system_package.j2",
                context,
            )
            .await?;
        let replacement = answer
            .replacement
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty() && r != package);
        Ok((replacement, usage))
    }
}

/// Errors that end the generation (no key, rejected key, unreachable provider, replay
/// divergence) propagate; a bad answer to a fix or diagnosis step does not.
fn degrade(err: LoopError, step: &str) -> Result<(), LoopError> {
    match err {
        LoopError::Model(LlmError::InvalidStructuredOutput { .. } | LlmError::Rejected { .. }) => {
            tracing::warn!(step, %err, "the model's answer was unusable; going on without it");
            Ok(())
        }
        other => Err(other),
    }
}

/// A cheap check before a sandbox run is spent on it: small models answer with a file name or a
/// sentence where the source should be.
fn looks_like_python(text: &str, field: &str, what: &str, needle: &str) -> Result<(), String> {
    let source = strip_code_fence(text);
    if source.lines().filter(|l| !l.trim().is_empty()).count() >= 3 && source.contains(needle) {
        Ok(())
    } else {
        Err(format!(
            "`{field}` must hold {what} as Python source (with `{needle}...`), not a file name or a description; got {:?}",
            source.chars().take(80).collect::<String>()
        ))
    }
}

/// `text` cut to its last `limit` bytes (the end of a report says what failed), with a marker.
pub(crate) fn tail(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut cut = text.len() - limit;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    format!("[... {cut} bytes cut]\n{}", &text[cut..])
}

//! The tool loop: ask the model (native tool calls or a JSON action), run each call, answer
//! with its result, until `finish` with passing tests, the turn limit, the token budget or the
//! run's wall-clock limit.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use autocoder_llm::{CallParams, LlmClient, LlmError, Message, ToolChoice, ToolSpec};
use autocoder_loop::Progress;
use autocoder_policy::{Decision, Interception, PackageManager, Policy};
use autocoder_prompts::Prompts;
use autocoder_sandbox::{CommandSpec, SandboxError};
use serde_json::{Value, json};

use crate::conversation::{Conversation, Turn, cut};
use crate::harness::{Harness, TestRunText};
use crate::harness::{SOLUTION, TESTS};
use crate::options::{AgentOptions, ToolProtocol};
use crate::record::Records;
use crate::repeats::Repeats;
use crate::tools::{AgentAction, Call, ToolName};
use crate::workspace::{FileError, Workspace};
use crate::{AgentError, shell};

/// Bytes of a shell command's stdout and stderr kept by the sandbox (the model sees less).
const SHELL_OUTPUT_CAP: usize = 64 << 10;
/// Tokens of the dropped-turns note besides its lines.
const NOTE_TOKENS: usize = 60;
/// Entries `list_files` shows.
const LIST_LIMIT: usize = 300;
/// The least time a `set_packages` call gets (environment builds download and install).
const PACKAGES_TIMEOUT: Duration = Duration::from_secs(900);

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// `finish` was called and the tests passed.
    Finished,
    /// `--max-turns` turns were taken.
    MaxTurns,
    /// The token budget is spent.
    Budget,
    /// The run's wall-clock limit passed.
    Timeout,
}

/// Everything the loop works with.
pub(crate) struct Runner<'a> {
    pub(crate) options: &'a AgentOptions,
    pub(crate) client: &'a LlmClient,
    pub(crate) prompts: &'a Prompts,
    pub(crate) policy: Policy,
    pub(crate) workspace: Workspace,
    pub(crate) workspace_path: PathBuf,
    pub(crate) harness: Harness,
    pub(crate) records: Records,
    pub(crate) specs: Vec<ToolSpec>,
    pub(crate) plan: Option<String>,
    pub(crate) summary: Option<String>,
    pub(crate) turn: u32,
    pub(crate) started: Instant,
    pub(crate) repeats: Repeats,
}

impl Runner<'_> {
    /// Runs turns until the loop ends.
    pub(crate) async fn run(
        &mut self,
        conversation: &mut Conversation,
        progress: &dyn Fn(&Progress),
    ) -> Result<End, AgentError> {
        let budget = self.options.context_tokens * 3 / 4;
        loop {
            if self.summary.is_some() {
                return Ok(End::Finished);
            }
            if self.turn >= self.options.max_turns {
                return Ok(End::MaxTurns);
            }
            let used = self.client.usage_total().usage;
            if self
                .options
                .generate
                .limits
                .token_budget
                .is_some_and(|b| used.input_tokens + used.output_tokens >= b)
            {
                return Ok(End::Budget);
            }
            if self.started.elapsed() >= self.options.run_timeout {
                return Ok(End::Timeout);
            }
            self.turn += 1;
            self.progress(progress, "model");
            if conversation.fit(budget, NOTE_TOKENS) > 0 {
                tracing::info!(
                    dropped = conversation.dropped().len(),
                    "dropped old turns to fit the context window"
                );
            }
            let note = if conversation.dropped().is_empty() {
                None
            } else {
                Some(
                    self.prompts
                        .render("agent/dropped.j2", json!({"lines": conversation.dropped()}))?,
                )
            };
            let messages = conversation.messages(note.as_deref());
            let turn = match self.options.protocol {
                ToolProtocol::Native => self.native_turn(&messages, progress).await?,
                ToolProtocol::Json => self.json_turn(&messages, progress).await?,
            };
            conversation.push(turn);
        }
    }

    fn progress(&self, progress: &dyn Fn(&Progress), step: &'static str) {
        let used = self.client.usage_total().usage;
        progress(&Progress {
            iteration: self.turn,
            step,
            elapsed_seconds: self.started.elapsed().as_secs(),
            tokens: used.input_tokens + used.output_tokens,
            last_run: self.harness.last_report.as_ref().map(|r| {
                let failed = r.tests.len() - r.count(autocoder_sandbox::Outcome::Passed);
                (r.count(autocoder_sandbox::Outcome::Passed), failed)
            }),
            packages: self.harness.packages.iter().cloned().collect(),
        });
    }

    fn note_plan(&mut self, text: Option<&str>) {
        if self.plan.is_none()
            && let Some(text) = text.map(str::trim).filter(|t| !t.is_empty())
        {
            self.plan = Some(text.to_owned());
        }
    }

    async fn native_turn(
        &mut self,
        messages: &[Message],
        progress: &dyn Fn(&Progress),
    ) -> Result<Turn, AgentError> {
        let completion = self
            .client
            .chat_with_tools(
                "agent",
                messages,
                &self.specs,
                ToolChoice::Auto,
                &CallParams::default(),
            )
            .await?;
        self.note_plan(Some(&completion.text));
        if completion.tool_calls.is_empty() {
            let nudge = self
                .prompts
                .render("agent/nudge.j2", json!({"protocol": "native"}))?;
            // An empty assistant message is refused by some APIs (Anthropic).
            let said = if completion.text.trim().is_empty() {
                "(no answer)".to_owned()
            } else {
                completion.text.clone()
            };
            return Ok(Turn {
                assistant: Message::assistant(said),
                results: vec![Message::user(nudge)],
                line: format!("turn {}: answered without a tool call", self.turn),
            });
        }
        let mut results = Vec::new();
        let mut lines = Vec::new();
        for call in &completion.tool_calls {
            let (text, line) = if self.summary.is_some() {
                (
                    "not run: `finish` already ended the work".to_owned(),
                    String::new(),
                )
            } else {
                self.call(&call.name, &call.arguments, progress).await?
            };
            results.push(Message::tool_result(call.id.clone(), text));
            lines.push(line);
        }
        Ok(Turn {
            assistant: Message::assistant_tool_calls(completion.text, completion.tool_calls),
            results,
            line: lines.join("; "),
        })
    }

    async fn json_turn(
        &mut self,
        messages: &[Message],
        progress: &dyn Fn(&Progress),
    ) -> Result<Turn, AgentError> {
        let answer = self
            .client
            .structured::<AgentAction>("agent", messages)
            .await;
        let (raw, action) = match answer {
            Ok(s) => (s.raw, s.value),
            Err(e @ (LlmError::InvalidStructuredOutput { .. } | LlmError::Rejected { .. })) => {
                let reason = e.to_string();
                let text = self.prompts.render(
                    "agent/invalid_action.j2",
                    json!({"protocol": "json", "reason": cut(&reason, 500)}),
                )?;
                return Ok(Turn {
                    assistant: Message::assistant("(an unusable answer)"),
                    results: vec![Message::user(text)],
                    line: format!("turn {}: an unusable answer", self.turn),
                });
            }
            Err(e) => return Err(e.into()),
        };
        self.note_plan(action.thought.as_deref());
        let arguments = action.arguments_value();
        let tool = action.call.tool.name();
        let (result, line) = self.call(tool, &arguments, progress).await?;
        let text = self
            .prompts
            .render("agent/result.j2", json!({"tool": tool, "result": result}))?;
        Ok(Turn {
            assistant: Message::assistant(raw),
            results: vec![Message::user(text)],
            line,
        })
    }

    /// Runs one call; returns its result for the model and a line for the dropped-turns note.
    async fn call(
        &mut self,
        name: &str,
        arguments: &Value,
        progress: &dyn Fn(&Progress),
    ) -> Result<(String, String), AgentError> {
        self.records.count(name);
        let (outcome, text) = match Call::parse(name, arguments) {
            Err(message) => ("error", message),
            Ok(call) => {
                if let Some(first) = self.repeats.repeated(name, arguments, self.turn) {
                    let note = self.repeated_note(name, first)?;
                    return Ok(self.finish_call(name, arguments, "repeated", &note));
                }
                self.progress(progress, call.tool().name());
                let limit = match call.tool() {
                    ToolName::SetPackages
                    | ToolName::RunTests
                    | ToolName::Shell
                    | ToolName::RunScript
                    | ToolName::Finish => self.options.tool_timeout.max(PACKAGES_TIMEOUT),
                    _ => self.options.tool_timeout,
                };
                // No call outlives the run's own limit.
                let left = self
                    .options
                    .run_timeout
                    .saturating_sub(self.started.elapsed())
                    .max(Duration::from_secs(1));
                let limit = limit.min(left);
                match tokio::time::timeout(limit, self.dispatch(call)).await {
                    Ok(done) => done?,
                    Err(_) => (
                        "error",
                        format!(
                            "the call took longer than {}s and was stopped",
                            limit.as_secs()
                        ),
                    ),
                }
            }
        };
        self.repeats.outcome(outcome, &text);
        Ok(self.finish_call(name, arguments, outcome, &text))
    }

    /// Records a call's result; returns it for the model (cut to the bound) and a line for
    /// the dropped-turns note.
    fn finish_call(
        &mut self,
        name: &str,
        arguments: &Value,
        outcome: &str,
        text: &str,
    ) -> (String, String) {
        let text = cut(text, self.options.tool_output_chars);
        self.records
            .log_call(self.turn, name, arguments, outcome, &text);
        let first = text.lines().next().unwrap_or_default();
        let line = format!(
            "turn {}: {name}({}) -> {outcome}: {}",
            self.turn,
            cut(&arguments.to_string(), 80),
            cut(first, 100)
        );
        (text, line)
    }

    /// What the model is told when it repeats the call it made at turn `first`.
    fn repeated_note(&self, tool: &str, first: u32) -> Result<String, AgentError> {
        let next = self.repeats.next_step(
            self.workspace.read(SOLUTION).is_ok(),
            self.workspace.read(TESTS).is_ok(),
        );
        Ok(self.prompts.render(
            "agent/repeated.j2",
            json!({
                "turn": first,
                "tool": tool,
                "next": next.name(),
                "failed": self.repeats.first_failure(),
            }),
        )?)
    }

    async fn dispatch(&mut self, call: Call) -> Result<(&'static str, String), AgentError> {
        let ws = &self.workspace;
        Ok(match call {
            Call::ReadFile { path } => self.file_result("read_file", &path, ws.read(&path)),
            Call::WriteFile { path, text } => {
                let done = ws
                    .write(&path, &text)
                    .map(|n| format!("wrote {n} bytes to {path}"));
                if done.is_ok() {
                    self.repeats.wrote();
                }
                self.file_result("write_file", &path, done)
            }
            Call::EditFile { path, old, new } => {
                let done = edit(ws, &path, &old, &new);
                if done.is_ok() {
                    self.repeats.wrote();
                }
                self.file_result("edit_file", &path, done)
            }
            Call::ListFiles { path } => {
                let path = path.unwrap_or_else(|| ".".to_owned());
                let done = ws.list(&path, LIST_LIMIT).map(|lines| {
                    if lines.is_empty() {
                        "(empty)".to_owned()
                    } else {
                        lines.join("\n")
                    }
                });
                self.file_result("list_files", &path, done)
            }
            Call::RunTests { args } => {
                let run = self.run_tests(&args.unwrap_or_default()).await?;
                ("ok", run.text)
            }
            Call::RunScript { args } => (
                "ok",
                self.harness
                    .run_script(&self.workspace, &args.unwrap_or_default())
                    .await?,
            ),
            Call::SetPackages {
                packages,
                system_packages,
            } => {
                let system = system_packages.unwrap_or_default();
                ("ok", self.harness.set_packages(&packages, &system).await)
            }
            Call::Shell { command } => self.shell(&command).await?,
            Call::Finish { summary } => {
                let run = self.run_tests(&[]).await?;
                if run.passed {
                    self.summary = Some(summary.unwrap_or_default());
                    (
                        "ok",
                        format!(
                            "finished: the tests pass ({})",
                            run.text.lines().next().unwrap_or_default()
                        ),
                    )
                } else {
                    (
                        "error",
                        format!("not finished: the tests must pass first.\n{}", run.text),
                    )
                }
            }
        })
    }

    /// Runs the tests in the sandbox, noting whether they passed for the repeated-call check.
    async fn run_tests(&mut self, args: &[String]) -> Result<TestRunText, AgentError> {
        let run = self.harness.run_tests(&self.workspace, args).await?;
        self.repeats.tested(run.passed);
        Ok(run)
    }

    fn file_result(
        &mut self,
        tool: &str,
        path: &str,
        done: Result<String, FileError>,
    ) -> (&'static str, String) {
        match done {
            Ok(text) => ("ok", text),
            Err(FileError::Outside(reason)) => {
                self.records.refused(tool, path, &reason);
                ("refused", format!("refused: {reason}"))
            }
            Err(FileError::Failed(reason)) => ("error", reason),
        }
    }

    async fn shell(&mut self, command: &str) -> Result<(&'static str, String), AgentError> {
        match self.policy.decide(command, &self.workspace_path) {
            Decision::Deny(denial) => {
                let reason = denial.to_string();
                self.records.denied(command, &reason);
                Ok(("denied", format!("{reason}\nNothing was run.")))
            }
            Decision::Intercept(interception) => {
                self.records.intercepted(command, &interception.to_string());
                let tool = match &interception {
                    Interception::RunTests { .. } => "run_tests",
                    Interception::SetPackages { .. } => "set_packages",
                };
                let text = match interception {
                    Interception::RunTests { args } => self.run_tests(&args).await?.text,
                    Interception::SetPackages { manager, packages } => {
                        let mut pip: Vec<String> = self.harness.packages.iter().cloned().collect();
                        let mut system: Vec<String> =
                            self.harness.system_packages.iter().cloned().collect();
                        match manager {
                            PackageManager::Pip => pip.extend(packages),
                            PackageManager::System => system.extend(packages),
                        }
                        self.harness.set_packages(&pip, &system).await
                    }
                };
                Ok(("intercepted", format!("(run as the `{tool}` tool)\n{text}")))
            }
            Decision::Allow(script) => {
                let env = match self.harness.env().await {
                    Ok(env) => env,
                    Err(e) => {
                        return Ok(("error", format!("the environment could not be built: {e}")));
                    }
                };
                // A command may write files (a redirection).
                self.repeats.wrote();
                let mut spec = CommandSpec::argv(env, &self.workspace_path, ["true"]);
                spec.steps = shell::steps(&script);
                spec.limits = self.harness.limits;
                spec.limits.output_cap_bytes = SHELL_OUTPUT_CAP;
                spec.env_vars = self.harness.env_vars.iter().cloned().collect();
                spec.secrets.clone_from(&self.harness.secrets);
                let outcome = match self.harness.sandbox.run_command(&spec).await {
                    Ok(outcome) => outcome,
                    Err(e @ SandboxError::BadInput { .. }) => return Ok(("error", e.to_string())),
                    Err(e) => return Err(e.into()),
                };
                let mut text = match outcome.exit_code {
                    Some(code) => format!("exit code {code}"),
                    None if outcome.timed_out => "killed at the wall-clock timeout".to_owned(),
                    None => format!("killed by signal {:?}", outcome.signal),
                };
                if !outcome.stdout.is_empty() {
                    text.push('\n');
                    text.push_str(&outcome.stdout);
                }
                if !outcome.stderr.is_empty() {
                    text.push_str("\nstderr:\n");
                    text.push_str(&outcome.stderr);
                }
                Ok(("ok", text))
            }
        }
    }
}

/// `edit_file`: the text of `replace` must occur exactly once.
fn edit(ws: &Workspace, path: &str, old: &str, new: &str) -> Result<String, FileError> {
    let text = ws.read(path)?;
    if old.is_empty() {
        return Err(FileError::Failed(
            "`replace` is empty; give the exact lines to replace".into(),
        ));
    }
    match text.matches(old).count() {
        0 => Err(FileError::Failed(format!(
            "the text of `replace` does not occur in {path}; read the file and copy the lines exactly, indentation included"
        ))),
        1 => {
            ws.write(path, &text.replacen(old, new, 1))?;
            Ok(format!(
                "edited {path}: replaced {} line(s) with {}",
                old.lines().count(),
                new.lines().count()
            ))
        }
        n => Err(FileError::Failed(format!(
            "the text of `replace` occurs {n} times in {path}; include more lines so it occurs once"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors name the arguments as the model writes them (`replace`, `with`).
    #[test]
    fn edit_errors_name_the_replace_argument() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        ws.write("a.py", "x = 1\nx = 1\n").unwrap();
        let message = |r: Result<String, FileError>| match r {
            Err(e) => e.message().to_owned(),
            Ok(done) => panic!("edited: {done}"),
        };
        assert!(
            message(edit(&ws, "a.py", "y", "z"))
                .starts_with("the text of `replace` does not occur in a.py")
        );
        assert!(
            message(edit(&ws, "a.py", "x = 1", "z"))
                .starts_with("the text of `replace` occurs 2 times in a.py")
        );
        assert!(message(edit(&ws, "a.py", "", "z")).starts_with("`replace` is empty"));
        assert_eq!(
            edit(&ws, "a.py", "x = 1\nx", "y = 2\nx").unwrap(),
            "edited a.py: replaced 2 line(s) with 2"
        );
        assert_eq!(ws.read("a.py").unwrap(), "y = 2\nx = 1\n");
    }
}

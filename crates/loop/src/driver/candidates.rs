//! The candidates' steps (`--candidates`): several scripts asked for one plan, and each run on
//! the samples to see what it computes. Which to keep is the session's decision.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use autocoder_llm::LlmError;
use autocoder_sandbox::{RunOutcome, RunSpec, Value};

use super::Driver;
use crate::LoopError;
use crate::protocol::{CandidateOutput, Event, Usage};
use crate::run::outputs_arg;
use crate::session::Session;
use crate::steps::tail;

/// Characters of a candidate's outputs (or failure) a prompt shows.
const SUMMARY_CHARS: usize = 1_200;

/// Characters of one output file shown in a summary.
const FILE_CHARS: usize = 600;

impl Driver<'_> {
    /// `count` scripts, each asked on its own ([`crate::steps::Steps::candidate_params`]). A
    /// candidate after the first whose answer stays unusable is left out; the first's ends the
    /// step as a single script's would.
    pub(super) async fn write_candidates(
        &mut self,
        session: &Session,
        notes: Vec<String>,
        count: u32,
    ) -> Result<Event, LoopError> {
        let mut candidates = Vec::new();
        let mut usage = Usage::default();
        for index in 0..count.max(1) {
            let params = self.steps.candidate_params(index);
            match self.write_script(session, notes.clone(), &params).await {
                Ok((candidate, spent)) => {
                    usage += spent;
                    candidates.push(candidate);
                }
                Err(LoopError::Model(
                    err @ (LlmError::InvalidStructuredOutput { .. } | LlmError::Rejected { .. }),
                )) if index > 0 => {
                    tracing::warn!(candidate = index + 1, %err, "a candidate script stayed unusable; left out");
                }
                Err(err) => return Err(err),
            }
        }
        Ok(Event::CandidatesWritten { candidates, usage })
    }

    /// Each script run on the samples in the sandbox, journaled by its text and environment.
    pub(super) async fn run_candidates(
        &mut self,
        session: &Session,
        scripts: &[String],
    ) -> Result<Event, LoopError> {
        let env = self.built_env("candidates were to run")?;
        let number = session.runs() + 1;
        let mut outputs = Vec::new();
        for (index, code) in scripts.iter().enumerate() {
            let dir = format!("candidates/{number}/{}", index + 1);
            outputs.push(self.run_once(&env, &dir, code, None).await?);
        }
        Ok(Event::CandidatesRan { outputs })
    }

    /// Writes `script` as `dir/solution.py` (with `runner` beside it, when given, to run it
    /// under) and runs it on the samples; journaled, so a resumed run does not run the same
    /// script in the same environment again.
    pub(super) async fn run_once(
        &self,
        env: &autocoder_sandbox::Env,
        dir: &str,
        script: &str,
        runner: Option<&str>,
    ) -> Result<CandidateOutput, LoopError> {
        self.run_dir
            .write(&format!("{dir}/solution.py"), script.as_bytes())?;
        if let Some(runner) = runner {
            self.run_dir.write(
                &format!("{dir}/{}", crate::harness::WHERE_RUNNER_FILE),
                runner.as_bytes(),
            )?;
        }
        let root = self.work_dir(dir)?;
        let runner_path = runner.map(|_| root.join(crate::harness::WHERE_RUNNER_FILE));
        let (kind, key) = match runner {
            Some(runner) => (
                "sample_run",
                crate::journal::digest(&[script, &env.id.0, runner]),
            ),
            None => (
                "candidate_run",
                crate::journal::digest(&[script, &env.id.0]),
            ),
        };
        self.journal
            .memo(kind, &key, async {
                Box::pin(self.run_on_samples(env.clone(), &root, runner_path.as_deref())).await
            })
            .await
    }

    /// Runs `root/solution.py` on the samples and says what it computed; under `runner` (a file
    /// beside it that runs it) when one is given.
    pub(super) async fn run_on_samples(
        &self,
        env: autocoder_sandbox::Env,
        root: &Path,
        runner: Option<&Path>,
    ) -> Result<CandidateOutput, LoopError> {
        let script = root.join("solution.py");
        let code = std::fs::read_to_string(&script).unwrap_or_default();
        let mut spec = match runner {
            Some(runner) => {
                let mut spec = RunSpec::new(env, runner, root)?;
                spec.support_files.push(script.clone());
                spec
            }
            None => RunSpec::new(env, &script, root)?,
        };
        spec.limits = self.options.sandbox.limits;
        spec.network = self.options.sandbox.network;
        spec.outputs_arg = outputs_arg(&code);
        spec.run_name.clone_from(&self.options.name);
        spec.env_vars = self.options.sandbox.env_vars.iter().cloned().collect();
        spec.secrets.clone_from(&self.options.sandbox.secrets);
        for input in &self.contract.inputs {
            let Some(value) = input.on_samples() else {
                return Ok(CandidateOutput {
                    not_runnable: true,
                    ..not_run(&format!("not run: input `{}` has no sample", input.name))
                });
            };
            spec = spec.input(&input.name, value);
        }
        for output in &self.contract.outputs {
            spec = spec.output(&output.name, output.ty);
        }
        let options = self.options;
        let mut retries = Vec::new();
        let outcome = crate::retry::retrying(
            options.sandbox.retries,
            "run a candidate",
            &options.sandbox.secrets,
            &mut retries,
            || self.sandbox.run(&spec),
        )
        .await?;
        Ok(describe(&outcome))
    }
}

fn not_run(why: &str) -> CandidateOutput {
    CandidateOutput {
        ok: false,
        digest: String::new(),
        summary: why.to_owned(),
        not_runnable: false,
        cells: Vec::new(),
        failed_in: None,
    }
}

/// What a run computed: its outputs by value (numbers to 6 significant digits, files by their
/// text with line ends and trailing white space evened out) for the digest, and as a prompt
/// shows them.
fn describe(outcome: &RunOutcome) -> CandidateOutput {
    let outputs = match (&outcome.outputs, outcome.success()) {
        (Ok(outputs), true) => outputs,
        (Err(err), true) => return not_run(&format!("its outputs are not as declared: {err}")),
        _ => {
            let how = if outcome.timed_out {
                "it hit the time limit".to_owned()
            } else if outcome.memory_exceeded {
                "it hit the memory limit".to_owned()
            } else {
                match outcome.exit_code {
                    Some(code) => format!("it exited with {code}"),
                    None => "it was killed".to_owned(),
                }
            };
            return CandidateOutput {
                failed_in: crate::harness::raised_in(&outcome.stderr),
                ..not_run(&format!("{how}:\n{}", tail(&outcome.stderr, SUMMARY_CHARS)))
            };
        }
    };
    let mut canonical = String::new();
    let mut summary = String::new();
    let mut cells = Vec::new();
    for (name, value) in outputs {
        let (exact, shown) = canonical_value(value);
        cells.extend(crate::agreement::cells(name, &exact));
        let _ = writeln!(canonical, "{name}\u{0}{exact}\u{0}");
        let _ = writeln!(summary, "{name} = {shown}");
    }
    cells.sort_unstable();
    CandidateOutput {
        ok: true,
        digest: crate::journal::digest(&[&canonical]),
        summary: cut(summary.trim_end(), SUMMARY_CHARS),
        not_runnable: false,
        cells,
        failed_in: None,
    }
}

/// An output as compared and as shown.
fn canonical_value(value: &Value) -> (String, String) {
    match value {
        Value::Float(v) => (format!("{v:.5e}"), format!("{v:?}")),
        Value::File(path) => {
            let text = file_text(path);
            let shown = format!("(file)\n{}", cut(&text, FILE_CHARS));
            (text, shown)
        }
        Value::Dir(path) => {
            let mut files = BTreeMap::new();
            collect_files(path, path, &mut files);
            let mut exact = String::new();
            let mut shown = String::from("(directory)");
            for (name, text) in &files {
                let _ = write!(exact, "{name}\u{0}{text}\u{0}");
                let _ = write!(shown, "\n{name}:\n{}", cut(text, FILE_CHARS / 2));
            }
            (exact, shown)
        }
        Value::Str(text) | Value::Datetime(text) => (text.clone(), format!("{text:?}")),
        Value::Int(v) => (v.to_string(), v.to_string()),
        Value::Bool(v) => (v.to_string(), v.to_string()),
        Value::Timedelta(micros) => (micros.to_string(), format!("{micros} microseconds")),
    }
}

fn file_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

fn collect_files(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(root, &path, files);
        } else if let Ok(relative) = path.strip_prefix(root) {
            files.insert(relative.display().to_string(), file_text(&path));
        }
    }
}

/// The first `limit` characters of `text`, marked when cut.
fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => format!("{}\n[... cut]", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use autocoder_sandbox::{RunOutcome, Value};

    use super::describe;

    fn outcome(exit_code: i32, outputs: Vec<(&str, Value)>) -> RunOutcome {
        RunOutcome {
            exit_code: Some(exit_code),
            signal: None,
            stdout: String::new(),
            stderr: "Traceback ...\nZeroDivisionError: division by zero\n".to_owned(),
            timed_out: false,
            memory_exceeded: false,
            cpu_exceeded: false,
            duration: Duration::from_millis(5),
            outputs: Ok(outputs
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value))
                .collect::<BTreeMap<_, _>>()),
            docker_image: None,
        }
    }

    #[test]
    fn outputs_equal_up_to_float_noise_and_line_ends_share_a_digest() {
        let dir = tempfile::tempdir().unwrap();
        let unix = dir.path().join("a.csv");
        let windows = dir.path().join("b.csv");
        let other = dir.path().join("c.csv");
        std::fs::write(&unix, "region,total\nnorth,17.5\n").unwrap();
        std::fs::write(&windows, "region,total \r\nnorth,17.5\r\n\r\n").unwrap();
        std::fs::write(&other, "region,total\nnorth,17.6\n").unwrap();
        let run = |total: f64, file: &std::path::Path| {
            describe(&outcome(
                0,
                vec![
                    ("total", Value::Float(total)),
                    ("by_region.csv", Value::File(file.to_owned())),
                ],
            ))
        };
        let first = run(25.5, &unix);
        assert!(first.ok);
        assert_eq!(first.digest, run(25.500_000_000_1, &windows).digest);
        assert_ne!(first.digest, run(25.6, &unix).digest);
        assert_ne!(first.digest, run(25.5, &other).digest);
        assert!(first.summary.contains("total = 25.5"), "{}", first.summary);
        assert!(first.summary.contains("north,17.5"), "{}", first.summary);
        // Not equal, but the total and the header agree.
        let close = run(25.5, &other);
        let similarity = crate::agreement::similarity(&first.cells, &close.cells);
        assert!((similarity - 0.5).abs() < 1e-12, "{similarity}");
    }

    #[test]
    fn a_failed_run_says_how_it_ended() {
        let failed = describe(&outcome(1, Vec::new()));
        assert!(!failed.ok);
        assert!(
            failed.summary.starts_with("it exited with 1"),
            "{}",
            failed.summary
        );
        assert!(
            failed.summary.contains("ZeroDivisionError"),
            "{}",
            failed.summary
        );
    }
}

//! What [`crate::Policy::decide`] answers: the commands to run (argv and stdio, never a shell
//! string), a denial with the reason the model sees, or a tool call the command stands for.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// The policy's answer for one shell command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Every command is allowed: run the [`Script`] (argv by argv, in the sandbox).
    Allow(Script),
    /// The command is refused; [`Denial::reason`] says why and what to do instead.
    Deny(Denial),
    /// The whole command stands for one of the agent's tools.
    Intercept(Interception),
}

impl Decision {
    /// The script when the command is allowed.
    pub fn allowed(&self) -> Option<&Script> {
        match self {
            Self::Allow(script) => Some(script),
            _ => None,
        }
    }

    /// The denial when the command is refused.
    pub fn denied(&self) -> Option<&Denial> {
        match self {
            Self::Deny(denial) => Some(denial),
            _ => None,
        }
    }

    /// The tool call when the command is intercepted.
    pub fn intercepted(&self) -> Option<&Interception> {
        match self {
            Self::Intercept(interception) => Some(interception),
            _ => None,
        }
    }
}

/// An allowed command as steps, each a pipeline, run in order like bash runs an and-or list:
/// a step runs when its [`When`] holds for the exit status of the last step that ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Script {
    /// The steps, in the order they appear.
    pub steps: Vec<Step>,
}

impl Script {
    /// Every command's argv, in order (the `Vec<Argv>` view of the script).
    pub fn argvs(&self) -> impl Iterator<Item = &[String]> {
        self.steps
            .iter()
            .flat_map(|step| step.pipeline.iter().map(|c| c.argv.as_slice()))
    }
}

/// One pipeline of a [`Script`] and when it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// When this step runs, judged on the exit status of the last step that ran.
    pub when: When,
    /// The commands, each one's stdout piped into the next one's stdin; the pipeline's status is
    /// the last command's.
    pub pipeline: Vec<Command>,
}

/// The operator before a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    /// The first step, or one after `;` or a newline: always runs.
    Always,
    /// After `&&`: runs when the last status was 0.
    Succeeded,
    /// After `||`: runs when the last status was not 0.
    Failed,
}

/// One program to run: its argv (no shell in between) and where its streams go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    /// The program (a bare name, looked up on the sandbox's `PATH`) and its arguments, quotes
    /// removed and globs expanded inside the workspace.
    pub argv: Vec<String>,
    /// Where stdin comes from.
    pub stdin: Input,
    /// Where stdout goes.
    pub stdout: Output,
    /// Where stderr goes.
    pub stderr: Output,
}

/// A command's stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// The previous command's stdout in a pipeline; otherwise empty.
    Pipe,
    /// A file (`< path`), relative to the workspace unless absolute.
    File(PathBuf),
}

/// Where a command's stdout or stderr goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// The command's standard output: the next command's stdin in a pipeline, else the output
    /// the tool returns.
    Stdout,
    /// The command's standard error, which the tool returns.
    Stderr,
    /// A file (`> path`, `>> path`), relative to the workspace unless absolute (`/dev/null`).
    File {
        /// The file.
        path: PathBuf,
        /// `>>`: append instead of truncating.
        append: bool,
    },
}

/// Why a command is refused: the message the model sees, and a machine-readable kind for counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Denial {
    /// Which rule refused it.
    pub kind: DenyKind,
    /// The part of the command that was refused, as written (none when the whole command is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// Why, and what to do instead; meant for the model.
    pub reason: String,
}

impl Denial {
    pub(crate) fn new(kind: DenyKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            segment: None,
            reason: reason.into(),
        }
    }

    pub(crate) fn at(mut self, segment: &str) -> Self {
        if self.segment.is_none() {
            self.segment = Some(segment.to_owned());
        }
        self
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.segment {
            Some(segment) => write!(f, "`{segment}` is denied: {}", self.reason),
            None => write!(f, "denied: {}", self.reason),
        }
    }
}

/// The rule behind a [`Denial`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DenyKind {
    /// Empty, too long, or not valid shell.
    Parse,
    /// Shell syntax beyond plain words joined by `&&`, `||`, `;`, `|` (substitutions, expansions,
    /// subshells, here-documents, control flow, ...).
    Syntax,
    /// A program the policy does not allow.
    Program,
    /// An option the program's rule does not allow.
    Option,
    /// Arguments that do not fit the program's rule (count or form).
    Argument,
    /// A path that resolves outside the workspace and the allowed system paths.
    Path,
    /// A script argument (`sed`, `awk`) that can run commands or touch other files.
    Script,
    /// An intercepted command (`pytest`, `pip install`) that is not the whole command.
    NotAlone,
}

/// A command that stands for one of the agent's tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum Interception {
    /// `pytest ...`: run the tests with the harness.
    RunTests {
        /// The pytest arguments given, checked against the rule (test paths, `-k`, `-x`, ...).
        args: Vec<String>,
    },
    /// `pip install X`, `apt-get install X`: packages the environment should have.
    SetPackages {
        /// Which installer the packages are for.
        manager: PackageManager,
        /// The packages (requirement strings for pip, Debian names for the system).
        packages: Vec<String>,
    },
}

/// The installer an intercepted package command names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PackageManager {
    /// Python packages (pip, uv).
    Pip,
    /// Debian packages (apt).
    System,
}

/// A word as the shell would need it written: bare when safe, else in single quotes.
fn quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@^".contains(c));
    if safe {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self.argv.iter().map(|w| quote(w)).collect();
        f.write_str(&words.join(" "))?;
        if let Input::File(path) = &self.stdin {
            write!(f, " < {}", quote(&path.to_string_lossy()))?;
        }
        let file = |path: &PathBuf, append: bool| {
            format!(
                "{} {}",
                if append { ">>" } else { ">" },
                quote(&path.to_string_lossy())
            )
        };
        // stderr to the original stdout, stdout elsewhere: `2>&1 > f`, in that order.
        let dup_first = self.stderr == Output::Stdout && self.stdout != Output::Stdout;
        if dup_first {
            f.write_str(" 2>&1")?;
        }
        match &self.stdout {
            Output::Stdout => {}
            Output::Stderr => f.write_str(" >&2")?,
            Output::File { path, append } => write!(f, " {}", file(path, *append))?,
        }
        match &self.stderr {
            Output::Stderr => {}
            Output::Stdout if dup_first => {}
            Output::Stdout => f.write_str(" 2>&1")?,
            err if *err == self.stdout => f.write_str(" 2>&1")?,
            Output::File { path, append } => write!(f, " 2{}", file(path, *append))?,
        }
        Ok(())
    }
}

impl fmt::Display for Script {
    /// The script in shell notation (for logs and the CLI; never to be run by a shell).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps.iter().enumerate() {
            if i > 0 {
                f.write_str(match step.when {
                    When::Always => "; ",
                    When::Succeeded => " && ",
                    When::Failed => " || ",
                })?;
            }
            let commands: Vec<String> = step.pipeline.iter().map(ToString::to_string).collect();
            f.write_str(&commands.join(" | "))?;
        }
        Ok(())
    }
}

impl fmt::Display for Interception {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RunTests { args } => {
                f.write_str("run_tests")?;
                for arg in args {
                    write!(f, " {}", quote(arg))?;
                }
            }
            Self::SetPackages { manager, packages } => {
                let manager = match manager {
                    PackageManager::Pip => "pip",
                    PackageManager::System => "system",
                };
                write!(f, "set_packages {manager}")?;
                for package in packages {
                    write!(f, " {}", quote(package))?;
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Allow(script) => write!(f, "allow: {script}"),
            Self::Deny(denial) => write!(f, "deny: {denial}"),
            Self::Intercept(interception) => write!(f, "intercept: {interception}"),
        }
    }
}

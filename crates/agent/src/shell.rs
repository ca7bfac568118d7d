//! The `shell` tool's command as the sandbox runs it: the policy's parsed [`Script`] turned
//! into the sandbox's steps (argv vectors, never a shell string).

use autocoder_policy::{Input, Output, Script, When};
use autocoder_sandbox::{CommandStep, Program, RunIf, Stream};

/// The sandbox's steps for an allowed script.
pub(crate) fn steps(script: &Script) -> Vec<CommandStep> {
    script
        .steps
        .iter()
        .map(|step| CommandStep {
            when: match step.when {
                When::Always => RunIf::Always,
                When::Succeeded => RunIf::Succeeded,
                When::Failed => RunIf::Failed,
            },
            pipeline: step
                .pipeline
                .iter()
                .map(|command| Program {
                    argv: command.argv.clone(),
                    stdin: match &command.stdin {
                        Input::Pipe => None,
                        Input::File(path) => Some(path.clone()),
                    },
                    stdout: stream(&command.stdout),
                    stderr: stream(&command.stderr),
                })
                .collect(),
        })
        .collect()
}

fn stream(output: &Output) -> Stream {
    match output {
        Output::Stdout => Stream::Stdout,
        Output::Stderr => Stream::Stderr,
        Output::File { path, append } => Stream::File {
            path: path.clone(),
            append: *append,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use autocoder_policy::Policy;

    use super::*;

    #[test]
    fn an_allowed_command_becomes_argv_steps() {
        let policy = Policy::builtin().unwrap();
        let decision = policy.decide(
            "grep -c a x.csv > n.txt && wc -l x.csv | sort",
            Path::new("/nonexistent-ws"),
        );
        let script = decision.allowed().expect("allowed");
        let steps = steps(script);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].pipeline[0].argv, ["grep", "-c", "a", "x.csv"]);
        assert!(
            matches!(&steps[0].pipeline[0].stdout, Stream::File { path, append: false } if path == Path::new("n.txt"))
        );
        assert_eq!(steps[1].when, RunIf::Succeeded);
        assert_eq!(steps[1].pipeline.len(), 2);
    }
}

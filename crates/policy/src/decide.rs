//! From a parsed command to a decision: expand each command's words, match intercepts (which
//! must be the whole command), refuse denied and unknown programs, check arguments against the
//! program's rule and redirections against the workspace.

use std::fmt::Write as _;
use std::path::Path;

use crate::argv::{self, Context};
use crate::decision::{
    Command, Decision, Denial, DenyKind, Input, Interception, Output, Script, Step,
};
use crate::expand::expand;
use crate::parse::{self, RawCommand, Redirect};
use crate::paths::{self, Access, Workspace};
use crate::rules::{Intercept, Rules, Tool};
use crate::words::Word;

/// Decides one command; never fails (what cannot be read is denied).
pub(crate) fn decide(rules: &Rules, command: &str, workspace: &Path) -> Decision {
    match decide_steps(rules, command, workspace) {
        Ok(decision) => decision,
        Err(denial) => Decision::Deny(denial),
    }
}

enum Checked {
    Run(Command),
    Intercept(Interception),
}

fn decide_steps(rules: &Rules, command: &str, workspace: &Path) -> Result<Decision, Denial> {
    let steps = parse::parse(command)?;
    let workspace = Workspace::new(workspace);
    let ctx = Context {
        workspace: &workspace,
        system: &rules.system,
    };
    let alone = steps.len() == 1 && steps[0].pipeline.len() == 1;
    let mut out = Vec::with_capacity(steps.len());
    let mut interception = None;
    for step in steps {
        let mut pipeline = Vec::with_capacity(step.pipeline.len());
        for raw in step.pipeline {
            match check_command(rules, &raw, alone, &ctx).map_err(|d| d.at(&raw.source))? {
                Checked::Run(command) => pipeline.push(command),
                Checked::Intercept(i) => interception = Some(i),
            }
        }
        out.push(Step {
            when: step.when,
            pipeline,
        });
    }
    Ok(match interception {
        Some(interception) => Decision::Intercept(interception),
        None => Decision::Allow(Script { steps: out }),
    })
}

fn check_command(
    rules: &Rules,
    raw: &RawCommand,
    alone: bool,
    ctx: &Context<'_>,
) -> Result<Checked, Denial> {
    let mut argv = Vec::with_capacity(raw.words.len());
    for (i, word) in raw.words.iter().enumerate() {
        if i == 0 && word.glob.is_some() {
            return Err(Denial::new(
                DenyKind::Program,
                "the program name may not be a glob",
            ));
        }
        argv.extend(expand(word, ctx.workspace)?);
    }
    let Some(name) = argv.first() else {
        return Err(Denial::new(DenyKind::Syntax, "a command without a program"));
    };
    if name.contains('/') {
        return Err(Denial::new(
            DenyKind::Program,
            "programs are called by name (`ls`, not `/bin/ls` or `./script`); run Python scripts with the run_script tool",
        ));
    }
    if let Some((intercept, len)) = find_intercept(rules, &argv) {
        return intercepted(
            intercept,
            &argv,
            len,
            alone && raw.redirects.is_empty(),
            ctx,
        );
    }
    if let Some(reason) = rules.denied.get(name) {
        return Err(Denial::new(DenyKind::Program, format!("`{name}` {reason}")));
    }
    let Some(rule) = rules.programs.get(name) else {
        return Err(Denial::new(
            DenyKind::Program,
            format!(
                "`{name}` is not an allowed program; allowed: {}",
                allowed_list(rules)
            ),
        ));
    };
    argv::check(rule, name, &argv[1..], ctx)?;
    let (stdin, stdout, stderr) = stdio(&raw.redirects, ctx)?;
    Ok(Checked::Run(Command {
        argv,
        stdin,
        stdout,
        stderr,
    }))
}

/// The intercept whose command prefix is the longest match, and that prefix's length.
fn find_intercept<'r>(rules: &'r Rules, argv: &[String]) -> Option<(&'r Intercept, usize)> {
    rules
        .intercepts
        .iter()
        .flat_map(|i| i.commands.iter().map(move |c| (i, c)))
        .filter(|(_, prefix)| argv.len() >= prefix.len() && argv[..prefix.len()] == prefix[..])
        .max_by_key(|(_, prefix)| prefix.len())
        .map(|(i, prefix)| (i, prefix.len()))
}

fn intercepted(
    intercept: &Intercept,
    argv: &[String],
    len: usize,
    alone: bool,
    ctx: &Context<'_>,
) -> Result<Checked, Denial> {
    let prefix = argv[..len].join(" ");
    let tool = intercept.tool.name();
    if !alone {
        return Err(Denial::new(
            DenyKind::NotAlone,
            format!(
                "`{prefix}` stands for the {tool} tool and must be the whole command, without `&&`, `||`, `;`, `|` or redirections: run it on its own, or call {tool}"
            ),
        ));
    }
    let rest = &argv[len..];
    let positionals = argv::check(&intercept.rule, &prefix, rest, ctx)?;
    Ok(Checked::Intercept(
        match (intercept.tool, intercept.packages) {
            (Tool::SetPackages, Some(manager)) => Interception::SetPackages {
                manager,
                packages: positionals,
            },
            _ => Interception::RunTests {
                args: rest.to_vec(),
            },
        },
    ))
}

fn allowed_list(rules: &Rules) -> String {
    let mut names: Vec<&str> = rules.programs.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut text = names.join(", ");
    for intercept in &rules.intercepts {
        if let Some(first) = intercept.commands.first() {
            let _ = write!(text, ", {} (as {})", first.join(" "), intercept.tool.name());
        }
    }
    text
}

/// Where a stream points while redirections are applied in order.
#[derive(Clone)]
enum Target {
    Out,
    Err,
    File(String, bool),
}

fn target_word(word: &Word, access: Access, ctx: &Context<'_>) -> Result<String, Denial> {
    if word.glob.is_some() {
        return Err(Denial::new(
            DenyKind::Syntax,
            format!("the redirection target `{}` may not be a glob", word.text),
        ));
    }
    paths::check(&word.text, access, ctx.workspace, ctx.system)?;
    Ok(word.text.clone())
}

fn stdio(redirects: &[Redirect], ctx: &Context<'_>) -> Result<(Input, Output, Output), Denial> {
    let mut stdin = Input::Pipe;
    let mut out = Target::Out;
    let mut err = Target::Err;
    for redirect in redirects {
        match redirect {
            Redirect::Read(word) => {
                stdin = Input::File(target_word(word, Access::Read, ctx)?.into());
            }
            Redirect::Write { fd, target, append } => {
                let file = Target::File(target_word(target, Access::Write, ctx)?, *append);
                if *fd == 2 {
                    err = file;
                } else {
                    out = file;
                }
            }
            Redirect::Both { target, append } => {
                out = Target::File(target_word(target, Access::Write, ctx)?, *append);
                err = out.clone();
            }
            Redirect::Dup { fd: 2, .. } => err = out.clone(),
            Redirect::Dup { .. } => out = err.clone(),
        }
    }
    let output = |target: Target| match target {
        Target::Out => Output::Stdout,
        Target::Err => Output::Stderr,
        Target::File(path, append) => Output::File {
            path: path.into(),
            append,
        },
    };
    Ok((stdin, output(out), output(err)))
}

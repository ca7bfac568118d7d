//! The policy file's format (TOML, read with serde) and its checks: every key known, every type
//! named, every rule consistent; a mistake is reported with the file, line and column.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use crate::decision::PackageManager;
use crate::error::PolicyError;
use crate::paths::SystemPaths;

/// What an option's value or a positional argument is, and so how it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ArgType {
    /// Anything (a pattern, a format, text to print).
    Value,
    /// A number, optionally signed and with a unit suffix (`5`, `-5`, `+2`, `10K`).
    Count,
    /// A file the program reads: in the workspace or the readable system paths.
    ReadPath,
    /// A file the program writes: in the workspace or the writable system paths.
    WritePath,
    /// A file the program deletes or moves away: in the workspace, not the workspace itself.
    DeletePath,
    /// A sed script without `e`, `w`, `r` and kin.
    SedScript,
    /// An awk program without `system()`, pipes, `getline`, file redirections or `ENVIRON`.
    AwkProgram,
    /// A backup suffix (`sed -i.bak`): no `/`, so backups stay beside their files.
    BackupSuffix,
    /// A pip requirement (`pandas`, `numpy>=2`, `pkg[extra]==1.0`), no URL or path.
    PipRequirement,
    /// A Debian package name (`ffmpeg`, `libgomp1`).
    AptPackage,
    /// A pytest target: a path in the workspace, optionally with `::test_name`.
    TestPath,
}

/// How many positional arguments one entry of `args` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    One,
    Optional,
    Any,
    AtLeastOne,
}

/// One entry of a rule's `args`: `"read_path"`, `"value?"`, `"read_path*"`, `"write_path+"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub(crate) struct ArgSpec {
    pub(crate) ty: ArgType,
    pub(crate) count: Count,
}

impl TryFrom<String> for ArgSpec {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let (name, count) = match text.chars().last() {
            Some('?') => (&text[..text.len() - 1], Count::Optional),
            Some('*') => (&text[..text.len() - 1], Count::Any),
            Some('+') => (&text[..text.len() - 1], Count::AtLeastOne),
            _ => (text.as_str(), Count::One),
        };
        let ty = ArgType::deserialize(serde::de::value::StrDeserializer::<
            serde::de::value::Error,
        >::new(name))
        .map_err(|_| {
            format!(
                "`{text}` is not an argument type: write one of value, count, read_path, write_path, delete_path, sed_script, awk_program, backup_suffix, pip_requirement, apt_package, test_path, optionally followed by `?` (optional), `*` (any number) or `+` (one or more)"
            )
        })?;
        Ok(Self { ty, count })
    }
}

/// Positional arguments that replace `args` when one of `options` is given (`grep -e PAT
/// FILE...`: the pattern is then an option, every argument a file).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArgsWith {
    pub(crate) options: Vec<String>,
    pub(crate) args: Vec<ArgSpec>,
}

/// The tool an intercepted command stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Tool {
    RunTests,
    SetPackages,
}

impl Tool {
    /// The agent tool's name, as the model knows it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::RunTests => "run_tests",
            Self::SetPackages => "set_packages",
        }
    }
}

fn yes() -> bool {
    true
}

/// A `[program.NAME]` or `[intercept.NAME]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default = "yes")]
    bundle: bool,
    #[serde(default)]
    numeric_flag: bool,
    #[serde(default)]
    dash_args: bool,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    options: BTreeMap<String, ArgType>,
    #[serde(default)]
    deny_options: BTreeMap<String, String>,
    #[serde(default)]
    in_place: Vec<String>,
    #[serde(default)]
    args: Vec<ArgSpec>,
    #[serde(default)]
    args_with: Vec<ArgsWith>,
    #[serde(default)]
    examples: Vec<Spanned<String>>,
    #[serde(default)]
    counterexamples: Vec<Spanned<String>>,
    tool: Option<Tool>,
    packages: Option<PackageManager>,
    #[serde(default)]
    commands: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathsFile {
    #[serde(default)]
    read: Vec<Spanned<String>>,
    #[serde(default)]
    write: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DenyFile {
    programs: Vec<String>,
    reason: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    paths: PathsFile,
    #[serde(default)]
    deny: Vec<Spanned<DenyFile>>,
    #[serde(default)]
    program: BTreeMap<String, Spanned<RuleFile>>,
    #[serde(default)]
    intercept: BTreeMap<String, Spanned<RuleFile>>,
}

/// A checked rule: how a program's arguments are read and what each must be.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    /// The table's name (`sed`, `pytest`).
    pub(crate) name: String,
    /// Single-dash options can be bundled (`-la`, `-n5`).
    pub(crate) bundle: bool,
    /// `-NUM` is accepted (`head -5`).
    pub(crate) numeric_flag: bool,
    /// Unknown words starting with `-` are plain arguments (`echo -x`).
    pub(crate) dash_args: bool,
    pub(crate) flags: HashSet<String>,
    pub(crate) options: HashMap<String, ArgType>,
    pub(crate) deny_options: HashMap<String, String>,
    pub(crate) in_place: Vec<String>,
    pub(crate) args: Vec<ArgSpec>,
    pub(crate) args_with: Vec<ArgsWith>,
}

/// A checked intercept: the command prefixes and the tool they stand for.
#[derive(Debug, Clone)]
pub(crate) struct Intercept {
    pub(crate) rule: Rule,
    pub(crate) tool: Tool,
    pub(crate) packages: Option<PackageManager>,
    pub(crate) commands: Vec<Vec<String>>,
}

/// A whole policy, checked, before its examples are run.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    pub(crate) system: SystemPaths,
    pub(crate) denied: HashMap<String, String>,
    pub(crate) programs: HashMap<String, Rule>,
    pub(crate) intercepts: Vec<Intercept>,
    /// Every example, with where it was written and whether it should be intercepted.
    pub(crate) examples: Vec<Example>,
}

/// An example a rule carries, run when the policy loads.
#[derive(Debug, Clone)]
pub(crate) struct Example {
    pub(crate) command: String,
    pub(crate) expect: Expect,
    pub(crate) span: Range<usize>,
}

/// What an example must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    Allow,
    Intercept,
    Deny,
}

/// Locates byte offsets of one policy text, for error messages.
pub(crate) struct Source<'a> {
    pub(crate) name: &'a str,
    pub(crate) text: &'a str,
}

impl Source<'_> {
    pub(crate) fn error(
        &self,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> PolicyError {
        let start = span.map_or(0, |s| s.start.min(self.text.len()));
        let before = &self.text[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        PolicyError::Invalid {
            file: self.name.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// Reads and checks a policy text.
pub(crate) fn load(source: &Source<'_>) -> Result<Rules, PolicyError> {
    let file: PolicyFile =
        toml::from_str(source.text).map_err(|e| source.error(e.span(), e.message().trim_end()))?;
    let mut system = SystemPaths::default();
    for (list, into) in [
        (&file.paths.read, &mut system.read),
        (&file.paths.write, &mut system.write),
    ] {
        for path in list {
            if !path.get_ref().starts_with('/') {
                return Err(source.error(
                    Some(path.span()),
                    format!("`{}` is not an absolute path", path.get_ref()),
                ));
            }
            into.push(PathBuf::from(path.get_ref()));
        }
    }
    let mut denied = HashMap::new();
    for entry in &file.deny {
        for program in &entry.get_ref().programs {
            if denied
                .insert(program.clone(), entry.get_ref().reason.clone())
                .is_some()
            {
                return Err(source.error(
                    Some(entry.span()),
                    format!("`{program}` is listed in two [[deny]] entries"),
                ));
            }
        }
    }
    let mut rules = Rules {
        system,
        denied,
        programs: HashMap::new(),
        intercepts: Vec::new(),
        examples: Vec::new(),
    };
    add_programs(&mut rules, &file.program, source)?;
    add_intercepts(&mut rules, &file.intercept, source)?;
    Ok(rules)
}

fn add_programs(
    rules: &mut Rules,
    tables: &BTreeMap<String, Spanned<RuleFile>>,
    source: &Source<'_>,
) -> Result<(), PolicyError> {
    for (name, table) in tables {
        let span = table.span();
        let raw = table.get_ref();
        if raw.tool.is_some() || raw.packages.is_some() || !raw.commands.is_empty() {
            return Err(source.error(
                Some(span),
                format!("[program.{name}]: `tool`, `packages` and `commands` belong in [intercept.*] tables"),
            ));
        }
        let rule = build_rule(name, raw).map_err(|m| source.error(Some(span.clone()), m))?;
        for program in std::iter::once(name).chain(&raw.aliases) {
            check_name(program).map_err(|m| source.error(Some(span.clone()), m))?;
            if rules.denied.contains_key(program) {
                return Err(source.error(
                    Some(span.clone()),
                    format!(
                        "`{program}` is both in a [[deny]] entry and allowed by [program.{name}]"
                    ),
                ));
            }
            if rules
                .programs
                .insert(program.clone(), rule.clone())
                .is_some()
            {
                return Err(source.error(
                    Some(span.clone()),
                    format!("`{program}` has two [program.*] rules"),
                ));
            }
        }
        add_examples(&mut rules.examples, raw, Expect::Allow);
    }
    Ok(())
}

fn add_intercepts(
    rules: &mut Rules,
    tables: &BTreeMap<String, Spanned<RuleFile>>,
    source: &Source<'_>,
) -> Result<(), PolicyError> {
    for (name, table) in tables {
        let span = table.span();
        let raw = table.get_ref();
        let at = |m: String| source.error(Some(span.clone()), m);
        let tool = raw.tool.ok_or_else(|| {
            at(format!(
                "[intercept.{name}] needs `tool = \"run_tests\"` or `tool = \"set_packages\"`"
            ))
        })?;
        if (tool == Tool::SetPackages) != raw.packages.is_some() {
            return Err(at(format!(
                "[intercept.{name}]: `packages = \"pip\"` or `\"system\"` goes with `tool = \"set_packages\"`, and only there"
            )));
        }
        if raw.commands.is_empty() || !raw.aliases.is_empty() {
            return Err(at(format!(
                "[intercept.{name}] needs `commands`, the command prefixes it stands for (e.g. [\"pip install\"]), and takes no `aliases`"
            )));
        }
        let rule = build_rule(name, raw).map_err(at)?;
        let commands = raw
            .commands
            .iter()
            .map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .collect::<Vec<_>>();
        if commands.iter().any(Vec::is_empty) {
            return Err(at(format!("[intercept.{name}]: a command prefix is empty")));
        }
        rules.intercepts.push(Intercept {
            rule,
            tool,
            packages: raw.packages,
            commands,
        });
        add_examples(&mut rules.examples, raw, Expect::Intercept);
    }
    Ok(())
}

fn add_examples(out: &mut Vec<Example>, raw: &RuleFile, expect: Expect) {
    for (list, expect) in [
        (&raw.examples, expect),
        (&raw.counterexamples, Expect::Deny),
    ] {
        out.extend(list.iter().map(|command| Example {
            command: command.get_ref().clone(),
            expect,
            span: command.span(),
        }));
    }
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('/') || name.contains(char::is_whitespace) {
        return Err(format!(
            "`{name}` is not a program name: programs are named without a path or spaces"
        ));
    }
    Ok(())
}

fn build_rule(name: &str, raw: &RuleFile) -> Result<Rule, String> {
    let mut seen: HashSet<&str> = HashSet::new();
    let all = raw
        .flags
        .iter()
        .chain(raw.options.keys())
        .chain(raw.deny_options.keys());
    for option in all {
        if option.is_empty() || option.contains(char::is_whitespace) {
            return Err(format!("`{option}` is not an option name"));
        }
        if !seen.insert(option) {
            return Err(format!(
                "`{option}` is listed twice among flags, options and deny_options"
            ));
        }
        let short = option.starts_with('-') && !option.starts_with("--");
        if raw.bundle && short && option.chars().count() != 2 {
            return Err(format!(
                "`{option}` has more than one letter after `-`; with bundled options (the default) short options are one letter: set `bundle = false` for programs whose options are words, like find"
            ));
        }
    }
    for option in raw
        .in_place
        .iter()
        .chain(raw.args_with.iter().flat_map(|w| &w.options))
    {
        if !raw.flags.contains(option) && !raw.options.contains_key(option) {
            return Err(format!(
                "`{option}` (in `in_place` or `args_with`) is not among the flags or options"
            ));
        }
    }
    for args in std::iter::once(&raw.args).chain(raw.args_with.iter().map(|w| &w.args)) {
        let repeating = args
            .iter()
            .filter(|a| matches!(a.count, Count::Any | Count::AtLeastOne))
            .count();
        if repeating > 1 {
            return Err(format!(
                "[{name}] `args` may have one repeating entry (`*` or `+`), not {repeating}"
            ));
        }
    }
    Ok(Rule {
        name: name.to_owned(),
        bundle: raw.bundle,
        numeric_flag: raw.numeric_flag,
        dash_args: raw.dash_args,
        flags: raw.flags.iter().cloned().collect(),
        options: raw.options.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        deny_options: raw
            .deny_options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        in_place: raw.in_place.clone(),
        args: raw.args.clone(),
        args_with: raw.args_with.clone(),
    })
}

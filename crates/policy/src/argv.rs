//! One program's arguments against its rule, the way getopt reads them: flags, options with
//! values (`-n 5`, `-n5`, `--lines=5`), bundles (`-la`), `--`, and positional arguments typed by
//! the rule (files read, written or deleted, scripts, package names), each checked.

use std::collections::HashSet;

use crate::awk;
use crate::decision::{Denial, DenyKind};
use crate::paths::{self, Access, SystemPaths, Workspace};
use crate::rules::{ArgSpec, ArgType, Count, Rule};
use crate::sed;

/// What argument checks need to know about the run.
pub(crate) struct Context<'a> {
    pub(crate) workspace: &'a Workspace,
    pub(crate) system: &'a SystemPaths,
}

/// Checks `args` (the words after the program, or after an intercept's prefix) against `rule`;
/// returns the positional arguments.
pub(crate) fn check(
    rule: &Rule,
    program: &str,
    args: &[String],
    ctx: &Context<'_>,
) -> Result<Vec<String>, Denial> {
    let mut reader = Reader {
        rule,
        program,
        ctx,
        present: HashSet::new(),
        positionals: Vec::new(),
    };
    reader.read(args)?;
    let Reader {
        present,
        positionals,
        ..
    } = reader;
    let specs = rule
        .args_with
        .iter()
        .find(|with| with.options.iter().any(|o| present.contains(o)))
        .map_or(&rule.args, |with| &with.args);
    let writes = rule.in_place.iter().any(|o| present.contains(o));
    assign(rule, program, specs, &positionals, writes, ctx)?;
    Ok(positionals)
}

struct Reader<'a> {
    rule: &'a Rule,
    program: &'a str,
    ctx: &'a Context<'a>,
    present: HashSet<String>,
    positionals: Vec<String>,
}

impl Reader<'_> {
    fn read(&mut self, args: &[String]) -> Result<(), Denial> {
        let rule = self.rule;
        let mut i = 0;
        let mut end_of_options = false;
        while i < args.len() {
            let arg = &args[i];
            i += 1;
            if end_of_options {
                self.positionals.push(arg.clone());
                continue;
            }
            if let Some(reason) = rule.deny_options.get(arg) {
                return Err(Denial::new(DenyKind::Option, reason.clone()));
            }
            if rule.flags.contains(arg) {
                self.present.insert(arg.clone());
                continue;
            }
            if let Some(&ty) = rule.options.get(arg) {
                if ty != ArgType::BackupSuffix {
                    let Some(value) = args.get(i) else {
                        return Err(self.needs_value(arg));
                    };
                    i += 1;
                    value_ok(ty, value, false, self.ctx)?;
                }
                self.present.insert(arg.clone());
                continue;
            }
            if arg == "--" {
                end_of_options = true;
            } else if arg.starts_with("--") {
                self.long(arg)?;
            } else if arg.starts_with('-') && arg.len() > 1 {
                if rule.numeric_flag && arg[1..].bytes().all(|b| b.is_ascii_digit()) {
                    continue; // `head -5`
                }
                i += self.short(arg, args.get(i))?;
            } else {
                self.positionals.push(arg.clone());
            }
        }
        Ok(())
    }

    /// `--name=value`.
    fn long(&mut self, arg: &str) -> Result<(), Denial> {
        let Some((key, value)) = arg.split_once('=') else {
            return self.unknown(arg);
        };
        if let Some(reason) = self.rule.deny_options.get(key) {
            return Err(Denial::new(DenyKind::Option, reason.clone()));
        }
        if let Some(&ty) = self.rule.options.get(key) {
            value_ok(ty, value, false, self.ctx)?;
            self.present.insert(key.to_owned());
            return Ok(());
        }
        if self.rule.flags.contains(key) {
            return Err(Denial::new(
                DenyKind::Option,
                format!("`{key}` takes no value"),
            ));
        }
        self.unknown(arg)
    }

    /// `-abc`, `-n5`, `-n 5`; returns how many following arguments were used as a value.
    fn short(&mut self, arg: &str, next: Option<&String>) -> Result<usize, Denial> {
        if !self.rule.bundle {
            self.unknown(arg)?;
            return Ok(0);
        }
        let letters: Vec<char> = arg.chars().skip(1).collect();
        for (j, letter) in letters.iter().enumerate() {
            let option = format!("-{letter}");
            if let Some(reason) = self.rule.deny_options.get(&option) {
                return Err(Denial::new(DenyKind::Option, reason.clone()));
            }
            if self.rule.flags.contains(&option) {
                self.present.insert(option);
                continue;
            }
            let Some(&ty) = self.rule.options.get(&option) else {
                self.unknown(arg)?;
                return Ok(0);
            };
            let rest: String = letters[j + 1..].iter().collect();
            self.present.insert(option.clone());
            if ty == ArgType::BackupSuffix || !rest.is_empty() {
                value_ok(ty, &rest, false, self.ctx)?;
                return Ok(0);
            }
            let Some(value) = next else {
                return Err(self.needs_value(&option));
            };
            value_ok(ty, value, false, self.ctx)?;
            return Ok(1);
        }
        Ok(0)
    }

    fn needs_value(&self, option: &str) -> Denial {
        Denial::new(
            DenyKind::Argument,
            format!("`{} {option}` needs a value after it", self.program),
        )
    }

    /// An option the rule does not know: an argument for `dash_args` programs, else denied.
    fn unknown(&mut self, arg: &str) -> Result<(), Denial> {
        if self.rule.dash_args {
            self.positionals.push(arg.to_owned());
            return Ok(());
        }
        let mut allowed: Vec<&str> = self
            .rule
            .flags
            .iter()
            .chain(self.rule.options.keys())
            .map(String::as_str)
            .collect();
        allowed.sort_unstable();
        let allowed = if allowed.is_empty() {
            "none".to_owned()
        } else {
            allowed.join(" ")
        };
        Err(Denial::new(
            DenyKind::Option,
            format!(
                "`{}` does not allow the option `{arg}` (allowed: {allowed})",
                self.program
            ),
        ))
    }
}

/// Hands positional arguments to the rule's entries in order and checks each.
fn assign(
    rule: &Rule,
    program: &str,
    specs: &[ArgSpec],
    positionals: &[String],
    writes: bool,
    ctx: &Context<'_>,
) -> Result<(), Denial> {
    let required: usize = specs
        .iter()
        .filter(|s| matches!(s.count, Count::One | Count::AtLeastOne))
        .count();
    let repeating = specs
        .iter()
        .any(|s| matches!(s.count, Count::Any | Count::AtLeastOne));
    let usage = || usage(specs);
    if positionals.len() < required {
        return Err(Denial::new(
            DenyKind::Argument,
            format!("`{program}` needs {}", usage()),
        ));
    }
    if !repeating && positionals.len() > specs.len() {
        return Err(Denial::new(
            DenyKind::Argument,
            format!(
                "`{program}` takes {} ({} given); the rule `{}` allows no more",
                usage(),
                positionals.len(),
                rule.name
            ),
        ));
    }
    let mut extra = positionals.len() - required;
    let mut values = positionals.iter();
    for spec in specs {
        let take = match spec.count {
            Count::One => 1,
            Count::Optional => {
                let take = usize::from(extra > 0);
                extra -= take;
                take
            }
            Count::Any => std::mem::take(&mut extra),
            Count::AtLeastOne => 1 + std::mem::take(&mut extra),
        };
        for value in values.by_ref().take(take) {
            value_ok(spec.ty, value, writes, ctx)?;
        }
    }
    Ok(())
}

fn usage(specs: &[ArgSpec]) -> String {
    if specs.is_empty() {
        return "no arguments".to_owned();
    }
    specs
        .iter()
        .map(|s| {
            let what = describe(s.ty);
            match s.count {
                Count::One => what.to_owned(),
                Count::Optional => format!("optionally {what}"),
                Count::Any => format!("any number of: {what}"),
                Count::AtLeastOne => format!("one or more of: {what}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", then ")
}

fn describe(ty: ArgType) -> &'static str {
    match ty {
        ArgType::Value => "a value",
        ArgType::Count => "a number",
        ArgType::ReadPath => "a file to read",
        ArgType::WritePath => "a file to write",
        ArgType::DeletePath => "a file to remove",
        ArgType::SedScript => "a sed script",
        ArgType::AwkProgram => "an awk program",
        ArgType::BackupSuffix => "a backup suffix",
        ArgType::PipRequirement => "a pip requirement (`name` or `name>=version`)",
        ArgType::AptPackage => "a Debian package name",
        ArgType::TestPath => "a test file",
    }
}

/// Checks one value of type `ty`; `writes` turns files read into files written (`sed -i`).
fn value_ok(ty: ArgType, value: &str, writes: bool, ctx: &Context<'_>) -> Result<(), Denial> {
    let path = |access| paths::check(value, access, ctx.workspace, ctx.system);
    match ty {
        ArgType::Value => Ok(()),
        ArgType::Count => {
            if is_count(value) {
                Ok(())
            } else {
                Err(Denial::new(
                    DenyKind::Argument,
                    format!("`{value}` is not a number"),
                ))
            }
        }
        ArgType::ReadPath => path(if writes { Access::Write } else { Access::Read }),
        ArgType::WritePath => path(Access::Write),
        ArgType::DeletePath => path(Access::Delete),
        ArgType::TestPath => {
            let file = value.split("::").next().unwrap_or(value);
            paths::check(file, Access::Read, ctx.workspace, ctx.system)
        }
        ArgType::SedScript => sed::check(value).map_err(|r| Denial::new(DenyKind::Script, r)),
        ArgType::AwkProgram => awk::check(value).map_err(|r| Denial::new(DenyKind::Script, r)),
        ArgType::BackupSuffix => {
            if value.contains('/') {
                Err(Denial::new(
                    DenyKind::Path,
                    format!(
                        "the backup suffix `{value}` holds `/`, which would put backups in another directory"
                    ),
                ))
            } else {
                Ok(())
            }
        }
        ArgType::PipRequirement => {
            if is_requirement(value) {
                Ok(())
            } else {
                Err(Denial::new(
                    DenyKind::Argument,
                    format!(
                        "`{value}` is not a package requirement: name packages from the index, like `pandas` or `numpy>=2` (no URLs, paths or files)"
                    ),
                ))
            }
        }
        ArgType::AptPackage => {
            if is_debian_name(value) {
                Ok(())
            } else {
                Err(Denial::new(
                    DenyKind::Argument,
                    format!(
                        "`{value}` is not a Debian package name (lower-case letters, digits and `+ . -`, no version)"
                    ),
                ))
            }
        }
    }
}

/// `5`, `-5`, `+5`, `10K`, `2MB`.
fn is_count(value: &str) -> bool {
    let digits = value.trim_start_matches(['+', '-']);
    let number: String = digits.chars().take_while(char::is_ascii_digit).collect();
    let unit = &digits[number.len()..];
    value.len() - digits.len() <= 1
        && !number.is_empty()
        && unit.len() <= 3
        && unit.chars().all(|c| c.is_ascii_alphabetic())
}

/// A PEP 508 name with optional extras and version specifiers; no URL, path or marker.
pub(crate) fn is_requirement(value: &str) -> bool {
    let name_len = value
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .unwrap_or(value.len());
    let (name, mut rest) = value.split_at(name_len);
    let edges_ok = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !edges_ok {
        return false;
    }
    if let Some(extras) = rest.strip_prefix('[') {
        let Some((inside, after)) = extras.split_once(']') else {
            return false;
        };
        if inside.is_empty()
            || !inside
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ','))
        {
            return false;
        }
        rest = after;
    }
    rest.is_empty()
        || (rest.starts_with(['<', '>', '=', '!', '~'])
            && rest.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(
                        c,
                        '.' | '*' | '+' | '!' | '_' | '-' | '<' | '>' | '=' | '~' | ',' | ' '
                    )
            }))
}

/// Debian's package name rule.
fn is_debian_name(value: &str) -> bool {
    value.len() >= 2
        && value.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '.' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        for ok in ["5", "-5", "+10", "10K", "2MB"] {
            assert!(is_count(ok), "{ok}");
        }
        for bad in ["", "x", "--5", "5/2", "1e9999999"] {
            assert!(!is_count(bad), "{bad}");
        }
    }

    #[test]
    fn requirements() {
        for ok in [
            "pandas",
            "numpy>=2",
            "a.b-c_d",
            "pkg[extra]==1.0",
            "x>=1,<2",
        ] {
            assert!(is_requirement(ok), "{ok}");
        }
        for bad in [
            "",
            "-r",
            "./local",
            "git+https://x/y.git",
            "pkg @ https://x",
            "pkg; sys_platform",
            "/abs",
            "x[",
        ] {
            assert!(!is_requirement(bad), "{bad}");
        }
    }

    #[test]
    fn debian_names() {
        assert!(is_debian_name("ffmpeg"));
        assert!(is_debian_name("libgomp1"));
        assert!(is_debian_name("g++"));
        assert!(!is_debian_name("Foo"));
        assert!(!is_debian_name("x=1.0"));
        assert!(!is_debian_name("-y"));
    }
}

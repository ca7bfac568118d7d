//! Bash source to plain commands, with tree-sitter-bash. The tree is used to validate and to
//! read words: only words, `&&`, `||`, `;`, `|`, `|&` and file redirections may appear, and every
//! other construct is refused by name. The structure is then rebuilt from those tokens in
//! source order with bash's own precedence (pipelines inside and-or lists inside `;` lists, each
//! redirection on the simple command before it), because tree-sitter-bash hangs redirections
//! on whole lists (`a && b < f | c` parses as `(a && b) < f | c`).

use tree_sitter::{Node, Parser};

use crate::decision::{Denial, DenyKind, When};
use crate::words::{self, Chars, Word};

/// The longest command accepted, in bytes.
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;
/// The most programs one shell command may hold.
pub const MAX_COMMANDS: usize = 64;
/// The deepest nesting of lists and pipelines walked.
const MAX_DEPTH: usize = 256;

/// A redirection, in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// `< file`
    Read(Word),
    /// `> file`, `>> file`, `2> file` (fd 1 or 2).
    Write { fd: u8, target: Word, append: bool },
    /// `&> file`, `&>> file`: stdout and stderr.
    Both { target: Word, append: bool },
    /// `2>&1`, `>&2`: fd becomes a copy of `to`.
    Dup { fd: u8, to: u8 },
}

/// One simple command before expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawCommand {
    /// The command as written, for denial messages.
    pub(crate) source: String,
    pub(crate) words: Vec<Word>,
    pub(crate) redirects: Vec<Redirect>,
}

/// One pipeline and when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawStep {
    pub(crate) when: When,
    pub(crate) pipeline: Vec<RawCommand>,
}

pub(crate) fn syntax(what: &str) -> Denial {
    Denial::new(
        DenyKind::Syntax,
        format!(
            "{what} are not allowed: a command may only be plain words joined by `&&`, `||`, `;` or `|`, with `<`, `>`, `>>` or `2>&1` redirections to workspace files"
        ),
    )
}

/// What a tree-sitter-bash node kind is, in words the model understands.
pub(crate) fn construct(kind: &str) -> &'static str {
    match kind {
        "command_substitution" => "command substitutions (`$(...)` and backticks)",
        "process_substitution" => "process substitutions (`<(...)`, `>(...)`)",
        "simple_expansion" | "expansion" | "$" => {
            "`$` expansions (variables could leak secrets from the environment)"
        }
        "arithmetic_expansion" => "arithmetic expansions (`$((...))`)",
        "subshell" => "subshells (`( ... )`)",
        "compound_statement" => "command groups (`{ ...; }`)",
        "heredoc_redirect" => "here-documents (`<<`); write the file with the write_file tool",
        "herestring_redirect" => "here-strings (`<<<`)",
        "variable_assignment" => "variable assignments (`NAME=value`)",
        "declaration_command" | "unset_command" => "declarations (`export`, `local`, `unset`)",
        "negated_command" => "negated commands (`! cmd`)",
        "ansi_c_string" | "translated_string" => "`$'...'` and `$\"...\"` strings",
        "brace_expression" => "brace expansions (`{1..3}`, `{a,b}`)",
        "test_command" => "test expressions (`[ ... ]`, `[[ ... ]]`)",
        "if_statement"
        | "while_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "case_statement"
        | "function_definition" => "control flow (if, for, while, case, functions)",
        "&" => "background jobs (`&`)",
        _ => "shell constructs other than plain words",
    }
}

/// Parses `src` into steps, or says what in it is not allowed.
pub(crate) fn parse(src: &str) -> Result<Vec<RawStep>, Denial> {
    if src.trim().is_empty() {
        return Err(Denial::new(DenyKind::Parse, "the command is empty"));
    }
    if src.len() > MAX_COMMAND_BYTES {
        return Err(Denial::new(
            DenyKind::Parse,
            format!(
                "the command is {} bytes long; the most accepted is {MAX_COMMAND_BYTES}: write long content with the write_file tool",
                src.len()
            ),
        ));
    }
    if src.contains('\0') {
        return Err(Denial::new(DenyKind::Parse, "the command holds a NUL byte"));
    }
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|e| {
            Denial::new(
                DenyKind::Parse,
                format!("the bash grammar did not load: {e}"),
            )
        })?;
    let tree = parser
        .parse(src, None)
        .ok_or_else(|| Denial::new(DenyKind::Parse, "the command could not be parsed"))?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(Denial::new(
            DenyKind::Parse,
            format!(
                "the command is not valid shell ({}); check quotes and operators",
                first_error(root, src)
            ),
        ));
    }
    let mut walker = Walker {
        src,
        items: Vec::new(),
        commands: 0,
    };
    walker.program(root)?;
    assemble(walker.items)
}

/// Where the first syntax error is, for the message.
fn first_error(root: Node<'_>, src: &str) -> String {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            return format!("`{}` expected at byte {}", node.kind(), node.start_byte());
        }
        if node.is_error() {
            let text: String = src[node.byte_range()].chars().take(40).collect();
            return format!("unexpected `{text}` at byte {}", node.start_byte());
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    "unbalanced quotes or operators".to_owned()
}

/// The operators between commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Pipe,
    PipeStderr,
    Separator,
}

/// The command's tokens in source order.
#[derive(Debug)]
enum Item {
    Command(RawCommand),
    Redirect(Redirect, String),
    Op(Op),
}

struct Walker<'s> {
    src: &'s str,
    items: Vec<Item>,
    commands: usize,
}

impl<'s> Walker<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        &self.src[node.byte_range()]
    }

    /// Top-level statements; a newline between two of them is a `;`.
    fn program(&mut self, root: Node<'_>) -> Result<(), Denial> {
        let mut cursor = root.walk();
        let mut after_statement = false;
        for child in root.children(&mut cursor) {
            match child.kind() {
                "comment" => {}
                ";" => {
                    self.items.push(Item::Op(Op::Separator));
                    after_statement = false;
                }
                _ if child.is_named() => {
                    if after_statement {
                        self.items.push(Item::Op(Op::Separator));
                    }
                    self.node(child, 0)?;
                    after_statement = true;
                }
                kind => return Err(separator(kind)),
            }
        }
        Ok(())
    }

    fn node(&mut self, node: Node<'_>, depth: usize) -> Result<(), Denial> {
        if depth > MAX_DEPTH {
            return Err(Denial::new(
                DenyKind::Parse,
                "the command is nested too deeply",
            ));
        }
        match node.kind() {
            "list" | "pipeline" | "redirected_statement" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    match child.kind() {
                        "&&" => self.items.push(Item::Op(Op::And)),
                        "||" => self.items.push(Item::Op(Op::Or)),
                        "|" => self.items.push(Item::Op(Op::Pipe)),
                        "|&" => self.items.push(Item::Op(Op::PipeStderr)),
                        "comment" => {}
                        "file_redirect" => {
                            let redirect = self.redirect(child)?;
                            self.items
                                .push(Item::Redirect(redirect, self.text(child).to_owned()));
                        }
                        _ if child.is_named() => self.node(child, depth + 1)?,
                        kind => return Err(separator(kind).at(self.text(node))),
                    }
                }
                Ok(())
            }
            "command" => {
                self.commands += 1;
                if self.commands > MAX_COMMANDS {
                    return Err(Denial::new(
                        DenyKind::Parse,
                        format!("the command holds more than {MAX_COMMANDS} programs; split it"),
                    ));
                }
                self.command(node)
            }
            kind => Err(syntax(construct(kind)).at(self.text(node))),
        }
    }

    fn redirect(&self, node: Node<'_>) -> Result<Redirect, Denial> {
        if node.kind() != "file_redirect" {
            return Err(syntax(construct(node.kind())).at(self.text(node)));
        }
        let fail = |why: &str| {
            Denial::new(
                DenyKind::Syntax,
                format!(
                    "{why}; the redirections allowed are `< file`, `> file`, `>> file`, `2> file`, `&> file`, `2>&1` and `>&2`"
                ),
            )
            .at(self.text(node))
        };
        let mut fd: Option<u8> = None;
        let mut op: Option<&str> = None;
        let mut targets = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "file_descriptor" => {
                    fd = Some(match self.text(child) {
                        "0" => 0,
                        "1" => 1,
                        "2" => 2,
                        _ => {
                            return Err(fail("only file descriptors 0, 1 and 2 may be redirected"));
                        }
                    });
                }
                _ if child.is_named() => targets.push(child),
                kind => op = Some(kind),
            }
        }
        let [target] = targets.as_slice() else {
            return Err(fail(
                "a redirection takes exactly one file, after all the command's arguments",
            ));
        };
        let target = *target;
        match op.unwrap_or_default() {
            "<" if fd.unwrap_or(0) == 0 => Ok(Redirect::Read(self.word(target)?)),
            op @ (">" | ">|" | ">>") if fd.unwrap_or(1) != 0 => Ok(Redirect::Write {
                fd: fd.unwrap_or(1),
                target: self.word(target)?,
                append: op == ">>",
            }),
            op @ ("&>" | "&>>") if fd.is_none() => Ok(Redirect::Both {
                target: self.word(target)?,
                append: op == "&>>",
            }),
            ">&" => {
                let from = fd.unwrap_or(1);
                match (from, self.text(target)) {
                    (1, "2") => Ok(Redirect::Dup { fd: 1, to: 2 }),
                    (2, "1") => Ok(Redirect::Dup { fd: 2, to: 1 }),
                    _ => Err(fail("only `2>&1` and `>&2` copy a stream")),
                }
            }
            other => Err(fail(&format!("the redirection `{other}` is not allowed"))),
        }
    }

    /// A simple command: a name and arguments, no assignments; redirections inside it follow it.
    fn command(&mut self, node: Node<'_>) -> Result<(), Denial> {
        let source = self.text(node).to_owned();
        let mut words = Vec::new();
        let mut redirects = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "command_name" => {
                    let Some(inner) = child.named_child(0) else {
                        return Err(syntax(construct("")).at(&source));
                    };
                    words.push(self.word(inner)?);
                }
                "file_redirect" => {
                    redirects.push(Item::Redirect(
                        self.redirect(child)?,
                        self.text(child).to_owned(),
                    ));
                }
                "comment" => {}
                _ if child.is_named() => words.push(self.word(child).map_err(|d| d.at(&source))?),
                kind => return Err(syntax(construct(kind)).at(&source)),
            }
        }
        if words.is_empty() {
            return Err(
                Denial::new(DenyKind::Syntax, "a command without a program name").at(&source),
            );
        }
        self.items.push(Item::Command(RawCommand {
            source,
            words,
            redirects: Vec::new(),
        }));
        self.items.extend(redirects);
        Ok(())
    }

    /// One argument: words, numbers, quoted strings and their concatenations.
    fn word(&self, node: Node<'_>) -> Result<Word, Denial> {
        let mut chars = Vec::new();
        self.word_parts(node, &mut chars)?;
        words::finish_word(&chars).map_err(|d| d.at(self.text(node)))
    }

    fn word_parts(&self, node: Node<'_>, out: &mut Chars) -> Result<(), Denial> {
        let text = self.text(node);
        match node.kind() {
            "word" | "number" => words::unquoted(text, out).map_err(|d| d.at(text)),
            "raw_string" => {
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .ok_or_else(|| syntax(construct("")).at(text))?;
                words::single_quoted(inner, out);
                Ok(())
            }
            "string" => {
                let mut cursor = node.walk();
                for part in node.children(&mut cursor) {
                    match part.kind() {
                        "\"" | "string_content" => {}
                        kind => return Err(syntax(construct(kind)).at(text)),
                    }
                }
                let inner = text
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .ok_or_else(|| syntax(construct("")).at(text))?;
                words::double_quoted(inner, out).map_err(|d| d.at(text))
            }
            "concatenation" => {
                let mut cursor = node.walk();
                for part in node.children(&mut cursor) {
                    if !part.is_named() {
                        return Err(syntax(construct(part.kind())).at(text));
                    }
                    self.word_parts(part, out)?;
                }
                Ok(())
            }
            kind => Err(syntax(construct(kind)).at(text)),
        }
    }
}

fn separator(kind: &str) -> Denial {
    if kind == "&" {
        return syntax(construct("&"));
    }
    Denial::new(
        DenyKind::Syntax,
        format!("the operator `{kind}` is not allowed; join commands with `&&`, `||`, `;` or `|`"),
    )
}

/// Rebuilds steps from the tokens: `|` joins commands into a pipeline, `&&`, `||` and `;` end
/// one; a redirection belongs to the command right before it.
fn assemble(items: Vec<Item>) -> Result<Vec<RawStep>, Denial> {
    let misplaced = |what: &str| {
        Denial::new(
            DenyKind::Syntax,
            format!("{what}; write each command as `program args [redirections]`"),
        )
    };
    let mut steps = Vec::new();
    let mut pipeline: Vec<RawCommand> = Vec::new();
    let mut when = When::Always;
    // Whether the last token was an operator (or nothing yet): a command must come next.
    let mut want_command = true;
    for item in items {
        match item {
            Item::Command(command) => {
                if !want_command {
                    return Err(misplaced("two commands without an operator between them"));
                }
                pipeline.push(command);
                want_command = false;
            }
            Item::Redirect(redirect, text) => {
                let Some(last) = pipeline.last_mut().filter(|_| !want_command) else {
                    return Err(misplaced(&format!(
                        "the redirection `{text}` comes before its command"
                    ))
                    .at(&text));
                };
                last.redirects.push(redirect);
                last.source = format!("{} {text}", last.source);
            }
            Item::Op(op @ (Op::Pipe | Op::PipeStderr)) => {
                let Some(last) = pipeline.last_mut().filter(|_| !want_command) else {
                    return Err(misplaced("`|` without a command before it"));
                };
                if op == Op::PipeStderr {
                    // `a |& b` is `a 2>&1 | b`.
                    last.redirects.push(Redirect::Dup { fd: 2, to: 1 });
                }
                want_command = true;
            }
            Item::Op(op) => {
                if want_command {
                    return Err(misplaced("an operator without a command before it"));
                }
                steps.push(RawStep {
                    when,
                    pipeline: std::mem::take(&mut pipeline),
                });
                when = match op {
                    Op::And => When::Succeeded,
                    Op::Or => When::Failed,
                    _ => When::Always,
                };
                want_command = true;
            }
        }
    }
    if !pipeline.is_empty() {
        if want_command {
            return Err(misplaced("a `|` with no command after it"));
        }
        steps.push(RawStep { when, pipeline });
    } else if when != When::Always {
        return Err(misplaced("an operator with no command after it"));
    }
    if steps.is_empty() {
        return Err(Denial::new(
            DenyKind::Parse,
            "the command has no program to run",
        ));
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<Vec<String>> {
        parse(src)
            .unwrap()
            .into_iter()
            .flat_map(|s| s.pipeline)
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn quotes_and_escapes_are_removed_as_bash_does() {
        assert_eq!(
            words(r#"echo "a\"b" 'c d' x\ y "\q" l"s"'t'"#),
            vec![vec!["echo", "a\"b", "c d", "x y", "\\q", "lst"]]
        );
    }

    #[test]
    fn operators_become_steps() {
        let steps = parse("a && b || c; d | e").unwrap();
        let whens: Vec<When> = steps.iter().map(|s| s.when).collect();
        assert_eq!(
            whens,
            vec![When::Always, When::Succeeded, When::Failed, When::Always]
        );
        assert_eq!(steps[3].pipeline.len(), 2);
    }

    #[test]
    fn trailing_redirections_bind_to_the_last_command() {
        let steps = parse("a && b > out").unwrap();
        assert!(steps[0].pipeline[0].redirects.is_empty());
        assert_eq!(steps[1].pipeline[0].redirects.len(), 1);
    }

    #[test]
    fn globs_keep_quoted_metacharacters_literal() {
        let steps = parse(r#"ls "a*"*.py plain"#).unwrap();
        let w = &steps[0].pipeline[0].words;
        assert_eq!(w[1].glob.as_deref(), Some("a[*]*.py"));
        assert_eq!(w[2].glob, None);
    }

    #[test]
    fn constructs_are_refused_by_name() {
        for (src, what) in [
            ("echo $(id)", "command substitution"),
            ("echo `id`", "command substitution"),
            ("echo $HOME", "`$` expansions"),
            ("echo \"$HOME\"", "`$` expansions"),
            ("(ls)", "subshells"),
            ("ls &", "background"),
            ("cat <<EOF\nx\nEOF", "here-documents"),
            ("A=1 ls", "variable assignments"),
            ("echo {a,b}", "brace expansions"),
            ("diff <(ls) x", "process substitutions"),
        ] {
            let denial = parse(src).unwrap_err();
            assert!(denial.reason.contains(what), "{src}: {}", denial.reason);
        }
    }
}

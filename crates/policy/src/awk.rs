//! An awk program scanner that finds what reaches beyond the text awk reads: `system()`, pipes to
//! and from commands (`print | "cmd"`, `"cmd" | getline`, `|&`), `getline` (which reads other
//! files), `print > "file"` redirections, `ENVIRON`/`PROCINFO` (secrets), and gawk's `@` forms
//! (`@load`, `@include`, indirect calls). Strings, regular expressions and comments are skipped
//! so that `/a|b/` or `"x > y"` do not count; a `/` is read as a regular expression where an
//! operand cannot precede it, as awk's own lexer does.

const HINT: &str = "awk may only compute over the text it reads and print to stdout; redirect the output with the shell (`awk ... > file`)";

/// Why the program is refused, for the model.
pub(crate) fn check(program: &str) -> Result<(), String> {
    let chars: Vec<char> = program.chars().collect();
    let mut i = 0;
    // Whether the last token was an operand (then `/` divides).
    let mut operand = false;
    // Parenthesis depth, and the depth a `print` statement started at.
    let mut depth: usize = 0;
    let mut print_depth: Option<usize> = None;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\r' => i += 1,
            '\\' => i += 2, // line continuation
            '\n' | ';' | '{' | '}' => {
                print_depth = None; // a statement ends
                operand = false;
                i += 1;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '"' => {
                i = skip_delimited(&chars, i + 1, '"')?;
                operand = true;
            }
            '/' if !operand => {
                i = skip_regex(&chars, i + 1)?;
                operand = true;
            }
            '(' | '[' => {
                depth += 1;
                operand = false;
                i += 1;
            }
            ')' | ']' => {
                depth = depth.saturating_sub(1);
                operand = true;
                i += 1;
            }
            '|' => {
                if chars.get(i + 1) == Some(&'|') {
                    operand = false;
                    i += 2;
                } else {
                    return Err(format!(
                        "`|` in an awk program pipes to or from a command; {HINT}"
                    ));
                }
            }
            '>' => {
                if print_depth == Some(depth) {
                    return Err(format!("`print ... >` in awk writes a file; {HINT}"));
                }
                operand = false;
                i += 1;
            }
            '@' => {
                return Err(format!(
                    "gawk's `@` directives and indirect calls are not allowed; {HINT}"
                ));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                operand = identifier(&word)?;
                if word == "print" || word == "printf" {
                    print_depth = Some(depth);
                }
            }
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
                operand = true;
            }
            _ => {
                operand = false;
                i += 1;
            }
        }
    }
    Ok(())
}

/// Refuses the identifiers that reach beyond awk's input; says whether the word is an operand
/// (after which `/` divides rather than opens a regular expression).
fn identifier(word: &str) -> Result<bool, String> {
    match word {
        "system" => Err(format!("awk's `system()` runs shell commands; {HINT}")),
        "getline" => Err(
            "awk's `getline` reads other files or command output; pass the files as arguments instead"
                .to_owned(),
        ),
        "ENVIRON" | "PROCINFO" => Err(format!(
            "awk's `{word}` exposes the environment, which may hold secrets"
        )),
        // After these keywords an expression starts: `/` opens a regex.
        "print" | "printf" | "return" | "in" | "case" | "do" | "else" => Ok(false),
        _ => Ok(true),
    }
}

fn skip_delimited(chars: &[char], mut i: usize, delim: char) -> Result<usize, String> {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == delim => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err("the awk program has an unterminated string".to_owned())
}

/// A regex literal; `/` inside a bracket expression does not end it.
fn skip_regex(chars: &[char], mut i: usize) -> Result<usize, String> {
    let mut bracket = false;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '[' => {
                bracket = true;
                i += 1;
            }
            ']' => {
                bracket = false;
                i += 1;
            }
            '/' if !bracket => return Ok(i + 1),
            '\n' => break,
            _ => i += 1,
        }
    }
    Err("the awk program has an unterminated regular expression".to_owned())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn computations_pass() {
        for program in [
            "{print $1}",
            "BEGIN{FS=\",\"} NR>1 {s+=$3} END{print s}",
            "/a|b/ {n++} END {print n}",
            "$2 > 10 {print $1, $2}",
            "{ if (length($0) > max) max = length($0) } END { print max }",
            "{print \"a > b | c\"}",
            "NR % 2 == 0",
            "{ x = 4 / 2; print x }",
            "{ print ($1 > 3) }",
            "$1 == \"x\" || $2 == \"y\"",
            "{ a[$1]++ } END { for (k in a) print k, a[k] }",
            "# system() in a comment\n{print}",
        ] {
            assert_eq!(check(program), Ok(()), "{program}");
        }
    }

    #[test]
    fn escapes_are_refused() {
        for (program, word) in [
            ("BEGIN{system(\"curl x\")}", "system()"),
            ("{print | \"sh\"}", "pipes"),
            ("BEGIN{\"id\" | getline x; print x}", "pipes"),
            (
                "BEGIN{while ((getline l < \"/etc/passwd\") > 0) print l}",
                "getline",
            ),
            ("{print > \"/tmp/out\"}", "writes a file"),
            ("{printf(\"%s\", $0) >> \"x\"}", "writes a file"),
            ("BEGIN{print ENVIRON[\"ANTHROPIC_API_KEY\"]}", "environment"),
            ("@load \"x\"", "`@`"),
            ("{print |& \"cat\"}", "pipes"),
            ("{print \"x", "unterminated"),
        ] {
            let why = check(program).unwrap_err();
            assert!(why.contains(word), "{program}: {why}");
        }
    }
}

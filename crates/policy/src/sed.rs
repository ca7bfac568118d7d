//! A sed script reader that finds the commands able to run programs or touch other files:
//! `e` (and `s///e`) run shell commands, `w`/`W` (and `s///w`) write files, `r`/`R` read them.
//! Anything it cannot read is refused too: a script we misread could hide one of those.

/// Why the script is refused, for the model.
pub(crate) fn check(script: &str) -> Result<(), String> {
    let mut reader = Reader {
        chars: script.chars().collect(),
        pos: 0,
    };
    reader.script()
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
}

const HINT: &str = "sed may only edit text (s, y, d, p, a, i, c, q and the like); do the rest in separate commands";

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += usize::from(c.is_some());
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn skip_number(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    /// To the end of the line (text of `a`, `i`, `c`; file names), honouring `\` escapes.
    fn rest_of_line(&mut self) {
        while let Some(c) = self.next() {
            match c {
                '\\' => {
                    self.next();
                }
                '\n' => return,
                _ => {}
            }
        }
    }

    /// A label: up to `;` or the end of the line.
    fn label(&mut self) {
        while let Some(c) = self.peek() {
            if c == ';' || c == '\n' {
                return;
            }
            self.pos += 1;
        }
    }

    /// Text delimited by `delim`, with `\` escapes; `Err` when it does not end.
    fn delimited(&mut self, delim: char) -> Result<(), String> {
        while let Some(c) = self.next() {
            if c == '\\' {
                self.next();
            } else if c == delim {
                return Ok(());
            } else if c == '\n' && delim != '\n' {
                break;
            }
        }
        Err(format!(
            "the sed script has an unterminated `{delim}` expression"
        ))
    }

    fn address(&mut self) -> Result<(), String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.skip_number();
                if self.peek() == Some('~') {
                    self.pos += 1;
                    self.skip_number();
                }
            }
            Some('$') => self.pos += 1,
            Some('/') => {
                self.pos += 1;
                self.delimited('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.pos += 1;
                let delim = self
                    .next()
                    .ok_or_else(|| "the sed script ends inside an address".to_owned())?;
                self.delimited(delim)?;
                self.regex_flags();
            }
            _ => {}
        }
        Ok(())
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.pos += 1;
        }
    }

    fn script(&mut self) -> Result<(), String> {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.pos += 1;
            }
            let Some(c) = self.peek() else {
                return Ok(());
            };
            if c == '#' {
                self.rest_of_line();
                continue;
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.pos += 1;
                self.skip_blanks();
                if matches!(self.peek(), Some('+' | '~')) {
                    self.pos += 1;
                    self.skip_number();
                } else {
                    self.address()?;
                }
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.pos += 1;
                self.skip_blanks();
            }
            let Some(command) = self.next() else {
                return Err("the sed script ends after an address".to_owned());
            };
            self.command(command)?;
        }
    }

    fn command(&mut self, command: char) -> Result<(), String> {
        match command {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => Ok(()),
            'q' | 'Q' | 'l' | 'L' => {
                self.skip_blanks();
                self.skip_number();
                Ok(())
            }
            'a' | 'i' | 'c' => {
                self.rest_of_line();
                Ok(())
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                self.label();
                Ok(())
            }
            's' => self.substitute(),
            'y' => {
                let delim = self.delimiter()?;
                self.delimited(delim)?;
                self.delimited(delim)
            }
            'e' => Err(format!("the sed command `e` runs a shell command; {HINT}")),
            'w' | 'W' => Err(format!(
                "the sed command `{command}` writes another file; {HINT}"
            )),
            'r' | 'R' => Err(format!(
                "the sed command `{command}` reads another file; {HINT}"
            )),
            other => Err(format!(
                "`{other}` is not a sed command this policy can read; {HINT}"
            )),
        }
    }

    fn delimiter(&mut self) -> Result<char, String> {
        match self.next() {
            Some('\n' | '\\') | None => {
                Err("the sed script has a command without its delimiter".to_owned())
            }
            Some(d) => Ok(d),
        }
    }

    fn substitute(&mut self) -> Result<(), String> {
        let delim = self.delimiter()?;
        self.delimited(delim)?;
        self.delimited(delim)?;
        while let Some(flag) = self.peek() {
            match flag {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' => self.pos += 1,
                c if c.is_ascii_digit() => self.pos += 1,
                'e' => {
                    return Err(format!(
                        "the `e` flag of sed's `s` command runs the result as a shell command; {HINT}"
                    ));
                }
                'w' => {
                    return Err(format!(
                        "the `w` flag of sed's `s` command writes another file; {HINT}"
                    ));
                }
                ' ' | '\t' | '\n' | ';' | '}' | '#' => return Ok(()),
                other => {
                    return Err(format!(
                        "`{other}` is not a flag of sed's `s` command this policy can read; {HINT}"
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn text_edits_pass() {
        for script in [
            "s/a/b/g",
            "s|/usr|/opt|2p",
            "1d",
            "$!N;P;D",
            "/^#/d; s/x/y/",
            "10q",
            "2,5{s/a/b/;p}",
            "/start/,/end/!d",
            "0~3d",
            "y/abc/xyz/",
            "a\\\nappended",
            "1i header",
            r"s/a\/b/c/",
            r":a;N;$!ba;s/\n/ /g",
        ] {
            assert_eq!(check(script), Ok(()), "{script}");
        }
    }

    #[test]
    fn commands_that_escape_are_refused() {
        for (script, word) in [
            ("s/y/echo hi/e", "`e` flag"),
            ("1e id", "`e` runs"),
            ("s/x/y/w out", "`w` flag"),
            ("w /tmp/x", "`w` writes"),
            ("r /etc/passwd", "`r` reads"),
            ("2,3{s/a/b/;e id\n}", "`e` runs"),
            ("s/a/b/ge", "`e` flag"),
            ("s/a/b", "unterminated"),
            ("k", "not a sed command"),
        ] {
            let why = check(script).unwrap_err();
            assert!(why.contains(word), "{script}: {why}");
        }
    }
}

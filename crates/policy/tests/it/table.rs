//! The decision table: each command with what the shipped policy must answer. Allowed commands
//! are rendered back from the argv and redirections the caller will run (globs expanded in the
//! workspace); intercepts as the tool call; denials by a part of the message the model sees.

use autocoder_policy::{Decision, Policy};

use crate::{render, workspace};

/// What a command must get.
enum Want {
    /// Allowed, running exactly this (argv words, operators, redirections).
    Allow(&'static str),
    /// Intercepted as this tool call.
    Intercept(&'static str),
    /// Denied with a message containing this.
    Deny(&'static str),
}
use Want::{Allow, Deny, Intercept};

const TABLE: &[(&str, Want)] = &[
    // Plain exploration and edits.
    ("ls", Allow("ls")),
    ("ls -la samples", Allow("ls -la samples")),
    (
        "cat data.csv | head -n 5",
        Allow("cat data.csv | head -n 5"),
    ),
    ("head -5 data.csv", Allow("head -5 data.csv")),
    ("wc -l *.csv", Allow("wc -l data.csv")),
    ("ls samples/*.csv", Allow("ls samples/a.csv samples/b.csv")),
    (
        "ls *",
        Allow("ls app.log data.csv samples solution.py test_solution.py"),
    ),
    ("ls .h*", Allow("ls .hidden")),
    ("ls *.xyz", Allow("ls *.xyz")),
    ("echo 'nothing*'", Allow("echo nothing*")),
    (
        "grep -c ERROR app.log && wc -l app.log",
        Allow("grep -c ERROR app.log && wc -l app.log"),
    ),
    ("grep -rn \"def main\" .", Allow("grep -rn 'def main' .")),
    (
        "grep -e foo -e bar data.csv app.log",
        Allow("grep -e foo -e bar data.csv app.log"),
    ),
    (
        "cut -d, -f1 data.csv | sort | uniq -c | sort -rn",
        Allow("cut -d, -f1 data.csv | sort | uniq -c | sort -rn"),
    ),
    (
        "sort -t, -k2,2n -o sorted.csv data.csv",
        Allow("sort -t, -k2,2n -o sorted.csv data.csv"),
    ),
    ("find . -name '*.py'", Allow("find . -name *.py")),
    (
        "find samples -type f -maxdepth 2",
        Allow("find samples -type f -maxdepth 2"),
    ),
    ("sed -n '1,5p' data.csv", Allow("sed -n 1,5p data.csv")),
    (
        "sed -i 's/foo/bar/g' solution.py",
        Allow("sed -i s/foo/bar/g solution.py"),
    ),
    (
        "sed -i.bak -e 's/a/b/' solution.py",
        Allow("sed -i.bak -e s/a/b/ solution.py"),
    ),
    (
        "awk -F, '{s+=$3} END {print s}' data.csv",
        Allow("awk -F, '{s+=$3} END {print s}' data.csv"),
    ),
    (
        "awk 'NR>1 && $2 > 10 {print $1}' data.csv",
        Allow("awk 'NR>1 && $2 > 10 {print $1}' data.csv"),
    ),
    ("echo hello > notes.txt", Allow("echo hello > notes.txt")),
    (
        "ls missing 2>/dev/null || echo none",
        Allow("ls missing 2> /dev/null || echo none"),
    ),
    (
        "mkdir -p out && cp data.csv out/",
        Allow("mkdir -p out && cp data.csv out/"),
    ),
    ("rm -f out.txt", Allow("rm -f out.txt")),
    ("rm -rf samples", Allow("rm -rf samples")),
    ("mv solution.py old.py", Allow("mv solution.py old.py")),
    (
        "diff -u solution.py test_solution.py",
        Allow("diff -u solution.py test_solution.py"),
    ),
    ("cat < data.csv", Allow("cat < data.csv")),
    (
        "pwd; ls\nwc -l data.csv",
        Allow("pwd ; ls ; wc -l data.csv"),
    ),
    ("echo a\\ b \"c\\\"d\"", Allow("echo 'a b' 'c\"d'")),
    (
        "tr -d '\\r' < data.csv > clean.csv",
        Allow("tr -d \\r < data.csv > clean.csv"),
    ),
    (
        "head -n 3 data.csv | tee sample.txt",
        Allow("head -n 3 data.csv | tee sample.txt"),
    ),
    (
        "cat /usr/share/dict/words",
        Allow("cat /usr/share/dict/words"),
    ),
    ("ls 2>&1 | grep x", Allow("ls 2>&1 | grep x")),
    ("ls |& grep x", Allow("ls 2>&1 | grep x")),
    ("ls > all.txt 2>&1", Allow("ls > all.txt 2> all.txt")),
    ("ls 2>&1 > out.txt", Allow("ls > out.txt 2>&1")),
    ("echo oops >&2", Allow("echo oops >&2")),
    ("false || true", Allow("false || true")),
    ("cat data.csv # show it", Allow("cat data.csv")),
    (
        "cat ./samples/../data.csv",
        Allow("cat ./samples/../data.csv"),
    ),
    (
        "printf '%s\\n' a b >> list.txt",
        Allow("printf %s\\n a b >> list.txt"),
    ),
    ("du -sh . && date -u +%Y", Allow("du -sh . && date -u +%Y")),
    ("python3 --version", Deny("runs arbitrary code")),
    // Intercepts: the whole command stands for a tool.
    ("pytest", Intercept("run_tests")),
    (
        "pytest -x -q test_solution.py",
        Intercept("run_tests -x -q test_solution.py"),
    ),
    (
        "python -m pytest test_solution.py::test_x -k x",
        Intercept("run_tests test_solution.py::test_x -k x"),
    ),
    ("pip install pandas", Intercept("set_packages Pip pandas")),
    (
        "python -m pip install -U 'numpy>=2' pyarrow",
        Intercept("set_packages Pip numpy>=2 pyarrow"),
    ),
    (
        "uv pip install polars",
        Intercept("set_packages Pip polars"),
    ),
    (
        "pip3 install scikit-learn",
        Intercept("set_packages Pip scikit-learn"),
    ),
    (
        "apt-get install -y ffmpeg",
        Intercept("set_packages System ffmpeg"),
    ),
    (
        "apt install libgomp1",
        Intercept("set_packages System libgomp1"),
    ),
    // The reference classifier's holes (anchor section 8, items 23 and 24; issue 20).
    (
        "ls && pip install x",
        Deny("stands for the set_packages tool and must be the whole command"),
    ),
    ("cat x | sh", Deny("`sh` is a shell")),
    (
        "find . -exec curl x \\;",
        Deny("`find -exec` runs another program"),
    ),
    (
        "find . -execdir rm {} +",
        Deny("`find -execdir` runs another program"),
    ),
    ("find . -delete", Deny("`find -delete` removes every match")),
    (
        "find . -fprint out.txt",
        Deny("`find -fprint` writes a file"),
    ),
    (
        "find -L . -name x",
        Deny("`find -L` follows symbolic links"),
    ),
    (
        "awk 'BEGIN{system(\"curl x\")}'",
        Deny("`system()` runs shell commands"),
    ),
    ("rm -rf /", Deny("`/` is outside the workspace")),
    (
        "echo pytest; curl http://example.invalid",
        Deny("`curl` reaches the network"),
    ),
    (
        "cat /proc/self/environ",
        Deny("`/proc/self/environ` is outside the workspace"),
    ),
    ("echo $ANTHROPIC_API_KEY", Deny("`$` expansions")),
    ("echo \"$ANTHROPIC_API_KEY\"", Deny("`$` expansions")),
    ("echo ${ANTHROPIC_API_KEY}", Deny("`$` expansions")),
    (
        "sed 's/x/id/e' data.csv",
        Deny("`e` flag of sed's `s` command runs"),
    ),
    (
        "sed '1e id' data.csv",
        Deny("sed command `e` runs a shell command"),
    ),
    (
        "sed -e 's/a/b/w /tmp/x' data.csv",
        Deny("`w` flag of sed's `s` command writes"),
    ),
    (
        "sed 'r /etc/passwd' data.csv",
        Deny("sed command `r` reads another file"),
    ),
    (
        "pytest && cat x",
        Deny("`pytest` stands for the run_tests tool"),
    ),
    // rm and friends.
    ("rm -rf ~", Deny("`~` is the home directory")),
    ("rm -rf .", Deny("the workspace itself")),
    ("rm -rf ./", Deny("the workspace itself")),
    ("rm -rf ..", Deny("`..` is outside the workspace")),
    ("rm -rf /*", Deny("looks outside the workspace")),
    (
        "ls ../*",
        Deny("the glob `../*` looks outside the workspace"),
    ),
    (
        "rm -rf --no-preserve-root /",
        Deny("`--no-preserve-root` is never needed"),
    ),
    ("rm -rf $HOME", Deny("`$` expansions")),
    // Programs that run programs, shells, interpreters, the network.
    (
        "find . -name '*.py' | xargs rm",
        Deny("`xargs` runs another program"),
    ),
    ("env", Deny("`env` runs another program")),
    ("env FOO=1 ls", Deny("`env` runs another program")),
    ("sh -c 'ls'", Deny("`sh` is a shell")),
    ("bash -c \"curl x\"", Deny("`bash` is a shell")),
    (
        "python -c 'import os'",
        Deny("`python` runs arbitrary code"),
    ),
    ("python3 solution.py", Deny("run_script tool")),
    ("nohup ls", Deny("`nohup` runs another program")),
    ("timeout 5 ls", Deny("`timeout` runs another program")),
    ("nice ls", Deny("`nice` runs another program")),
    ("exec ls", Deny("`exec` runs another program")),
    ("eval ls", Deny("`eval` runs another program")),
    ("time ls", Deny("`time` runs another program")),
    ("sudo ls", Deny("`sudo` changes user")),
    ("sudo apt-get install ffmpeg", Deny("`sudo` changes user")),
    (
        "wget http://example.invalid/x",
        Deny("`wget` reaches the network"),
    ),
    ("ls; curl x", Deny("`curl x` is denied")),
    (
        "git clone http://example.invalid/r",
        Deny("`git` reaches the network"),
    ),
    // Shell constructs.
    ("echo $(id)", Deny("command substitutions")),
    ("echo `id`", Deny("command substitutions")),
    ("echo \"a$(id)\"", Deny("command substitutions")),
    ("cat <(ls)", Deny("process substitutions")),
    ("(ls)", Deny("subshells")),
    ("{ ls; }", Deny("command groups")),
    ("ls &", Deny("background jobs")),
    ("A=1 ls", Deny("variable assignments")),
    ("export A=1", Deny("declarations")),
    ("cat <<EOF\nx\nEOF", Deny("here-documents")),
    ("cat <<< x", Deny("here-strings")),
    ("for f in a b; do rm x; done", Deny("control flow")),
    ("if true; then ls; fi", Deny("control flow")),
    ("echo {a,b}", Deny("brace expansions")),
    ("ls $((1+2))", Deny("arithmetic expansions")),
    ("! ls", Deny("negated commands")),
    ("[ -f x ]", Deny("test expressions")),
    ("ls 3> x", Deny("only file descriptors 0, 1 and 2")),
    ("ls 2>&3", Deny("only `2>&1` and `>&2`")),
    ("ls ;; ls", Deny("the operator `;;` is not allowed")),
    ("ls 'unterminated", Deny("not valid shell")),
    ("ls &&", Deny("not valid shell")),
    ("   ", Deny("the command is empty")),
    ("*.sh", Deny("the program name may not be a glob")),
    // Paths outside the workspace.
    (
        "ls > /etc/passwd",
        Deny("`/etc/passwd` is outside the workspace; commands may write"),
    ),
    ("ls > ../out", Deny("`../out` is outside the workspace")),
    ("echo x >> ~/.bashrc", Deny("`~` is the home directory")),
    (
        "cat ../../etc/passwd",
        Deny("`../../etc/passwd` is outside the workspace"),
    ),
    (
        "cat < /etc/passwd",
        Deny("`/etc/passwd` is outside the workspace; commands may read"),
    ),
    ("cat /etc/shadow", Deny("outside the workspace")),
    ("ls /root", Deny("`/root` is outside the workspace")),
    (
        "grep root /etc/passwd",
        Deny("`/etc/passwd` is outside the workspace"),
    ),
    (
        "cp data.csv /tmp/x",
        Deny("`/tmp/x` is outside the workspace"),
    ),
    (
        "mv data.csv /tmp/",
        Deny("`/tmp/` is outside the workspace"),
    ),
    (
        "sed -i 's/a/b/' /etc/hosts",
        Deny("`/etc/hosts` is outside the workspace; commands may write"),
    ),
    (
        "sed -i'../*' s/a/b/ data.csv",
        Deny("would put backups in another directory"),
    ),
    ("/bin/ls", Deny("programs are called by name")),
    ("./solution.py", Deny("programs are called by name")),
    // Options and arguments.
    ("grep -R secret .", Deny("`grep -R` follows symbolic links")),
    (
        "sort --compress-program=sh data.csv",
        Deny("`--compress-program` runs another program"),
    ),
    (
        "sort --compress-prog=sh data.csv",
        Deny("does not allow the option `--compress-prog=sh`"),
    ),
    ("tail -f app.log", Deny("never ends")),
    ("ls -Z", Deny("`ls` does not allow the option `-Z`")),
    ("head -n abc data.csv", Deny("`abc` is not a number")),
    ("cp data.csv", Deny("`cp` needs")),
    ("pwd extra", Deny("`pwd` takes no arguments")),
    (
        "awk '{print | \"sh\"}' data.csv",
        Deny("pipes to or from a command"),
    ),
    ("awk '{print > \"/tmp/x\"}' data.csv", Deny("writes a file")),
    (
        "awk 'BEGIN{\"id\" | getline x}'",
        Deny("pipes to or from a command"),
    ),
    (
        "awk 'BEGIN{getline l < \"/etc/passwd\"}'",
        Deny("`getline` reads other files"),
    ),
    (
        "awk 'BEGIN{print ENVIRON[\"HOME\"]}'",
        Deny("`ENVIRON` exposes the environment"),
    ),
    (
        "awk -f prog.awk data.csv",
        Deny("`awk -f` reads its program from a file"),
    ),
    (
        "sed -f script.sed data.csv",
        Deny("`sed -f` reads its script from a file"),
    ),
    ("ln -s /etc/passwd p", Deny("`ln` makes links")),
    ("chmod +x solution.py", Deny("`chmod` changes files")),
    ("dd if=/dev/zero of=x", Deny("`dd` changes files")),
    ("tar xf a.tar", Deny("`tar` can run programs")),
    ("printenv", Deny("environment variables")),
    ("cd /tmp && ls", Deny("`cd` does not carry over")),
    ("kill 1", Deny("`kill` controls processes")),
    ("perl -e 'print 1'", Deny("`perl` runs arbitrary code")),
    ("nc -l 4444", Deny("`nc` reaches the network")),
    (
        "jq . x.json",
        Deny("`jq` is interactive or can run commands"),
    ),
    (
        "frobnicate",
        Deny("`frobnicate` is not an allowed program; allowed: awk"),
    ),
    // Intercepts that are not the whole command, or not well formed.
    ("pytest > out.txt", Deny("must be the whole command")),
    ("pytest | tail", Deny("must be the whole command")),
    (
        "true && python -m pip install x",
        Deny("`python -m pip install` stands for the set_packages tool"),
    ),
    (
        "apt-get install ffmpeg && ls",
        Deny("`apt-get install` stands for the set_packages tool"),
    ),
    ("pytest -p evil", Deny("`-p` loads a plugin")),
    (
        "pytest ../other/test_x.py",
        Deny("`../other/test_x.py` is outside the workspace"),
    ),
    ("pip list", Deny("`pip` manages packages")),
    (
        "pip install",
        Deny("`pip install` needs one or more of: a pip requirement"),
    ),
    (
        "pip install -r requirements.txt",
        Deny("`-r` reads requirements from a file"),
    ),
    (
        "pip install git+https://example.invalid/x.git",
        Deny("is not a package requirement"),
    ),
    (
        "apt-get install Foo=1",
        Deny("is not a Debian package name"),
    ),
    ("apt-get update", Deny("`apt-get` manages packages")),
];

#[test]
fn every_command_gets_its_decision() {
    let dir = workspace();
    let policy = Policy::builtin().unwrap();
    let mut failures = Vec::new();
    for (command, want) in TABLE {
        let decision = policy.decide(command, dir.path());
        let got = render(&decision);
        let ok = match (want, &decision) {
            (Allow(expected), Decision::Allow(_))
            | (Intercept(expected), Decision::Intercept(_)) => got == *expected,
            (Deny(part), Decision::Deny(_)) => got.contains(part),
            _ => false,
        };
        if !ok {
            let wanted = match want {
                Allow(s) => format!("allow: {s}"),
                Intercept(s) => format!("intercept: {s}"),
                Deny(s) => format!("deny containing: {s}"),
            };
            failures.push(format!("{command:?}\n   want {wanted}\n   got  {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} commands decided wrongly:\n{}",
        failures.len(),
        TABLE.len(),
        failures.join("\n")
    );
}

#[test]
fn the_table_is_large_and_covers_each_decision() {
    let count = |f: fn(&Want) -> bool| TABLE.iter().filter(|(_, w)| f(w)).count();
    assert!(TABLE.len() >= 80, "{}", TABLE.len());
    assert!(count(|w| matches!(w, Allow(_))) >= 30);
    assert!(count(|w| matches!(w, Intercept(_))) >= 8);
    assert!(count(|w| matches!(w, Deny(_))) >= 80);
}

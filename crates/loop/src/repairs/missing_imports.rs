//! Adds the imports a script uses but forgot.
//!
//! The 1.5B model calls `sys.exit(1)` and `print(..., file=sys.stderr)` in scripts that never
//! `import sys`, and `pd.read_csv` in scripts that never import pandas. Python only notices
//! when that line runs, often in an error path no test reaches, so the user would be handed a
//! script that crashes with a `NameError`. A module name used only as `name.attribute` and never
//! bound otherwise can only mean the module, so the import is added at the top; the imports
//! then decide the packages the environment gets.

/// Names that are unambiguous as `name.attribute`, with the import that binds them
/// (`datetime` is not: it is also a class). `pd` and `np` are the aliases every pandas and
/// numpy user writes.
const MODULES: [(&str, &str); 16] = [
    ("argparse", "import argparse"),
    ("collections", "import collections"),
    ("csv", "import csv"),
    ("glob", "import glob"),
    ("io", "import io"),
    ("json", "import json"),
    ("math", "import math"),
    ("np", "import numpy as np"),
    ("os", "import os"),
    ("pathlib", "import pathlib"),
    ("pd", "import pandas as pd"),
    ("re", "import re"),
    ("shutil", "import shutil"),
    ("statistics", "import statistics"),
    ("sys", "import sys"),
    ("time", "import time"),
];

/// The script with the import added for each name of [`MODULES`] it uses as
/// `name.attribute` without binding the name anywhere else; `None` when none is missing.
pub(crate) fn add_missing_imports(code: &str) -> Option<String> {
    let code_only: String = code
        .lines()
        .map(|line| line.split('#').next().unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    let missing: Vec<&str> = MODULES
        .into_iter()
        .filter(|(name, _)| used_only_as_module(&code_only, name))
        .map(|(_, import)| import)
        .collect();
    if missing.is_empty() {
        return None;
    }
    let lines: Vec<&str> = code.split_inclusive('\n').collect();
    let at = insertion_line(&lines);
    let mut fixed = String::with_capacity(code.len() + 16 * missing.len());
    for line in &lines[..at] {
        fixed.push_str(line);
    }
    if at > 0 && !fixed.ends_with('\n') {
        fixed.push('\n');
    }
    for import in missing {
        fixed.push_str(import);
        fixed.push('\n');
    }
    for line in &lines[at..] {
        fixed.push_str(line);
    }
    Some(fixed)
}

/// Whether `name` occurs as a whole word, always followed by `.` and at least once.
fn used_only_as_module(code: &str, name: &str) -> bool {
    let mut used = false;
    for (start, _) in code.match_indices(name) {
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        let after = code[start + name.len()..].chars().next();
        if after.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if after != Some('.') {
            return false;
        }
        used = true;
    }
    used
}

/// Where the imports go: before the first top-level import, after any `from __future__`
/// import; with no import, after a leading shebang or coding line.
fn insertion_line(lines: &[&str]) -> usize {
    if let Some(last_future) = lines
        .iter()
        .rposition(|l| l.starts_with("from __future__ import"))
    {
        return last_future + 1;
    }
    if let Some(first) = lines
        .iter()
        .position(|l| l.starts_with("import ") || l.starts_with("from "))
    {
        return first;
    }
    lines
        .iter()
        .take_while(|l| l.starts_with("#!") || l.starts_with("# -*-"))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_used_but_not_imported_is_imported() {
        let code = "import csv\n\ndef main():\n    print('x', file=sys.stderr)\n    sys.exit(1)\n";
        assert_eq!(
            add_missing_imports(code).as_deref(),
            Some(
                "import sys\nimport csv\n\ndef main():\n    print('x', file=sys.stderr)\n    sys.exit(1)\n"
            )
        );
        let future = "from __future__ import annotations\nx = os.getcwd()";
        assert_eq!(
            add_missing_imports(future).as_deref(),
            Some("from __future__ import annotations\nimport os\nx = os.getcwd()")
        );
        assert_eq!(
            add_missing_imports("#!/usr/bin/env python3\nprint(math.pi)\n").as_deref(),
            Some("#!/usr/bin/env python3\nimport math\nprint(math.pi)\n")
        );
        assert_eq!(
            add_missing_imports("import os\ndf = pd.read_csv(os.sep)\n").as_deref(),
            Some("import pandas as pd\nimport os\ndf = pd.read_csv(os.sep)\n")
        );
    }

    #[test]
    fn a_bound_or_shadowed_name_is_left_alone() {
        for code in [
            "import sys\nsys.exit(0)\n",
            "import sys as system\nsys.exit(0)\n",
            "import pandas as pd\npd.read_csv('x')\n",
            "pd = load()\npd.x\n",
            "from os import path\nos.getcwd()\n",
            "for re in items:\n    re.x\n",
            "def f(json):\n    return json.loads('1')\n",
            "self.sys.exit()\n",
            "mysys.exit()\n",
            "# sys.exit() in a comment only\n",
            "",
        ] {
            assert_eq!(add_missing_imports(code), None, "{code:?}");
        }
    }
}

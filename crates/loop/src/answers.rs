//! What the model answers at each step, as Rust types: the JSON Schema each call asks for is
//! derived from them, and every answer is checked against them before the loop uses it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::protocol::Edit;
use crate::protocol::FailureKind;
use crate::protocol::FunctionPatch;

/// The `code` step's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CodeAnswer {
    /// The whole `solution.py`.
    pub code: String,
    /// pip distributions the script imports.
    pub packages: Vec<String>,
    /// Debian packages it needs.
    pub system_packages: Vec<String>,
}

/// The `tests` step's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestsAnswer {
    /// The whole `test_solution.py`.
    pub tests: String,
}

/// One failing test's diagnosis, as the model gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FailureVerdict {
    /// The test, as listed in the prompt.
    pub test_id: String,
    /// What is wrong.
    pub kind: FailureKind,
    /// The output lines, code and recomputation that show it.
    pub evidence: String,
    /// What must change.
    pub fix: String,
    /// Distributions to add (environment failures). Capped: a small model given an open list
    /// repeated `"none"` in it until the token limit.
    #[schemars(length(max = 5))]
    pub packages: Vec<String>,
}

/// The `diagnose` step's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiagnosisAnswer {
    /// One verdict per failing test.
    pub failures: Vec<FailureVerdict>,
}

/// The `fix_code` step's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CodeEditsAnswer {
    /// Exact replacements in the current script.
    #[serde(default)]
    pub edits: Vec<Edit>,
    /// The whole corrected script, asked for instead of edits when the script is short
    /// (small models copy a short script more reliably than an exact excerpt); null otherwise.
    #[serde(default)]
    pub code: Option<String>,
    /// The Markdown code blocks of an answer given in fences, in order (not part of the JSON
    /// answer): quoted lines and their corrections, changed functions, or a whole script.
    #[serde(skip)]
    #[schemars(skip)]
    pub blocks: Vec<String>,
    /// Distributions the changed script newly imports. (No free-text explanation is asked for:
    /// the diff says what changed, and small models loop inside such a field to the token limit.)
    pub packages: Vec<String>,
}

/// The `fix_tests` step's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestPatchesAnswer {
    /// New versions of the failing test functions.
    pub functions: Vec<FunctionPatch>,
    /// Import lines they need.
    pub imports: Vec<String>,
}

/// The `replace_package` step's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReplacementAnswer {
    /// The distribution to install instead, or null to drop the import.
    pub replacement: Option<String>,
    /// One sentence.
    pub reason: String,
}

/// The `replace_system_package` step's answer.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SystemReplacementAnswer {
    /// The Debian package to install instead, or null when none is needed.
    pub replacement: Option<String>,
    /// One sentence.
    pub reason: String,
}

/// Removes a Markdown code fence around code (models put them inside JSON strings too).
/// Only a fence that wraps the whole text is removed; fences inside the code stay.
pub fn strip_code_fence(text: &str) -> String {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return text.to_owned();
    };
    let Some((_language, body)) = rest.split_once('\n') else {
        return text.to_owned();
    };
    let body = body.trim_end();
    match body.strip_suffix("```") {
        Some(inner) => {
            let mut code = inner.trim_end().to_owned();
            code.push('\n');
            code
        }
        None => text.to_owned(),
    }
}

/// The first complete Markdown code block of an answer (one tagged `python` or `py` is preferred
/// to an untagged one), without its fences; `None` when no block is closed, which is how an
/// answer cut at the token limit looks.
pub fn fenced_block(text: &str) -> Option<String> {
    let blocks = closed_blocks(text);
    let pick = blocks.iter().position(|(tagged, _)| *tagged).unwrap_or(0);
    blocks
        .into_iter()
        .nth(pick)
        .map(|(_, body)| body)
        .filter(|body| !body.trim().is_empty())
}

/// Every complete, non-empty Python (or untagged) Markdown block of an answer, in order.
pub fn fenced_blocks(text: &str) -> Vec<String> {
    closed_blocks(text)
        .into_iter()
        .map(|(_, body)| body)
        .filter(|body| !body.trim().is_empty())
        .collect()
}

/// The closed Python or untagged blocks, each with whether it was tagged; blocks in another
/// language are skipped.
fn closed_blocks(text: &str) -> Vec<(bool, String)> {
    // Each open block remembers whether it is kept (`Some(tagged)`) or a
    // block in another language that is only skipped (`None`).
    let mut blocks: Vec<(bool, String)> = Vec::new();
    let mut open: Option<(Option<bool>, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        match open.take() {
            None => {
                if let Some(tag) = trimmed.strip_prefix("```") {
                    let tag = tag.trim().to_ascii_lowercase();
                    let kept = matches!(tag.as_str(), "" | "python" | "py" | "python3")
                        .then_some(!tag.is_empty());
                    open = Some((kept, String::new()));
                }
            }
            Some((kept, body)) if trimmed == "```" => {
                if let Some(tagged) = kept {
                    blocks.push((tagged, body));
                }
            }
            Some((kept, mut body)) => {
                body.push_str(line);
                body.push('\n');
                open = Some((kept, body));
            }
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_names_at_most_five_packages() {
        let (_, schema) = autocoder_llm::strict_schema_for::<DiagnosisAnswer>();
        let packages = &schema["$defs"]["FailureVerdict"]["properties"]["packages"];
        assert_eq!(packages["maxItems"], 5, "{packages}");
    }

    #[test]
    fn the_first_python_block_is_taken_and_a_cut_block_is_none() {
        let answer =
            "Here it is:\n```\nnot this\n```\n```python\nimport sys\n\nprint(\"a\")\n```\nDone.";
        assert_eq!(
            fenced_block(answer).as_deref(),
            Some("import sys\n\nprint(\"a\")\n")
        );
        assert_eq!(fenced_block("```\nx = 1\n```").as_deref(), Some("x = 1\n"));
        assert_eq!(fenced_block("```python\nimport sys\nprint(sys.argv"), None);
        assert_eq!(fenced_block("import sys"), None);
        assert_eq!(fenced_block("```python\n```"), None);
        assert_eq!(
            fenced_block("```json\n{}\n```\n```py\nx = 2\n```").as_deref(),
            Some("x = 2\n")
        );
    }

    #[test]
    fn a_wrapping_fence_is_removed_and_inner_fences_kept() {
        assert_eq!(strip_code_fence("```python\nprint(1)\n```"), "print(1)\n");
        assert_eq!(strip_code_fence("  ```\nx = 1\n```  \n"), "x = 1\n");
        let inner = "doc = '''\n```sh\nls\n```\n'''\n";
        assert_eq!(strip_code_fence(inner), inner);
        assert_eq!(
            strip_code_fence("```python\nunterminated"),
            "```python\nunterminated"
        );
    }

    #[test]
    fn answer_schemas_name_every_field() {
        let schema = serde_json::to_value(schemars::schema_for!(DiagnosisAnswer)).unwrap();
        let text = schema.to_string();
        for field in [
            "test_id",
            "kind",
            "evidence",
            "fix",
            "packages",
            "test_error",
        ] {
            assert!(text.contains(field), "{field} missing from {text}");
        }
    }
}

//! The names of the prompt texts this crate adds to conversations: templates under
//! `templates/llm/`, rendered through the client's [`autocoder_prompts::Prompts`] (so a user's
//! `--prompts-dir` reaches them too).

/// Asks the model to fix an answer that did not parse.
pub(crate) const JSON_REPAIR: &str = "llm/json_repair.j2";
/// Puts the schema into the prompt, for servers without schema support.
pub(crate) const SCHEMA_INSTRUCTION: &str = "llm/schema_instruction.j2";
/// Tells the model why the caller rejected its answer.
pub(crate) const VALIDATION_RETRY: &str = "llm/validation_retry.j2";
/// The description of the forced tool that carries a structured answer.
pub(crate) const STRUCTURED_TOOL: &str = "llm/structured_tool.j2";

#[cfg(test)]
mod tests {
    use autocoder_prompts::Prompts;
    use serde_json::json;

    use super::*;

    #[test]
    fn rendered_prompts() {
        let prompts = Prompts::embedded().unwrap();
        let render = |name, context| prompts.render(name, context).unwrap();
        let repair = render(
            JSON_REPAIR,
            json!({"error": "EOF while parsing a string at line 1 column 15", "truncated": true}),
        );
        insta::assert_snapshot!("json_repair_truncated", repair);
        let repair = render(
            JSON_REPAIR,
            json!({"error": "expected `,` or `}` at line 1 column 9", "truncated": false}),
        );
        insta::assert_snapshot!("json_repair", repair);
        let schema = render(
            SCHEMA_INSTRUCTION,
            json!({"schema": "{\n  \"type\": \"object\"\n}"}),
        );
        insta::assert_snapshot!("schema_instruction", schema);
        let retry = render(
            VALIDATION_RETRY,
            json!({"reason": "column `price` does not exist"}),
        );
        insta::assert_snapshot!("validation_retry", retry);
        let tool = render(STRUCTURED_TOOL, json!({"name": "Plan"}));
        insta::assert_snapshot!("structured_tool", tool);
    }
}

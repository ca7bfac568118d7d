//! The prompt texts this crate adds to conversations, rendered from `templates/llm/`.

use minijinja::{Environment, Value};

use crate::LlmError;

/// Asks the model to fix an answer that did not parse.
pub(crate) const JSON_REPAIR: &str = "json_repair.j2";
/// Puts the schema into the prompt, for servers without schema support.
pub(crate) const SCHEMA_INSTRUCTION: &str = "schema_instruction.j2";
/// Tells the model why the caller rejected its answer.
pub(crate) const VALIDATION_RETRY: &str = "validation_retry.j2";
/// The description of the forced tool that carries a structured answer.
pub(crate) const STRUCTURED_TOOL: &str = "structured_tool.j2";

const SOURCES: [(&str, &str); 4] = [
    (
        STRUCTURED_TOOL,
        include_str!("../../../templates/llm/structured_tool.j2"),
    ),
    (
        JSON_REPAIR,
        include_str!("../../../templates/llm/json_repair.j2"),
    ),
    (
        SCHEMA_INSTRUCTION,
        include_str!("../../../templates/llm/schema_instruction.j2"),
    ),
    (
        VALIDATION_RETRY,
        include_str!("../../../templates/llm/validation_retry.j2"),
    ),
];

pub(crate) fn render(name: &'static str, context: Value) -> Result<String, LlmError> {
    let mut env = Environment::new();
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .build()
        .map_err(|source| LlmError::Template { name, source })?;
    env.set_syntax(syntax);
    for (file, source) in SOURCES {
        env.add_template(file, source)
            .map_err(|source| LlmError::Template { name: file, source })?;
    }
    env.get_template(name)
        .and_then(|template| template.render(context))
        .map_err(|source| LlmError::Template { name, source })
}

#[cfg(test)]
mod tests {
    use minijinja::context;

    use super::*;

    #[test]
    fn rendered_prompts() {
        let repair = render(
            JSON_REPAIR,
            context! { error => "EOF while parsing a string at line 1 column 15", truncated => true },
        )
        .unwrap();
        insta::assert_snapshot!("json_repair_truncated", repair);
        let repair = render(
            JSON_REPAIR,
            context! { error => "expected `,` or `}` at line 1 column 9", truncated => false },
        )
        .unwrap();
        insta::assert_snapshot!("json_repair", repair);
        let schema = render(
            SCHEMA_INSTRUCTION,
            context! { schema => "{\n  \"type\": \"object\"\n}" },
        )
        .unwrap();
        insta::assert_snapshot!("schema_instruction", schema);
        let retry = render(
            VALIDATION_RETRY,
            context! { reason => "column `price` does not exist" },
        )
        .unwrap();
        insta::assert_snapshot!("validation_retry", retry);
        let tool = render(STRUCTURED_TOOL, context! { name => "Plan" }).unwrap();
        insta::assert_snapshot!("structured_tool", tool);
    }
}

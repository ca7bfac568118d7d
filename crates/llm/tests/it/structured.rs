//! Typed structured output in each mode, fence stripping, repair, validation.

use autocoder_llm::{CallParams, LlmError, Message, StructuredMode};
use autocoder_testkit::{Entry, Reply};
use serde::Deserialize;
use serde_json::json;

use crate::support::{client, config, server};

#[derive(Debug, Deserialize, schemars::JsonSchema, PartialEq)]
struct Plan {
    steps: Vec<String>,
    packages: Vec<String>,
    note: Option<String>,
}

fn plan_json() -> serde_json::Value {
    json!({"steps": ["read", "sum"], "packages": ["pandas"], "note": null})
}

fn expected() -> Plan {
    Plan {
        steps: vec!["read".into(), "sum".into()],
        packages: vec!["pandas".into()],
        note: None,
    }
}

#[tokio::test]
async fn openai_json_schema_strict() {
    let server = server(vec![Entry {
        schema: Some("Plan".into()),
        ..Entry::step("plan", Reply::Json(plan_json()))
    }])
    .await;
    let client = client(config(&server, "openai/gpt-4.1"));
    let plan = client
        .structured::<Plan>("plan", &[Message::user("Plan it.")])
        .await
        .unwrap();
    assert_eq!(plan.value, expected());
    assert_eq!(plan.calls, 1);
    let body = &server.requests()[0].body;
    let format = &body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "Plan");
    assert_eq!(format["json_schema"]["strict"], true);
    let schema = &format["json_schema"]["schema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["note", "packages", "steps"]));
}

#[tokio::test]
async fn anthropic_forced_tool_call() {
    let server = server(vec![Entry {
        schema: Some("Plan".into()),
        ..Entry::step("plan", Reply::Json(plan_json()))
    }])
    .await;
    let client = client(config(&server, "anthropic/claude-sonnet-4-5"));
    assert_eq!(client.structured_mode(), StructuredMode::Tool);
    let plan = client
        .structured::<Plan>("plan", &[Message::user("Plan it.")])
        .await
        .unwrap();
    assert_eq!(plan.value, expected());
    let body = &server.requests()[0].body;
    assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "Plan"}));
    assert_eq!(
        body["tools"][0]["input_schema"]["additionalProperties"],
        false
    );
}

#[tokio::test]
async fn openai_tool_mode_and_json_mode() {
    let server = server(vec![
        Entry::step("tool", Reply::Json(plan_json())),
        Entry::step("jsonmode", Reply::Json(plan_json())),
    ])
    .await;
    let mut tool_config = config(&server, "openai/gpt-4.1");
    tool_config.structured_mode = StructuredMode::Tool;
    let plan = client(tool_config)
        .structured::<Plan>("tool", &[Message::user("Plan it.")])
        .await
        .unwrap();
    assert_eq!(plan.value, expected());

    let mut json_config = config(&server, "openai/gpt-4.1");
    json_config.structured_mode = StructuredMode::JsonMode;
    let plan = client(json_config)
        .structured::<Plan>(
            "jsonmode",
            &[Message::system("You plan."), Message::user("Plan it.")],
        )
        .await
        .unwrap();
    assert_eq!(plan.value, expected());

    let requests = server.requests();
    assert_eq!(
        requests[0].body["tool_choice"],
        json!({"type": "function", "function": {"name": "Plan"}})
    );
    let body = &requests[1].body;
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You plan.\n\n"), "{system}");
    assert!(
        system.contains("\"additionalProperties\": false"),
        "the schema is in the prompt: {system}"
    );
}

#[tokio::test]
async fn fenced_answer_with_backticks_inside_strings_parses() {
    let answer = "Sure, here you go:\n```json\n{\"steps\": [\"write ```python``` block\"], \"packages\": [], \"note\": \"```\"}\n```\nAnything else?";
    let server = server(vec![Entry::step("plan", Reply::Text(answer.into()))]).await;
    let client = client(config(&server, "openai/gpt-4.1"));
    let plan = client
        .structured::<Plan>("plan", &[Message::user("Plan it.")])
        .await
        .unwrap();
    assert_eq!(
        plan.value.steps,
        vec!["write ```python``` block".to_owned()]
    );
    assert_eq!(plan.value.note.as_deref(), Some("```"));
    assert_eq!(server.requests().len(), 1, "no repair needed");
}

#[tokio::test]
async fn invalid_json_gets_one_repair_that_quotes_the_error() {
    let server = server(vec![
        Entry::step("plan", Reply::Text("{\"steps\": [\"read\",], }".into())),
        Entry::step("plan/repair", Reply::Json(plan_json())),
    ])
    .await;
    let client = client(config(&server, "openai/gpt-4.1"));
    let plan = client
        .structured::<Plan>("plan", &[Message::user("Plan it.")])
        .await
        .unwrap();
    assert_eq!(plan.value, expected());
    assert_eq!(plan.calls, 2);
    assert_eq!(plan.usage.input_tokens, 20, "usage summed over both calls");
    let repair = &server.requests()[1].body;
    let messages = repair["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["content"], "{\"steps\": [\"read\",], }");
    let quoted = messages[2]["content"].as_str().unwrap();
    assert!(
        quoted.contains("line 1 column"),
        "the parse error is quoted: {quoted}"
    );
    assert!(
        repair["response_format"].is_object(),
        "the repair keeps the schema"
    );
}

#[tokio::test]
async fn wrong_types_get_a_repair_naming_the_field() {
    let server = server(vec![
        Entry::step(
            "plan",
            Reply::Json(json!({"steps": "read", "packages": [], "note": null})),
        ),
        Entry::step("plan/repair", Reply::Json(plan_json())),
    ])
    .await;
    let client = client(config(&server, "openai/gpt-4.1"));
    client
        .structured::<Plan>("plan", &[Message::user("Plan it.")])
        .await
        .unwrap();
    let quoted = server.requests()[1].body["messages"][2]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        quoted.contains("invalid type: string \"read\", expected a sequence"),
        "{quoted}"
    );
}

#[tokio::test]
async fn truncated_json_twice_is_a_typed_error() {
    let truncated = || Reply::Truncated {
        json: plan_json(),
        keep_chars: 15,
    };
    let server = server(vec![
        Entry::step("plan", truncated()),
        Entry::step("plan/repair", truncated()),
    ])
    .await;
    let client = client(config(&server, "anthropic/claude-sonnet-4-5"));
    let error = client
        .structured::<Plan>("plan", &[Message::user("Plan it.")])
        .await
        .unwrap_err();
    match &error {
        LlmError::InvalidStructuredOutput { step, error, raw } => {
            assert_eq!(step, "plan");
            assert!(error.contains("cut off at the token limit"), "{error}");
            assert_eq!(raw, &plan_json().to_string()[..15]);
        }
        other => panic!("unexpected error {other:?}"),
    }
    let repair = server.requests()[1].body["messages"][2]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(repair.contains("cut off at the token limit"), "{repair}");
    assert_eq!(server.requests().len(), 2, "exactly one repair round trip");
}

#[tokio::test]
async fn validation_rejection_gets_one_retry_quoting_the_reason() {
    let server = server(vec![
        Entry::step(
            "plan",
            Reply::Json(json!({"steps": [], "packages": [], "note": null})),
        ),
        Entry::step("plan/retry", Reply::Json(plan_json())),
        Entry::step(
            "again",
            Reply::Json(json!({"steps": [], "packages": [], "note": null})),
        ),
        Entry::step(
            "again/retry",
            Reply::Json(json!({"steps": [], "packages": [], "note": null})),
        ),
    ])
    .await;
    let client = client(config(&server, "openai/gpt-4.1"));
    let not_empty = |plan: &Plan| {
        if plan.steps.is_empty() {
            Err("`steps` must not be empty".to_owned())
        } else {
            Ok(())
        }
    };
    let plan = client
        .structured_validated::<Plan>("plan", &[Message::user("Plan it.")], not_empty)
        .await
        .unwrap();
    assert_eq!(plan.value, expected());
    let retry = server.requests()[1].body["messages"][2]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(retry.contains("`steps` must not be empty"), "{retry}");

    let error = client
        .structured_validated::<Plan>("again", &[Message::user("Plan it.")], not_empty)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::Rejected { step, reason, .. } if step == "again" && reason.contains("must not be empty")),
        "{error:?}"
    );
}

#[tokio::test]
async fn overrides_cannot_switch_off_structured_output() {
    let server = server(vec![Entry::step("plan", Reply::Json(plan_json()))]).await;
    let client = client(config(&server, "openai/gpt-4.1"));
    let overrides = CallParams {
        temperature: Some(0.0),
        max_tokens: Some(300),
        ..CallParams::default()
    };
    client
        .structured_with::<Plan>("plan", &[Message::user("Plan it.")], &overrides)
        .await
        .unwrap();
    let body = &server.requests()[0].body;
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(body["max_tokens"], 300);
    assert_eq!(body["response_format"]["type"], "json_schema");
}

#[tokio::test]
async fn a_users_template_override_words_the_repair_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("llm")).unwrap();
    std::fs::write(
        dir.path().join("llm/json_repair.j2"),
        "FIX IT ({{ truncated }}): {{ error }}",
    )
    .unwrap();
    let server = server(vec![
        Entry::step("plan", Reply::Text("{\"steps\": [".into())),
        Entry::step("plan/repair", Reply::Json(plan_json())),
    ])
    .await;
    let mut config = config(&server, "openai/gpt-4.1");
    config.prompts_dir = Some(dir.path().to_owned());
    let client = client(config);
    client
        .structured::<Plan>("plan", &[Message::user("Plan it.")])
        .await
        .unwrap();
    let repair = &server.requests()[1].body;
    let sent = repair["messages"][2]["content"].as_str().unwrap();
    assert!(sent.starts_with("FIX IT (False): "), "{sent}");
}

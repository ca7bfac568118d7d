//! Plain chat and tool calls in both wire formats.

use autocoder_llm::{CallParams, FinishReason, Message, ToolChoice, ToolSpec};
use autocoder_testkit::{Entry, Reply, ScriptToolCall, WireFormat};
use serde_json::json;

use crate::support::{SECRET, client, config, server};

#[tokio::test]
async fn openai_chat_sends_params_step_and_key() {
    let server = server(vec![
        Entry::step("greet", Reply::Text("Hello!".into())).with_usage(12, 3),
    ])
    .await;
    let mut config = config(&server, "openai/gpt-4.1");
    config.params.temperature = Some(0.9);
    config.params.max_tokens = Some(100);
    config.params.frequency_penalty = Some(0.3);
    config.forced_params.temperature = Some(0.2);
    let client = client(config);
    let overrides = CallParams {
        temperature: Some(0.5),
        max_tokens: Some(50),
        seed: Some(7),
        stop: vec!["END".into()],
        ..CallParams::default()
    };
    let completion = client
        .chat(
            "greet",
            &[Message::system("Be brief."), Message::user("Hi")],
            &overrides,
        )
        .await
        .unwrap();
    assert_eq!(completion.text, "Hello!");
    assert_eq!(completion.finish_reason, FinishReason::Stop);
    assert_eq!(
        (
            completion.usage.input_tokens,
            completion.usage.output_tokens
        ),
        (12, 3)
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.step.as_deref(), Some("greet"));
    assert_eq!(request.headers["authorization"], "[redacted]");
    let body = &request.body;
    assert_eq!(body["model"], "gpt-4.1");
    assert_eq!(body["temperature"], 0.2, "the user's pinned value wins");
    assert_eq!(body["max_tokens"], 50, "the per-call override wins");
    assert_eq!(body["seed"], 7);
    assert_eq!(body["frequency_penalty"], 0.3);
    assert!(body.get("presence_penalty").is_none());
    assert_eq!(body["stop"], json!(["END"]));
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    );
    assert!(!body.to_string().contains(SECRET));
}

#[tokio::test]
async fn extra_parameters_go_into_the_body_under_the_calls_own_fields() {
    for model in ["openai/gpt-4.1", "anthropic/claude-sonnet-4-5"] {
        let server = server(vec![Entry::step("greet", Reply::Text("Hi".into()))]).await;
        let mut config = config(&server, model);
        for (key, value) in [
            ("reasoning_effort", json!("high")),
            ("top_k", json!(40)),
            ("temperature", json!(0.7)),
            ("stop", json!(["NEVER"])),
            ("model", json!("not-this-one")),
        ] {
            config.extra_body.insert(key.to_owned(), value);
        }
        let overrides = CallParams {
            stop: vec!["END".into()],
            ..CallParams::default()
        };
        client(config)
            .chat("greet", &[Message::user("Hi")], &overrides)
            .await
            .unwrap();
        let body = &server.requests()[0].body;
        assert_eq!(body["reasoning_effort"], "high", "{model}");
        assert_eq!(body["top_k"], 40, "{model}");
        assert_eq!(
            body["temperature"], 0.7,
            "no call value: the extra one is sent"
        );
        let stop = if model.starts_with("openai") {
            &body["stop"]
        } else {
            &body["stop_sequences"]
        };
        assert_eq!(stop, &json!(["END"]), "{model}: the call's own value wins");
        assert_ne!(body["model"], "not-this-one", "{model}");
    }
}

#[tokio::test]
async fn anthropic_chat_uses_messages_api() {
    let server = server(vec![
        Entry::step("greet", Reply::Text("Hi there".into())).with_usage(20, 4),
    ])
    .await;
    let client = client(config(&server, "anthropic/claude-sonnet-4-5"));
    let completion = client
        .chat(
            "greet",
            &[Message::system("Be brief."), Message::user("Hi")],
            &CallParams::default(),
        )
        .await
        .unwrap();
    assert_eq!(completion.text, "Hi there");
    assert_eq!(completion.usage.input_tokens, 20);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.format, Some(WireFormat::Anthropic));
    assert_eq!(request.headers["x-api-key"], "[redacted]");
    assert_eq!(request.headers["anthropic-version"], "2023-06-01");
    // The system prompt, shared by every call of a run, is a cache breakpoint; a one-turn
    // prompt is not.
    assert_eq!(
        request.body["system"],
        json!([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(request.body["max_tokens"], 4096);
    assert_eq!(
        request.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Hi"}]}])
    );
}

fn run_tool() -> ToolSpec {
    ToolSpec {
        name: "run_python".into(),
        description: "Runs Python code and returns its output.".into(),
        parameters: json!({"type": "object", "properties": {"code": {"type": "string"}},
                           "required": ["code"], "additionalProperties": false}),
    }
}

/// The model calls a tool, we answer with its result, the model replies: in both formats the
/// call and its result go back on the wire in the provider's own shape.
#[tokio::test]
async fn tool_calls_round_trip_in_both_formats() {
    for model in ["openai/gpt-4.1", "anthropic/claude-sonnet-4-5"] {
        let server = server(vec![
            Entry {
                tool: Some("run_python".into()),
                ..Entry::step(
                    "agent",
                    Reply::ToolCalls(vec![ScriptToolCall {
                        id: Some("call_1".into()),
                        name: "run_python".into(),
                        arguments: json!({"code": "print(6*7)"}),
                    }]),
                )
            },
            Entry::step("agent", Reply::Text("The answer is 42.".into())),
        ])
        .await;
        let client = client(config(&server, model));
        let tools = [run_tool()];
        let mut messages = vec![Message::user("What is 6*7? Use the tool.")];
        let first = client
            .chat_with_tools(
                "agent",
                &messages,
                &tools,
                ToolChoice::Auto,
                &CallParams::default(),
            )
            .await
            .unwrap();
        assert_eq!(first.finish_reason, FinishReason::ToolCalls, "{model}");
        assert_eq!(first.tool_calls.len(), 1);
        let call = &first.tool_calls[0];
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            ("call_1", "run_python")
        );
        assert_eq!(call.arguments, json!({"code": "print(6*7)"}));

        messages.push(Message::assistant_tool_calls("", first.tool_calls.clone()));
        messages.push(Message::tool_result("call_1", "42\n"));
        let second = client
            .chat_with_tools(
                "agent",
                &messages,
                &tools,
                ToolChoice::Auto,
                &CallParams::default(),
            )
            .await
            .unwrap();
        assert_eq!(second.text, "The answer is 42.");

        let body = &server.requests()[1].body;
        if model.starts_with("openai") {
            assert_eq!(body["tools"][0]["function"]["name"], "run_python");
            assert_eq!(body["tool_choice"], "auto");
            assert_eq!(
                body["messages"][1]["tool_calls"][0],
                json!({"id": "call_1", "type": "function",
                       "function": {"name": "run_python", "arguments": "{\"code\":\"print(6*7)\"}"}})
            );
            assert_eq!(
                body["messages"][2],
                json!({"role": "tool", "tool_call_id": "call_1", "content": "42\n"})
            );
        } else {
            assert_eq!(
                body["tools"][0]["input_schema"]["required"],
                json!(["code"])
            );
            assert_eq!(body["tool_choice"], json!({"type": "auto"}));
            assert_eq!(
                body["messages"][1]["content"][0],
                json!({"type": "tool_use", "id": "call_1", "name": "run_python",
                       "input": {"code": "print(6*7)"}})
            );
            assert_eq!(
                body["messages"][2],
                json!({"role": "user", "content": [{"type": "tool_result",
                       "tool_use_id": "call_1", "content": "42\n",
                       "cache_control": {"type": "ephemeral"}}]})
            );
        }
    }
}

#[tokio::test]
async fn unmatched_request_fails_with_what_was_expected() {
    let server = server(vec![Entry::step("plan", Reply::Text("x".into()))]).await;
    let client = client(config(&server, "openai/gpt-4.1"));
    let error = client
        .chat("code", &[Message::user("hi")], &CallParams::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("HTTP 400"), "{error}");
    assert!(error.contains("step=code"), "{error}");
    assert!(error.contains("[step=plan]"), "{error}");
}

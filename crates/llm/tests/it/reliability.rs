//! Retries, authentication errors, missing keys, timeouts, cancellation and accounting.

use std::time::Duration;

use autocoder_llm::{CallParams, LlmClient, LlmConfig, LlmError, Message, ModelSpec};
use autocoder_testkit::{Entry, Reply};
use serde_json::Value;

use crate::support::{SECRET, client, config, server};

fn http_error(status: u16, retry_after: Option<u64>) -> Reply {
    Reply::HttpError {
        status,
        retry_after,
        message: format!("scripted {status}"),
    }
}

fn log_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn retries_429_honouring_retry_after_then_500_then_malformed_body() {
    let server = server(vec![
        Entry::step("code", http_error(429, Some(1))),
        Entry::step("code", http_error(500, None)),
        Entry::step(
            "code",
            Reply::MalformedBody("<html>502 Bad Gateway</html>".into()),
        ),
        Entry::step("code", Reply::Text("print(1)".into())),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("conversation.jsonl");
    let mut config = config(&server, "openai/gpt-4.1");
    config.conversation_log = Some(log.clone());
    let client = client(config);
    let completion = client
        .chat(
            "code",
            &[Message::user("write code")],
            &CallParams::default(),
        )
        .await
        .unwrap();
    assert_eq!(completion.text, "print(1)");
    assert_eq!(server.requests().len(), 4);
    let totals = client.usage_total();
    assert_eq!((totals.calls, totals.retries), (1, 3));

    let lines = log_lines(&log);
    let statuses: Vec<Value> = lines.iter().map(|line| line["status"].clone()).collect();
    assert_eq!(statuses, [429, 500, 200, 200].map(Value::from));
    assert!(
        lines[1]["waited_before_ms"].as_u64().unwrap() >= 1000,
        "Retry-After: 1 is honoured: {}",
        lines[1]
    );
    assert!(
        lines[2]["waited_before_ms"].as_u64().unwrap() <= 20,
        "backoff without Retry-After is the configured one"
    );
}

#[tokio::test]
async fn retries_run_out_with_the_last_status() {
    let server = server(vec![
        Entry::step("code", http_error(503, None)),
        Entry::step("code", http_error(503, None)),
        Entry::step("code", http_error(503, None)),
        Entry::step("code", http_error(503, None)),
    ])
    .await;
    let client = client(config(&server, "anthropic/claude-sonnet-4-5"));
    let error = client
        .chat(
            "code",
            &[Message::user("write code")],
            &CallParams::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::Api { status: 503, attempts: 4, step, message } if step == "code" && message == "scripted 503"),
        "{error:?}"
    );
    assert!(error.is_transient());
}

#[tokio::test]
async fn no_retry_on_401_and_the_error_names_the_variable() {
    let server = server(vec![
        Entry::step(
            "plan",
            Reply::HttpError {
                status: 401,
                retry_after: None,
                message: format!("Incorrect API key provided: {SECRET}"),
            },
        ),
        Entry::step("plan", Reply::Text("never sent".into())),
    ])
    .await;
    let mut config = config(&server, "openai/gpt-4.1");
    config.api_key_env = Some("MY_TEAM_OPENAI_KEY".into());
    let client = client(config);
    let error = client
        .chat("plan", &[Message::user("hi")], &CallParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Auth { status: 401, .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("environment variable MY_TEAM_OPENAI_KEY"),
        "{message}"
    );
    assert!(!message.contains(SECRET), "the key is redacted: {message}");
    assert_eq!(server.requests().len(), 1, "no retry");
}

#[test]
fn missing_key_names_the_variable() {
    let config = LlmConfig::new(ModelSpec::parse("anthropic/claude-sonnet-4-5").unwrap());
    let error = LlmClient::new_with_env(config, |_| None).err().unwrap();
    assert!(
        matches!(&error, LlmError::MissingApiKey { env_var, .. } if env_var == "ANTHROPIC_API_KEY")
    );

    let mut config = LlmConfig::new(ModelSpec::parse("gpt-4.1").unwrap());
    config.api_key_env = Some("AUTOCODER_TEST_SURELY_UNSET_KEY_VARIABLE".into());
    let message = LlmClient::new(config).err().unwrap().to_string();
    assert!(
        message.contains("set the environment variable AUTOCODER_TEST_SURELY_UNSET_KEY_VARIABLE"),
        "{message}"
    );

    let mut local = LlmConfig::new(ModelSpec::parse("openai/qwen2.5-coder").unwrap());
    local.api_base = Some("http://127.0.0.1:9/v1".into());
    assert!(
        LlmClient::new_with_env(local, |_| None).is_ok(),
        "a custom base needs no key"
    );
    let ollama = LlmConfig::new(ModelSpec::parse("ollama/qwen2.5-coder").unwrap());
    assert!(LlmClient::new_with_env(ollama, |_| None).is_ok());
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut config = LlmConfig::new(ModelSpec::parse("openai/gpt-4.1").unwrap());
    config.api_base = Some(format!("http://127.0.0.1:{port}/v1"));
    config.retry.max_retries = 2;
    config.retry.initial_backoff = Duration::from_millis(5);
    let client = LlmClient::new_with_env(config, |_| None).unwrap();
    let error = client
        .chat("plan", &[Message::user("hi")], &CallParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Transport { attempts: 3, .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(&format!("127.0.0.1:{port}")),
        "{error}"
    );
}

#[tokio::test]
async fn a_slow_answer_hits_the_total_timeout() {
    let server = server(vec![
        Entry::step("plan", Reply::Text("late".into())).with_delay_ms(2_000),
        Entry::step("plan", Reply::Text("on time".into())),
    ])
    .await;
    let mut config = config(&server, "openai/gpt-4.1");
    config.timeouts.total = Duration::from_millis(200);
    config.retry.max_retries = 1;
    let client = client(config);
    let completion = client
        .chat("plan", &[Message::user("hi")], &CallParams::default())
        .await
        .unwrap();
    assert_eq!(
        completion.text, "on time",
        "the timed-out attempt is retried"
    );
    assert_eq!(client.usage_total().retries, 1);
}

#[tokio::test]
async fn cancellation_stops_a_call_in_flight() {
    let server = server(vec![
        Entry::step("plan", Reply::Text("late".into())).with_delay_ms(5_000),
    ])
    .await;
    let client = client(config(&server, "openai/gpt-4.1"));
    let token = client.cancellation_token();
    let call = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .chat("plan", &[Message::user("hi")], &CallParams::default())
                .await
        })
    };
    while server.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    token.cancel();
    let error = call.await.unwrap().unwrap_err();
    assert!(
        matches!(&error, LlmError::Cancelled { step } if step == "plan"),
        "{error:?}"
    );
}

#[tokio::test]
async fn token_totals_add_up_over_calls() {
    let server = server(vec![
        Entry::step("a", Reply::Text("1".into())).with_usage(100, 10),
        Entry::step("b", Reply::Text("2".into())).with_usage(200, 20),
        Entry::step("c", Reply::Text("3".into())).with_usage(300, 30),
    ])
    .await;
    let client = client(config(&server, "anthropic/claude-sonnet-4-5"));
    for step in ["a", "b", "c"] {
        client
            .chat(step, &[Message::user("hi")], &CallParams::default())
            .await
            .unwrap();
    }
    let totals = client.usage_total();
    assert_eq!(totals.calls, 3);
    assert_eq!(
        (totals.usage.input_tokens, totals.usage.output_tokens),
        (600, 60)
    );
    assert!(totals.latency > Duration::ZERO);
    let steps: Vec<_> = server
        .requests()
        .into_iter()
        .map(|r| r.step.unwrap())
        .collect();
    assert_eq!(steps, ["a", "b", "c"], "no call repeated");
    let by_step = client.usage_by_step();
    assert_eq!(by_step["b"].usage.input_tokens, 200);
    assert_eq!(by_step["c"].calls, 1);
}

/// The futures can move between threads (the loop spawns them).
#[test]
fn call_futures_are_send() {
    fn assert_send<F: std::future::Future + Send>(_: F) {}
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Small {
        ok: bool,
    }
    let mut config = LlmConfig::new(ModelSpec::parse("ollama/qwen2.5-coder").unwrap());
    config.api_base = Some("http://127.0.0.1:9/v1".into());
    let client = LlmClient::new_with_env(config, |_| None).unwrap();
    let messages = [Message::user("hi")];
    assert_send(client.chat("a", &messages, &CallParams::default()));
    assert_send(client.structured::<Small>("b", &messages));
    assert_send(
        client.structured_validated::<Small>("c", &messages, |small| {
            small.ok.then_some(()).ok_or_else(|| "not ok".to_owned())
        }),
    );
}

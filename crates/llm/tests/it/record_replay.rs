//! Conversation log, record, replay without network, divergence, and keys kept out of files.

use autocoder_llm::{CallParams, LlmClient, LlmError, Message};
use autocoder_testkit::{Entry, Reply};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::{SECRET, client, config, server};

#[derive(Debug, Deserialize, schemars::JsonSchema, PartialEq)]
struct Answer {
    total: f64,
}

fn script() -> Vec<Entry> {
    vec![
        Entry::step(
            "plan",
            Reply::Text("Read the CSV, sum price*quantity.".into()),
        )
        .with_usage(50, 9),
        Entry::step(
            "code",
            Reply::Text("```json\n{\"total\": 26.0,}\n```".into()),
        ),
        Entry::step("code/repair", Reply::Json(json!({"total": 26.0}))).with_usage(70, 6),
    ]
}

async fn run(client: &LlmClient) -> Result<(String, Answer), LlmError> {
    let mut messages = vec![
        Message::system("You write Python."),
        Message::user("Sum the sales."),
    ];
    let plan = client
        .chat("plan", &messages, &CallParams::default())
        .await?;
    messages.push(Message::assistant(plan.text.clone()));
    messages.push(Message::user("Now the total as JSON."));
    let answer = client.structured::<Answer>("code", &messages).await?;
    Ok((plan.text, answer.value))
}

fn read_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn record_then_replay_offline_and_the_log_has_the_full_exchange() {
    let scripted = server(script()).await;
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("run.cassette.jsonl");
    let log = dir.path().join("logs/conversation.jsonl");
    std::fs::write(&recording, "stale line of an older recording\n").unwrap();
    let mut recording_config = config(&scripted, "openai/gpt-4.1");
    recording_config.record = Some(recording.clone());
    recording_config.conversation_log = Some(log.clone());
    let recorded = run(&client(recording_config)).await.unwrap();
    assert_eq!(recorded.1, Answer { total: 26.0 });
    assert_eq!(scripted.requests().len(), 3);

    // The conversation log keeps every request and response in full, in order.
    let lines = read_lines(&log);
    let steps: Vec<&str> = lines
        .iter()
        .map(|line| line["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["plan", "code", "code/repair"]);
    let last = &lines[2];
    assert_eq!(
        last["request"]["messages"].as_array().unwrap().len(),
        6,
        "the whole conversation"
    );
    assert_eq!(
        last["request"]["messages"][2]["content"],
        "Read the CSV, sum price*quantity."
    );
    assert_eq!(
        last["request"]["messages"][4]["content"],
        "```json\n{\"total\": 26.0,}\n```"
    );
    assert_eq!(
        last["response"]["choices"][0]["message"]["content"],
        "{\"total\":26.0}"
    );

    // Replay: no server at all, same answers.
    drop(scripted);
    let offline = server(Vec::new()).await;
    let mut replay_config = config(&offline, "openai/gpt-4.1");
    replay_config.replay = Some(recording.clone());
    let replayer = LlmClient::new_with_env(replay_config, |_| None).unwrap();
    let from_replay = run(&replayer).await.unwrap();
    assert_eq!(from_replay, recorded);
    assert!(offline.requests().is_empty(), "replay makes no request");
    let totals = replayer.usage_total();
    assert_eq!((totals.calls, totals.usage.input_tokens), (3, 130));

    // The key appears nowhere on disk.
    for file in [&recording, &log] {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(!text.contains(SECRET), "{} holds the key", file.display());
        assert!(
            !text.to_lowercase().contains("bearer"),
            "{}",
            file.display()
        );
    }
}

#[tokio::test]
async fn replay_divergence_names_the_step_and_the_difference() {
    let server = server(script()).await;
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("run.jsonl");
    let mut recording_config = config(&server, "openai/gpt-4.1");
    recording_config.record = Some(recording.clone());
    run(&client(recording_config)).await.unwrap();

    let mut replay_config = config(&server, "openai/gpt-4.1");
    replay_config.replay = Some(recording);
    let replayer = LlmClient::new_with_env(replay_config, |_| None).unwrap();
    let plan = replayer
        .chat(
            "plan",
            &[
                Message::system("You write Python."),
                Message::user("Sum the sales."),
            ],
            &CallParams::default(),
        )
        .await
        .unwrap();
    let error = replayer
        .structured::<Answer>(
            "code",
            &[
                Message::system("You write Python."),
                Message::user("Sum the sales."),
                Message::assistant(plan.text),
                Message::user("Now the grand total as JSON."),
            ],
        )
        .await
        .unwrap_err();
    match &error {
        LlmError::ReplayMismatch {
            step,
            call_index,
            detail,
            ..
        } => {
            assert_eq!((step.as_str(), *call_index), ("code", 1));
            assert!(detail.contains("/messages/3/content"), "{detail}");
            assert!(detail.contains("grand total"), "{detail}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        error
            .to_string()
            .contains("diverged at call #1 (step `code`)"),
        "{error}"
    );
}

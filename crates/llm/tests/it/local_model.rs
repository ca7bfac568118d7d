//! Opt-in: structured output against a real local model (not in CI).
//!
//! Start the model with `../shared/tools/local-llm/serve.sh`, then run
//! `AUTOCODER_LOCAL_LLM=http://127.0.0.1:8089/v1 cargo test -p autocoder-llm --test it local_model -- --nocapture`.

use std::time::Duration;

use autocoder_llm::{CallParams, LlmClient, LlmConfig, Message, ModelSpec, StructuredMode};
use serde::Deserialize;

/// The variable holding the local model's API base; the tests do nothing without it.
const LOCAL_LLM: &str = "AUTOCODER_LOCAL_LLM";

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Script {
    /// The complete Python script.
    code: String,
    /// Packages to install with pip (not the standard library).
    packages: Vec<String>,
}

fn local_client(mode: StructuredMode) -> Option<LlmClient> {
    let base = std::env::var(LOCAL_LLM).ok()?;
    let mut config =
        LlmConfig::new(ModelSpec::parse("openai/qwen2.5-coder-1.5b-instruct").unwrap());
    config.api_base = Some(base);
    config.structured_mode = mode;
    config.params.temperature = Some(0.0);
    config.params.max_tokens = Some(700);
    config.timeouts.total = Duration::from_secs(300);
    Some(LlmClient::new_with_env(config, |_| None).unwrap())
}

fn task() -> Vec<Message> {
    vec![
        Message::system("You are a careful Python programmer."),
        Message::user(
            "Write a Python script that reads a CSV path from --sales and prints the total revenue \
             (sum of price*quantity). The CSV has a header row: product,price,quantity. It is run \
             as: python script.py --sales sales.csv (parse the option with argparse).",
        ),
    ]
}

#[tokio::test]
async fn local_model_structured_output() {
    for mode in [
        StructuredMode::JsonSchema,
        StructuredMode::JsonMode,
        StructuredMode::Tool,
    ] {
        let Some(client) = local_client(mode) else {
            eprintln!("{LOCAL_LLM} not set: skipping the local-model test");
            return;
        };
        let result = client.structured::<Script>("local", &task()).await;
        match result {
            Ok(script) => {
                eprintln!(
                    "mode {}: {} call(s), finish {:?}, usage {:?}, {:?}\nraw: {}\n",
                    mode.name(),
                    script.calls,
                    script.completion.finish_reason,
                    script.usage,
                    script.completion.latency,
                    script.raw
                );
                eprintln!("packages: {:?}", script.value.packages);
                assert!(
                    script.value.code.contains("argparse"),
                    "{}",
                    script.value.code
                );
            }
            Err(error) if mode == StructuredMode::Tool => {
                eprintln!("mode tool failed as the local-llm README predicts: {error}");
            }
            Err(error) => panic!("mode {}: {error}", mode.name()),
        }
    }
    let client = local_client(StructuredMode::JsonSchema).unwrap();
    let chat = client
        .chat(
            "local-chat",
            &[Message::user("Say OK.")],
            &CallParams::default(),
        )
        .await
        .unwrap();
    eprintln!("chat: {:?} {:?}", chat.text, chat.usage);
}

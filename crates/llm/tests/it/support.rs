//! Shared helpers: a scripted server and a client pointed at it.

use std::time::Duration;

use autocoder_llm::{LlmClient, LlmConfig, ModelSpec, RetryPolicy};
use autocoder_testkit::{Entry, Script, ScriptedServer};

/// The fake API key every test client sends; tests scan files for it.
pub(crate) const SECRET: &str = "sk-test-a1b2c3-do-not-leak";

pub(crate) async fn server(entries: Vec<Entry>) -> ScriptedServer {
    ScriptedServer::start(Script::new(entries)).await.unwrap()
}

/// A config for `model` against the server, with fast retries.
pub(crate) fn config(server: &ScriptedServer, model: &str) -> LlmConfig {
    let mut config = LlmConfig::new(ModelSpec::parse(model).unwrap());
    config.api_base = Some(server.base_url());
    config.retry = RetryPolicy {
        max_retries: 3,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
    };
    config
}

/// A client whose key comes from a fake environment holding [`SECRET`].
pub(crate) fn client(config: LlmConfig) -> LlmClient {
    LlmClient::new_with_env(config, |_| Some(SECRET.to_owned())).unwrap()
}

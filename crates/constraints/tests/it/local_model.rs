//! Opt-in: rules the parser cannot read, answered by a real local model (not in CI).
//!
//! Start the model with `../shared/tools/local-llm/serve.sh`, then run
//! `AUTOCODER_LOCAL_LLM=http://127.0.0.1:8089/v1 cargo test -p autocoder-constraints --test it local_model -- --nocapture`.

use std::time::Duration;

use autocoder_constraints::llm::read_rules;
use autocoder_constraints::{Outcome, parse_rule};
use autocoder_llm::{LlmClient, LlmConfig, ModelSpec};

use crate::pandera::orders_table;

/// The variable holding the local model's API base; the test does nothing without it.
const LOCAL_LLM: &str = "AUTOCODER_LOCAL_LLM";

#[tokio::test]
async fn local_model_reads_rules_and_every_answer_is_validated() {
    let Ok(base) = std::env::var(LOCAL_LLM) else {
        return;
    };
    let mut config =
        LlmConfig::new(ModelSpec::parse("openai/qwen2.5-coder-1.5b-instruct").unwrap());
    config.api_base = Some(base);
    config.params.temperature = Some(0.0);
    config.params.max_tokens = Some(400);
    config.timeouts.total = Duration::from_secs(300);
    let client = LlmClient::new_with_env(config, |_| None).unwrap();
    let table = orders_table();
    let rules: Vec<String> = [
        "every order needs at least one item in quantity",
        "status values are written in lowercase letters only",
        "SKUs follow the pattern SKU- then four digits",
        "orders ship within two days of being placed",
    ]
    .iter()
    .map(|r| (*r).to_owned())
    .collect();
    let outcomes = read_rules(&rules, &table, &client).await;
    assert_eq!(outcomes.len(), rules.len());
    for outcome in &outcomes {
        println!("{outcome}");
        if let Outcome::Applied { constraint, .. } = outcome {
            // Whatever the model said, what was applied fits the table.
            let mut probe = table.clone();
            constraint.add_to(&mut probe).unwrap();
        }
        assert!(!matches!(
            parse_rule(outcome.rule(), &table),
            autocoder_constraints::Parsed::Constraint(_)
        ));
    }
}

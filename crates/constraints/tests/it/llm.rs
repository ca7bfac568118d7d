//! The model path over real HTTP against the scripted server: good answers become constraints
//! read by the model; wrong answers (unknown column, bad regex, missing bound) are rejected with
//! one retry quoting the reason, then the rule stays unapplied with that reason.
#![allow(clippy::disallowed_methods)] // one test runs the real Python `re`

use std::process::Command;

use autocoder_constraints::llm::{RuleAnswer, STEP, read_rules, validate_answer};
use autocoder_constraints::{Constraint, Outcome, Source, check_portable_regex};
use autocoder_llm::{LlmClient, LlmConfig, ModelSpec};
use autocoder_schema::{Check, Scalar, TableSchema};
use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use serde_json::{Value, json};

use crate::pandera::{orders_table, python};

/// A server answering the first call with `replies[0]` and each retry with the next reply.
async fn server(replies: Vec<Value>) -> ScriptedServer {
    let retry = format!("{STEP}/retry");
    let entries = replies
        .into_iter()
        .enumerate()
        .map(|(i, reply)| Entry::step(if i == 0 { STEP } else { &retry }, Reply::Json(reply)));
    ScriptedServer::start(Script::new(entries)).await.unwrap()
}

fn client(server: &ScriptedServer) -> LlmClient {
    let mut config = LlmConfig::new(ModelSpec::parse("openai/gpt-4.1").unwrap());
    config.api_base = Some(server.base_url());
    LlmClient::new_with_env(config, |_| Some("sk-test".to_owned())).unwrap()
}

fn answer(columns: &[&str], check: &str, fields: Value) -> Value {
    let Value::Object(fields) = fields else {
        panic!("fields must be an object")
    };
    let mut base = json!({
        "applicable": true, "reason": null, "columns": columns, "check": check,
        "value": null, "min": null, "max": null, "include_min": null, "include_max": null,
        "values": null, "pattern": null,
    });
    for (key, value) in fields {
        base[&key] = value;
    }
    base
}

fn prompt_of(server: &ScriptedServer, index: usize) -> String {
    server.requests()[index].body["messages"].to_string()
}

const UNDERSTOOD: &str = "quantity must be positive";
const FOR_THE_MODEL: &str = "every order needs at least one item in quantity";

#[tokio::test]
async fn the_model_reads_what_the_parser_cannot_and_nothing_else() {
    let server = server(vec![answer(&["quantity"], "ge", json!({"value": "1"}))]).await;
    let table = orders_table();
    let rules = vec![UNDERSTOOD.to_owned(), FOR_THE_MODEL.to_owned()];
    let outcomes = read_rules(&rules, &table, &client(&server)).await;
    assert!(matches!(
        &outcomes[0],
        Outcome::Applied {
            source: Source::Parser,
            ..
        }
    ));
    assert_eq!(
        outcomes[1],
        Outcome::Applied {
            rule: FOR_THE_MODEL.to_owned(),
            constraint: Constraint::Column {
                column: "quantity".into(),
                check: Check::Ge {
                    value: Scalar::Int(1)
                }
            },
            source: Source::Llm,
        }
    );
    assert_eq!(
        server.requests().len(),
        1,
        "only the rule the parser missed goes to the model"
    );
    let prompt = prompt_of(&server, 0);
    assert!(prompt.contains(FOR_THE_MODEL), "{prompt}");
    assert!(prompt.contains("`unit_price` (float)"), "{prompt}");
    assert!(prompt.contains("Never invent a bound"), "{prompt}");
}

#[tokio::test]
async fn an_unknown_column_is_rejected_and_the_retry_quotes_the_reason() {
    let server = server(vec![
        answer(&["qty_total"], "ge", json!({"value": "1"})),
        answer(&["quantity"], "ge", json!({"value": "1"})),
    ])
    .await;
    let outcomes = read_rules(
        &[FOR_THE_MODEL.to_owned()],
        &orders_table(),
        &client(&server),
    )
    .await;
    assert!(
        matches!(
            &outcomes[0],
            Outcome::Applied {
                source: Source::Llm,
                ..
            }
        ),
        "{outcomes:?}"
    );
    assert_eq!(server.requests().len(), 2);
    let retry = prompt_of(&server, 1);
    assert!(retry.contains("no column matches `qty_total`"), "{retry}");
}

#[tokio::test]
async fn a_bad_regex_twice_leaves_the_rule_unapplied_with_the_reason() {
    let bad = answer(&["sku"], "str_matches", json!({"pattern": "^SKU-(\\d{4}$"}));
    let server = server(vec![bad.clone(), bad]).await;
    let rule = "SKUs follow the house code scheme ^SKU-(\\d{4}$".to_owned();
    let outcomes = read_rules(&[rule], &orders_table(), &client(&server)).await;
    let Outcome::Unapplied { reason, .. } = &outcomes[0] else {
        panic!("{outcomes:?}")
    };
    assert!(
        reason.contains("rejected") && reason.contains("does not compile"),
        "{reason}"
    );
    assert_eq!(server.requests().len(), 2, "one retry, no more");
}

#[tokio::test]
async fn a_missing_bound_is_rejected_not_invented() {
    let server = server(vec![
        answer(&["unit_price"], "in_range", json!({"min": "0"})),
        answer(&["unit_price"], "le", json!({})),
    ])
    .await;
    let rule = "every order's unit price stays within the usual limits".to_owned();
    let outcomes = read_rules(&[rule], &orders_table(), &client(&server)).await;
    let Outcome::Unapplied { reason, .. } = &outcomes[0] else {
        panic!("{outcomes:?}")
    };
    assert!(reason.contains("needs `value`"), "{reason}");
    assert!(prompt_of(&server, 1).contains("needs `max`"));
}

#[tokio::test]
async fn the_model_may_say_a_rule_is_not_a_check() {
    let server = server(vec![json!({
        "applicable": false, "reason": "it compares two columns", "columns": [], "check": null,
        "value": null, "min": null, "max": null, "include_min": null, "include_max": null,
        "values": null, "pattern": null,
    })])
    .await;
    let rule = "orders ship after they are placed".to_owned();
    let outcomes = read_rules(&[rule], &orders_table(), &client(&server)).await;
    assert_eq!(
        outcomes[0],
        Outcome::Unapplied {
            rule: "orders ship after they are placed".into(),
            reason: "the model: it compares two columns".into()
        }
    );
}

#[test]
fn validation_refuses_misfits_words_for_numbers_and_empty_lists() {
    let table: TableSchema = orders_table();
    let parse = |v: Value| serde_json::from_value::<RuleAnswer>(v).unwrap();
    let cases = [
        (
            answer(&["quantity"], "gt", json!({"value": "ten"})),
            "not a number",
        ),
        (
            answer(&["quantity"], "str_length", json!({"max": "5"})),
            "does not apply",
        ),
        (
            answer(&["status"], "isin", json!({"values": []})),
            "non-empty `values`",
        ),
        (
            answer(&["sku"], "pattern", json!({"pattern": "sku_code"})),
            "not a pattern name",
        ),
        (
            answer(&["sku"], "str_matches", json!({"pattern": "^\\p{Lu}+$"})),
            "python",
        ),
        (
            answer(&["quantity", "status"], "gt", json!({"value": "1"})),
            "takes one column",
        ),
        (
            answer(&["quantity"], "gt", json!({"value": "unit price"})),
            "between columns",
        ),
    ];
    for (value, words) in cases {
        let err = validate_answer(&parse(value.clone()), &table).unwrap_err();
        assert!(err.to_lowercase().contains(words), "{value}: {err}");
    }
    let pair = answer(&["order id", "line"], "unique", json!({}));
    assert!(validate_answer(&parse(pair), &table).is_ok());
}

#[test]
fn regexes_we_accept_compile_in_python_re_too() {
    let accepted = [
        r"^SKU-[0-9]{4}$",
        r"^[A-Z]{2}\d{3}(?:-[a-z]+)?$",
        r"^(?P<year>\d{4})-\d{2}$",
        r"(?i)^[a-f0-9]{8}$",
        r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$",
        r"^\w+\s\w+$",
        r"^[]a-]+$",
    ];
    for pattern in accepted {
        assert!(check_portable_regex(pattern).is_ok(), "{pattern}");
    }
    let out = Command::new(python())
        .arg("-c")
        .arg("import re, sys\nfor p in sys.argv[1:]:\n    re.compile(p)\nprint('ok')")
        .args(accepted)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_rule_prompt_lists_columns_checks_and_the_parsers_note() {
    let prompts = autocoder_prompts::Prompts::embedded().unwrap();
    let text = autocoder_constraints::llm::prompt(
        FOR_THE_MODEL,
        &orders_table(),
        "no check word found",
        &prompts,
    )
    .unwrap();
    insta::assert_snapshot!("rule_prompt", text);
}

#[tokio::test]
async fn a_users_template_override_reaches_the_rule_prompt() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("constraints")).unwrap();
    std::fs::write(
        dir.path().join("constraints/rule.j2"),
        "RULE {{ rule }} ON {{ table }}",
    )
    .unwrap();
    let server = server(vec![answer(&["quantity"], "ge", json!({"value": "1"}))]).await;
    let mut config = LlmConfig::new(ModelSpec::parse("openai/gpt-4.1").unwrap());
    config.api_base = Some(server.base_url());
    config.prompts_dir = Some(dir.path().to_owned());
    let client = LlmClient::new_with_env(config, |_| Some("sk-test".to_owned())).unwrap();
    let rules = vec![FOR_THE_MODEL.to_owned()];
    read_rules(&rules, &orders_table(), &client).await;
    let sent = &server.requests()[0].body["messages"][0]["content"];
    assert_eq!(
        sent.as_str(),
        Some(format!("RULE {FOR_THE_MODEL} ON {}", orders_table().name).as_str())
    );
}

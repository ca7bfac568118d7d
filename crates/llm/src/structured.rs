//! JSON Schemas for structured output, and getting JSON back out of a model's text.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Formats OpenAI's strict mode accepts; any other `format` is removed.
const STRICT_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The JSON Schema of `T` made fit for OpenAI's strict mode (and every other mode): every
/// object closed (`additionalProperties: false`) with all its properties required (optional
/// fields stay nullable, as schemars writes `Option<T>`), `oneOf` turned into `anyOf`, and the
/// keywords strict mode rejects (`$schema`, `default`, unknown `format`s) removed.
///
/// Returns the schema's name (`^[a-zA-Z0-9_-]{1,64}$`) and the schema.
pub fn strict_schema_for<T: schemars::JsonSchema>() -> (String, Value) {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    make_strict(&mut value);
    let name: String = T::schema_name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    (name, value)
}

/// Applies the strict-mode rules to a schema in place (see [`strict_schema_for`]).
pub fn make_strict(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.remove("$schema");
            map.remove("default");
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| !STRICT_FORMATS.contains(&format))
            {
                map.remove("format");
            }
            if let Some(one_of) = map.remove("oneOf") {
                map.insert("anyOf".into(), one_of);
            }
            if let Some(Value::Object(properties)) = map.get("properties") {
                let names: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
                map.insert("required".into(), Value::Array(names));
                map.insert("additionalProperties".into(), Value::Bool(false));
            } else if map.get("type").and_then(Value::as_str) == Some("object")
                && !map.contains_key("additionalProperties")
            {
                map.insert("properties".into(), Value::Object(Map::new()));
                map.insert("required".into(), Value::Array(Vec::new()));
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for child in map.values_mut() {
                make_strict(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(make_strict),
        _ => {}
    }
}

/// Finds the JSON value in a model's answer: the whole text, else the body of a fenced block
/// (```` ```json ```` ... ```` ``` ````), else the first `{...}` or `[...]` inside prose. A
/// closing fence must stand on its own line (or end the last line), and a JSON string cannot
/// hold a raw newline, so backticks inside strings never end the block.
pub fn extract_json(text: &str) -> Result<Value, String> {
    parse_answer(text)
}

/// Parses a value of `T` out of the answer (see [`extract_json`] for where it looks), with a
/// message fit to show the model. Inside prose, the first embedded value that fits `T` wins,
/// so a nested `[]` is never mistaken for the answer; when nothing fits, the message is the
/// JSON syntax error of the answer (or of its fenced block).
pub fn parse_answer<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the answer is empty".to_owned());
    }
    let mut syntax_error = match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => return fit(value),
        Err(error) => error,
    };
    if let Some(block) = fenced_block(trimmed) {
        match serde_json::from_str::<Value>(block.trim()) {
            Ok(value) => return fit(value),
            // The block's own error says more than the whole text's "expected value".
            Err(error) => syntax_error = error,
        }
    }
    embedded_values(trimmed)
        .find_map(|value| serde_json::from_value(value).ok())
        .ok_or_else(|| format!("the answer is not valid JSON: {syntax_error}"))
}

fn fit<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value)
        .map_err(|error| format!("the JSON does not fit the schema: {error}"))
}

fn fenced_block(text: &str) -> Option<&str> {
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let bare = line.trim();
        match start {
            None if bare.starts_with("```") => {
                let rest = bare.trim_start_matches('`');
                // "```json" or "```" open a block whose body starts on the next line;
                // "```json {...}" keeps its body on this line.
                let info_len = rest.find(['{', '[']).unwrap_or(rest.len());
                start = Some(if info_len < rest.len() {
                    offset + line.find(&rest[info_len..]).unwrap_or(0)
                } else {
                    offset + line.len()
                });
            }
            Some(begin) if bare == "```" => return Some(&text[begin..offset]),
            Some(begin) if bare.ends_with("```") && !bare.ends_with("````") => {
                let end = offset + line.rfind("```").unwrap_or(line.len());
                if end >= begin {
                    return Some(&text[begin..end]);
                }
            }
            _ => {}
        }
        offset += line.len();
    }
    start.map(|begin| &text[begin..])
}

/// The objects and arrays that parse, from each `{` or `[` of the text in order (at most 64
/// starts are tried).
fn embedded_values(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.char_indices()
        .filter(|(_, c)| *c == '{' || *c == '[')
        .take(64)
        .filter_map(|(index, _)| {
            serde_json::Deserializer::from_str(&text[index..])
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
                .filter(|value| value.is_object() || value.is_array())
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_triple_backticks_inside_strings() {
        let answer = "Here it is:\n```json\n{\"code\": \"print('```')\\n\", \"n\": 1}\n```\nDone.";
        assert_eq!(
            extract_json(answer).unwrap(),
            json!({"code": "print('```')\n", "n": 1})
        );
    }

    #[test]
    fn reads_bare_fenced_and_inline_fenced_answers() {
        assert_eq!(extract_json("{\"a\": 1}").unwrap(), json!({"a": 1}));
        assert_eq!(extract_json("```\n[1, 2]\n```").unwrap(), json!([1, 2]));
        assert_eq!(
            extract_json("```json {\"a\": \"`\"}```").unwrap(),
            json!({"a": "`"})
        );
        assert_eq!(
            extract_json("Sure! {\"a\": 2} hope it helps").unwrap(),
            json!({"a": 2})
        );
    }

    #[test]
    fn truncated_json_reports_the_parse_error() {
        let error = extract_json("{\"code\": \"print(").unwrap_err();
        assert!(error.contains("EOF while parsing"), "{error}");
        let error = extract_json("```json\n{\"code\": \"print(").unwrap_err();
        assert!(error.contains("EOF while parsing a string"), "{error}");
    }

    /// What Qwen2.5-Coder 1.5B wrote for a forced tool call: a fenced block with a Python
    /// triple-quoted string. The nested `[]` must not be taken for the answer; the syntax error
    /// is what the repair prompt needs.
    #[test]
    fn invalid_fenced_json_reports_its_syntax_error() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Script {
            code: String,
            packages: Vec<String>,
        }
        let answer =
            "```json\n{\n  \"code\": \"\"\"\nimport sys\n  \"\"\",\n  \"packages\": []\n}\n```";
        let error = parse_answer::<Script>(answer).unwrap_err();
        assert!(
            error.starts_with("the answer is not valid JSON: "),
            "{error}"
        );
        assert!(error.contains("line 2"), "{error}");
        let prose = "The plan: {\"code\": \"print(1)\", \"packages\": []} as asked.";
        assert_eq!(parse_answer::<Script>(prose).unwrap().code, "print(1)");
    }

    #[test]
    fn strict_schema_closes_objects_and_requires_all() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Plan {
            steps: Vec<String>,
            note: Option<String>,
            count: u32,
        }
        let (name, schema) = strict_schema_for::<Plan>();
        assert_eq!(name, "Plan");
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["required"], json!(["count", "note", "steps"]));
        assert!(schema.get("$schema").is_none());
        assert!(schema["properties"]["count"].get("format").is_none());
    }
}

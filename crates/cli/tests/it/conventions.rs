//! Command-line conventions: `--json` wherever a document is printed, `-o/--output`, shell
//! completions, the published JSON Schema of the profile (checked against real output), and
//! schema export as Frictionless Table Schema and JSON Schema.

use std::path::Path;

use serde_json::Value;

use crate::{autocoder, stdout_of, testdata};

fn penguins() -> String {
    testdata("real/penguins.csv").display().to_string()
}

#[test]
fn json_is_one_flag_on_every_command_that_prints_a_document() {
    let file = penguins();
    let by_format = stdout_of(&["profile", "--format", "json", &file]);
    let by_flag = stdout_of(&["profile", "--json", &file]);
    assert_eq!(by_format, by_flag);
    let schema_json = stdout_of(&["schema", "--json", &file]);
    let parsed: Value = serde_json::from_str(&schema_json).unwrap();
    assert!(parsed["schema"]["columns"].is_array(), "{schema_json}");
    assert_eq!(
        schema_json,
        stdout_of(&["schema", "--format", "json", &file])
    );
    // `--json` and a different `--format` contradict each other.
    let out = autocoder(&["profile", "--json", "--format", "text", &file]);
    assert_eq!(out.status.code(), Some(2));
    for args in [
        &["sandbox", "doctor", "--help"][..],
        &["generate", "--help"][..],
        &["run", "--help"][..],
    ] {
        let help = stdout_of(args);
        assert!(help.contains("--json"), "{args:?}:\n{help}");
    }
}

#[test]
fn output_files_take_the_document_and_stdout_stays_empty() {
    let dir = tempfile::tempdir().unwrap();
    let file = penguins();
    for (command, name) in [("profile", "p.json"), ("schema", "s.py")] {
        let target = dir.path().join(name);
        let target_arg = target.display().to_string();
        let mut args = vec![command, "-o", &target_arg, &file];
        if command == "profile" {
            args.insert(1, "--json");
        }
        let out = autocoder(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{command}: stdout stays empty");
        let written = std::fs::read_to_string(&target).unwrap();
        let mut plain = args.clone();
        plain.retain(|a| *a != "-o" && *a != target_arg);
        assert_eq!(written, stdout_of(&plain), "{command}");
    }
    let long = dir.path().join("long.txt").display().to_string();
    let out = autocoder(&["profile", "--output", &long, &file]);
    assert!(out.status.success());
    assert!(
        std::fs::read_to_string(&long)
            .unwrap()
            .contains("bill_length_mm")
    );
    // A directory that does not exist is an error naming the path.
    let bad = dir.path().join("no/such/dir/x.json").display().to_string();
    let out = autocoder(&["profile", "-o", &bad, &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/dir"));
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains("autocoder"), "{shell}");
        // fish writes long flags without their dashes (`-l skip-rows`).
        for word in [
            "profile",
            "schema",
            "skip-rows",
            "max-record-mb",
            "completions",
        ] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("autocoder.bash");
    std::fs::write(&path, stdout_of(&["completions", "bash"])).unwrap();
    let status = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success(), "the bash script parses");
    let out = autocoder(&["completions", "powershell-9"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The JSON Schema published in the repository, checked against real output.
fn published_profile_schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../profile/profile.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn real_profiles_follow_the_published_json_schema() {
    let schema = published_profile_schema();
    for rel in [
        "real/penguins_raw.csv",
        "real/flights_sample.csv",
        "tricky/dates.csv",
        "tricky/ragged.csv",
        "tricky/header_only.csv",
        "tricky/booleans.csv",
        "tricky/mixed_types.csv",
    ] {
        let file = testdata(rel).display().to_string();
        let json = stdout_of(&["profile", "--json", "--skip-bad-rows", &file]);
        let document: Value = serde_json::from_str(&json).unwrap();
        let errors = validate(&schema, &schema, &document, "$");
        assert!(errors.is_empty(), "{rel}:\n{}", errors.join("\n"));
    }
    // The validator is no rubber stamp.
    let mut broken: Value =
        serde_json::from_str(&stdout_of(&["profile", "--json", &penguins()])).unwrap();
    broken["columns"][0]["dtype"] = Value::from("decimal");
    broken["rows"] = Value::from("many");
    broken.as_object_mut().unwrap().remove("samples");
    let errors = validate(&schema, &schema, &broken, "$");
    assert_eq!(errors.len(), 3, "{errors:?}");
}

#[test]
fn schemas_export_as_frictionless_and_json_schema() {
    let file = penguins();
    let frictionless: Value =
        serde_json::from_str(&stdout_of(&["schema", "--format", "frictionless", &file])).unwrap();
    let fields = frictionless["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 8);
    let field = |name: &str| fields.iter().find(|f| f["name"] == name).unwrap();
    assert_eq!(field("species")["type"], "string");
    assert_eq!(field("bill_length_mm")["type"], "number");
    assert_eq!(field("flipper_length_mm")["type"], "integer");
    assert_eq!(field("year")["type"], "integer");
    assert_eq!(field("species")["constraints"]["required"], true);
    assert_eq!(field("sex")["constraints"]["required"], false);
    assert!(
        frictionless["missingValues"]
            .as_array()
            .unwrap()
            .contains(&Value::from("NA"))
    );
    let with_categories: Value = serde_json::from_str(&stdout_of(&[
        "schema",
        "--format",
        "frictionless",
        "--categories",
        &file,
    ]))
    .unwrap();
    let species = with_categories["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "species")
        .unwrap()
        .clone();
    assert_eq!(
        species["constraints"]["enum"],
        serde_json::json!(["Adelie", "Chinstrap", "Gentoo"])
    );

    // JSON Schema of one row: every row of the file, as pandas would read it, validates.
    let schema: Value = serde_json::from_str(&stdout_of(&[
        "schema",
        "--format",
        "jsonschema",
        "--ranges",
        &file,
    ]))
    .unwrap();
    assert_eq!(schema["type"], "object");
    let mut reader = csv::Reader::from_path(testdata("real/penguins.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.unwrap();
        let mut row = serde_json::Map::new();
        for (name, text) in headers.iter().zip(record.iter()) {
            let value = if text == "NA" || text.is_empty() {
                Value::Null
            } else if let Ok(i) = text.parse::<i64>() {
                Value::from(i)
            } else if let Ok(f) = text.parse::<f64>() {
                Value::from(f)
            } else {
                Value::from(text)
            };
            row.insert(name.to_owned(), value);
        }
        let errors = validate(&schema, &schema, &Value::Object(row), "$");
        assert!(errors.is_empty(), "row {rows}: {errors:?}");
        rows += 1;
    }
    assert_eq!(rows, 344);
    let bad = serde_json::json!({"species": 5, "bill_length_mm": 1000.0});
    let errors = validate(&schema, &schema, &bad, "$");
    assert!(errors.len() >= 2, "{errors:?}");
}

/// A JSON Schema validator for the keywords our schemas use (`$ref` into `$defs`, `type`,
/// `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, `anyOf`,
/// `oneOf`, `minimum`, `maximum`, `format` ignored): the errors, empty when `value` is valid.
fn validate(root: &Value, schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let Some(schema) = schema.as_object() else {
        return errors; // `true`
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/$defs/");
        errors.extend(validate(root, &root["$defs"][name], value, at));
    }
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let fits = |t: &str| match t {
            "null" => value.is_null(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "string" => value.is_string(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => false,
        };
        if !types.iter().any(|t| fits(t)) {
            errors.push(format!("{at}: {value} is not {types:?}"));
            return errors;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        errors.push(format!("{at}: {value} not in {options:?}"));
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        errors.push(format!("{at}: {value} is not {expected}"));
    }
    if let Some(x) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && x < min
        {
            errors.push(format!("{at}: {x} < {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && x > max
        {
            errors.push(format!("{at}: {x} > {max}"));
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let passing = options
                .iter()
                .filter(|o| validate(root, o, value, at).is_empty())
                .count();
            if passing == 0 || (key == "oneOf" && passing > 1) {
                errors.push(format!("{at}: {passing} of the {key} options fit {value}"));
            }
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !object.contains_key(name) {
                errors.push(format!("{at}: `{name}` is missing"));
            }
        }
        for (name, v) in object {
            match properties.and_then(|p| p.get(name)) {
                Some(s) => errors.extend(validate(root, s, v, &format!("{at}.{name}"))),
                None => {
                    if let Some(extra) = schema.get("additionalProperties") {
                        if extra == &Value::Bool(false) {
                            errors.push(format!("{at}: unexpected `{name}`"));
                        } else {
                            errors.extend(validate(root, extra, v, &format!("{at}.{name}")));
                        }
                    }
                }
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, v) in array.iter().enumerate() {
            errors.extend(validate(root, items, v, &format!("{at}[{i}]")));
        }
    }
    errors
}

//! The table as other tools read schemas: a Frictionless Table Schema (v1, with the field
//! types, `required`, `unique`, ranges, `enum`, lengths and patterns as constraints, and
//! pandas' missing-value strings) and a JSON Schema (2020-12) of one row as a JSON object
//! (`{"column": value, ...}`, `null` for a missing value). Checks a format cannot say are left
//! out of it (Frictionless has no exclusive bounds; neither says anything about dates'
//! order), and listed under `x-autocoder-unexpressed`.

use serde_json::{Map, Value, json};

use crate::{Check, ColumnSchema, DataType, Scalar, TableSchema};

/// pandas' default missing-value strings, for Frictionless' `missingValues` (the profile
/// crate holds the list that drives reading; this one only describes it).
const PANDAS_NA_VALUES: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// The Frictionless Table Schema of `table`.
pub fn render_frictionless(table: &TableSchema) -> Value {
    let fields: Vec<Value> = table.columns.iter().map(frictionless_field).collect();
    let mut missing: Vec<&str> = if table.read.keep_default_na {
        PANDAS_NA_VALUES.to_vec()
    } else {
        Vec::new()
    };
    for extra in &table.read.na_values {
        if !missing.contains(&extra.as_str()) {
            missing.push(extra);
        }
    }
    let mut schema = json!({ "fields": fields, "missingValues": missing });
    if !table.unique_together.is_empty() {
        schema["x-autocoder-unique-together"] = json!(table.unique_together);
    }
    schema
}

fn frictionless_field(column: &ColumnSchema) -> Value {
    let mut field = Map::new();
    field.insert("name".into(), json!(column.name));
    let kind = match column.dtype {
        DataType::Boolean => "boolean",
        DataType::Integer => "integer",
        DataType::Float => "number",
        DataType::Date => "date",
        DataType::Datetime => "datetime",
        DataType::String => "string",
        DataType::Empty => "any",
    };
    field.insert("type".into(), json!(kind));
    if column.dtype.is_temporal()
        && let Some(format) = &column.datetime_format
        && format != "ISO8601"
    {
        field.insert("format".into(), json!(format));
    }
    if column.dtype == DataType::Boolean {
        field.insert("trueValues".into(), json!(["True", "TRUE", "true"]));
        field.insert("falseValues".into(), json!(["False", "FALSE", "false"]));
    }
    let mut constraints = Map::new();
    constraints.insert("required".into(), json!(!column.nullable));
    if column.unique {
        constraints.insert("unique".into(), json!(true));
    }
    let mut unexpressed = Vec::new();
    for check in &column.checks {
        let plain = |s: &Scalar| scalar_json(s);
        match check {
            Check::Ge { value } => {
                constraints.insert("minimum".into(), plain(value));
            }
            Check::Le { value } => {
                constraints.insert("maximum".into(), plain(value));
            }
            Check::InRange {
                min,
                max,
                include_min: true,
                include_max: true,
            } => {
                constraints.insert("minimum".into(), plain(min));
                constraints.insert("maximum".into(), plain(max));
            }
            Check::Isin { values } => {
                constraints.insert("enum".into(), values.iter().map(plain).collect());
            }
            Check::StrLength { min, max } => {
                if let Some(min) = min {
                    constraints.insert("minLength".into(), json!(min));
                }
                if let Some(max) = max {
                    constraints.insert("maxLength".into(), json!(max));
                }
            }
            Check::StrMatches { pattern } => {
                constraints.insert("pattern".into(), json!(pattern));
            }
            Check::Pattern { pattern } if pattern.python_regex().is_some() => {
                constraints.insert("pattern".into(), json!(pattern.python_regex()));
            }
            Check::NotNull => {
                constraints.insert("required".into(), json!(true));
            }
            Check::Unique => {
                constraints.insert("unique".into(), json!(true));
            }
            other => unexpressed.push(serde_json::to_value(other).unwrap_or(Value::Null)),
        }
    }
    field.insert("constraints".into(), Value::Object(constraints));
    if !unexpressed.is_empty() {
        field.insert("x-autocoder-unexpressed".into(), Value::Array(unexpressed));
    }
    Value::Object(field)
}

/// The JSON Schema of one row of `table`, as a JSON object.
pub fn render_json_schema(table: &TableSchema) -> Value {
    let mut properties = Map::new();
    for column in &table.columns {
        properties.insert(column.name.clone(), json_schema_column(column));
    }
    let required: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": table.name,
        "description": "One row of the table: each column's value, null when missing.",
        "type": "object",
        "properties": properties,
        "required": required,
    })
}

fn json_schema_column(column: &ColumnSchema) -> Value {
    let mut schema = Map::new();
    let kind = match column.dtype {
        DataType::Boolean => Some("boolean"),
        DataType::Integer => Some("integer"),
        DataType::Float => Some("number"),
        DataType::Date | DataType::Datetime | DataType::String => Some("string"),
        DataType::Empty => None,
    };
    match (kind, column.nullable || column.dtype == DataType::Empty) {
        (Some(kind), true) => schema.insert("type".into(), json!([kind, "null"])),
        (Some(kind), false) => schema.insert("type".into(), json!(kind)),
        (None, _) => schema.insert("type".into(), json!("null")),
    };
    match (column.dtype, column.datetime_format.as_deref()) {
        (DataType::Date, Some("%Y-%m-%d")) => {
            schema.insert("format".into(), json!("date"));
        }
        (DataType::Datetime, Some(_)) if column.utc => {
            schema.insert("format".into(), json!("date-time"));
        }
        _ => {}
    }
    let mut unexpressed = Vec::new();
    for check in &column.checks {
        let done = json_keywords(check, column);
        match done {
            Some(keywords) => {
                for (k, v) in keywords {
                    schema.insert(k.into(), v);
                }
            }
            None => unexpressed.push(serde_json::to_value(check).unwrap_or(Value::Null)),
        }
    }
    if column.unique {
        unexpressed.push(json!("unique"));
    }
    if !unexpressed.is_empty() {
        schema.insert("x-autocoder-unexpressed".into(), Value::Array(unexpressed));
    }
    Value::Object(schema)
}

/// The JSON Schema keywords that say `check` on `column`, or `None` when none can.
fn json_keywords(check: &Check, column: &ColumnSchema) -> Option<Vec<(&'static str, Value)>> {
    // Comparisons of dates and datetimes are on their text in JSON: only numbers are bounded.
    let number = |s: &Scalar| match s {
        Scalar::Int(_) | Scalar::Float(_) if column.dtype.is_numeric() => Some(scalar_json(s)),
        _ => None,
    };
    match check {
        Check::Gt { value } => number(value).map(|v| vec![("exclusiveMinimum", v)]),
        Check::Ge { value } => number(value).map(|v| vec![("minimum", v)]),
        Check::Lt { value } => number(value).map(|v| vec![("exclusiveMaximum", v)]),
        Check::Le { value } => number(value).map(|v| vec![("maximum", v)]),
        Check::InRange {
            min,
            max,
            include_min,
            include_max,
        } => number(min).zip(number(max)).map(|(lo, hi)| {
            vec![
                (
                    if *include_min {
                        "minimum"
                    } else {
                        "exclusiveMinimum"
                    },
                    lo,
                ),
                (
                    if *include_max {
                        "maximum"
                    } else {
                        "exclusiveMaximum"
                    },
                    hi,
                ),
            ]
        }),
        Check::Eq { value } if !column.dtype.is_temporal() => {
            Some(vec![("const", scalar_json(value))])
        }
        Check::Ne { value } if !column.dtype.is_temporal() => {
            Some(vec![("not", json!({ "const": scalar_json(value) }))])
        }
        Check::Isin { values } if !column.dtype.is_temporal() => {
            let mut options: Vec<Value> = values.iter().map(scalar_json).collect();
            if column.nullable {
                options.push(Value::Null);
            }
            Some(vec![("enum", Value::Array(options))])
        }
        Check::Notin { values } if !column.dtype.is_temporal() => Some(vec![(
            "not",
            json!({ "enum": values.iter().map(scalar_json).collect::<Vec<_>>() }),
        )]),
        Check::StrLength { min, max } => Some(
            min.map(|m| ("minLength", json!(m)))
                .into_iter()
                .chain(max.map(|m| ("maxLength", json!(m))))
                .collect(),
        ),
        Check::StrMatches { pattern } => Some(vec![("pattern", json!(anchored(pattern)))]),
        Check::StrContains { pattern } => Some(vec![("pattern", json!(pattern))]),
        Check::StrStartswith { prefix } => {
            Some(vec![("pattern", json!(format!("^{}", escape(prefix))))])
        }
        Check::StrEndswith { suffix } => {
            Some(vec![("pattern", json!(format!("{}$", escape(suffix))))])
        }
        Check::Pattern { pattern } => pattern
            .python_regex()
            .map(|r| vec![("pattern", json!(anchored(&r)))]),
        Check::NotNull | Check::Unique => Some(Vec::new()),
        _ => None,
    }
}

/// pandas' `str_matches` anchors at the start (`re.match`); JSON Schema patterns search.
fn anchored(pattern: &str) -> String {
    if pattern.starts_with('^') {
        pattern.to_owned()
    } else {
        format!("^(?:{pattern})")
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn scalar_json(scalar: &Scalar) -> Value {
    match scalar {
        Scalar::Bool(b) => json!(b),
        Scalar::Int(i) => json!(i),
        Scalar::Float(f) if f.is_finite() => json!(f),
        Scalar::Float(f) => json!(f.to_string()),
        Scalar::Str(s) => json!(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TableSchema {
        let mut t = TableSchema::new("orders");
        let mut qty = ColumnSchema::new("qty", DataType::Integer);
        qty.nullable = true;
        qty.checks.push(Check::Gt {
            value: Scalar::Int(0),
        });
        let mut status = ColumnSchema::new("status", DataType::String);
        status.checks.push(Check::Isin {
            values: vec![Scalar::Str("new".into()), Scalar::Str("paid".into())],
        });
        let mut day = ColumnSchema::new("day", DataType::Date);
        day.datetime_format = Some("%Y-%m-%d".into());
        day.unique = true;
        t.columns = vec![qty, status, day];
        t
    }

    #[test]
    fn frictionless_fields_carry_types_and_constraints() {
        let f = render_frictionless(&table());
        assert_eq!(f["fields"][0]["type"], "integer");
        assert_eq!(f["fields"][0]["constraints"]["required"], false);
        assert_eq!(
            f["fields"][0]["x-autocoder-unexpressed"][0]["check"], "gt",
            "{f}"
        );
        assert_eq!(
            f["fields"][1]["constraints"]["enum"],
            json!(["new", "paid"])
        );
        assert_eq!(f["fields"][2]["type"], "date");
        assert_eq!(f["fields"][2]["format"], "%Y-%m-%d");
        assert_eq!(f["fields"][2]["constraints"]["unique"], true);
        assert!(
            f["missingValues"]
                .as_array()
                .unwrap()
                .contains(&json!("NA"))
        );
    }

    #[test]
    fn json_schema_describes_one_row() {
        let s = render_json_schema(&table());
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["qty", "status", "day"]));
        assert_eq!(s["properties"]["qty"]["type"], json!(["integer", "null"]));
        assert_eq!(s["properties"]["qty"]["exclusiveMinimum"], 0);
        assert_eq!(s["properties"]["status"]["enum"], json!(["new", "paid"]));
        assert_eq!(s["properties"]["day"]["format"], "date");
        assert_eq!(
            s["properties"]["day"]["x-autocoder-unexpressed"],
            json!(["unique"])
        );
    }
}

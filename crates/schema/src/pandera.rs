//! Renders a [`TableSchema`] as a Python module: a Pandera `DataFrameSchema`, the `read_<name>`
//! function that reads the file the way the schema assumes, and a `__main__` that validates a
//! file given on the command line.

use std::fmt::Write as _;

use crate::{
    Check, ColumnSchema, DataType, FileFormat, Pattern, Scalar, TableSchema, python_identifier,
    python_str,
};

/// The Python module for `table`. The schema is `<NAME>_SCHEMA`, the reader `read_<name>(path)`,
/// where `<name>` is [`python_identifier`] of the table's name.
pub fn render_pandera(table: &TableSchema) -> String {
    let ident = python_identifier(&table.name);
    let schema_var = format!("{}_SCHEMA", ident.to_ascii_uppercase());
    let mut out = String::new();
    let uses_json = table.columns.iter().any(|c| {
        c.checks.iter().any(|k| {
            matches!(
                k,
                Check::Pattern {
                    pattern: Pattern::Json
                }
            )
        })
    });

    let _ = writeln!(
        out,
        "\"\"\"Pandera schema for `{}`, written by autocoder.",
        table.name.replace('"', "'")
    );
    out.push_str("\nValidate a file with:  python this_file.py PATH\n\"\"\"\n");
    if uses_json {
        out.push_str("import json\n");
    }
    out.push_str("import sys\n\nimport pandas as pd\nimport pandera.pandas as pa\n");
    if table.columns.iter().any(|c| c.dtype.is_temporal()) {
        out.push_str("from pandera.engines import pandas_engine\n");
    }
    out.push('\n');
    if uses_json {
        out.push_str(JSON_HELPER);
    }

    let _ = writeln!(out, "{schema_var} = pa.DataFrameSchema(\n    {{");
    for column in &table.columns {
        let _ = write!(
            out,
            "        {}: {},",
            python_str(&column.name),
            render_column(column)
        );
        if let Some(note) = &column.note {
            let _ = write!(out, "  # not checked: {}", note.replace('\n', " "));
        }
        out.push('\n');
    }
    out.push_str("    },\n");
    if !table.unique_together.is_empty() {
        // Pandera takes one set of columns; further sets become dataframe-wide checks.
        let mut sets = table.unique_together.iter();
        if let Some(first) = sets.next() {
            let _ = writeln!(out, "    unique={},", python_list_of_str(first));
        }
        let extra: Vec<String> = sets
            .map(|set| {
                format!(
                    "pa.Check(lambda df: ~df.duplicated(subset={}, keep=False), name=\"unique_together\")",
                    python_list_of_str(set)
                )
            })
            .collect();
        if !extra.is_empty() {
            let _ = writeln!(out, "    checks=[{}],", extra.join(", "));
        }
    }
    // `coerce=True`: a frame read with plain `pd.read_csv(path)` (integers with missing values
    // as float64, dates as text) validates too, converted to the declared dtypes.
    let _ = writeln!(
        out,
        "    coerce=True,\n    strict=False,\n    name={},\n)\n\n",
        python_str(&table.name)
    );

    render_reader(&mut out, table, &ident);

    let _ = write!(
        out,
        "\n\nif __name__ == \"__main__\":\n    frame = read_{ident}(sys.argv[1])\n    {schema_var}.validate(frame, lazy=True)\n    print(f\"valid: {{len(frame)}} rows\")\n"
    );
    out
}

const JSON_HELPER: &str = "\ndef _is_json(value):\n    \"\"\"True for text holding a JSON object or array.\"\"\"\n    text = str(value).strip()\n    if not text.startswith((\"{\", \"[\")):\n        return False\n    try:\n        json.loads(text)\n    except ValueError:\n        return False\n    return True\n\n\n";

fn render_column(column: &ColumnSchema) -> String {
    if column.note.is_some() {
        // Pandera has no dtype for what the note describes (a list, say): presence only.
        return format!("pa.Column(None, nullable={})", py_bool(column.nullable));
    }
    let mut args = vec![dtype_expr(column)];
    if !column.checks.is_empty() {
        let checks: Vec<String> = column
            .checks
            .iter()
            .map(|c| check_expr(c, column))
            .collect();
        args.push(format!("checks=[{}]", checks.join(", ")));
    }
    args.push(format!("nullable={}", py_bool(column.nullable)));
    if column.unique {
        args.push("unique=True".to_owned());
    }
    format!("pa.Column({})", args.join(", "))
}

fn dtype_expr(column: &ColumnSchema) -> String {
    match column.dtype {
        DataType::Date | DataType::Datetime if column.utc => format!(
            "pandas_engine.DateTime(unit=\"ns\", tz=\"UTC\", to_datetime_kwargs={{\"format\": {}, \"utc\": True}})",
            python_str(column.datetime_format.as_deref().unwrap_or("ISO8601"))
        ),
        DataType::Date | DataType::Datetime => format!(
            "pandas_engine.DateTime(to_datetime_kwargs={{\"format\": {}}})",
            python_str(column.datetime_format.as_deref().unwrap_or("ISO8601"))
        ),
        DataType::Empty => "None".to_owned(),
        other => python_str(other.pandas_read_dtype().unwrap_or("object")),
    }
}

fn check_expr(check: &Check, column: &ColumnSchema) -> String {
    let v = |s: &Scalar| scalar_expr(s, column);
    match check {
        Check::Eq { value } => format!("pa.Check.eq({})", v(value)),
        Check::Ne { value } => format!("pa.Check.ne({})", v(value)),
        Check::Gt { value } => format!("pa.Check.gt({})", v(value)),
        Check::Ge { value } => format!("pa.Check.ge({})", v(value)),
        Check::Lt { value } => format!("pa.Check.lt({})", v(value)),
        Check::Le { value } => format!("pa.Check.le({})", v(value)),
        Check::InRange {
            min,
            max,
            include_min,
            include_max,
        } => format!(
            "pa.Check.in_range({}, {}, include_min={}, include_max={})",
            v(min),
            v(max),
            py_bool(*include_min),
            py_bool(*include_max)
        ),
        Check::Isin { values } => format!("pa.Check.isin([{}])", join(values, column)),
        Check::Notin { values } => format!("pa.Check.notin([{}])", join(values, column)),
        Check::StrMatches { pattern } => format!("pa.Check.str_matches({})", python_str(pattern)),
        Check::StrContains { pattern } => {
            format!("pa.Check.str_contains({})", python_str(pattern))
        }
        Check::StrStartswith { prefix } => {
            format!("pa.Check.str_startswith({})", python_str(prefix))
        }
        Check::StrEndswith { suffix } => format!("pa.Check.str_endswith({})", python_str(suffix)),
        Check::StrLength { min, max } => {
            let bound = |b: &Option<u64>| b.map_or_else(|| "None".to_owned(), |n| n.to_string());
            format!(
                "pa.Check.str_length(min_value={}, max_value={})",
                bound(min),
                bound(max)
            )
        }
        Check::Pattern { pattern } => match pattern.python_regex() {
            Some(regex) => format!(
                "pa.Check.str_matches({}, error={})",
                python_str(&regex),
                python_str(&format!("looks like {}", pattern.description()))
            ),
            None => "pa.Check(_is_json, element_wise=True, error=\"looks like JSON\")".to_owned(),
        },
        // These are column flags, rendered by `render_column`; kept here for completeness.
        Check::Unique => {
            "pa.Check(lambda s: ~s.duplicated(keep=False), name=\"unique\")".to_owned()
        }
        Check::NotNull => "pa.Check(lambda s: s.notna(), name=\"not_null\")".to_owned(),
    }
}

fn join(values: &[Scalar], column: &ColumnSchema) -> String {
    values
        .iter()
        .map(|s| scalar_expr(s, column))
        .collect::<Vec<_>>()
        .join(", ")
}

fn scalar_expr(scalar: &Scalar, column: &ColumnSchema) -> String {
    match scalar {
        Scalar::Bool(b) => py_bool(*b).to_owned(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) if f.is_nan() => "float(\"nan\")".to_owned(),
        Scalar::Float(f) if f.is_infinite() => if *f > 0.0 {
            "float(\"inf\")"
        } else {
            "float(\"-inf\")"
        }
        .to_owned(),
        Scalar::Float(f) => format!("{f:?}"),
        Scalar::Str(s) if column.dtype.is_temporal() => {
            if column.utc {
                format!("pd.Timestamp({}, tz=\"UTC\")", python_str(s))
            } else {
                format!("pd.Timestamp({})", python_str(s))
            }
        }
        Scalar::Str(s) => python_str(s),
    }
}

/// The keyword arguments of `pd.read_csv` that read a CSV file the way it was profiled, types
/// aside: its layout (`sep`, and `header=None` with `names` for a file without a header row),
/// then how its text reads (missing-value strings, `skiprows`, `comment`, `encoding`), each as
/// Python source (`sep=";"`).
pub fn csv_dialect_kwargs(table: &TableSchema) -> (Vec<String>, Vec<String>) {
    let read = &table.read;
    let mut layout = vec![format!("sep={}", python_str(&read.delimiter.to_string()))];
    if !read.has_header {
        layout.push("header=None".to_owned());
        let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        layout.push(format!("names={}", python_list_of_str(&names)));
    }
    let mut text = Vec::new();
    if !read.keep_default_na {
        text.push("keep_default_na=False".to_owned());
    }
    if !read.na_values.is_empty() {
        text.push(format!("na_values={}", python_list_of_str(&read.na_values)));
    }
    if read.skip_rows > 0 {
        text.push(format!("skiprows={}", read.skip_rows));
    }
    if let Some(c) = read.comment {
        text.push(format!("comment={}", python_str(&c.to_string())));
    }
    if let Some(encoding) = &read.encoding {
        text.push(format!("encoding={}", python_str(encoding)));
    } else if read.bom {
        text.push("encoding=\"utf-8-sig\"".to_owned());
    }
    (layout, text)
}

fn render_reader(out: &mut String, table: &TableSchema, ident: &str) {
    if table.read.format != FileFormat::Csv {
        crate::pandera_formats::render_typed_reader(out, table, ident);
        return;
    }
    let (mut kwargs, text) = csv_dialect_kwargs(table);
    let dtypes: Vec<String> = table
        .columns
        .iter()
        .filter_map(|c| {
            let dtype = if c.dtype.is_temporal() && c.utc {
                Some("str")
            } else {
                c.dtype.pandas_read_dtype()
            };
            dtype.map(|d| format!("{}: {}", python_str(&c.name), python_str(d)))
        })
        .collect();
    if !dtypes.is_empty() {
        kwargs.push(format!("dtype={{{}}}", dtypes.join(", ")));
    }
    let parsed: Vec<&ColumnSchema> = table
        .columns
        .iter()
        .filter(|c| c.dtype.is_temporal() && !c.utc)
        .collect();
    if !parsed.is_empty() {
        let names: Vec<String> = parsed.iter().map(|c| c.name.clone()).collect();
        kwargs.push(format!("parse_dates={}", python_list_of_str(&names)));
        let formats: Vec<String> = parsed
            .iter()
            .map(|c| {
                let format = c.datetime_format.as_deref().unwrap_or("ISO8601");
                format!("{}: {}", python_str(&c.name), python_str(format))
            })
            .collect();
        kwargs.push(format!("date_format={{{}}}", formats.join(", ")));
    }
    kwargs.extend(text);

    let _ = writeln!(out, "def read_{ident}(path):");
    out.push_str(
        "    \"\"\"Reads `path` as the schema expects: dtypes, missing values and dates.\"\"\"\n",
    );
    out.push_str("    frame = pd.read_csv(\n        path,\n");
    for kwarg in kwargs {
        let _ = writeln!(out, "        {kwarg},");
    }
    out.push_str("    )\n");
    for column in table
        .columns
        .iter()
        .filter(|c| c.dtype.is_temporal() && c.utc)
    {
        let name = python_str(&column.name);
        let format = python_str(column.datetime_format.as_deref().unwrap_or("ISO8601"));
        let _ = writeln!(
            out,
            "    frame[{name}] = pd.to_datetime(frame[{name}], utc=True, format={format}).dt.as_unit(\"ns\")"
        );
    }
    out.push_str("    return frame\n");
}

fn python_list_of_str(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| python_str(s)).collect();
    format!("[{}]", quoted.join(", "))
}

fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadOptions;

    fn sample() -> TableSchema {
        let mut t = TableSchema::new("orders 2024");
        let mut id = ColumnSchema::new("order_id", DataType::Integer);
        id.unique = true;
        id.checks.push(Check::Gt {
            value: Scalar::Int(0),
        });
        let mut zip = ColumnSchema::new("zip", DataType::String);
        zip.nullable = true;
        zip.checks.push(Check::StrLength {
            min: Some(5),
            max: Some(5),
        });
        let mut day = ColumnSchema::new("day", DataType::Date);
        day.datetime_format = Some("%Y-%m-%d".into());
        day.checks.push(Check::Ge {
            value: Scalar::Str("2024-01-01".into()),
        });
        let mut at = ColumnSchema::new("at", DataType::Datetime);
        at.utc = true;
        let mut meta = ColumnSchema::new("meta", DataType::String);
        meta.checks.push(Check::Pattern {
            pattern: Pattern::Json,
        });
        let mut price = ColumnSchema::new("price", DataType::Float);
        price.checks.push(Check::InRange {
            min: Scalar::Float(0.0),
            max: Scalar::Float(f64::INFINITY),
            include_min: true,
            include_max: false,
        });
        t.columns = vec![id, zip, day, at, meta, price];
        t.unique_together = vec![vec!["order_id".into(), "zip".into()]];
        t.read = ReadOptions {
            delimiter: ';',
            bom: true,
            ..ReadOptions::default()
        };
        t
    }

    #[test]
    fn renders_a_module_with_schema_reader_and_main() {
        insta::assert_snapshot!(render_pandera(&sample()));
    }
}

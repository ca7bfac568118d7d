//! Reading bounds and value lists out of a rule, typed by the column they constrain.

use autocoder_schema::{DataType, Scalar, TableSchema};

use crate::resolve::resolve_column;
use crate::text::{is_quoted, unquote};

/// Why an operand is not a usable value.
pub(crate) type ValueError = String;

/// The value `text` stands for in a column of type `dtype`. Never guesses: an empty operand, a
/// word, a percentage or another column's name is an error saying so.
pub(crate) fn scalar_for(
    text: &str,
    dtype: DataType,
    table: &TableSchema,
) -> Result<Scalar, ValueError> {
    let raw = text.trim();
    if raw.is_empty() {
        return Err("the rule names no bound, and none is invented".to_owned());
    }
    let quoted = is_quoted(raw);
    let value = unquote(raw);
    if !quoted && let Ok(column) = resolve_column(table, value) {
        return Err(format!(
            "it compares with column `{}`; comparisons between columns are not single-column checks",
            column.name
        ));
    }
    if value.ends_with('%') {
        return Err(format!(
            "the bound {value} is a percentage; write the number the column holds (50 or 0.5)"
        ));
    }
    let not_a = |what: &str| format!("the bound `{value}` is not {what}");
    match dtype {
        DataType::Integer | DataType::Float => number(value).ok_or_else(|| not_a("a number")),
        DataType::Date | DataType::Datetime => {
            if looks_like_iso(value) {
                Ok(Scalar::Str(value.to_owned()))
            } else {
                Err(not_a("a date in ISO 8601 form (YYYY-MM-DD)"))
            }
        }
        DataType::Boolean => match value.to_ascii_lowercase().as_str() {
            "true" | "yes" => Ok(Scalar::Bool(true)),
            "false" | "no" => Ok(Scalar::Bool(false)),
            _ => Err(not_a("true or false")),
        },
        DataType::String => Ok(Scalar::Str(value.to_owned())),
        DataType::Empty => Err("the column has no values to type the bound by".to_owned()),
    }
}

/// A number as written in a rule: `5`, `-2.5`, `1e3`, `10,000`, `$100`, `zero`.
pub(crate) fn number(text: &str) -> Option<Scalar> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("zero") {
        return Some(Scalar::Int(0));
    }
    let t = t.trim_start_matches(['$', '€', '£']);
    let thousands_ok = t.contains(',')
        && t.split(['.'])
            .next()
            .is_some_and(|int| int.split(',').skip(1).all(|g| g.len() == 3));
    let cleaned: String = if thousands_ok {
        t.replace(',', "")
    } else {
        t.to_owned()
    }
    .replace('_', "");
    if let Ok(i) = cleaned.parse::<i64>() {
        return Some(Scalar::Int(i));
    }
    let numeric_text = cleaned
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    match cleaned.parse::<f64>() {
        Ok(f) if numeric_text && f.is_finite() => Some(Scalar::Float(f)),
        _ => None,
    }
}

/// An ISO date, alone or followed by the `T` or space of a datetime.
fn looks_like_iso(s: &str) -> bool {
    autocoder_schema::looks_like_iso_date(s)
        && (s.len() == 10 || matches!(s.as_bytes()[10], b'T' | b' '))
}

/// The items of a written list: `a, b or c`, `{a, b}`, `"x"; "y"`, `a | b`.
pub(crate) fn list_items(text: &str) -> Vec<&str> {
    let t = text
        .trim()
        .trim_start_matches(':')
        .trim()
        .trim_start_matches(['{', '[', '('])
        .trim_end_matches(['}', ']', ')'])
        .trim();
    let mut items = Vec::new();
    for part in t.split([',', ';', '|']) {
        let mut rest = part.trim();
        for lead in ["or ", "and ", "OR ", "AND ", "Or ", "And "] {
            rest = rest.strip_prefix(lead).unwrap_or(rest).trim();
        }
        for sub in split_words(rest, &[" or ", " and ", " OR ", " AND "]) {
            let item = unquote(sub.trim());
            if !item.is_empty() {
                items.push(item);
            }
        }
    }
    items
}

fn split_words<'t>(text: &'t str, seps: &[&str]) -> Vec<&'t str> {
    let mut out = vec![text];
    for sep in seps {
        out = out.into_iter().flat_map(|s| s.split(sep)).collect();
    }
    out
}

/// The values of a list typed for `dtype`; an error names the first item that does not fit.
pub(crate) fn typed_values(
    items: &[&str],
    dtype: DataType,
    table: &TableSchema,
) -> Result<Vec<Scalar>, ValueError> {
    if items.is_empty() {
        return Err("the rule names no values, and none are invented".to_owned());
    }
    items
        .iter()
        .map(|item| {
            // Items are already unquoted: quote them again so a value that happens to be a
            // column name is read as a value.
            scalar_for(&format!("\"{item}\""), dtype, table)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_written() {
        assert_eq!(number("10,000"), Some(Scalar::Int(10_000)));
        assert_eq!(number("$9.99"), Some(Scalar::Float(9.99)));
        assert_eq!(number("-3"), Some(Scalar::Int(-3)));
        assert_eq!(number("1e3"), Some(Scalar::Float(1000.0)));
        assert_eq!(number("1,5"), None);
        assert_eq!(number("ten"), None);
        assert_eq!(number("inf"), None);
    }

    #[test]
    fn lists_split_on_commas_and_conjunctions() {
        assert_eq!(
            list_items("pending, shipped, or delivered"),
            ["pending", "shipped", "delivered"]
        );
        assert_eq!(list_items("{'A', \"B\"}"), ["A", "B"]);
        assert_eq!(
            list_items(": red | green and blue"),
            ["red", "green", "blue"]
        );
    }
}

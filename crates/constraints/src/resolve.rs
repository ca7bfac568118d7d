//! Finds the column a rule means, tolerant of case, spaces, underscores and plurals.

use autocoder_schema::{ColumnSchema, TableSchema};

use crate::ConstraintError;

type Same<'f> = &'f dyn Fn(&str, &str) -> bool;

/// The column of `table` that `name` means. Tries, in order: the exact name; the name ignoring
/// case; the name ignoring case, spaces, underscores, dashes and quotes; the same with plurals
/// reduced to singulars. The first step with any match decides; several matches there are an
/// [`ConstraintError::AmbiguousColumn`] listing them.
pub fn resolve_column<'t>(
    table: &'t TableSchema,
    name: &str,
) -> Result<&'t ColumnSchema, ConstraintError> {
    let wanted = name
        .trim()
        .trim_matches(|c| matches!(c, '`' | '"' | '\'' | '[' | ']'));
    let steps: [Same<'_>; 4] = [
        &|a, b| a == b,
        &|a, b| a.to_lowercase() == b.to_lowercase(),
        &|a, b| squash(a) == squash(b),
        &|a, b| singular(&squash(a)) == singular(&squash(b)),
    ];
    for same in steps {
        let found: Vec<&ColumnSchema> = table
            .columns
            .iter()
            .filter(|c| same(&c.name, wanted))
            .collect();
        match found.as_slice() {
            [] => {}
            [one] => return Ok(one),
            many => {
                return Err(ConstraintError::AmbiguousColumn {
                    name: wanted.to_owned(),
                    candidates: many.iter().map(|c| c.name.clone()).collect(),
                });
            }
        }
    }
    Err(ConstraintError::UnknownColumn {
        name: wanted.to_owned(),
        available: table.columns.iter().map(|c| c.name.clone()).collect(),
    })
}

/// Lowercase letters and digits only.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A crude English singular of the last word: `quantities` -> `quantity`, `statuses` ->
/// `status`, `boxes` -> `box`, `prices` -> `price`; `status` and `address` stay as they are.
fn singular(s: &str) -> String {
    if let Some(stem) = s.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for ending in ["sses", "uses", "xes", "ches", "shes", "zes"] {
        if s.ends_with(ending) {
            return s[..s.len() - 2].to_owned();
        }
    }
    if s.ends_with("ss") || s.ends_with("us") || s.ends_with("is") {
        return s.to_owned();
    }
    s.strip_suffix('s').unwrap_or(s).to_owned()
}

#[cfg(test)]
mod tests {
    use autocoder_schema::DataType;

    use super::*;

    fn table(names: &[&str]) -> TableSchema {
        let mut t = TableSchema::new("t");
        for n in names {
            t.columns.push(ColumnSchema::new(*n, DataType::String));
        }
        t
    }

    #[test]
    fn tolerant_of_case_spaces_underscores_and_plurals() {
        let t = table(&["order_id", "Unit Price", "quantity", "status", "address"]);
        let found = |n: &str| resolve_column(&t, n).unwrap().name.clone();
        assert_eq!(found("Order ID"), "order_id");
        assert_eq!(found("order-id"), "order_id");
        assert_eq!(found("unit_price"), "Unit Price");
        assert_eq!(found("unit prices"), "Unit Price");
        assert_eq!(found("quantities"), "quantity");
        assert_eq!(found("statuses"), "status");
        assert_eq!(found("`status`"), "status");
        assert_eq!(found("addresses"), "address");
    }

    #[test]
    fn ambiguity_lists_candidates_and_unknown_lists_columns() {
        let t = table(&["order_id", "Order ID", "orderid", "price"]);
        assert_eq!(resolve_column(&t, "Order ID").unwrap().name, "Order ID");
        assert_eq!(resolve_column(&t, "ORDER_ID").unwrap().name, "order_id");
        let err = resolve_column(&t, "Order-Id").unwrap_err();
        assert!(
            matches!(&err, ConstraintError::AmbiguousColumn { candidates, .. }
            if candidates == &["order_id", "Order ID", "orderid"])
        );
        let err = resolve_column(&t, "order ids").unwrap_err();
        assert!(
            err.to_string().contains("order_id, Order ID, orderid"),
            "{err}"
        );
        let err = resolve_column(&t, "cost").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no column matches `cost`; the columns are: order_id, Order ID, orderid, price"
        );
    }
}

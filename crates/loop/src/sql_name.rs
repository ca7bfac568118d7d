//! How a column name is written in a `DuckDB` query: as it is when it is a plain identifier, in
//! double quotes when it is a keyword `DuckDB` refuses as a bare column name (`end`, `order`,
//! `left`) or holds anything but letters, digits and underscores (`unit price`, `2024`).

/// `DuckDB`'s reserved keywords and the type-and-function keywords it refuses as bare column
/// names (read from `duckdb_keywords()` of `DuckDB` 2.0, each tried as a column in `SELECT`,
/// `WHERE` and `ORDER BY`).
const NOT_BARE: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "anti",
    "any",
    "array",
    "as",
    "asc",
    "asof",
    "asymmetric",
    "at",
    "authorization",
    "binary",
    "both",
    "by",
    "case",
    "cast",
    "check",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "default",
    "deferrable",
    "desc",
    "describe",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "glob",
    "group",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "intersect",
    "into",
    "is",
    "isnull",
    "join",
    "lambda",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "natural",
    "not",
    "notnull",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "outer",
    "overlaps",
    "pivot",
    "pivot_longer",
    "pivot_wider",
    "placing",
    "positional",
    "primary",
    "qualify",
    "references",
    "returning",
    "right",
    "select",
    "semi",
    "show",
    "similar",
    "some",
    "summarize",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "unpack",
    "unpivot",
    "using",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
];

/// `name` as a `DuckDB` query writes it.
pub(crate) fn sql_identifier(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain && !NOT_BARE.contains(&name.to_ascii_lowercase().as_str()) {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests {
    use super::sql_identifier;

    #[test]
    fn plain_names_stay_bare_and_the_rest_are_quoted() {
        assert_eq!(sql_identifier("unit_price"), "unit_price");
        assert_eq!(sql_identifier("user"), "user");
        assert_eq!(sql_identifier("End"), "\"End\"");
        assert_eq!(sql_identifier("order"), "\"order\"");
        assert_eq!(sql_identifier("unit price"), "\"unit price\"");
        assert_eq!(sql_identifier("2024"), "\"2024\"");
        assert_eq!(sql_identifier("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(sql_identifier(""), "\"\"");
    }
}
